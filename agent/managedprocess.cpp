#include "managedprocess.h"

#include <QDateTime>
#include <QDir>
#include <QLoggingCategory>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <sys/resource.h>
#include <unistd.h>

Q_LOGGING_CATEGORY(lcProcess, "dialog.agent.process", QtInfoMsg)

namespace dialog::agent {

namespace {
constexpr int TailLines = 30;
constexpr int MaxLineChars = 400;
} // namespace

QJsonObject ExitInfo::toJson() const
{
    QJsonObject o{{QStringLiteral("pid"), pid}, {QStringLiteral("run_ms"), runMs}};
    if (failedToStart)
        o.insert(QStringLiteral("error"), error);
    else if (crashed)
        o.insert(QStringLiteral("signal"), signal);
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
            ::kill(pid_t(m_pid), SIGKILL);
        }
    });
}

ManagedProcess::~ManagedProcess()
{
    if (m_process) {
        m_process->disconnect(this);
        ::kill(-pid_t(m_pid), SIGKILL);
        m_process->kill();
        m_process->waitForFinished(3000);
        delete m_process;
    }
}

QString ManagedProcess::logPath() const
{
    return QDir(m_dir).filePath(QStringLiteral("output.log"));
}

bool ManagedProcess::start(QString *error)
{
    if (m_process)
        return *error = QStringLiteral("%1 is running").arg(m_spec.name), false;
    if (!QDir().mkpath(m_dir))
        return *error = QStringLiteral("cannot create %1").arg(m_dir), false;
    if (!m_log.isOpen()) {
        m_log.setFileName(logPath());
        // Unbuffered: a write that fails (disk full) fails at once, and is reported.
        if (!m_log.open(QIODevice::WriteOnly | QIODevice::Append | QIODevice::Unbuffered)) {
            if (m_logBrokenSinceMs == 0) {
                m_logBrokenSinceMs = QDateTime::currentMSecsSinceEpoch();
                Q_EMIT logProblem(QStringLiteral("cannot open %1: %2").arg(logPath(), m_log.errorString()));
            }
        }
    }
    auto *p = new QProcess(this);
    p->setProgram(m_spec.program);
    p->setArguments(m_spec.arguments);
    p->setWorkingDirectory(m_dir);
    p->setProcessChannelMode(QProcess::MergedChannels);
    p->setStandardInputFile(QProcess::nullDevice());
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    for (const QString &kv : m_spec.environment)
        env.insert(kv.section(QLatin1Char('='), 0, 0), kv.section(QLatin1Char('='), 1));
    p->setProcessEnvironment(env);
    const qint64 coreLimit = m_coreLimit;
    p->setChildProcessModifier([coreLimit] {
        // In the child, between fork and exec: only async-signal-safe calls.
        ::setpgid(0, 0); // its own process group: a stop reaches what it started too
        struct rlimit rl {};
        if (::getrlimit(RLIMIT_CORE, &rl) == 0) {
            rlim_t want = rlim_t(coreLimit);
            if (rl.rlim_max != RLIM_INFINITY && want > rl.rlim_max)
                want = rl.rlim_max;
            rl.rlim_cur = want;
            ::setrlimit(RLIMIT_CORE, &rl);
        }
        for (int s : {SIGTERM, SIGINT, SIGHUP, SIGPIPE, SIGQUIT})
            ::signal(s, SIG_DFL);
    });
    connect(p, &QProcess::readyReadStandardOutput, this, &ManagedProcess::onOutput);
    connect(p, &QProcess::finished, this, &ManagedProcess::onFinished);
    connect(p, &QProcess::errorOccurred, this, [this, p](QProcess::ProcessError e) {
        if (e == QProcess::FailedToStart && p == m_process)
            onFailedToStart(p->errorString());
    });
    // Not waited for: the PID is known once forked, and an exec that fails comes as FailedToStart
    // (the agent starts many processes at once without waiting for each).
    p->start();
    if (p->state() == QProcess::NotRunning) {
        *error = QStringLiteral("cannot start %1: %2").arg(m_spec.program, p->errorString());
        p->disconnect(this);
        delete p;
        return false;
    }
    m_process = p;
    m_pid = p->processId();
    m_stopping = false;
    m_clock.start();
    const QByteArray banner = QStringLiteral("=== %1 started %2 (PID %3): %4\n")
                                  .arg(m_spec.name, QDateTime::currentDateTimeUtc().toString(Qt::ISODateWithMs))
                                  .arg(m_pid)
                                  .arg((QStringList{m_spec.program} + m_spec.arguments).join(QLatin1Char(' ')))
                                  .toUtf8();
    writeLog(banner);
    return true;
}

