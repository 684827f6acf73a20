// One process the agent started: its QProcess (the argument vector given to execve, never to a
// shell), its output copied to a log file of its own and the last lines kept in memory, its stop
// (SIGTERM, SIGKILL after the grace time) and how it ended.
#pragma once

#include <QElapsedTimer>
#include <QFile>
#include <QJsonObject>
#include <QObject>
#include <QProcess>
#include <QStringList>
#include <QTimer>

namespace dialog::agent {

/// What a start request asks for.
struct ProcessSpec
{
    QString name;          ///< unique on this agent: [A-Za-z0-9._-]+
    QString program;       ///< absolute path, checked against the allowed list
    QStringList arguments; ///< passed as they are (no shell)
    QStringList environment; ///< "NAME=VALUE" added to the agent's own environment
    qint64 graceMs = 5000; ///< SIGTERM, then SIGKILL after this long
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
    QString error;          ///< why it failed to start
    bool failed() const { return failedToStart || crashed || exitCode != 0; }
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
    bool isRunning() const { return m_process != nullptr; }
    qint64 pid() const { return m_pid; }
    qint64 runMs() const { return m_process ? m_clock.elapsed() : 0; }
    /// SIGTERM to its process group, SIGKILL when it is still there after @p graceMs.
    void stop(qint64 graceMs);
    bool isStopping() const { return m_stopping; }
    /// Sends @p signal to the process; false with the OS's reason.
    bool sendSignal(int signal, QString *error);
    /// The last lines it printed (stdout and stderr), oldest first.
    QStringList lastLines() const { return m_tail; }
    /// The log file could not be written (disk full, …) since this time (ms since the epoch; 0: fine).
    qint64 logBrokenSinceMs() const { return m_logBrokenSinceMs; }
    quint64 logBytesLost() const { return m_logBytesLost; }

Q_SIGNALS:
    /// Emitted exactly once per successful start(), when that run has ended.
    void exited(const dialog::agent::ExitInfo &info);
    /// The log file became unwritable (@p error) or writable again (@p error empty).
    void logProblem(const QString &error);

private:
    void onOutput();
    void onFinished(int exitCode, QProcess::ExitStatus status);
    void onFailedToStart(const QString &error);
    void keepLines(const QByteArray &data);
    void writeLog(const QByteArray &data);

    ProcessSpec m_spec;
    QString m_dir;
    qint64 m_coreLimit = 0;
    QProcess *m_process = nullptr;
    qint64 m_pid = 0;
    QElapsedTimer m_clock;
    QTimer m_killTimer;
    bool m_stopping = false;
    QFile m_log;
    qint64 m_logBrokenSinceMs = 0;
    quint64 m_logBytesLost = 0;
    QStringList m_tail;
    QByteArray m_partialLine;
};

} // namespace dialog::agent
