#include "managedprocess.h"

#include "spawn.h"

#include <QDateTime>
#include <QDir>
#include <QLoggingCategory>
#include <QProcessEnvironment>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <sys/statvfs.h>
#include <unistd.h>

Q_LOGGING_CATEGORY(lcProcess, "dialog.agent.process", QtInfoMsg)

namespace dialog::agent {

namespace {
constexpr int TailLines = 30;
constexpr int MaxLineChars = 400;
constexpr qint64 TailBytes = 32 * 1024;
constexpr int LogCheckMs = 1000;

QString strError(int e)
{
    return QString::fromLocal8Bit(std::strerror(e));
}
} // namespace

QJsonObject ExitInfo::toJson() const
{
    QJsonObject o{{QStringLiteral("pid"), pid}, {QStringLiteral("run_ms"), runMs}};
    if (failedToStart)
        o.insert(QStringLiteral("error"), error);
    else if (crashed)
        o.insert(QStringLiteral("signal"), signal);
    else if (statusUnknown)
        o.insert(QStringLiteral("status_unknown"), true);
    else
        o.insert(QStringLiteral("exit_code"), exitCode);
    if (requested)
        o.insert(QStringLiteral("requested"), true);
    return o;
}

ManagedProcess::ManagedProcess(const ProcessSpec &spec, const QString &dir, qint64 coreLimitBytes, QObject *parent)
    : QObject(parent), m_spec(spec), m_dir(dir), m_coreLimit(coreLimitBytes)
{
    m_killTimer.setSingleShot(true);
    connect(&m_killTimer, &QTimer::timeout, this, [this] {
        if (m_pid > 0) {
            qCWarning(lcProcess).noquote() << m_spec.name << "(PID" << m_pid
                                           << ") still there after its grace time: SIGKILL";
            ::kill(-pid_t(m_pid), SIGKILL);
            signalPidfd(m_pidfd, SIGKILL);
        }
    });
    m_logTimer.setInterval(LogCheckMs);
    connect(&m_logTimer, &QTimer::timeout, this, &ManagedProcess::checkLog);
}

ManagedProcess::~ManagedProcess()
{
    // The process runs on: the agent that comes next adopts it (ProcessTable's state file).
    m_notifier.reset();
    if (m_pidfd >= 0)
        ::close(m_pidfd);
    if (m_execErrorFd >= 0)
        ::close(m_execErrorFd);
}

QString ManagedProcess::logPath() const
{
    return QDir(m_dir).filePath(QStringLiteral("output.log"));
}

qint64 ManagedProcess::runMs() const
{
    if (m_pid <= 0)
        return 0;
    return m_adopted ? qMax<qint64>(0, QDateTime::currentMSecsSinceEpoch() - m_startedMs) : m_clock.elapsed();
}

bool ManagedProcess::start(QString *error)
{
    if (m_pid > 0)
        return *error = QStringLiteral("%1 is running").arg(m_spec.name), false;
    if (!QDir().mkpath(m_dir))
        return *error = QStringLiteral("cannot create %1").arg(m_dir), false;
    if (!m_log.isOpen()) {
        m_log.setFileName(logPath());
        // Unbuffered: a write that fails (disk full) fails at once, and is reported. The process
        // gets the same file, opened for appending.
        if (!m_log.open(QIODevice::WriteOnly | QIODevice::Append | QIODevice::Unbuffered))
            setLogBroken(QStringLiteral("cannot open %1: %2").arg(logPath(), m_log.errorString()));
    }
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    for (const QString &kv : m_spec.environment)
        env.insert(kv.section(QLatin1Char('='), 0, 0), kv.section(QLatin1Char('='), 1));
    SpawnRequest r{m_spec.program, m_spec.arguments, env.toStringList(), m_dir, m_log.isOpen() ? m_log.handle() : -1,
                   m_coreLimit};
    // Before the fork: the program's first line comes after it. Its PID is in the line of its end.
    writeLog(QStringLiteral("=== %1 started %2: %3\n")
                 .arg(m_spec.name, QDateTime::currentDateTimeUtc().toString(Qt::ISODateWithMs),
                      (QStringList{m_spec.program} + m_spec.arguments).join(QLatin1Char(' ')))
                 .toUtf8());
    Spawned s;
    if (!spawn(r, &s, error)) {
        *error = QStringLiteral("cannot start %1: %2").arg(m_spec.program, *error);
        return false;
    }
    m_pid = s.pid;
    m_execErrorFd = s.execErrorFd;
    m_startTime = processStartTime(m_pid);
    m_startedMs = QDateTime::currentMSecsSinceEpoch();
    m_adopted = false;
    m_stopping = false;
    m_clock.start();
    watch(s.pidfd);
    return true;
}

bool ManagedProcess::adopt(qint64 pid, quint64 startTime, qint64 startedMs, QString *error)
{
    if (m_pid > 0)
        return *error = QStringLiteral("%1 is running").arg(m_spec.name), false;
    const int fd = openPidfd(pid);
    if (fd < 0)
        return *error = QStringLiteral("PID %1: %2").arg(pid).arg(strError(errno)), false;
    // Checked after the pidfd is open: if the start time is still that of ours, the pidfd is on it.
    const quint64 now = processStartTime(pid);
    if (startTime == 0 || now != startTime) {
        ::close(fd);
        return *error = now == 0 ? QStringLiteral("PID %1 has ended").arg(pid)
                                 : QStringLiteral("PID %1 is another process now").arg(pid),
               false;
    }
    if (!m_log.isOpen()) {
        m_log.setFileName(logPath());
        if (!m_log.open(QIODevice::WriteOnly | QIODevice::Append | QIODevice::Unbuffered))
            setLogBroken(QStringLiteral("cannot open %1: %2").arg(logPath(), m_log.errorString()));
    }
    m_pid = pid;
    m_startTime = startTime;
    m_startedMs = startedMs;
    m_adopted = true;
    m_stopping = false;
    writeLog(QStringLiteral("=== %1 (PID %2) adopted %3 by the agent PID %4\n")
                 .arg(m_spec.name)
                 .arg(m_pid)
                 .arg(QDateTime::currentDateTimeUtc().toString(Qt::ISODateWithMs))
                 .arg(::getpid())
                 .toUtf8());
    watch(fd);
    return true;
}

void ManagedProcess::watch(int pidfd)
{
    m_pidfd = pidfd;
    m_notifier = std::make_unique<QSocketNotifier>(qintptr(pidfd), QSocketNotifier::Read);
    connect(m_notifier.get(), &QSocketNotifier::activated, this, &ManagedProcess::onEnded);
    m_logTimer.start();
    checkLog();
}

void ManagedProcess::stop(qint64 graceMs)
{
    if (m_pid <= 0)
        return;
    m_stopping = true;
    ::kill(-pid_t(m_pid), SIGTERM);
    signalPidfd(m_pidfd, SIGTERM);
    m_killTimer.start(int(std::clamp<qint64>(graceMs, 0, 3600000)));
}

bool ManagedProcess::sendSignal(int signal, QString *error)
{
    if (m_pid <= 0)
        return *error = QStringLiteral("%1 is not running").arg(m_spec.name), false;
    if (!signalPidfd(m_pidfd, signal))
        return *error = strError(errno), false;
    return true;
}

QStringList ManagedProcess::lastLines() const
{
    QFile f(logPath());
    if (!f.open(QIODevice::ReadOnly))
        return {};
    const qint64 size = f.size();
    f.seek(qMax<qint64>(0, size - TailBytes));
    QList<QByteArray> lines = f.readAll().split('\n');
    if (size > TailBytes && !lines.isEmpty())
        lines.removeFirst(); // begun in the middle
    // From the start of its last run (its banner) on, without the agent's own "===" lines.
    qsizetype from = 0;
    for (qsizetype i = lines.size() - 1; i >= 0; --i)
        if (lines.at(i).startsWith("=== " + m_spec.name.toUtf8() + " started")) {
            from = i + 1;
            break;
        }
    QStringList tail;
    for (qsizetype i = from; i < lines.size(); ++i)
        if (!lines.at(i).startsWith("=== ") && !(i == lines.size() - 1 && lines.at(i).isEmpty()))
            tail.append(QString::fromUtf8(lines.at(i).left(MaxLineChars)));
    while (tail.size() > TailLines)
        tail.removeFirst();
    return tail;
}

void ManagedProcess::setLogBroken(const QString &error)
{
    if (m_logBrokenSinceMs != 0)
        return;
    m_logBrokenSinceMs = QDateTime::currentMSecsSinceEpoch();
    Q_EMIT logProblem(error);
}

void ManagedProcess::checkLog()
{
    struct statvfs fs {};
    if (::statvfs(QFile::encodeName(m_dir).constData(), &fs) != 0)
        return;
    if (fs.f_bavail == 0)
        setLogBroken(QStringLiteral("cannot write %1: %2").arg(logPath(), strError(ENOSPC)));
    else if (m_logBrokenSinceMs != 0 && m_log.isOpen()) {
        m_logBrokenSinceMs = 0;
        Q_EMIT logProblem(QString());
    }
}

void ManagedProcess::writeLog(const QByteArray &data)
{
    if (!m_log.isOpen())
        return;
    if (m_log.write(data) != data.size())
        setLogBroken(QStringLiteral("cannot write %1: %2").arg(logPath(), m_log.errorString()));
    m_log.unsetError();
}

void ManagedProcess::onEnded()
{
    m_notifier.reset();
    m_killTimer.stop();
    m_logTimer.stop();
    ExitInfo info;
    info.pid = m_pid;
    info.runMs = runMs();
    info.requested = m_stopping;
    const WaitResult w = reapPidfd(m_pidfd);
    const int execError = takeExecError(m_execErrorFd);
    m_execErrorFd = -1;
    ::close(m_pidfd);
    m_pidfd = -1;
    QString how;
    if (execError != 0) {
        info.failedToStart = true;
        info.error = QStringLiteral("cannot start %1: %2").arg(m_spec.program, strError(execError));
        how = info.error;
    } else if (!w.known) {
        info.statusUnknown = true;
        how = QStringLiteral("ended (adopted: its exit status went to its new parent)");
    } else {
        info.crashed = w.signaled;
        info.signal = w.signaled ? w.code : 0;
        info.exitCode = w.signaled ? 0 : w.code;
        how = info.crashed ? QStringLiteral("ended: signal %1 (%2)").arg(info.signal).arg(QString::fromLocal8Bit(strsignal(info.signal)))
                           : QStringLiteral("ended: exit code %1").arg(info.exitCode);
    }
    writeLog(QStringLiteral("=== %1 (PID %2) %3\n").arg(m_spec.name).arg(m_pid).arg(how).toUtf8());
    m_pid = 0;
    m_startTime = 0;
    m_adopted = false;
    m_stopping = false;
    Q_EMIT exited(info);
}

} // namespace dialog::agent
