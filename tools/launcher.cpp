#include "launcher.h"

#include "agentroute.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QProcess>
#include <QStandardPaths>
#include <QSaveFile>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <sys/types.h>
#include <unistd.h>

namespace dialog::tool {

using rc::ProcessSpec;

namespace {

QString roleName(ProcessSpec::Role r)
{
    switch (r) {
    case ProcessSpec::Role::ControlServer:
        return QStringLiteral("controlserver");
    case ProcessSpec::Role::IsServer:
        return QStringLiteral("isserver");
    case ProcessSpec::Role::Master:
        return QStringLiteral("master");
    case ProcessSpec::Role::Slave:
        return QStringLiteral("slave");
    case ProcessSpec::Role::Logger:
        return QStringLiteral("logger");
    case ProcessSpec::Role::ConfigDb:
        return QStringLiteral("configdb");
    case ProcessSpec::Role::Service:
        return QStringLiteral("service");
    }
    return {};
}

ProcessSpec::Role roleFromName(const QString &n)
{
    if (n == QLatin1String("controlserver"))
        return ProcessSpec::Role::ControlServer;
    if (n == QLatin1String("isserver"))
        return ProcessSpec::Role::IsServer;
    if (n == QLatin1String("master"))
        return ProcessSpec::Role::Master;
    if (n == QLatin1String("logger"))
        return ProcessSpec::Role::Logger;
    if (n == QLatin1String("configdb"))
        return ProcessSpec::Role::ConfigDb;
    if (n == QLatin1String("service"))
        return ProcessSpec::Role::Service;
    return ProcessSpec::Role::Slave;
}

} // namespace

QString shellQuote(const QString &s)
{
    QString q = s;
    q.replace(QLatin1Char('\''), QStringLiteral("'\\''"));
    return QLatin1Char('\'') + q + QLatin1Char('\'');
}

QString Launched::dialogName() const
{
    switch (spec.role) {
    case ProcessSpec::Role::ControlServer: // a standby registers with the primary it watches
        return spec.standbyOf.isEmpty() ? QString()
                                        : QStringLiteral("DIALOG.Standby.%1").arg(spec.port);
    case ProcessSpec::Role::IsServer:
        return QStringLiteral("IS.Server.") + spec.name; // as dialog-isserver registers
    default:
        return spec.name;
    }
}

QJsonObject Launched::toJson() const
{
    return {{QStringLiteral("name"), spec.name},
            {QStringLiteral("role"), roleName(spec.role)},
            {QStringLiteral("kind"), spec.kind},
            {QStringLiteral("executable"), spec.executable},
            {QStringLiteral("host"), spec.host},
            {QStringLiteral("program"), spec.program()},
            {QStringLiteral("pid"), pid},
            {QStringLiteral("log"), log},
            {QStringLiteral("status"), status},
            {QStringLiteral("agent"), agent},
            {QStringLiteral("standby_agents"), QJsonArray::fromStringList(standbyAgents)}};
}

Launched Launched::fromJson(const QJsonObject &o)
{
    Launched l;
    l.spec.name = o.value(QStringLiteral("name")).toString();
    l.spec.role = roleFromName(o.value(QStringLiteral("role")).toString());
    l.spec.kind = o.value(QStringLiteral("kind")).toString();
    l.spec.executable = o.value(QStringLiteral("executable")).toString();
    l.spec.host = o.value(QStringLiteral("host")).toString();
    l.pid = o.value(QStringLiteral("pid")).toInteger();
    l.log = o.value(QStringLiteral("log")).toString();
    l.status = o.value(QStringLiteral("status")).toString();
    l.agent = o.value(QStringLiteral("agent")).toString();
    for (const QJsonValue &v : o.value(QStringLiteral("standby_agents")).toArray())
        l.standbyAgents << v.toString();
    return l;
}

Launcher::Launcher(const rc::Partition &partition, const QString &runDir, const QString &binDir)
    : m_partition(partition), m_runDir(runDir), m_binDir(binDir)
{
}

Launcher::~Launcher() = default;

void Launcher::useAgents(const ClientOptions &options)
{
    m_agents = std::make_unique<AgentRoute>(options);
}

QString Launcher::defaultRunDir(const rc::Partition &p)
{
    return QDir::temp().filePath(QStringLiteral("dialog-%1-%2").arg(p.name).arg(::getuid()));
}

QString Launcher::recordFile() const
{
    return QDir(m_runDir).filePath(QStringLiteral("processes.json"));
}

bool Launcher::readRecord(QList<Launched> *out, QString *error) const
{
    QFile f(recordFile());
    if (!f.exists())
        return true;
    if (!f.open(QIODevice::ReadOnly)) {
        *error = QStringLiteral("cannot read %1: %2").arg(f.fileName(), f.errorString());
        return false;
    }
    const QJsonDocument doc = QJsonDocument::fromJson(f.readAll());
    if (!doc.isObject()) {
        *error = QStringLiteral("%1 is not a process record").arg(f.fileName());
        return false;
    }
    for (const QJsonValue &v : doc.object().value(QStringLiteral("processes")).toArray())
        out->append(Launched::fromJson(v.toObject()));
    return true;
}

bool Launcher::writeRecord(const QList<Launched> &procs, QString *error) const
{
    QJsonArray a;
    for (const Launched &l : procs)
        a.append(l.toJson());
    QDir().mkpath(m_runDir);
    QSaveFile f(recordFile());
    const QJsonObject o{{QStringLiteral("partition"), m_partition.name},
                        {QStringLiteral("file"), m_partition.file},
                        {QStringLiteral("processes"), a}};
    if (!f.open(QIODevice::WriteOnly) || f.write(QJsonDocument(o).toJson()) < 0 || !f.commit()) {
        *error = QStringLiteral("cannot write %1: %2").arg(f.fileName(), f.errorString());
        return false;
    }
    return true;
}

void Launcher::removeRecord() const
{
    QFile::remove(recordFile());
}

QString Launcher::programPath(const ProcessSpec &spec) const
{
    // A slave program of its own named without a path: beside the toolkit's programs, else in $PATH.
    if (!spec.executable.isEmpty() && !spec.executable.contains(QLatin1Char('/'))) {
        const QString beside = QDir(m_binDir).filePath(spec.executable);
        if (!QFileInfo(beside).isExecutable())
            if (const QString found = QStandardPaths::findExecutable(spec.executable); !found.isEmpty())
                return found;
        return beside;
    }
    return QDir(m_binDir).filePath(spec.program());
}

bool Launcher::ssh(const QString &host, const QString &command, QByteArray *out, QString *error,
                   const QByteArray &input) const
{
    QProcess p;
    QStringList args = m_partition.sshCommand.mid(1);
    args << host << command;
    p.start(m_partition.sshCommand.first(), args);
    if (!p.waitForStarted(5000)) {
        *error = QStringLiteral("cannot run %1: %2").arg(m_partition.sshCommand.first(), p.errorString());
        return false;
    }
    // On stdin, never on a command line (which every user of either host can read in ps).
    p.write(input);
    p.closeWriteChannel();
    if (!p.waitForFinished(15000)) {
        p.kill();
        p.waitForFinished(2000);
        *error = QStringLiteral("%1 %2: no answer within 15 s").arg(m_partition.sshCommand.first(), host);
        return false;
    }
    if (p.exitStatus() != QProcess::NormalExit || p.exitCode() != 0) {
        const QString detail = QString::fromLocal8Bit(p.readAllStandardError()).trimmed();
        // ssh itself exits with 255 when it cannot connect or log in; anything else is the
        // remote command's own exit code.
        *error = p.exitStatus() == QProcess::NormalExit && p.exitCode() == 255
                     ? QStringLiteral("cannot reach %1 over %2 (unreachable, or the key refused): %3")
                           .arg(host, m_partition.sshCommand.first(), detail)
                     : QStringLiteral("%1 %2 failed (exit %3): %4")
                           .arg(m_partition.sshCommand.first(), host)
                           .arg(p.exitCode())
                           .arg(detail);
        return false;
    }
    *out = p.readAllStandardOutput();
    return true;
}

bool Launcher::copySecret(const QString &host, const QString &path, const QByteArray &content, QString *error) const
{
    const QString tmp = path + QStringLiteral(".new");
    const QString cmd = QStringLiteral("umask 077 && mkdir -p %1 && cat >%2 && chmod 600 %2 && mv -f %2 %3")
                            .arg(shellQuote(QFileInfo(path).absolutePath()), shellQuote(tmp), shellQuote(path));
    QByteArray reply;
    return ssh(host, cmd, &reply, error, content.endsWith('\n') ? content : content + '\n');
}

QString Launcher::processKeyFile(const ProcessSpec &spec) const
{
    Launched l;
    l.spec = spec;
    const QString name = l.dialogName();
    if (m_partition.identityFile.isEmpty() || name.isEmpty() || m_partition.unprovenNames.contains(name))
        return {};
    return QDir(m_runDir).filePath(QStringLiteral("keys/%1.key").arg(name));
}

namespace {
/// The Control Server's options for the partition's identities: its identity secret, and the names
/// of the processes that must prove theirs.
QStringList identityArguments(const rc::Partition &p)
{
    if (p.identityFile.isEmpty())
        return {};
    QStringList names;
    for (const ProcessSpec &s : p.processes()) {
        Launched l;
        l.spec = s;
        if (!l.dialogName().isEmpty() && !p.unprovenNames.contains(l.dialogName()))
            names << l.dialogName();
    }
    return {QStringLiteral("--identity-file"), p.identityFile, QStringLiteral("--proven-names"),
            names.join(QLatin1Char(','))};
}
} // namespace

QJsonObject Launcher::agentEnvironment(const QString &keyFile) const
{
    QJsonObject env{{QStringLiteral("DIALOG_CONTROL_SERVER"), m_partition.controlServerAddress()}};
    if (!keyFile.isEmpty())
        env.insert(QStringLiteral("DIALOG_PROCESS_KEY_FILE"), keyFile);
    return env;
}

bool Launcher::startThroughAgents(const ProcessSpec &spec, const QString &program, const QStringList &args,
                                  const QJsonObject &env, Launched *out, QString *error) const
{
    QJsonObject extra;
    if (spec.restart == ProcessSpec::Restart::OnFailure) // the agent applies it, on its host
        extra = {{QStringLiteral("restart"), QStringLiteral("on-failure")},
                 {QStringLiteral("restart_limit_per_minute"), spec.restartLimit},
                 {QStringLiteral("restart_delay_ms"), spec.restartDelayMs}};
    QStringList agents;
    for (const QString &h : spec.migrate ? spec.hosts : QStringList{spec.host}) {
        ProcessSpec there = spec;
        there.host = h;
        const QString a = m_agents->agentFor(h, there.isLocal());
        if (!a.isEmpty() && !agents.contains(a))
            agents << a;
    }
    if (agents.isEmpty())
        return false;
    out->agent = agents.takeFirst();
    out->log = QStringLiteral("%1: <data-dir>/%2/output.log").arg(out->agent, spec.name);
    if (spec.migrate) {
        extra.insert(QStringLiteral("hosts"), QJsonArray::fromStringList(QStringList{out->agent} + agents));
        extra.insert(QStringLiteral("loss_ms"), spec.lossIntervalMs);
    }
    if (!m_agents->start(out->agent, spec.name, program, args, env, &out->pid, error, extra))
        return false;
    extra.insert(QStringLiteral("standby"), true);
    for (const QString &a : std::as_const(agents)) {
        qint64 none = 0;
        if (!m_agents->start(a, spec.name, program, args, env, &none, error, extra))
            return false;
        out->standbyAgents << a;
    }
    return true;
}

bool Launcher::start(const ProcessSpec &spec, Launched *out, QString *error) const
{
    out->spec = spec;
    const QString logDir = QDir(m_runDir).filePath(QStringLiteral("logs"));
    // An IS server may share its name with another process (the demo's IS server Monitor and its
    // dialog-monitor service): its log is is-NAME.log, as its audit file is is-NAME.audit.
    const QString logName =
        spec.role == ProcessSpec::Role::IsServer ? QStringLiteral("is-") + spec.name : spec.name;
    out->log = QDir(logDir).filePath(logName + QStringLiteral(".log"));
    QStringList args = spec.arguments(m_partition);
    if (spec.role == ProcessSpec::Role::ControlServer)
        args << identityArguments(m_partition);
    const QString keyFile = processKeyFile(spec);
    if (spec.role == ProcessSpec::Role::IsServer)
        args << QStringLiteral("--data-dir") << QDir(m_runDir).filePath(QStringLiteral("is"));
    if (spec.role == ProcessSpec::Role::Logger && !spec.args.contains(QStringLiteral("--data-dir")) &&
        !spec.args.contains(QStringLiteral("--db")))
        args << QStringLiteral("--data-dir") << QDir(m_runDir).filePath(QStringLiteral("logger"));
    if (spec.role == ProcessSpec::Role::ConfigDb && !spec.args.contains(QStringLiteral("--data-dir")) &&
        !spec.args.contains(QStringLiteral("--db")))
        args << QStringLiteral("--data-dir") << QDir(m_runDir).filePath(QStringLiteral("configdb"));
    // The configuration database checks the proofs of names too: a commit's author is its name
    // (unless up could not give it the identity secret).
    if (spec.role == ProcessSpec::Role::ConfigDb && !m_partition.identityFile.isEmpty() &&
        !m_partition.unprovenNames.contains(out->dialogName()))
        args << QStringLiteral("--identity-file") << m_partition.identityFile;
    const QString program = programPath(spec);
    if (m_agents && spec.role != ProcessSpec::Role::ControlServer) {
        error->clear();
        if (startThroughAgents(spec, program, args, agentEnvironment(keyFile), out, error))
            return true;
        if (!error->isEmpty())
            return false;
    }
    if (spec.migrate) {
        *error = QStringLiteral("%1 is migratable: it needs a host agent on one of %2 (none registered)")
                     .arg(spec.name, spec.hosts.join(QStringLiteral(", ")));
        return false;
    }
    if (spec.isLocal()) {
        if (!QFileInfo(program).isExecutable()) {
            *error = QStringLiteral("%1 not found in %2 (needed by %3; is it built?)")
                         .arg(spec.program(), m_binDir, spec.name);
            return false;
        }
        QDir().mkpath(logDir);
        if (spec.role == ProcessSpec::Role::IsServer)
            QDir().mkpath(QDir(m_runDir).filePath(QStringLiteral("is")));
        QProcess p;
        p.setProgram(program);
        p.setArguments(args);
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("DIALOG_CONTROL_SERVER"), m_partition.controlServerAddresses().join(QLatin1Char(',')));
        if (!m_partition.secretFile.isEmpty()) // for what the partition runs besides --secret-file
            env.insert(QStringLiteral("DIALOG_SECRET_FILE"), m_partition.secretFile);
        env.remove(QStringLiteral("DIALOG_PROCESS_KEY_FILE")); // none of ours, unless it has one
        if (!keyFile.isEmpty())
            env.insert(QStringLiteral("DIALOG_PROCESS_KEY_FILE"), keyFile);
        p.setProcessEnvironment(env);
        p.setStandardInputFile(QProcess::nullDevice());
        p.setStandardOutputFile(out->log, QIODevice::Truncate);
        p.setStandardErrorFile(out->log, QIODevice::Append);
        p.setWorkingDirectory(m_runDir);
        if (!p.startDetached(&out->pid)) {
            *error = QStringLiteral("cannot start %1: %2").arg(program, p.errorString());
            return false;
        }
        return true;
    }
    // Remote: the same paths on the other host; nohup so it outlives the ssh session. Only the
    // program itself goes to the background, with every standard stream redirected: nothing of it
    // holds the ssh session open, and $! is the program's own PID (nohup execs it), the one that
    // `dialogctl down` signals. (Backgrounding "cd … && nohup …" would fork a subshell that keeps the
    // session's stdout, so ssh would not return, and $! would be the subshell's.)
    QStringList quoted;
    for (const QString &a : args)
        quoted << shellQuote(a);
    const QString cmd =
        QStringLiteral("mkdir -p %1 %2 || exit 4; test -x %3 || { echo %4 >&2; exit 3; }; cd %5 || exit 4; "
                       "DIALOG_CONTROL_SERVER=%6 %9nohup %3 %7 >%8 2>&1 </dev/null & echo $!")
            .arg(shellQuote(logDir), shellQuote(QDir(m_runDir).filePath(QStringLiteral("is"))),
                 shellQuote(program),
                 shellQuote(
                     QStringLiteral("%1 not found (bin_dir of the partition: %2)").arg(program, m_binDir)),
                 shellQuote(m_runDir), shellQuote(m_partition.controlServerAddresses().join(QLatin1Char(','))),
                 quoted.join(QLatin1Char(' ')), shellQuote(out->log),
                 (m_partition.secretFile.isEmpty()
                      ? QString()
                      : QStringLiteral("DIALOG_SECRET_FILE=%1 ").arg(shellQuote(m_partition.secretFile))) +
                     (keyFile.isEmpty() ? QString()
                                        : QStringLiteral("DIALOG_PROCESS_KEY_FILE=%1 ").arg(shellQuote(keyFile))));
    QByteArray reply;
    if (!ssh(spec.host, cmd, &reply, error))
        return false;
    bool ok = false;
    out->pid = reply.trimmed().split('\n').last().toLongLong(&ok);
    if (!ok || out->pid <= 0) {
        *error = QStringLiteral("no process id from %1 for %2: '%3'")
                     .arg(spec.host, spec.name, QString::fromLocal8Bit(reply));
        return false;
    }
    return true;
}

