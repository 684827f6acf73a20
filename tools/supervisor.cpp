#include "supervisor.h"

#include "dialog/report.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QSaveFile>
#include <QTimer>
#include <cstdio>

namespace dialog::tool {

namespace {
constexpr qint64 WindowMs = 60000;
constexpr qint64 MaxDelayMs = 30000;
constexpr int LocalPollMs = 200;
constexpr int RemotePollMs = 2000;

bool processIsOurs(qint64 pid, const QByteArray &program)
{
    QFile cmd(QStringLiteral("/proc/%1/cmdline").arg(pid));
    return pid > 0 && cmd.open(QIODevice::ReadOnly) && cmd.readAll().contains(program);
}
} // namespace

Supervisor::Supervisor(const rc::Partition &partition, const QString &runDir, const QString &binDir,
                       QObject *parent)
    : QObject(parent), m_partition(partition), m_runDir(runDir), m_launcher(partition, runDir, binDir)
{
    m_clock.start();
}

Supervisor::~Supervisor()
{
    if (m_ownsPidFile)
        QFile::remove(pidFile(m_runDir));
}

QString Supervisor::pidFile(const QString &runDir)
{
    return QDir(runDir).filePath(QStringLiteral("supervisor.pid"));
}

qint64 Supervisor::runningSupervisor(const QString &runDir)
{
    QFile f(pidFile(runDir));
    if (!f.open(QIODevice::ReadOnly))
        return 0;
    const qint64 pid = f.readAll().trimmed().toLongLong();
    // A stale file (the supervisor was killed) or a recycled pid does not count.
    return pid != QCoreApplication::applicationPid() && processIsOurs(pid, "dialogctl") ? pid : 0;
}

int Supervisor::watched() const
{
    return int(m_watches.size());
}

bool Supervisor::start(QString *error)
{
    if (const qint64 other = runningSupervisor(m_runDir)) {
        *error = QStringLiteral("partition %1 is already supervised (pid %2, %3)")
                     .arg(m_partition.name)
                     .arg(other)
                     .arg(pidFile(m_runDir));
        return false;
    }
    if (!m_launcher.readRecord(&m_procs, error))
        return false;
    if (m_procs.isEmpty()) {
        *error = QStringLiteral("partition %1: nothing recorded in %2 (not up?)")
                     .arg(m_partition.name, m_launcher.recordFile());
        return false;
    }
    const QList<rc::ProcessSpec> specs = m_partition.processes();
    for (int i = 0; i < m_procs.size(); ++i) {
        for (const rc::ProcessSpec &s : specs) {
            if (s.role != m_procs[i].spec.role || s.name != m_procs[i].spec.name)
                continue;
            m_procs[i].spec = s; // the record keeps no arguments; the partition has them all
            if (s.restart == rc::ProcessSpec::Restart::OnFailure) {
                Watch w;
                w.index = i;
                w.startedMs = m_clock.elapsed();
                // One that did not come up is started again like one that was lost.
                w.givenUp = m_procs[i].status.startsWith(QLatin1String("given up"));
                m_watches << w;
            }
        }
    }
    if (m_watches.isEmpty()) {
        *error = QStringLiteral(
                     "no process of partition %1 says \"restart\": \"on-failure\"; nothing to supervise")
                     .arg(m_partition.name);
        return false;
    }
    QSaveFile f(pidFile(m_runDir));
    if (!f.open(QIODevice::WriteOnly) ||
        f.write(QByteArray::number(QCoreApplication::applicationPid()) + '\n') < 0 || !f.commit()) {
        *error = QStringLiteral("cannot write %1: %2").arg(f.fileName(), f.errorString());
        return false;
    }
    m_ownsPidFile = true;
    std::fprintf(stderr, "dialogctl supervise: supervising %d processes of partition %s (pid %lld)\n",
                 int(m_watches.size()), qPrintable(m_partition.name),
                 qlonglong(QCoreApplication::applicationPid()));
    std::fflush(stderr);
    m_timer = new QTimer(this);
    connect(m_timer, &QTimer::timeout, this, &Supervisor::poll);
    m_timer->start(LocalPollMs / 4);
    poll();
    return true;
}

void Supervisor::poll()
{
    const qint64 now = m_clock.elapsed();
    for (Watch &w : m_watches)
        if (!w.givenUp)
            check(w, now);
}

void Supervisor::check(Watch &w, qint64 now)
{
    Launched &l = m_procs[w.index];
    if (w.dueMs >= 0) {
        if (now >= w.dueMs)
            restart(w, now);
        return;
    }
    if (now - w.lastCheckMs < (l.spec.isLocal() ? LocalPollMs : RemotePollMs))
        return;
    w.lastCheckMs = now;
    QString error;
    const Launcher::Liveness live = m_launcher.probe(l, &error);
    if (live == Launcher::Liveness::Unknown) {
        // Its host did not answer: the process may well run. Starting a second one would be worse.
        if (error != w.unknown)
            log(int(Severity::Warning), l,
                QStringLiteral("cannot check %1 on %2 (%3); not restarted while its host does not answer")
                    .arg(l.spec.name, l.spec.host, error));
        w.unknown = error;
        return;
    }
    w.unknown.clear();
    if (live == Launcher::Liveness::Alive)
        return;
    while (!w.restarts.isEmpty() && now - w.restarts.first() >= WindowMs)
        w.restarts.removeFirst();
    QString was = l.pid > 0 ? QStringLiteral("pid %1, seen running for %2 s")
                                  .arg(l.pid)
                                  .arg((now - w.startedMs) / 1000.0, 0, 'f', 1)
                            : QStringLiteral("not started");
    const QString last = m_launcher.logTail(l, 1).trimmed(); // local processes only
    if (!last.isEmpty())
        was += QStringLiteral(", its log ends: ") + last;
    if (w.restarts.size() >= l.spec.restartLimit) {
        w.givenUp = true;
        l.status = QStringLiteral("given up: %1 restarts within a minute").arg(w.restarts.size());
        record(); // before the line that tells it: whoever reads the line finds the record up to date
        log(int(Severity::Error), l,
            QStringLiteral("%1 on %2 is gone again (%3) after %4 restarts within a minute; given up "
                           "(restart_limit %5)")
                .arg(l.spec.name, l.spec.host, was)
                .arg(w.restarts.size())
                .arg(l.spec.restartLimit));
        return;
    }
    const qint64 delay = qMin<qint64>(MaxDelayMs, qint64(l.spec.restartDelayMs) << w.restarts.size());
    w.dueMs = now + delay;
    l.status = QStringLiteral("lost");
    log(int(Severity::Warning), l,
        QStringLiteral("%1 on %2 is gone (%3); restart %4 of at most %5 per minute in %6 ms")
            .arg(l.spec.name, l.spec.host, was)
            .arg(w.restarts.size() + 1)
            .arg(l.spec.restartLimit)
            .arg(delay));
}

void Supervisor::restart(Watch &w, qint64 now)
{
    Launched &l = m_procs[w.index];
    w.dueMs = -1;
    w.restarts << now;
    w.startedMs = now;
    w.lastCheckMs = now;
    Launched fresh;
    QString error;
    // The log of the lost instance says why it was lost: keep it as LOG.1.
    if (!m_launcher.keepLog(l, &error))
        log(int(Severity::Warning), l, QStringLiteral("%1: %2").arg(l.spec.name, error));
    if (!m_launcher.start(l.spec, &fresh, &error)) {
        // Counted as a restart: a host that keeps refusing ends as given up, not in a tight loop.
        l.pid = 0;
        l.status = QStringLiteral("restart failed: ") + error;
        record();
        log(int(Severity::Error), l,
            QStringLiteral("cannot restart %1 on %2: %3").arg(l.spec.name, l.spec.host, error));
        return;
    }
    l.pid = fresh.pid;
    l.log = fresh.log;
    l.status = QStringLiteral("restarted");
    record();
    log(int(Severity::Warning), l,
        QStringLiteral("restarted %1 on %2 (pid %3; restart %4 within a minute)")
            .arg(l.spec.name, l.spec.host)
            .arg(l.pid)
            .arg(w.restarts.size()));
}

void Supervisor::log(int severity, const Launched &l, const QString &text)
{
    std::fprintf(stderr, "dialogctl supervise: %s\n", qPrintable(text));
    std::fflush(stderr);
    report(Severity(severity), QStringLiteral("dialog.supervise"), text,
           {{QStringLiteral("partition"), m_partition.name},
            {QStringLiteral("process"), l.spec.name},
            {QStringLiteral("host"), l.spec.host},
            {QStringLiteral("pid"), l.pid}});
}

void Supervisor::record()
{
    QString error;
    if (!m_launcher.writeRecord(m_procs, &error)) {
        std::fprintf(stderr, "dialogctl supervise: %s\n", qPrintable(error));
        std::fflush(stderr);
    }
}

} // namespace dialog::tool
