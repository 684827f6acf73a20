// The processes of one agent by name: started and stopped on request, started again by their
// restart policy, crash reports for those that die by a signal.
#pragma once

#include "managedprocess.h"
#include "restartpolicy.h"

#include "dialog/status.h"

#include <QHash>
#include <QJsonArray>
#include <QObject>
#include <QTimer>
#include <functional>
#include <memory>

namespace dialog::agent {

class CrashReporter;

class ProcessTable : public QObject
{
    Q_OBJECT
public:
    using Done = std::function<void(const Status &, const QJsonObject &)>;

    /// @p dataDir: each process gets <dataDir>/<name>/ (output.log, its cores), and the table's
    /// state file is <dataDir>/.agent-state.json. @p reporter may be null (no crash reports) and
    /// must outlive the table.
    ProcessTable(const QString &dataDir, const QString &host, CrashReporter *reporter, QObject *parent = nullptr);
    ~ProcessTable() override;

    /// True for a name a process may have here: [A-Za-z0-9._-]+, at most 200 characters, not
    /// beginning with '.' (the agent's own files).
    static bool isValidName(const QString &name);
    /// Starts @p spec under @p policy; AlreadyExists while a process of that name runs. A process
    /// of that name that ended is replaced (its log file goes on). @p standby: kept, not started
    /// (state "standby": a migratable process's fallback, started by takeOver()).
    Status start(const ProcessSpec &spec, const RestartPolicy &policy, QJsonObject *out, bool standby = false);
    /// A migratable process (ProcessSpec::hosts) as the migration logic sees it.
    struct Migratable
    {
        QString name, state;
        qint64 pid = 0, lastPid = 0;
        QStringList hosts;
        qint64 lossMs = 0;
    };
    QList<Migratable> migratable() const;
    /// Starts the standby @p name here (@p why for the message log).
    Status takeOver(const QString &name, const QString &why);
    /// Stops the running @p name because another copy holds its name; standby once it ended.
    void yield(const QString &name, const QString &why);
    /// Asked before a migratable process is started again by its policy: false puts it on standby.
    void setRestartGate(std::function<bool(const QString &name)> gate) { m_restartGate = std::move(gate); }
    /// Stops @p name (SIGTERM, SIGKILL after @p graceMs; < 0: its own grace time); @p done is
    /// called once it ended, with how.
    void stop(const QString &name, qint64 graceMs, Done done);
    /// Sends @p signal to @p name (no restart policy change: a death by it is handled as any other).
    Status signal(const QString &name, int signal);
    /// Forgets a process that is not running (its directory stays).
    Status remove(const QString &name);
    /// Every process: name, state, pid, program, arguments, restart policy, restarts, last exit.
    QJsonArray list() const;
    QJsonObject describe(const QString &name) const;
    int size() const { return int(m_entries.size()); }
    int runningCount() const;
    /// Takes on the processes of the state file an agent before this one left: a running one that
    /// is still the same process (PID and /proc start time) is adopted, one that ended meanwhile is
    /// handled as an end of unknown status (its restart policy applies). Returns what it did, for
    /// the log.
    QString restore();
    QString statePath() const;
    /// Stops every process, waiting for them (at most their grace time, then SIGKILL).
    void shutdown();
    /// Leaves every process running, for the next agent to adopt: the state file is written, the
    /// table emptied.
    void detach();

Q_SIGNALS:
    /// A process started (on request or by its policy).
    void started(const QString &name, qint64 pid);
    /// A process ended.
    void ended(const QString &name, const dialog::agent::ExitInfo &info);

private:
    struct Entry;
    Entry *makeEntry(const ProcessSpec &spec);
    void onExited(Entry *e, const ExitInfo &info);
    void scheduleSave();
    void saveState();
    bool mayRestart(Entry *e);
    void restart(Entry *e);
    QJsonObject entryJson(const Entry &e) const;

    QString m_dataDir, m_host;
    CrashReporter *m_reporter;
    QHash<QString, std::shared_ptr<Entry>> m_entries;
    bool m_shuttingDown = false;
    QTimer m_saveTimer;
    std::function<bool(const QString &)> m_restartGate;
};

} // namespace dialog::agent
