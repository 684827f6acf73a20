// dialogctl: the command-line tool of the DIALOG toolkit.
#include "commands.h"

#include "dialog/application.h"

#include <QCoreApplication>
#include <QLoggingCategory>
#include <cstdio>

namespace {
const char *usage = "usage: dialogctl <verb> [options]\n"
                    "\n"
                    "verbs:\n"
                    "  ls         list processes, their services, commands and subscriptions\n"
                    "  get        subscribe to a service and print its updates\n"
                    "  send       send a command\n"
                    "  publish    publish a test service\n"
                    "  echo       answer a command by updating a service (used by bench rtt)\n"
                    "  bench      benchmarks: fanin, rtt, is-fanout, is-latency\n"
                    "  is         the Information Service: ls, get, put, rm, watch, types, stats\n"
                    "  up         start the processes of a partition (PARTITION.json)\n"
                    "  down       stop the processes of a partition\n"
                    "  supervise  restart the lost processes of a partition that is up\n"
                    "  log        the message log: tail, search, report, stats\n"
                    "  audit      who sent which command / wrote which IS object (--since 1h)\n"
                    "  config     the configuration database: ls, get, put, edit, diff, log, tag\n"
                    "  runs       the run registry: ls, show, diff\n"
                    "  rc         run control from scripts: a transition, waited for; the state\n"
                    "  alarm      the alarm server: ls, tree, history, ack, shelve, unshelve\n"
                    "  agent      the host agents: ls, start, stop, signal\n"
                    "  crashes    crash reports of the agents' processes (--since 1h)\n"
                    "  sample     events of a readout by criteria (trigger, spill, every, rate, count)\n"
                    "  dqm        data-quality checks: ls, reference set CHECK --from-current\n"
                    "  secret     make a partition's shared secret (generate), or check one\n"
                    "\n"
                    "Every verb accepts --help and --control-server host:port (or $DIALOG_CONTROL_SERVER).\n";
}

int main(int argc, char *argv[])
{
    dialog::preferLowLatencyEventDispatcher();
    QCoreApplication app(argc, argv);
    QCoreApplication::setApplicationName(QStringLiteral("dialogctl"));
    dialog::quitOnTerminationSignals();
    // Connection chatter is for daemons' logs; the tool reports problems itself.
    QLoggingCategory::setFilterRules(
        QStringLiteral("dialog.client.info=false\ndialog.client.warning=false\ndialog.net.*.info=false"));
    QStringList args = app.arguments();
    if (args.size() < 2 || args.at(1) == QLatin1String("--help") || args.at(1) == QLatin1String("-h")) {
        std::fputs(usage, args.size() < 2 ? stderr : stdout);
        return args.size() < 2 ? 1 : 0;
    }
    const QString verb = args.at(1);
    args.removeAt(1);
    args[0] = QStringLiteral("dialogctl ") + verb;
    using namespace dialog::tool;
    if (verb == QLatin1String("ls"))
        return ls(args);
    if (verb == QLatin1String("get"))
        return get(args);
    if (verb == QLatin1String("sample"))
        return sample(args);
    if (verb == QLatin1String("dqm"))
        return dqmVerb(args);
    if (verb == QLatin1String("send"))
        return send(args);
    if (verb == QLatin1String("publish"))
        return publish(args);
    if (verb == QLatin1String("echo"))
        return echo(args);
    if (verb == QLatin1String("is"))
        return is(args);
    if (verb == QLatin1String("up"))
        return up(args);
    if (verb == QLatin1String("down"))
        return down(args);
    if (verb == QLatin1String("supervise"))
        return supervise(args);
    if (verb == QLatin1String("log"))
        return log(args);
    if (verb == QLatin1String("audit"))
        return audit(args);
    if (verb == QLatin1String("config"))
        return configVerb(args);
    if (verb == QLatin1String("runs"))
        return runsVerb(args);
    if (verb == QLatin1String("alarm"))
        return alarmVerb(args);
    if (verb == QLatin1String("agent"))
        return agentVerb(args);
    if (verb == QLatin1String("crashes"))
        return crashes(args);
    if (verb == QLatin1String("secret"))
        return secret(args);
    if (verb == QLatin1String("rc"))
        return rcVerb(args);
    if (verb == QLatin1String("bench"))
        return bench(args);
    std::fprintf(stderr, "dialogctl: unknown verb '%s'\n\n%s", qPrintable(verb), usage);
    return 1;
}