bool Launcher::alive(const Launched &l) const
{
    if (l.pid <= 0)
        return false;
    if (!l.agent.isEmpty()) {
        QString error;
        return probe(l, &error) == Liveness::Alive;
    }
    if (l.spec.isLocal()) {
        QFile stat(QStringLiteral("/proc/%1/stat").arg(l.pid));
        if (!stat.open(QIODevice::ReadOnly))
            return false;
        const QByteArray s = stat.readAll();
        const int close = s.lastIndexOf(')');
        if (close < 0 || close + 2 >= s.size() || s.at(close + 2) == 'Z' || s.at(close + 2) == 'X')
            return false;
        // Guard against a recycled pid: it must still be our program.
        QFile cmd(QStringLiteral("/proc/%1/cmdline").arg(l.pid));
        return cmd.open(QIODevice::ReadOnly) && cmd.readAll().contains(l.spec.program().toUtf8());
    }
    QString error;
    return probe(l, &error) == Liveness::Alive;
}

Launcher::Liveness Launcher::probe(const Launched &l, QString *error) const
{
    if (!l.agent.isEmpty()) {
        if (!m_agents)
            return *error = QStringLiteral("started through the agent of %1").arg(l.agent), Liveness::Unknown;
        if (!l.standbyAgents.isEmpty()) {
            // Migratable: it may run under any of its agents, with another PID.
            Liveness result = Liveness::Gone;
            for (const QString &a : QStringList{l.agent} + l.standbyAgents) {
                const auto live = m_agents->alive(a, l.spec.name, 0, error);
                if (live && *live)
                    return Liveness::Alive;
                if (!live)
                    result = Liveness::Unknown;
            }
            return result;
        }
        const auto live = m_agents->alive(l.agent, l.spec.name, l.pid, error);
        return !live ? Liveness::Unknown : *live ? Liveness::Alive : Liveness::Gone;
    }
    if (l.spec.isLocal() || l.pid <= 0)
        return alive(l) ? Liveness::Alive : Liveness::Gone;
    QByteArray out;
    // A zombie (exited, not yet reaped by its parent) counts as gone.
    if (!ssh(l.spec.host,
             QStringLiteral(
                 "kill -0 %1 2>/dev/null || { echo gone; exit 0; }; "
                 "case \"$(ps -o stat= -p %1 2>/dev/null)\" in Z*) echo gone ;; *) echo alive ;; esac")
                 .arg(l.pid),
             &out, error))
        return Liveness::Unknown;
    const QByteArray answer = out.trimmed();
    if (answer == "alive")
        return Liveness::Alive;
    if (answer == "gone")
        return Liveness::Gone;
    *error =
        QStringLiteral("unexpected answer from %1: '%2'").arg(l.spec.host, QString::fromLocal8Bit(answer));
    return Liveness::Unknown;
}

