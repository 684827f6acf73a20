// One process the agent started or adopted: forked and exec'd without a shell (spawn.h), writing
// its output to its own log file itself (the agent is not in its output's path, so that the
// process outlives the agent), watched through a pidfd, its stop (SIGTERM, SIGKILL after the grace
// time) and how it ended. A process adopted from an agent before this one is not this agent's
// child: its end is seen, its exit status is not (it went to its new parent).
#pragma once

#include <QElapsedTimer>
#include <QFile>
#include <QJsonObject>
#include <QObject>
#include <QSocketNotifier>
#include <QStringList>
#include <QTimer>
#include <memory>

namespace dialog::agent {

/// What a start request asks for.
struct ProcessSpec
{
    QString name;          ///< unique on this agent: [A-Za-z0-9._-]+
    QString program;       ///< absolute path, checked against the allowed list
    QStringList arguments; ///< passed as they are (no shell)
    QStringList environment; ///< "NAME=VALUE" added to the agent's own environment
    qint64 graceMs = 5000; ///< SIGTERM, then SIGKILL after this long
    /// Migratable: the hosts (agent host names) it may run on, in order; empty: this host only.
    QStringList hosts;
    qint64 lossMs = 5000; ///< host and process gone this long: the first reachable fallback takes it
};

/// How a run of a process ended.
struct ExitInfo
{
    qint64 pid = 0;
    bool crashed = false;   ///< died by a signal
    int exitCode = 0;       ///< when not crashed
    int signal = 0;         ///< when crashed
    qint64 runMs = 0;
    bool requested = false; ///< stopped by the agent on request
    bool failedToStart = false;
    bool statusUnknown = false; ///< an adopted process: how it ended is not known (counts as failed)
    QString error;          ///< why it failed to start
    bool failed() const { return failedToStart || crashed || statusUnknown || exitCode != 0; }
    QJsonObject toJson() const;
};

/// Runs one process at a time for its spec (start() again after it ended). Lives in the agent's
/// thread.
class ManagedProcess : public QObject
{
    Q_OBJECT
public:
    /// @p dir: the process's own directory (its working directory, where its cores land, and
    /// output.log). @p coreLimitBytes: RLIMIT_CORE of the child (0: no cores).
    ManagedProcess(const ProcessSpec &spec, const QString &dir, qint64 coreLimitBytes, QObject *parent = nullptr);
    ~ManagedProcess() override;

    const ProcessSpec &spec() const { return m_spec; }
    void setSpec(const ProcessSpec &spec) { m_spec = spec; }
    QString directory() const { return m_dir; }
    QString logPath() const;
    /// Starts the program without waiting for its exec; false with @p error when it cannot be forked
    /// (exited() is not emitted then). An exec that fails ends the run with ExitInfo::failedToStart.
    bool start(QString *error);
    /// Takes on the running process @p pid that an earlier agent started at @p startedMs (ms since
    /// the epoch), if it is still the same process (its /proc start time is @p startTime). False
    /// with @p error when it is gone.
    bool adopt(qint64 pid, quint64 startTime, qint64 startedMs, QString *error);
    bool isRunning() const { return m_pid > 0; }
    bool isAdopted() const { return m_adopted; }
    qint64 pid() const { return m_pid; }
    /// Its start time in clock ticks since boot (/proc/PID/stat), to know it again.
    quint64 startTime() const { return m_startTime; }
    qint64 startedMs() const { return m_startedMs; }
    qint64 runMs() const;
    /// SIGTERM to its process group, SIGKILL when it is still there after @p graceMs.
    void stop(qint64 graceMs);
    bool isStopping() const { return m_stopping; }
    /// Sends @p signal to the process; false with the OS's reason.
    bool sendSignal(int signal, QString *error);
    /// The last lines of its current (or last) run in its log, oldest first.
    QStringList lastLines() const;
    /// The log file could not be written (disk full, …) since this time (ms since the epoch; 0: fine).
    qint64 logBrokenSinceMs() const { return m_logBrokenSinceMs; }

Q_SIGNALS:
    /// Emitted exactly once per successful start(), when that run has ended.
    void exited(const dialog::agent::ExitInfo &info);
    /// The log file became unwritable (@p error) or writable again (@p error empty).
    void logProblem(const QString &error);

private:
    void watch(int pidfd);
    void onEnded();
    void writeLog(const QByteArray &data);
    /// Its own writes to the log cannot be seen: a file system without free space is taken as a
    /// log that cannot be written.
    void checkLog();
    void setLogBroken(const QString &error);

    ProcessSpec m_spec;
    QString m_dir;
    qint64 m_coreLimit = 0;
    qint64 m_pid = 0;
    int m_pidfd = -1;
    int m_execErrorFd = -1;
    std::unique_ptr<QSocketNotifier> m_notifier;
    bool m_adopted = false;
    quint64 m_startTime = 0;
    qint64 m_startedMs = 0;
    QElapsedTimer m_clock;
    QTimer m_killTimer;
    QTimer m_logTimer;
    bool m_stopping = false;
    QFile m_log;
    qint64 m_logBrokenSinceMs = 0;
};

} // namespace dialog::agent
