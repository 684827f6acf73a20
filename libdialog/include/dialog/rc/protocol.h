// Names and message shapes of run control on DIALOG (shared by master, slaves, tools and the GUI).
//
// Every run-control process P (master or slave):
//   - publishes RunCtrl.P.State  (JSON: process, kind, state, busy, transition, last_transition,
//     error, time_ms, run_number; the master adds the slaves, culprits and run timing),
//   - publishes RunCtrl.P.Log    (one JSON log record per update: time_ms, process, severity, text),
//   - publishes RunCtrl.P.Status (slaves: card or readout statistics, every second),
//   - answers requests on RunCtrl.P.State: data {"transition":"start","run_number":12} or just the
//     transition name; the reply is the state JSON once the transition is done, or an error,
//   - accepts the command RunCtrl.P.Command with a transition name (the same, without an answer).
#pragma once

#include <QDateTime>
#include <QJsonObject>
#include <QString>

namespace dialog::rc {

inline QString stateService(const QString &process)
{
    return QStringLiteral("RunCtrl.%1.State").arg(process);
}
inline QString logService(const QString &process)
{
    return QStringLiteral("RunCtrl.%1.Log").arg(process);
}
inline QString statusService(const QString &process)
{
    return QStringLiteral("RunCtrl.%1.Status").arg(process);
}
inline QString commandName(const QString &process)
{
    return QStringLiteral("RunCtrl.%1.Command").arg(process);
}
/// The service a run-control GUI publishes while in control mode (unique in the system).
inline QString controlLockService()
{
    return QStringLiteral("RunControl.Control");
}

enum class Severity
{
    Info,
    Warning,
    Error,
};

inline QString severityName(Severity s)
{
    switch (s) {
    case Severity::Info:
        return QStringLiteral("info");
    case Severity::Warning:
        return QStringLiteral("warning");
    case Severity::Error:
        return QStringLiteral("error");
    }
    return {};
}

inline qint64 nowMs()
{
    return QDateTime::currentMSecsSinceEpoch();
}

} // namespace dialog::rc
