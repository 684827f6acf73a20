// The process table's state file: written after every change, read back by the next agent, which
// adopts the processes still running (ProcessTable::restore()).
#include "processtable.h"

#include "agentstate.h"
#include "processentry.h"

#include "dialog/report.h"

#include <QDateTime>

namespace dialog::agent {

void ProcessTable::saveState()
{
    m_saveTimer.stop();
    QList<ProcessRecord> records;
    for (const auto &e : std::as_const(m_entries)) {
        ProcessRecord r;
        r.spec = e->process->spec();
        r.policy = e->tracker.policy();
        r.restarts = e->tracker.restarts();
        r.state = e->state;
        if (e->process->isRunning()) {
            r.pid = e->process->pid();
            r.startTime = e->process->startTime();
            r.startedMs = e->startedMs;
        }
        if (e->hasExited)
            r.lastExit = e->last.toJson();
        records.append(r);
    }
    if (const Status st = writeAgentState(statePath(), records); !st.isOk())
        dialog::report(Severity::Error, QStringLiteral("dialog.agent.processes"),
                       QStringLiteral("agent on %1: %2; a restarted agent would not adopt its processes").arg(m_host, st.message()), {});
}

QString ProcessTable::restore()
{
    QList<ProcessRecord> records;
    QStringList problems;
    if (const Status st = readAgentState(statePath(), &records, &problems); !st.isOk())
        return st.message();
    QStringList adopted, ended;
    for (const ProcessRecord &r : std::as_const(records)) {
        if (!isValidName(r.spec.name) || m_entries.contains(r.spec.name))
            continue;
        Entry *e = makeEntry(r.spec);
        e->tracker = RestartTracker(r.policy);
        e->tracker.setRestarts(r.restarts);
        e->state = r.state;
        e->startedMs = r.startedMs;
        if (!r.lastExit.isEmpty()) {
            e->hasExited = true;
            e->last.pid = r.lastExit.value(QStringLiteral("pid")).toInteger();
            e->last.runMs = r.lastExit.value(QStringLiteral("run_ms")).toInteger();
            e->last.crashed = r.lastExit.contains(QStringLiteral("signal"));
            e->last.signal = r.lastExit.value(QStringLiteral("signal")).toInt();
            e->last.exitCode = r.lastExit.value(QStringLiteral("exit_code")).toInt();
            e->last.statusUnknown = r.lastExit.value(QStringLiteral("status_unknown")).toBool();
            e->last.requested = r.lastExit.value(QStringLiteral("requested")).toBool();
            e->last.error = r.lastExit.value(QStringLiteral("error")).toString();
            e->last.failedToStart = !e->last.error.isEmpty();
        }
        QString why;
        if (r.pid > 0 && e->process->adopt(r.pid, r.startTime, r.startedMs, &why)) {
            adopted << QStringLiteral("%1 (PID %2)").arg(r.spec.name).arg(r.pid);
            if (r.state == QLatin1String("stopping")) // its stop goes on
                e->process->stop(r.spec.graceMs);
            continue;
        }
        if (r.pid > 0) {
            // It ended while no agent watched: as an end of unknown status (its policy applies).
            ended << QStringLiteral("%1 (PID %2: %3)").arg(r.spec.name).arg(r.pid).arg(why);
            ExitInfo info;
            info.pid = r.pid;
            info.statusUnknown = true;
            info.runMs = qMax<qint64>(0, QDateTime::currentMSecsSinceEpoch() - r.startedMs);
            info.requested = r.state == QLatin1String("stopping");
            onExited(e, info);
        } else if (r.state == QLatin1String("restarting")) {
            e->restartTimer.start(0);
        }
    }
    scheduleSave();
    QStringList said;
    if (!adopted.isEmpty())
        said << QStringLiteral("adopted %1").arg(adopted.join(QStringLiteral(", ")));
    if (!ended.isEmpty())
        said << QStringLiteral("ended while no agent watched: %1").arg(ended.join(QStringLiteral(", ")));
    if (!problems.isEmpty())
        said << QStringLiteral("records not read: %1").arg(problems.join(QStringLiteral("; ")));
    return said.join(QStringLiteral("; "));
}

} // namespace dialog::agent
