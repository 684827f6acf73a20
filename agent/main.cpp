// dialog-agent: one per host. Starts, stops and signals processes on request (DIALOG.Agent.<host>),
// keeps their output, restarts them by their policy, reports their crashes with backtraces, and
// publishes the host's figures to IS.
#include "agent.h"
#include "agentserver.h"

#include "dialog/client.h"
#include "dialog/daemon.h"
#include "dialog/options.h"

#include <QDir>
#include <QHostInfo>
#include <QStandardPaths>
#include <cstdio>

using namespace Qt::StringLiterals;
using dialog::Option;
using dialog::OptionTable;
using dialog::OptionUnit;

int main(int argc, char *argv[])
{
    dialog::DaemonApplication app(argc, argv, u"dialog-agent"_s);
    app.setApplicationVersion(QStringLiteral(DIALOG_VERSION));
    OptionTable t(
        u"dialog-agent"_s,
        u"The host agent: one per host, registered as DIALOG.Agent.<host>. Starts, stops and signals "
        "processes on request (dialogctl agent start, stop, signal), keeps each one's output in <data-dir>/<name>/output.log, "
        "starts them again by their restart policy, reports crashes with a backtrace of every thread to "
        "the message log (dialogctl crashes), and publishes the host's figures to IS as Hosts.<host>."_s);
    dialog::agent::AgentOptions o;
    o.client = dialog::ClientOptions::fromEnvironment();
    o.client.exitOnRefusal = true; // a second agent of the host must not run
    qint64 gdbTimeoutMs = o.crash.gdbTimeoutMs;
    t.add({Option::text(u"host-name"_s, u"name"_s,
                        u"The host's name in DIALOG.Agent.<host> and Hosts.<host> (default: this host's "
                        "name up to its first dot)."_s,
                        &o.host),
           Option::text(u"data-dir"_s, u"dir"_s,
                        u"Where each process gets a directory (its log, its working directory, where its "
                        "cores land). Default: $STATE_DIRECTORY under systemd, else the user's data directory."_s,
                        &o.dataDir),
           Option::list(u"allow"_s, u"glob"_s,
                        u"Programs that may be started (repeatable; '*' any characters, on the absolute "
                        "path). Default: the dialog-* programs beside the agent and every program of the "
                        "--bin-dir directories."_s,
                        &o.allow),
           Option::list(u"bin-dir"_s, u"dir"_s,
                        u"A directory of the partition's programs (repeatable): a program named without a "
                        "path is looked for beside the agent, then here."_s,
                        &o.binDirs),
           Option::text(u"is-server"_s, u"name"_s,
                        u"Publish the host's figures as <name>.Hosts.<host> (default: not published)."_s,
                        &o.isServer),
           Option::duration(u"figures-interval"_s, u"ms"_s,
                            u"How often the host's figures are taken and published (default 5 s)."_s,
                            &o.figuresIntervalMs, OptionUnit::Milliseconds, 200, 3600000),
           Option::text(u"gdb"_s, u"program"_s, u"The debugger that reads cores (default gdb)."_s, &o.crash.gdb),
           Option::duration(u"gdb-timeout"_s, u"ms"_s, u"The longest a backtrace may take (default 30 s)."_s,
                            &gdbTimeoutMs, OptionUnit::Milliseconds, 100, 600000),
           Option::size(u"core-limit"_s, u"bytes"_s,
                        u"RLIMIT_CORE of the processes (default 2G; 0: no cores, no backtraces)."_s,
                        &o.crash.coreLimitBytes, 0, qint64(1) << 40),
           Option::flag(u"keep-cores"_s, u"Keep the cores after the backtrace (default: removed)."_s,
                        &o.crash.keepCores),
           Option::flag(u"stop-children"_s,
                        u"Stop the processes (SIGTERM, SIGKILL after their grace time) when the agent ends. "
                        "Default: they run on, and the next agent on this --data-dir adopts them."_s,
                        &o.stopChildren)});
    o.client.addTo(t);
    dialog::AccessOptions::addParserOptions(t.parser());
    if (!t.process(app.arguments()))
        return 1;
    if (const dialog::Status st = o.access.applyParser(t.parser()); !st.isOk())
        return t.fail(st.message());
    o.crash.gdbTimeoutMs = int(gdbTimeoutMs);
    if (o.host.isEmpty())
        o.host = QHostInfo::localHostName().section(QLatin1Char('.'), 0, 0);
    if (!dialog::Client::isValidName(dialog::agent::AgentServer::serviceName(o.host)) || o.host.contains(QLatin1Char(' ')))
        return t.fail(u"--host-name '%1' is not a valid name"_s.arg(o.host));
    if (o.dataDir.isEmpty())
        o.dataDir = qEnvironmentVariable("STATE_DIRECTORY").section(QLatin1Char(':'), 0, 0);
    if (o.dataDir.isEmpty())
        o.dataDir = QStandardPaths::writableLocation(QStandardPaths::AppLocalDataLocation);
    if (!QDir().mkpath(o.dataDir))
        return t.fail(u"cannot create --data-dir '%1'"_s.arg(o.dataDir));
    o.dataDir = QDir(o.dataDir).absolutePath();

    app.beginService();
    dialog::agent::Agent agent(o);
    QString why;
    if (!agent.start(&why))
        return t.fail(why);
    app.serviceReady(agent.client());
    std::fprintf(stderr, "dialog-agent: DIALOG.Agent.%s serving, processes under %s\n", qPrintable(o.host),
                 qPrintable(o.dataDir));
    const int rc = app.exec();
    agent.shutdown();
    return rc;
}