void ManagedProcess::stop(qint64 graceMs)
{
    if (!m_process)
        return;
    m_stopping = true;
    ::kill(-pid_t(m_pid), SIGTERM);
    ::kill(pid_t(m_pid), SIGTERM);
    m_killTimer.start(int(std::clamp<qint64>(graceMs, 0, 3600000)));
}

bool ManagedProcess::sendSignal(int signal, QString *error)
{
    if (!m_process)
        return *error = QStringLiteral("%1 is not running").arg(m_spec.name), false;
    if (::kill(pid_t(m_pid), signal) != 0)
        return *error = QString::fromLocal8Bit(std::strerror(errno)), false;
    return true;
}

void ManagedProcess::onOutput()
{
    const QByteArray data = m_process->readAllStandardOutput();
    if (data.isEmpty())
        return;
    keepLines(data);
    writeLog(data);
}

void ManagedProcess::keepLines(const QByteArray &data)
{
    m_partialLine += data;
    qsizetype from = 0;
    for (qsizetype nl = m_partialLine.indexOf('\n'); nl >= 0; nl = m_partialLine.indexOf('\n', from)) {
        m_tail.append(QString::fromUtf8(m_partialLine.mid(from, qMin<qsizetype>(nl - from, MaxLineChars))));
        from = nl + 1;
    }
    m_partialLine.remove(0, from);
    if (m_partialLine.size() > MaxLineChars) { // a line without an end: keep its start
        m_tail.append(QString::fromUtf8(m_partialLine.left(MaxLineChars)));
        m_partialLine.clear();
    }
    while (m_tail.size() > TailLines)
        m_tail.removeFirst();
}

void ManagedProcess::writeLog(const QByteArray &data)
{
    if (!m_log.isOpen()) {
        m_logBytesLost += quint64(data.size());
        return;
    }
    const qint64 n = m_log.write(data);
    if (n == data.size()) {
        if (m_logBrokenSinceMs != 0) {
            m_logBrokenSinceMs = 0;
            Q_EMIT logProblem(QString());
        }
        return;
    }
    m_logBytesLost += quint64(data.size() - qMax<qint64>(0, n));
    if (m_logBrokenSinceMs == 0) {
        m_logBrokenSinceMs = QDateTime::currentMSecsSinceEpoch();
        Q_EMIT logProblem(QStringLiteral("cannot write %1: %2").arg(logPath(), m_log.errorString()));
    }
    m_log.unsetError();
}

void ManagedProcess::onFailedToStart(const QString &error)
{
    m_killTimer.stop();
    ExitInfo info;
    info.pid = m_pid;
    info.failedToStart = true;
    info.error = QStringLiteral("cannot start %1: %2").arg(m_spec.program, error);
    info.requested = m_stopping;
    writeLog(QStringLiteral("=== %1: %2\n").arg(m_spec.name, info.error).toUtf8());
    m_process->disconnect(this);
    m_process->deleteLater();
    m_process = nullptr;
    m_pid = 0;
    m_stopping = false;
    Q_EMIT exited(info);
}

void ManagedProcess::onFinished(int exitCode, QProcess::ExitStatus status)
{
    onOutput();
    if (!m_partialLine.isEmpty()) {
        m_tail.append(QString::fromUtf8(m_partialLine));
        m_partialLine.clear();
    }
    m_killTimer.stop();
    ExitInfo info;
    info.pid = m_pid;
    info.runMs = m_clock.elapsed();
    info.crashed = status == QProcess::CrashExit;
    info.signal = info.crashed ? exitCode : 0;
    info.exitCode = info.crashed ? 0 : exitCode;
    info.requested = m_stopping;
    writeLog(QStringLiteral("=== %1 (PID %2) ended: %3\n")
                 .arg(m_spec.name)
                 .arg(m_pid)
                 .arg(info.crashed ? QStringLiteral("signal %1 (%2)").arg(info.signal).arg(QString::fromLocal8Bit(strsignal(info.signal)))
                                   : QStringLiteral("exit code %1").arg(info.exitCode))
                 .toUtf8());
    m_process->disconnect(this);
    m_process->deleteLater();
    m_process = nullptr;
    m_pid = 0;
    m_stopping = false;
    Q_EMIT exited(info);
}

} // namespace dialog::agent
