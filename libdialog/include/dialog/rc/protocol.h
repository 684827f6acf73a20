// Names and message shapes of run control on DIALOG (shared by master, slaves, tools and the GUI).
//
// Every run-control process P (master or slave):
//   - publishes RunCtrl.P.State  (JSON: process, kind, state, busy, transition, last_transition,
//     error, time_ms, run_number; the master adds the slaves, culprits and run timing),
//   - publishes RunCtrl.P.Log    (one JSON message per update: time_ms, process, severity, text),
//   - publishes RunCtrl.P.Status (slaves: card or readout statistics, every second),
//   - answers requests on RunCtrl.P.State: data {"transition":"start","run_number":12} or just the
//     transition name; the reply is the state JSON once the transition is done, or an error,
//   - accepts the command RunCtrl.P.Command with a transition name (the same, without an answer).
// A controller of the run-control tree (the master, a segment controller) also answers requests on
// RunCtrl.P.Tree: {"action": "enable"|"disable"|"recover", "node": NAME}, the reply its state JSON.
#pragma once

#include "dialog/logrecord.h"

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
/// Where a controller of the run-control tree takes enable, disable and recover requests.
inline QString treeService(const QString &process)
{
    return QStringLiteral("RunCtrl.%1.Tree").arg(process);
}
/// The service a run-control GUI publishes while in control mode (unique in the system).
inline QString controlLockService()
{
    return QStringLiteral("RunControl.Control");
}

/// Run-control log messages use the message log's severities (info, warning, error).
using dialog::Severity;
using dialog::severityFromName;
using dialog::severityName;

inline qint64 nowMs()
{
    return QDateTime::currentMSecsSinceEpoch();
}

} // namespace dialog::rc
