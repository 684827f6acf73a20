// The alarm state machine of dialog-alarmserver: per alarm, the condition as the evaluator sees it
// (debounced by the rule's for_s), and what operators did (acknowledged, shelved, disabled), with
// one signal per change of state for the history, the publisher and the IS objects.
#pragma once

#include "alarmrules.h"

#include <QJsonObject>
#include <QObject>
#include <QSet>
#include <QTimer>

namespace dialog::alarm {

/// Where an alarm stands.
enum class State
{
    Normal,       ///< the condition does not hold (or the alarm is disabled)
    Active,       ///< raised, not acknowledged
    Acknowledged, ///< raised and acknowledged: it goes when the condition clears
    Latched,      ///< the condition cleared but the rule latches: it stays until acknowledged
};
/// "normal", "active", "acknowledged" or "latched".
QString stateName(State s);
std::optional<State> stateFromName(const QString &name);

/// Who did something to an alarm, as the request's origin says.
struct Actor
{
    QString who;         ///< user@host (process), or the process name
    bool proven = false; ///< the partition has a shared secret: the identity was proven with it
};

/// One alarm's state.
struct AlarmState
{
    State state = State::Normal;
    bool condition = false;    ///< the condition holds now (before the debounce)
    qint64 pendingSinceMs = 0; ///< the condition holds since then, waiting for for_s (0: not pending)
    QString value;             ///< the value that made the condition hold or clear, for people
    qint64 raisedMs = 0, clearedMs = 0;
    QString ackBy, ackComment;
    qint64 ackMs = 0;
    bool shelved = false;
    qint64 shelvedUntilMs = 0;
    QString shelvedBy, shelveReason;
    bool disabled = false;
    QString disabledBy;
    qint64 changedMs = 0;

    /// In the table: not Normal, or shelved, or disabled.
    bool listed() const { return state != State::Normal || shelved || disabled; }
    /// Counted in the tree's worst severity: not Normal, not shelved, not disabled.
    bool annunciated() const { return state != State::Normal && !shelved && !disabled; }
    /// The condition is raised (after the debounce): Active or Acknowledged.
    bool raised() const { return state == State::Active || state == State::Acknowledged; }
    /// What survives a restart (the operator's part and the state), as JSON.
    QJsonObject persistent() const;
    void restore(const QJsonObject &o);
};

/// A change of one alarm, as the history keeps it.
struct AlarmEvent
{
    int alarm = -1;
    QString event; ///< raised, cleared, latched, acknowledged, shelved, unshelved, disabled, enabled
    Actor actor;   ///< empty for what the condition did
    QString comment;
    qint64 timeMs = 0;
};

class AlarmTable : public QObject
{
    Q_OBJECT
public:
    explicit AlarmTable(const RuleSet &rules, QObject *parent = nullptr);

    const RuleSet &rules() const { return m_rules; }
    int size() const { return int(m_states.size()); }
    const AlarmState &state(int i) const { return m_states.at(i); }
    int indexOf(const QString &path) const { return m_rules.byPath.value(path, -1); }

    /// Puts back what a previous run kept (persistent()), before the first condition.
    void restore(int i, const QJsonObject &persistent);

    /// The evaluator's view of alarm @p i's condition now, and the value behind it.
    void setCondition(int i, bool holds, const QString &value);

    ///@{
    /// Operator actions; each returns an empty string when done, else why it was refused.
    QString acknowledge(int i, const Actor &actor, const QString &comment);
    QString shelve(int i, const Actor &actor, qint64 untilMs, const QString &reason);
    QString unshelve(int i, const Actor &actor);
    QString disable(int i, const Actor &actor, const QString &comment);
    QString enable(int i, const Actor &actor);
    ///@}

    /// The alarm as the table and requests show it.
    QJsonObject toJson(int i) const;
    /// The tree below @p node ("" for the whole tree): each node with the worst annunciated
    /// severity below it and its counts, alarms as leaves.
    QJsonObject tree(const QString &node) const;
    /// Worst annunciated severity of the whole table.
    Severity worst() const;

Q_SIGNALS:
    /// Emitted once per change of alarm @p e.alarm's state or of what operators did to it.
    void changed(const dialog::alarm::AlarmEvent &e);
    /// Emitted when raised() of alarm @p i changed (alarms referring to it are evaluated again).
    void raisedChanged(int i);

private:
    void tick();
    void raise(int i, qint64 now);
    void emitChange(int i, const QString &event, const Actor &actor = {}, const QString &comment = {});
    void schedule();

    RuleSet m_rules;
    QList<AlarmState> m_states;
    QTimer m_timer; ///< debounces and shelve expiries
    QSet<int> m_pending, m_shelved;
};

} // namespace dialog::alarm
