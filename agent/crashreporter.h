// Crash reports: for a managed process that died by a signal, its core file (where the kernel's
// core_pattern puts it) read by `gdb -batch` for a backtrace of every thread, bounded in size and
// time, with the process, host, PID, signal and the last lines it printed, into the message log
// (dialog::report, category "dialog.agent.crash") and a list of recent crashes.
#pragma once

#include <QJsonArray>
#include <QJsonObject>
#include <QObject>
#include <QStringList>
#include <functional>

namespace dialog::agent {

/// Where the kernel puts the cores of this machine, as /proc/sys/kernel/core_pattern says.
struct CorePattern
{
    QString pattern;    ///< as read ("core", "/var/crash/core.%e.%p", "|/lib/systemd/systemd-coredump …")
    bool usesPid = false; ///< kernel.core_uses_pid: ".PID" appended when the pattern has no %p
    /// The pattern names a handler program ("|…"), not a file.
    bool piped() const { return pattern.startsWith(QLatin1Char('|')); }
    /// The handler is systemd-coredump (cores can be had through coredumpctl).
    bool systemdCoredump() const { return piped() && pattern.contains(QLatin1String("systemd-coredump")); }
    static CorePattern read();
    /// The core of process @p pid (program @p program, working directory @p cwd) that died after
    /// @p sinceMs (ms since the epoch): the file's path, or empty.
    QString findCore(qint64 pid, const QString &program, const QString &cwd, qint64 sinceMs) const;
};

/// What the reporter is told about a process that died by a signal.
struct CrashInput
{
    QString process, program, host, directory;
    qint64 pid = 0;
    int signal = 0;       ///< 0: not known (an adopted process): reported only when it left a core
    qint64 runMs = 0;
    qint64 startedMs = 0; ///< ms since the epoch
    QStringList lastLines;
};

class CrashReporter : public QObject
{
    Q_OBJECT
public:
    struct Options
    {
        QString gdb = QStringLiteral("gdb"); ///< found in PATH unless absolute
        int gdbTimeoutMs = 30000;
        int maxBacktraceChars = 12000; ///< the message log keeps 16 Ki characters of a text
        qint64 coreLimitBytes = qint64(2) << 30;
        bool keepCores = false;
        int keep = 100; ///< crashes kept for crashes()
    };
    explicit CrashReporter(const Options &options, QObject *parent = nullptr);

    /// Why cores cannot be had on this machine (empty when they can): RLIMIT_CORE's hard limit 0,
    /// a handler program other than systemd-coredump, …
    QString coreProblem() const { return m_coreProblem; }
    /// RLIMIT_CORE for the children (0 when cores cannot be had).
    qint64 childCoreLimit() const;
    /// Takes the core away at once (renamed, so that a restarted copy cannot overwrite it), then
    /// runs gdb in the background; the report goes out when it is done (at most gdbTimeoutMs).
    void report(const CrashInput &crash);
    /// The crashes reported at or after @p sinceMs, oldest first.
    QJsonArray crashes(qint64 sinceMs) const;

Q_SIGNALS:
    /// Emitted once per report(), when the report went to the message log.
    void reported(const QJsonObject &crash);

private:
    void finish(QJsonObject crash, const QString &core, const QString &backtrace, const QString &why);

    Options m_options;
    CorePattern m_pattern;
    QString m_gdbPath;
    QString m_coreProblem;
    QList<QJsonObject> m_crashes;
};

/// "SIGSEGV" for 11; "signal 64" for a number without a name.
QString signalName(int signal);
/// 11 for "SEGV", "SIGSEGV" or "11"; 0 for anything else.
int signalFromName(const QString &name);

} // namespace dialog::agent