bool Launcher::signal(const Launched &l, int sig, QString *error) const
{
    if (!l.agent.isEmpty()) {
        if (!m_agents)
            return *error = QStringLiteral("started through the agent of %1").arg(l.agent), false;
        // SIGTERM is the agent's stop: it sends SIGKILL itself if the process outlives a minute.
        // A migratable process may run under any of its agents: each stops its copy or standby.
        for (const QString &a : l.standbyAgents)
            m_agents->signal(a, l.spec.name, sig, 60000, error);
        return m_agents->signal(l.agent, l.spec.name, sig, 60000, error);
    }
    if (l.spec.isLocal()) {
        if (!alive(l))
            return true;
        if (::kill(pid_t(l.pid), sig) != 0) {
            *error = QStringLiteral("kill %1: %2").arg(l.pid).arg(QString::fromLocal8Bit(strerror(errno)));
            return false;
        }
        return true;
    }
    QByteArray out;
    return ssh(l.spec.host,
               QStringLiteral("kill -%1 %2 2>/dev/null; true")
                   .arg(sig == SIGKILL ? QStringLiteral("KILL") : QStringLiteral("TERM"))
                   .arg(l.pid),
               &out, error);
}

QString Launcher::logTail(const Launched &l, int lines) const
{
    if (!l.spec.isLocal() || !l.agent.isEmpty())
        return {};
    QFile f(l.log);
    if (!f.open(QIODevice::ReadOnly))
        return {};
    QList<QByteArray> all = f.readAll().trimmed().split('\n');
    return QString::fromLocal8Bit(all.mid(qMax<qsizetype>(0, all.size() - lines)).join('\n'));
}

bool Launcher::keepLog(const Launched &l, QString *error) const
{
    if (l.log.isEmpty() || !l.agent.isEmpty()) // the agent appends to one log per process
        return true;
    const QString kept = l.log + QStringLiteral(".1");
    if (l.spec.isLocal()) {
        QFile::remove(kept);
        if (QFile::exists(l.log) && !QFile::rename(l.log, kept)) {
            *error = QStringLiteral("cannot move %1 to %2").arg(l.log, kept);
            return false;
        }
        return true;
    }
    QByteArray out;
    return ssh(l.spec.host,
               QStringLiteral("test ! -e %1 || mv -f %1 %2").arg(shellQuote(l.log), shellQuote(kept)), &out,
               error);
}

} // namespace dialog::tool
