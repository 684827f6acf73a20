// dialogctl up / dialogctl down: start and stop the processes of a partition.
#include "clientsetup.h"
#include "configsetup.h"
#include "launcher.h"
#include "supervisor.h"
#include "upsecurity.h"

#include "dialog/directory.h"
#include "dialog/report.h"

#include <QFileInfo>

#include <QDir>
#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QProcess>
#include <QTcpSocket>
#include <QThread>
#include <csignal>
#include <cstdio>

namespace dialog::tool {

namespace {
/// The partition's secret and TLS files, unless the command line or the environment gave others.
void partitionSecurity(const rc::Partition &p, ClientOptions &o)
{
    if (o.secretFile.isEmpty())
        o.secretFile = p.secretFile;
    if (o.tlsCert.isEmpty() && o.tlsKey.isEmpty() && o.tlsCa.isEmpty()) {
        o.tlsCert = p.tlsCert;
        o.tlsKey = p.tlsKey;
        o.tlsCa = p.tlsCa;
    }
}

/// A client of the partition's Control Server for the launcher to reach the host agents with.
ClientOptions agentClientOptions(const rc::Partition &p, const QString &verb)
{
    ClientOptions o = ClientOptions::fromEnvironment(
        QStringLiteral("dialog-%1-agents-%2").arg(verb).arg(QCoreApplication::applicationPid()));
    o.controlServers = {p.controlServerAddress()};
    partitionSecurity(p, o);
    return o;
}

struct Common
{
    rc::Partition partition;
    QString runDir, binDir;
    qint64 timeoutMs = 0; ///< --timeout-ms; set its default before common()
    /// The partition names no "secret_file": its secret is the one dialogctl up chose (secureByDefault()).
    bool defaultSecret = false;
};

/// The partition @p ref ("partitions/NAME@REF") of the configuration database @p database, written to
/// the partition's run directory (or @p runDir) for the processes and `dialogctl down`; the master
/// configures from the same REF. False with the reason.
bool partitionFromDatabase(const OptionTable &p, const QString &verb, const QString &ref,
                           const QString &database, const QString &runDir, rc::Partition *out, QString *error)
{
    QString path = ref, version = QStringLiteral("head");
    if (const qsizetype at = ref.indexOf(QLatin1Char('@')); at >= 0) {
        path = ref.left(at);
        version = ref.mid(at + 1);
    }
    ConfigSession session;
    if (!session.open(p, verb, database, 10000, error))
        return false;
    config::Document doc;
    quint64 resolved = 0;
    const Status st = session.get(path, version, &doc, &resolved);
    if (!st.isOk())
        return *error = st.message(), false;
    rc::Partition named;
    const QString name = path.section(QLatin1Char('/'), -1);
    if (const Status parsed = rc::Partition::parse(doc.content, name + QStringLiteral(".json"), &named);
        !parsed.isOk())
        return *error = parsed.message(), false;
    const QString dir = runDir.isEmpty() ? Launcher::defaultRunDir(named) : runDir;
    QFile f(QDir(dir).filePath(name + QStringLiteral(".json")));
    if (!QDir().mkpath(dir) || !f.open(QIODevice::WriteOnly | QIODevice::Truncate) ||
        f.write(doc.content) != doc.content.size())
        return *error = QStringLiteral("cannot write %1: %2").arg(f.fileName(), f.errorString()), false;
    f.close();
    if (const Status loaded = rc::Partition::load(f.fileName(), out); !loaded.isOk())
        return *error = loaded.message(), false;
    // The master configures from the version asked for, in the database it came from.
    if (out->configDb.isEmpty())
        out->configDb = database;
    out->configRef = version;
    return true;
}

/// Parses PARTITION.json (or partitions/NAME@REF of the configuration database), --run-dir,
/// --bin-dir, --port and --timeout-ms (at least @p minTimeoutMs); false after printing the reason.
bool common(OptionTable &p, const QStringList &args, const QString &verb, Common *c, qint64 minTimeoutMs)
{
    qint64 port = 0;
    QString database = config::ConfigClient::defaultDatabase();
    p.addPositional(
        QStringLiteral("partition"),
        QStringLiteral("Partition file (JSON), or partitions/NAME[@REF] of the configuration database."));
    p.add(Option::text(
        QStringLiteral("configdb"), QStringLiteral("name"),
        QStringLiteral("The configuration database of a partitions/NAME[@REF] (default $DIALOG_CONFIGDB, "
                       "else configdb): its Control Server is $DIALOG_CONTROL_SERVER or --control-server."),
        &database));
    p.add(Option::text(
        QStringLiteral("run-dir"), QStringLiteral("dir"),
        QStringLiteral(
            "Where logs, IS data and the process record go (default $TMPDIR/dialog-<partition>-<uid>).")));
    p.add(Option::text(
        QStringLiteral("bin-dir"), QStringLiteral("dir"),
        QStringLiteral(
            "Where the programs are (default: the partition's bin_dir, else next to this tool).")));
    p.add(Option::duration(QStringLiteral("timeout-ms"), QStringLiteral("ms"),
                           QStringLiteral("How long to wait (default up 20000, down 5000)."), &c->timeoutMs,
                           OptionUnit::Milliseconds, minTimeoutMs, 3600000));
    p.add(Option::flag(QStringLiteral("json"), QStringLiteral("Print the process table as JSON.")));
    p.add(Option::integer(QStringLiteral("port"), QStringLiteral("port"),
                          QStringLiteral("Control Server port instead of the partition's."), &port, 1,
                          65535));
    if (!parse(p, args))
        return false;
    if (p.positionalArguments().size() != 1) {
        fail(verb, QStringLiteral("expected one partition file (see --help)"));
        return false;
    }
    QString error;
    const QString given = p.positionalArguments().first();
    const bool fromDatabase =
        !QFileInfo::exists(given) &&
        config::kindOf(given.section(QLatin1Char('@'), 0, 0)) == config::Kind::Partition;
    const QString runDir = p.isSet(QStringLiteral("run-dir"))
                               ? QDir(p.value(QStringLiteral("run-dir"))).absolutePath()
                               : QString();
    bool loaded = false;
    if (fromDatabase) {
        loaded = partitionFromDatabase(p, verb, given, database, runDir, &c->partition, &error);
    } else {
        const Status st = rc::Partition::load(given, &c->partition);
        loaded = st.isOk();
        error = st.message();
    }
    if (!loaded) {
        fail(verb, error);
        return false;
    }
    if (p.isSet(QStringLiteral("port"))) {
        c->partition.controlServerPort = quint16(port);
        for (rc::ProcessSpec &standby : c->partition.standbyControlServers)
            standby.standbyOf = c->partition.controlServerAddress();
    }
    c->runDir = p.isSet(QStringLiteral("run-dir")) ? QDir(p.value(QStringLiteral("run-dir"))).absolutePath()
                                                   : Launcher::defaultRunDir(c->partition);
    c->binDir = p.isSet(QStringLiteral("bin-dir")) ? QDir(p.value(QStringLiteral("bin-dir"))).absolutePath()
                : !c->partition.binDir.isEmpty()   ? c->partition.binDir
                                                   : QCoreApplication::applicationDirPath();
    c->defaultSecret = secureByDefault(c->partition, c->runDir);
    if (!addControllerRules(c->partition, c->runDir, &error)) {
        fail(verb, error);
        return false;
    }
    return true;
}

void printTable(const QList<Launched> &procs, bool json)
{
    if (json) {
        QJsonArray a;
        for (const Launched &l : procs)
            a.append(l.toJson());
        std::fputs(QJsonDocument(QJsonObject{{QStringLiteral("processes"), a}})
                       .toJson(QJsonDocument::Compact)
                       .constData(),
                   stdout);
        std::fputs("\n", stdout);
        return;
    }
    std::printf("%-16s %-14s %-12s %-8s %s\n", "NAME", "ROLE", "HOST", "PID", "STATUS");
    for (const Launched &l : procs) {
        const QString role =
            l.spec.role == rc::ProcessSpec::Role::Slave
                ? QStringLiteral("slave/") +
                      (l.spec.executable.isEmpty() ? l.spec.kind : QFileInfo(l.spec.executable).fileName())
            : l.spec.role == rc::ProcessSpec::Role::Master   ? QStringLiteral("master")
            : l.spec.role == rc::ProcessSpec::Role::IsServer ? QStringLiteral("IS server")
            : l.spec.role == rc::ProcessSpec::Role::Logger   ? QStringLiteral("logger")
            : l.spec.role == rc::ProcessSpec::Role::ConfigDb ? QStringLiteral("configdb")
            : l.spec.role == rc::ProcessSpec::Role::Service  ? QFileInfo(l.spec.executable).fileName()
                                                             : QStringLiteral("Control Server");
        std::printf("%-16s %-14s %-12s %-8lld %s\n", qPrintable(l.spec.name), qPrintable(role),
                    qPrintable(l.spec.host), l.pid, qPrintable(l.status));
    }
    std::fflush(stdout);
}

bool waitForTcp(const QString &address, int timeoutMs)
{
    const QString host = address.section(QLatin1Char(':'), 0, 0);
    const quint16 port = quint16(address.section(QLatin1Char(':'), 1, 1).toUInt());
    QElapsedTimer t;
    t.start();
    while (t.elapsed() < timeoutMs) {
        QTcpSocket s;
        s.connectToHost(host, port);
        if (s.waitForConnected(200))
            return true;
        QThread::msleep(50);
    }
    return false;
}

/// Starts `dialogctl supervise` for the partition in the background; false after printing the reason.
bool startSupervisorDaemon(const Common &c, const OptionTable &p)
{
    const QString log = QDir(c.runDir).filePath(QStringLiteral("logs/supervisor.log"));
    QDir().mkpath(QFileInfo(log).absolutePath());
    QStringList args{QStringLiteral("supervise"), c.partition.file, QStringLiteral("--run-dir"), c.runDir,
                     QStringLiteral("--bin-dir"), c.binDir};
    if (p.isSet(QStringLiteral("port")))
        args << QStringLiteral("--port") << p.value(QStringLiteral("port"));
    QProcess d;
    d.setProgram(QCoreApplication::applicationFilePath());
    d.setArguments(args);
    d.setStandardInputFile(QProcess::nullDevice());
    d.setStandardOutputFile(log, QIODevice::Append);
    d.setStandardErrorFile(log, QIODevice::Append);
    qint64 pid = 0;
    if (!d.startDetached(&pid)) {
        fail(QStringLiteral("up"), QStringLiteral("cannot start the supervisor: %1").arg(d.errorString()));
        return false;
    }
    // It refuses to start for a reason (already supervised, nothing to supervise): say so here.
    QElapsedTimer t;
    t.start();
    while (t.elapsed() < 5000 && Supervisor::runningSupervisor(c.runDir) != pid) {
        QFile stat(QStringLiteral("/proc/%1/stat").arg(pid));
        if (!stat.open(QIODevice::ReadOnly) || stat.readAll().contains(") Z")) {
            QFile f(log);
            f.open(QIODevice::ReadOnly);
            const QList<QByteArray> lines = f.readAll().trimmed().split('\n');
            fail(
                QStringLiteral("up"),
                QStringLiteral("the supervisor did not start: %1").arg(QString::fromLocal8Bit(lines.last())));
            return false;
        }
        QThread::msleep(20);
    }
    std::printf("supervisor of partition %s: pid %lld, log %s\n", qPrintable(c.partition.name), pid,
                qPrintable(log));
    return true;
}

/// Stops the supervisor of the run directory (before the processes it would restart).
void stopSupervisor(const QString &runDir, int timeoutMs)
{
    const qint64 pid = Supervisor::runningSupervisor(runDir);
    if (pid <= 0)
        return;
    ::kill(pid_t(pid), SIGTERM);
    QElapsedTimer t;
    t.start();
    while (Supervisor::runningSupervisor(runDir) == pid && t.elapsed() < qMax(timeoutMs, 1000))
        QThread::msleep(20);
    if (Supervisor::runningSupervisor(runDir) == pid)
        ::kill(pid_t(pid), SIGKILL);
}

} // namespace

int up(const QStringList &args)
{
    const QString verb = QStringLiteral("up");
    OptionTable p(program(verb));
    p.setDescription(QStringLiteral(
        "Starts every process of a partition on its host (locally for localhost, else over the partition's "
        "ssh_command), records their pids in the run directory, waits until each has registered with the "
        "Control Server and prints a table. Exit status 1 if one did not come up."));
    p.add(Option::flag(
        QStringLiteral("supervise"),
        QStringLiteral("Then stay in the foreground and restart the processes whose partition entry says "
                       "\"restart\": \"on-failure\" when they are gone (until SIGTERM / SIGINT or "
                       "'dialogctl down').")));
    p.add(
        Option::flag(QStringLiteral("daemon"),
                     QStringLiteral("With --supervise: supervise from a background process instead (its log: "
                                    "<run-dir>/logs/supervisor.log), and return.")));
    Common c;
    c.timeoutMs = 20000;
    if (!common(p, args, verb, &c, 100))
        return 1;
    const qint64 timeout = c.timeoutMs;
    const bool supervise = p.isSet(QStringLiteral("supervise"));
    if (p.isSet(QStringLiteral("daemon")) && !supervise)
        return fail(verb, QStringLiteral("--daemon needs --supervise"));
    Launcher launcher(c.partition, c.runDir, c.binDir);
    launcher.useAgents(agentClientOptions(c.partition, verb));
    QString error;
    QList<Launched> previous;
    if (!launcher.readRecord(&previous, &error))
        return fail(verb, error);
    int stillAlive = 0;
    for (const Launched &l : previous)
        stillAlive += launcher.alive(l) ? 1 : 0;
    if (stillAlive > 0)
        return fail(
            verb,
            QStringLiteral(
                "partition %1 is already up (%2 processes alive, see %3); run 'dialogctl down %4' first")
                .arg(c.partition.name)
                .arg(stillAlive)
                .arg(launcher.recordFile(), c.partition.file));
    // Every local program must exist before anything is started: no half-started partition.
    for (const rc::ProcessSpec &s : c.partition.processes())
        if (s.isLocal() && !QFileInfo(launcher.programPath(s)).isExecutable() && !s.executable.isEmpty())
            return fail(verb, QStringLiteral("%1, the program of slave '%2', is not an executable file%3")
                                  .arg(s.executable, s.name,
                                       s.executable.contains(QLatin1Char('/'))
                                           ? QString()
                                           : QStringLiteral(" in %1 or $PATH").arg(c.binDir)));
        else if (s.isLocal() && !QFileInfo(launcher.programPath(s)).isExecutable())
            return fail(verb, QStringLiteral("%1 not found in %2 (needed by %3 '%4'; is it built?)")
                                  .arg(s.program(), c.binDir,
                                       s.role == rc::ProcessSpec::Role::IsServer ? QStringLiteral("IS server")
                                                                                 : QStringLiteral("process"),
                                       s.name));
    if (const QString why = ensureSecret(c.partition, c.defaultSecret, launcher); !why.isEmpty())
        return fail(verb, why);
    if (const QString why = ensureIdentities(c.partition, launcher); !why.isEmpty())
        return fail(verb, why);
    launcher.setUnprovenNames(c.partition.unprovenNames);
    if (c.partition.secretFile.isEmpty() && !c.partition.noSecret &&
        qEnvironmentVariable("DIALOG_SECRET_FILE").isEmpty())
        std::fprintf(stderr, "dialogctl up: warning: the partition uses a Control Server started elsewhere and "
                             "names no secret_file: its processes run without a shared secret (name the Control "
                             "Server's \"secret_file\", or \"secret\": \"none\" to say so)\n");
    if (c.partition.startControlServer && waitForTcp(c.partition.controlServerAddress(), 300))
        return fail(verb,
                    QStringLiteral("something already listens on %1 (the partition's Control Server address)")
                        .arg(c.partition.controlServerAddress()));

    QList<Launched> procs;
    int rc = 0;
    auto record = [&] {
        QString e;
        if (!launcher.writeRecord(procs, &e))
            fail(verb, e);
    };
    for (const rc::ProcessSpec &s : c.partition.processes()) {
        Launched l;
        if (!launcher.start(s, &l, &error)) {
            l.spec = s;
            l.status = QStringLiteral("not started: ") + error;
            procs << l;
            rc = 1;
            continue;
        }
        l.status = QStringLiteral("started");
        procs << l;
        record();
        if (s.role == rc::ProcessSpec::Role::ControlServer && s.standbyOf.isEmpty()) {
            if (!waitForTcp(c.partition.controlServerAddress(), int(qMin<qint64>(timeout, 10000)))) {
                procs.last().status =
                    QStringLiteral("not listening on ") + c.partition.controlServerAddress();
                record();
                printTable(procs, p.isSet(QStringLiteral("json")));
                const QString tail = launcher.logTail(procs.last());
                return fail(verb, QStringLiteral("the Control Server did not start%1")
                                      .arg(tail.isEmpty() ? QString() : QStringLiteral(":\n") + tail));
            }
            procs.last().status = QStringLiteral("listening on ") + c.partition.controlServerAddress();
        }
    }
    record();

    // Wait until every DIALOG process appears in the Control Server's directory.
    ClientOptions o = ClientOptions::fromEnvironment(
        QStringLiteral("dialog-up-%1").arg(QCoreApplication::applicationPid()));
    o.controlServers = c.partition.controlServerAddresses();
    if (const Status st = o.applyParser(p.parser()); !st.isOk())
        return fail(verb, st.message());
    o.controlServers = c.partition.controlServerAddresses();
    partitionSecurity(c.partition, o);
    Client client(o);
    if (!client.start())
        return fail(verb, client.errorString());
    QSet<QString> registered;
    DirectoryAssembler pages; // a large directory comes in pages
    client.subscribe(directoryServiceName(), &client, [&](const Message &m) {
        if (std::optional<DirectorySnapshot> dir; pages.add(m.data(), &dir).isOk() && dir) {
            const QStringList names = dir->processNames();
            registered = QSet<QString>(names.cbegin(), names.cend());
        }
    });
    QElapsedTimer t;
    t.start();
    auto pendingCount = [&] {
        int pending = 0;
        for (Launched &l : procs) {
            if (l.dialogName().isEmpty() || l.status.startsWith(QLatin1String("not started")))
                continue;
            if (registered.contains(l.dialogName()))
                l.status = QStringLiteral("registered");
            else if ((l.spec.isLocal() || !l.agent.isEmpty()) && !launcher.alive(l))
                l.status = QStringLiteral("exited");
            else
                ++pending;
        }
        return pending;
    };
    while (pendingCount() > 0 && t.elapsed() < timeout) {
        QCoreApplication::processEvents(QEventLoop::AllEvents, 50);
        QThread::msleep(20);
    }
    for (Launched &l : procs) {
        if (l.status == QLatin1String("started") && !l.dialogName().isEmpty()) {
            l.status = QStringLiteral("not registered within %1 ms").arg(timeout);
            rc = 1;
        } else if (l.status == QLatin1String("exited")) {
            rc = 1;
            const QString tail = launcher.logTail(l, 1);
            if (!tail.isEmpty())
                l.status += QStringLiteral(": ") + tail;
        } else if (l.status.startsWith(QLatin1String("not "))) {
            rc = 1;
        }
    }
    record();
    printTable(procs, p.isSet(QStringLiteral("json")));
    if (rc == 0 && !p.isSet(QStringLiteral("json"))) {
        std::printf("partition %s is up: Control Server %s, logs in %s/logs\n", qPrintable(c.partition.name),
                    qPrintable(c.partition.controlServerAddresses().join(QStringLiteral(", standby "))),
                    qPrintable(c.runDir));
        if (!c.partition.secretFile.isEmpty()) // what dialogctl, the GUIs and Python need to join it
            std::printf("export DIALOG_SECRET_FILE=%s\n", qPrintable(shellWord(c.partition.secretFile)));
        else if (c.partition.noSecret)
            std::printf("the partition runs without a shared secret (\"secret\": \"none\"): anyone who "
                        "reaches its ports is believed\n");
    }
    else if (rc != 0)
        std::fprintf(stderr,
                     "dialogctl up: some processes did not come up (logs in %s/logs); 'dialogctl down %s' "
                     "stops the rest\n",
                     qPrintable(c.runDir), qPrintable(c.partition.file));
    if (!supervise)
        return rc;
    std::fflush(stdout);
    if (p.isSet(QStringLiteral("daemon")))
        return startSupervisorDaemon(c, p) ? rc : 1;
    // In the foreground, with the client that watched the registrations.
    startReporting(&client);
    Supervisor supervisor(c.partition, c.runDir, c.binDir);
    if (!supervisor.start(&error))
        return fail(verb, error);
    QCoreApplication::exec();
    stopReporting();
    return rc;
}

int supervise(const QStringList &args)
{
    const QString verb = QStringLiteral("supervise");
    OptionTable p(program(verb));
    p.setDescription(QStringLiteral(
        "Supervises a partition that 'dialogctl up' started: restarts on their host (locally, or over the "
        "partition's ssh_command) the processes whose entry says \"restart\": \"on-failure\" when they are "
        "gone, with back-off, at most \"restart_limit\" times a minute; logs each restart on stderr and to "
        "dialog-logger. Runs until SIGTERM / SIGINT or 'dialogctl down'."));
    Common c;
    if (!common(p, args, verb, &c, 0))
        return 1;
    ClientOptions o = ClientOptions::fromEnvironment(QStringLiteral("dialog-supervise-") + c.partition.name);
    QString error;
    if (const Status st = o.applyParser(p.parser()); !st.isOk())
        return fail(verb, st.message());
    o.controlServers = c.partition.controlServerAddresses();
    partitionSecurity(c.partition, o);
    Supervisor supervisor(c.partition, c.runDir, c.binDir);
    if (!supervisor.start(&error))
        return fail(verb, error);
    // Restarts are reported to dialog-logger when one runs; supervision does not depend on it.
    Client client(o);
    if (client.start())
        startReporting(&client);
    QCoreApplication::exec();
    stopReporting();
    return 0;
}

int down(const QStringList &args)
{
    const QString verb = QStringLiteral("down");
    OptionTable p(program(verb));
    p.setDescription(QStringLiteral("Stops the processes 'dialogctl up' started for a partition: SIGTERM, "
                                    "then SIGKILL after --timeout-ms; "
                                    "the Control Server last."));
    Common c;
    c.timeoutMs = 5000;
    if (!common(p, args, verb, &c, 0))
        return 1;
    const qint64 timeout = c.timeoutMs;
    Launcher launcher(c.partition, c.runDir, c.binDir);
    launcher.useAgents(agentClientOptions(c.partition, verb));
    QList<Launched> procs;
    QString error;
    if (!launcher.readRecord(&procs, &error))
        return fail(verb, error);
    // The supervisor first, or it would start again what is being stopped.
    stopSupervisor(c.runDir, int(timeout));
    if (procs.isEmpty()) {
        std::printf("partition %s: nothing recorded in %s (not up?)\n", qPrintable(c.partition.name),
                    qPrintable(launcher.recordFile()));
        return 0;
    }
    int rc = 0;
    // Slaves, master and IS servers first (in reverse start order), the Control Server last, so that
    // everybody can still tell it goodbye.
    auto stopGroup = [&](bool controlServer) {
        QList<Launched *> group;
        for (auto it = procs.rbegin(); it != procs.rend(); ++it) {
            if ((it->spec.role == rc::ProcessSpec::Role::ControlServer) != controlServer)
                continue;
            if (!launcher.alive(*it)) {
                it->status = QStringLiteral("not running");
                continue;
            }
            if (!launcher.signal(*it, SIGTERM, &error)) {
                it->status = error;
                rc = 1;
                continue;
            }
            group << &*it;
        }
        QElapsedTimer t;
        t.start();
        while (t.elapsed() < timeout) {
            bool any = false;
            for (Launched *l : group)
                any = any || launcher.alive(*l);
            if (!any)
                break;
            QThread::msleep(50);
        }
        for (Launched *l : group) {
            if (!launcher.alive(*l)) {
                l->status = QStringLiteral("stopped");
                continue;
            }
            launcher.signal(*l, SIGKILL, &error);
            QThread::msleep(100);
            l->status = launcher.alive(*l) ? QStringLiteral("still alive after SIGKILL")
                                           : QStringLiteral("killed (no exit within %1 ms)").arg(timeout);
            if (launcher.alive(*l))
                rc = 1;
        }
    };
    stopGroup(false);
    stopGroup(true);
    printTable(procs, p.isSet(QStringLiteral("json")));
    if (rc == 0)
        launcher.removeRecord();
    return rc;
}

} // namespace dialog::tool
