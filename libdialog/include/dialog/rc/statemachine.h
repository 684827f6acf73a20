// The run-control state machine shared by the master and every slave (COMPASS iFDAQ / ATLAS TDAQ
// style): Initial -> Configured -> Running <-> Paused -> Configured -> Initial; any -> Error;
// reset brings any state back to Initial.
#pragma once

#include "dialog/status.h"

#include <QMetaType>
#include <QString>
#include <QStringList>
#include <optional>

namespace dialog::rc {

/// Stable states. A transition in progress is not a state: the machine stays in its source state
/// with busy() true until finish() or fail().
enum class State
{
    Initial,    ///< nothing configured
    Configured, ///< hardware and software set up, no run
    Running,    ///< taking data
    Paused,     ///< run open, data taking suspended
    Error,      ///< something failed; only reset leaves it
};

enum class Transition
{
    Configure,   ///< Initial -> Configured
    Start,       ///< Configured -> Running (opens a run)
    Pause,       ///< Running -> Paused
    Resume,      ///< Paused -> Running
    Stop,        ///< Running | Paused -> Configured (closes the run)
    Unconfigure, ///< Configured -> Initial
    Reset,       ///< any state -> Initial (aborts a transition in progress)
};

QString stateName(State s);
QString transitionName(Transition t);
/// Case-insensitive; std::nullopt for an unknown name.
std::optional<State> stateFromName(const QString &name);
std::optional<Transition> transitionFromName(const QString &name);
QStringList allTransitionNames();
/// The present participle shown while a transition runs ("Configuring", "Starting"...).
QString transitionActivity(Transition t);

/// The state @p t leads to from @p from, in @p out (if given). Status::Code::BadRequest, naming the
/// legal transitions, if @p t is illegal in @p from (@p out untouched).
Status target(State from, Transition t, State *out = nullptr);
/// The transitions legal from @p s (in the order of the enum).
QList<Transition> legalTransitions(State s);
/// The transitions that take a process from Initial to @p s (empty for Initial and Error).
QList<Transition> pathFromInitial(State s);
/// The shortest sequence of transitions from @p from to @p to (Reset only to leave Error, or to
/// reach Initial from Error); empty if @p from == @p to or @p to is Error.
QList<Transition> path(State from, State to);

/// One process' state machine. Pure logic, no I/O: every method either applies completely or
/// refuses with a reason and changes nothing.
class StateMachine
{
public:
    /// The state the machine is in (the source state while busy()).
    State state() const { return m_state; }
    /// True while a transition is in progress.
    bool busy() const { return m_pending.has_value(); }
    /// The transition in progress (only meaningful while busy()).
    std::optional<Transition> pending() const { return m_pending; }
    /// The last transition completed or failed (none before the first).
    std::optional<Transition> lastTransition() const { return m_last; }
    /// Why the machine is in Error (empty otherwise).
    QString error() const { return m_error; }

    /// Starts @p t. Refused with Status::Code::BadRequest if @p t is illegal from state() or if another
    /// transition is in progress — except Reset, which is always accepted and abandons the pending
    /// transition. Nothing changes when refused.
    Status begin(Transition t);
    /// Completes the pending transition: state() becomes its target. False if nothing is pending.
    bool finish();
    /// Enters Error with @p why (from anywhere, abandoning a pending transition).
    void fail(const QString &why);
    /// Leaves Error directly for @p s (the master, once every slave is back in @p s), or Initial (a
    /// restarted master taking over the run its slaves are in). False if not in Error or Initial, if
    /// a transition is pending, or if @p s is Error.
    bool restore(State s);

private:
    State m_state = State::Initial;
    std::optional<Transition> m_pending;
    std::optional<Transition> m_last;
    QString m_error;
};

} // namespace dialog::rc

Q_DECLARE_METATYPE(dialog::rc::State)
Q_DECLARE_METATYPE(dialog::rc::Transition)
