// Typed records of the run-control messages (see protocol.h for the services that carry them):
// the state every run-control process publishes on RunCtrl.P.State, and the messages of
// RunCtrl.P.Log. One writer (the processes) and every reader (the master, the run-control GUI, the
// dialogctl tool, tests) go through these types, so the JSON keys live in one place.
#pragma once

#include "dialog/rc/protocol.h"
#include "dialog/rc/statemachine.h"

#include <QByteArray>
#include <QJsonArray>
#include <QJsonObject>
#include <QList>
#include <QString>
#include <QStringList>
#include <optional>

namespace dialog::rc {

/// The master's view of one of its slaves, as carried in the master's state.
struct SlaveRecord
{
    /// The slave's process name.
    QString name;
    QString kind;         ///< "control" or "readout"
    bool present = false; ///< a state message arrived from the slave's current incarnation
    bool lost = false;    ///< the slave's process was declared lost
    /// The slave's state; only meaningful while present.
    State state = State::Initial;
    /// True while the slave is in a transition.
    bool busy = false;
    std::optional<Transition> transition; ///< the transition in progress, while busy
    /// Why the slave is in Error (empty otherwise).
    QString error;
    /// The slave's operating-system process id (0: not known).
    qint64 pid = 0;
    /// False while the node is disabled: it gets no commands and its state does not count.
    bool enabled = true;
    /// A failure takes it out of the run instead of putting the run in Error.
    bool removable = false;
    /// Taken out of the run (stopless removal) until it is recovered or the run is unconfigured.
    bool removed = false;
    /// Why it was removed (empty while it is in the run).
    QString removedReason;

    /// Equal when every field is.
    bool operator==(const SlaveRecord &o) const;
};

/// A node of the run-control tree taken out of the run (stopless removal), as listed in every
/// controller's state up to the master's.
struct RemovedNode
{
    QString node;      ///< the slave or segment removed
    QString segment;   ///< the controller that removed it (the master's name at the top)
    QString reason;    ///< why ("lost", "in Error: …", "no answer within 5000 ms")
    qint64 timeMs = 0; ///< when, ms since the epoch

    /// Equal when every field is.
    bool operator==(const RemovedNode &o) const;
};

/// What RunCtrl.P.State carries: one process' state machine, and for the master the run and every
/// slave. Also the reply to a transition request.
struct StateRecord
{
    /// The process whose state this is.
    QString process;
    QString kind; ///< "master", "segment" (a segment controller of the tree), "control" or "readout"
    /// The state of its state machine.
    State state = State::Initial;
    /// True while a transition is in progress.
    bool busy = false;
    std::optional<Transition> transition;     ///< in progress, while busy
    std::optional<Transition> lastTransition; ///< the last one begun
    qint64 transitionMs = 0;                  ///< how long the last completed transition took
    QString error;                            ///< why the process is in Error (empty otherwise)
    qint64 timeMs = 0;                        ///< when the record was made (ms since the epoch)
    /// The process's operating-system process id.
    qint64 pid = 0;
    /// The current (or last) run's number; 0 before the first run.
    quint32 runNumber = 0;

    // The master's extras (empty/zero for slaves).
    /// The partition's name.
    QString partition;
    /// The current (or last) run's type ("physics", …).
    QString runType;
    /// Every slave of the partition, in the partition's order.
    QList<SlaveRecord> slaves;
    QStringList culprits;                 ///< the slaves that caused the Error state
    std::optional<State> recoveringTo;    ///< the state an automatic recovery is bringing slaves back to
    ///@{
    qint64 runStartMs = 0, runStopMs = 0; ///< of the current (or last) run, ms since the epoch
    ///@}
    qint64 runActiveMs = 0;               ///< data-taking time of the current run, pauses excluded
    /// The nodes removed from the run in this controller's part of the tree (all of them at the master).
    QList<RemovedNode> removed;
    /// The run-control tree below this controller: one object per child ({"name", "kind", "state",
    /// "busy", "present", "lost", "enabled", "removable", "removed", "reason", "error", "children"}),
    /// a segment's children nested in it.
    QJsonArray tree;

    /// True for a controller's record: the master's (kind "master") or a segment controller's ("segment").
    bool isMaster() const { return kind == QLatin1String("master") || kind == QLatin1String("segment"); }
    /// The slave named @p name, or nullptr.
    const SlaveRecord *slave(const QString &name) const;

    /// Compact JSON, the form published on RunCtrl.P.State.
    QByteArray toJson() const;
    /// Parses what toJson() writes into @p out (untouched on failure). Unknown keys are ignored
    /// (newer writers); malformed JSON or a missing or unknown "state" is Status::Code::BadRequest
    /// with a one-line reason.
    static Status fromJson(const QByteArray &json, StateRecord *out);

    /// Equal when every field is.
    bool operator==(const StateRecord &o) const;
};

/// One message of RunCtrl.P.Log, the live log of a run-control process (the message log keeps
/// dialog::LogRecord, with more fields).
struct LogMessage
{
    /// When it was written, ms since the epoch.
    qint64 timeMs = 0;
    /// The run-control process that wrote it.
    QString process;
    /// How serious it is.
    Severity severity = Severity::Info;
    /// The message.
    QString text;

    /// Compact JSON, the form published on RunCtrl.P.Log.
    QByteArray toJson() const;
    /// Parses what toJson() writes into @p out (untouched on failure); Status::Code::BadRequest unless
    /// it is a JSON object with a known severity.
    static Status fromJson(const QByteArray &json, LogMessage *out);
};

/// A transition request sent to RunCtrl.P.State: the transition and its parameters (the run
/// number and run type of a start). On the wire either the transition name alone or
/// {"transition": "start", "run_number": 12, "run_type": "physics"}.
struct TransitionRequest
{
    /// The transition asked for.
    Transition transition = Transition::Reset;
    /// The run number of a start (0: the master's next number).
    quint32 runNumber = 0;
    /// The run type of a start (empty: the master's default).
    QString runType;
    /// A configure's parameters for the slave it goes to, from the configuration database (a
    /// slaves/ or readout/ document's object; empty: the slave keeps its own).
    QJsonObject parameters;
    /// Who asked: user\@host of the requesting process (else its name). Set by the receiving
    /// process from the request's origin, never sent.
    QString requester;

    /// The request as JSON (the object form).
    QByteArray toJson() const;
    /// Parses either form into @p out (untouched on failure); Status::Code::BadRequest with a one-line
    /// reason for an unknown transition or a malformed request.
    static Status fromJson(const QByteArray &data, TransitionRequest *out);
};

} // namespace dialog::rc
