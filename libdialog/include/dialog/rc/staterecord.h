// Typed records of the run-control messages (see protocol.h for the services that carry them):
// the state every run-control process publishes on RunCtrl.P.State, and the messages of
// RunCtrl.P.Log. One writer (the processes) and every reader (the master, the run-control GUI, the
// dialogctl tool, tests) go through these types, so the JSON keys live in one place.
#pragma once

#include "dialog/rc/protocol.h"
#include "dialog/rc/statemachine.h"

#include <QByteArray>
#include <QList>
#include <QString>
#include <QStringList>
#include <optional>

namespace dialog::rc {

/// The master's view of one of its slaves, as carried in the master's state.
struct SlaveRecord
{
    QString name;
    QString kind;         ///< "control" or "readout"
    bool present = false; ///< a state message arrived from the slave's current incarnation
    bool lost = false;    ///< the slave's process was declared lost
    /// The slave's state; only meaningful while present.
    State state = State::Initial;
    bool busy = false;
    std::optional<Transition> transition; ///< the transition in progress, while busy
    QString error;
    qint64 pid = 0;

    bool operator==(const SlaveRecord &o) const;
};

/// What RunCtrl.P.State carries: one process' state machine, and for the master the run and every
/// slave. Also the reply to a transition request.
struct StateRecord
{
    QString process;
    QString kind; ///< "master", "control" or "readout"
    State state = State::Initial;
    bool busy = false;
    std::optional<Transition> transition;     ///< in progress, while busy
    std::optional<Transition> lastTransition; ///< the last one begun
    qint64 transitionMs = 0;                  ///< how long the last completed transition took
    QString error;                            ///< why the process is in Error (empty otherwise)
    qint64 timeMs = 0;                        ///< when the record was made (ms since the epoch)
    qint64 pid = 0;
    quint32 runNumber = 0;

    // The master's extras (empty/zero for slaves).
    QString partition;
    QString runType;
    QList<SlaveRecord> slaves;
    QStringList culprits;                 ///< the slaves that caused the Error state
    std::optional<State> recoveringTo;    ///< the state an automatic recovery is bringing slaves back to
    qint64 runStartMs = 0, runStopMs = 0; ///< of the current (or last) run, ms since the epoch
    qint64 runActiveMs = 0;               ///< data-taking time of the current run, pauses excluded

    bool isMaster() const { return kind == QLatin1String("master"); }
    /// The slave named @p name, or nullptr.
    const SlaveRecord *slave(const QString &name) const;

    /// Compact JSON, the form published on RunCtrl.P.State.
    QByteArray toJson() const;
    /// Parses what toJson() writes. Unknown keys are ignored (newer writers); a missing or unknown
    /// "state" is an error (std::nullopt, with a one-line reason in @p error).
    static std::optional<StateRecord> fromJson(const QByteArray &json, QString *error = nullptr);

    bool operator==(const StateRecord &o) const;
};

/// One message of RunCtrl.P.Log, the live log of a run-control process (the message log keeps
/// dialog::LogRecord, with more fields).
struct LogMessage
{
    qint64 timeMs = 0;
    QString process;
    Severity severity = Severity::Info;
    QString text;

    QByteArray toJson() const;
    /// std::nullopt (with @p error) unless it is a JSON object with a known severity.
    static std::optional<LogMessage> fromJson(const QByteArray &json, QString *error = nullptr);
};

/// A transition request sent to RunCtrl.P.State: the transition and its parameters (the run
/// number and run type of a start). On the wire either the transition name alone or
/// {"transition": "start", "run_number": 12, "run_type": "physics"}.
struct TransitionRequest
{
    Transition transition = Transition::Reset;
    quint32 runNumber = 0;
    QString runType;

    QByteArray toJson() const;
    static std::optional<TransitionRequest> fromJson(const QByteArray &data, QString *error = nullptr);
};

} // namespace dialog::rc
