// Supervision of a partition that `dialogctl up` started: processes whose partition entry says
// "restart": "on-failure" are started again on their host when they are gone.
#pragma once

#include "launcher.h"

#include <QElapsedTimer>
#include <QList>
#include <QObject>
#include <QString>

class QTimer;

namespace dialog::tool {

/// Watches the processes of the launcher's record and restarts, with the launcher's own start()
/// (locally, or over the partition's ssh_command), those whose spec says Restart::OnFailure once
/// they are gone. Any end that `dialogctl down` did not cause counts as a failure: DIALOG daemons run
/// until they are stopped.
///
/// Back-off: the n-th restart within the last 60 s waits restartDelayMs × 2^(n-1) (at most 30 s).
/// A process that would need more than restartLimit restarts within 60 s is given up: reported
/// once, left stopped, and marked "given up" in the record.
///
/// A remote process whose host does not answer the check (ssh fails) is not restarted: it may
/// still run there; the failure is reported once.
///
/// Every event (lost, restarted, restart failed, given up) is one line on stderr and a
/// dialog::report() message (category "dialog.supervise"), which reaches dialog-logger when one
/// runs. The record (processes.json) is rewritten after every restart, so `dialogctl down` signals
/// the new pid. The supervisor's own pid is kept in supervisor.pid in the run directory while it
/// runs; `dialogctl down` stops it first.
///
/// Lives in the thread that created it; polls local processes every 200 ms and remote ones (one
/// ssh call each) every 2 s.
class Supervisor : public QObject
{
    Q_OBJECT
public:
    Supervisor(const rc::Partition &partition, const QString &runDir, const QString &binDir,
               QObject *parent = nullptr);
    ~Supervisor() override;

    /// Reads the record, writes supervisor.pid and starts watching. False with @p error when the
    /// record cannot be read, another supervisor runs, or no process of the record is to be
    /// restarted (then there is nothing to supervise).
    bool start(QString *error);
    /// Path of the pid file of the supervisor of the partition in @p runDir.
    static QString pidFile(const QString &runDir);
    /// The pid of the running supervisor of @p runDir, or 0.
    static qint64 runningSupervisor(const QString &runDir);

    /// Processes watched (their spec says on-failure).
    int watched() const;

private:
    struct Watch
    {
        int index = 0;          // in m_procs
        QList<qint64> restarts; // m_clock times of the restarts within the last minute
        qint64 dueMs = -1;      // a restart is scheduled for this m_clock time
        qint64 lastCheckMs = -100000;
        qint64 startedMs = 0;
        bool givenUp = false;
        QString unknown; // why its host did not answer the last check (reported once)
    };
    void poll();
    void check(Watch &w, qint64 now);
    void restart(Watch &w, qint64 now);
    void log(int severity, const Launched &l, const QString &text);
    void record();

    rc::Partition m_partition;
    QString m_runDir;
    Launcher m_launcher;
    QList<Launched> m_procs;
    QList<Watch> m_watches;
    QTimer *m_timer = nullptr;
    QElapsedTimer m_clock;
    bool m_ownsPidFile = false;
};

} // namespace dialog::tool
