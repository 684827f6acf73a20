#include "alarmtable.h"

#include <QDateTime>
#include <QJsonArray>
#include <QLoggingCategory>
#include <QMap>

#include <functional>

using namespace Qt::StringLiterals;

Q_LOGGING_CATEGORY(lcAlarm, "dialog.alarm", QtInfoMsg)

namespace dialog::alarm {

namespace {

qint64 nowMs()
{
    return QDateTime::currentMSecsSinceEpoch();
}

} // namespace

QString stateName(State s)
{
    switch (s) {
    case State::Normal:
        return u"normal"_s;
    case State::Active:
        return u"active"_s;
    case State::Acknowledged:
        return u"acknowledged"_s;
    case State::Latched:
        return u"latched"_s;
    }
    return {};
}

std::optional<State> stateFromName(const QString &name)
{
    for (State s : {State::Normal, State::Active, State::Acknowledged, State::Latched})
        if (name == stateName(s))
            return s;
    return std::nullopt;
}

QJsonObject AlarmState::persistent() const
{
    return {{u"state"_s, stateName(state)},
            {u"value"_s, value},
            {u"raised_ms"_s, raisedMs},
            {u"cleared_ms"_s, clearedMs},
            {u"ack_by"_s, ackBy},
            {u"ack_comment"_s, ackComment},
            {u"ack_ms"_s, ackMs},
            {u"shelved"_s, shelved},
            {u"shelved_until_ms"_s, shelvedUntilMs},
            {u"shelved_by"_s, shelvedBy},
            {u"shelve_reason"_s, shelveReason},
            {u"disabled"_s, disabled},
            {u"disabled_by"_s, disabledBy},
            {u"changed_ms"_s, changedMs}};
}

void AlarmState::restore(const QJsonObject &o)
{
    state = stateFromName(o.value(u"state"_s).toString()).value_or(State::Normal);
    value = o.value(u"value"_s).toString();
    raisedMs = o.value(u"raised_ms"_s).toInteger();
    clearedMs = o.value(u"cleared_ms"_s).toInteger();
    ackBy = o.value(u"ack_by"_s).toString();
    ackComment = o.value(u"ack_comment"_s).toString();
    ackMs = o.value(u"ack_ms"_s).toInteger();
    shelved = o.value(u"shelved"_s).toBool();
    shelvedUntilMs = o.value(u"shelved_until_ms"_s).toInteger();
    shelvedBy = o.value(u"shelved_by"_s).toString();
    shelveReason = o.value(u"shelve_reason"_s).toString();
    disabled = o.value(u"disabled"_s).toBool();
    disabledBy = o.value(u"disabled_by"_s).toString();
    changedMs = o.value(u"changed_ms"_s).toInteger();
}

AlarmTable::AlarmTable(const RuleSet &rules, QObject *parent)
    : QObject(parent), m_rules(rules), m_states(rules.rules.size())
{
    m_timer.setInterval(100);
    connect(&m_timer, &QTimer::timeout, this, &AlarmTable::tick);
}

void AlarmTable::restore(int i, const QJsonObject &persistent)
{
    AlarmState &s = m_states[i];
    s.restore(persistent);
    if (s.disabled)
        s.state = State::Normal;
    if (s.shelved)
        m_shelved.insert(i);
    schedule();
}

void AlarmTable::setCondition(int i, bool holds, const QString &value)
{
    AlarmState &s = m_states[i];
    const bool was = s.condition;
    s.condition = holds;
    if (s.disabled) {
        s.value = value;
        return;
    }
    const qint64 now = nowMs();
    if (holds) {
        if (s.raised()) {
            s.value = value; // still raised: a new value is no change of state
            return;
        }
        s.value = value;
        const double forS = m_rules.rules.at(i).forS;
        if (forS <= 0) {
            raise(i, now);
        } else if (!was || s.pendingSinceMs == 0) {
            s.pendingSinceMs = now;
            m_pending.insert(i);
            schedule();
        }
        return;
    }
    s.pendingSinceMs = 0;
    m_pending.remove(i);
    s.value = value;
    if (!was && !s.raised())
        return;
    if (s.state == State::Active && m_rules.rules.at(i).latch) {
        s.state = State::Latched;
        s.clearedMs = now;
        emitChange(i, u"latched"_s);
    } else if (s.raised()) {
        s.state = State::Normal;
        s.clearedMs = now;
        emitChange(i, u"cleared"_s);
        Q_EMIT raisedChanged(i);
    }
}

void AlarmTable::raise(int i, qint64 now)
{
    AlarmState &s = m_states[i];
    s.pendingSinceMs = 0;
    m_pending.remove(i);
    s.state = State::Active;
    s.raisedMs = now;
    s.ackBy.clear();
    s.ackComment.clear();
    s.ackMs = 0;
    emitChange(i, u"raised"_s);
    Q_EMIT raisedChanged(i);
}

void AlarmTable::tick()
{
    const qint64 now = nowMs();
    for (int i : QList<int>(m_pending.begin(), m_pending.end())) {
        const AlarmState &s = m_states.at(i);
        if (s.condition && s.pendingSinceMs > 0 &&
            now - s.pendingSinceMs >= qint64(m_rules.rules.at(i).forS * 1000))
            raise(i, now);
    }
    for (int i : QList<int>(m_shelved.begin(), m_shelved.end())) {
        AlarmState &s = m_states[i];
        if (s.shelved && s.shelvedUntilMs <= now) {
            s.shelved = false;
            m_shelved.remove(i);
            emitChange(i, u"unshelved"_s, {}, u"shelve expired"_s);
        }
    }
    schedule();
}

void AlarmTable::schedule()
{
    if (m_pending.isEmpty() && m_shelved.isEmpty())
        m_timer.stop();
    else if (!m_timer.isActive())
        m_timer.start();
}

void AlarmTable::emitChange(int i, const QString &event, const Actor &actor, const QString &comment)
{
    AlarmState &s = m_states[i];
    s.changedMs = nowMs();
    const Rule &r = m_rules.rules.at(i);
    // One line per change in the message log (through the Qt message handler).
    const QString line = u"alarm %1 %2 (%3%4)%5%6"_s.arg(
        r.path, event, severityName(r.severity), s.value.isEmpty() ? QString() : u", "_s + s.value,
        actor.who.isEmpty() ? QString() : u" by "_s + actor.who,
        comment.isEmpty() ? QString() : u": "_s + comment);
    if (event == u"raised"_s && r.severity >= Severity::Major)
        qCCritical(lcAlarm).noquote() << line;
    else if (event == u"raised"_s)
        qCWarning(lcAlarm).noquote() << line;
    else
        qCInfo(lcAlarm).noquote() << line;
    Q_EMIT changed(AlarmEvent{i, event, actor, comment, s.changedMs});
}

QString AlarmTable::acknowledge(int i, const Actor &actor, const QString &comment)
{
    AlarmState &s = m_states[i];
    const Rule &r = m_rules.rules.at(i);
    if (r.commentRequired && comment.trimmed().isEmpty())
        return u"%1 needs a comment to be acknowledged"_s.arg(r.path);
    if (s.state == State::Normal)
        return u"%1 is not in alarm: nothing to acknowledge"_s.arg(r.path);
    if (s.state == State::Acknowledged)
        return u"%1 is already acknowledged (by %2)"_s.arg(r.path, s.ackBy);
    s.ackBy = actor.who;
    s.ackComment = comment;
    s.ackMs = nowMs();
    if (s.state == State::Latched) {
        s.state = State::Normal;
    } else {
        s.state = State::Acknowledged;
    }
    emitChange(i, u"acknowledged"_s, actor, comment);
    return {};
}

QString AlarmTable::shelve(int i, const Actor &actor, qint64 untilMs, const QString &reason)
{
    AlarmState &s = m_states[i];
    const QString path = m_rules.rules.at(i).path;
    if (reason.trimmed().isEmpty())
        return u"shelving %1 needs a reason"_s.arg(path);
    if (untilMs <= nowMs())
        return u"shelving %1: the end of the shelve is not in the future"_s.arg(path);
    s.shelved = true;
    s.shelvedUntilMs = untilMs;
    s.shelvedBy = actor.who;
    s.shelveReason = reason;
    m_shelved.insert(i);
    schedule();
    emitChange(i, u"shelved"_s, actor,
               u"%1 (until %2)"_s.arg(reason,
                                      QDateTime::fromMSecsSinceEpoch(untilMs).toUTC().toString(Qt::ISODate)));
    return {};
}

QString AlarmTable::unshelve(int i, const Actor &actor)
{
    AlarmState &s = m_states[i];
    if (!s.shelved)
        return u"%1 is not shelved"_s.arg(m_rules.rules.at(i).path);
    s.shelved = false;
    m_shelved.remove(i);
    emitChange(i, u"unshelved"_s, actor);
    return {};
}

QString AlarmTable::disable(int i, const Actor &actor, const QString &comment)
{
    AlarmState &s = m_states[i];
    if (s.disabled)
        return u"%1 is already disabled (by %2)"_s.arg(m_rules.rules.at(i).path, s.disabledBy);
    const bool wasRaised = s.raised();
    s.disabled = true;
    s.disabledBy = actor.who;
    s.state = State::Normal;
    s.pendingSinceMs = 0;
    m_pending.remove(i);
    emitChange(i, u"disabled"_s, actor, comment);
    if (wasRaised)
        Q_EMIT raisedChanged(i);
    return {};
}

QString AlarmTable::enable(int i, const Actor &actor)
{
    AlarmState &s = m_states[i];
    if (!s.disabled)
        return u"%1 is not disabled"_s.arg(m_rules.rules.at(i).path);
    s.disabled = false;
    s.disabledBy.clear();
    emitChange(i, u"enabled"_s, actor);
    if (s.condition) {
        s.condition = false; // evaluated again as a new raise (debounced)
        setCondition(i, true, s.value);
    }
    return {};
}

QJsonObject AlarmTable::toJson(int i) const
{
    const Rule &r = m_rules.rules.at(i);
    const AlarmState &s = m_states.at(i);
    QJsonObject o{{u"path"_s, r.path},
                  {u"severity"_s, severityName(r.severity)},
                  {u"state"_s, stateName(s.state)},
                  {u"condition"_s, s.condition},
                  {u"value"_s, s.value},
                  {u"description"_s, r.description},
                  {u"guidance"_s, r.guidance},
                  {u"links"_s, QJsonArray::fromStringList(r.links)},
                  {u"latch"_s, r.latch},
                  {u"rule"_s, r.condition.text()},
                  {u"changed_ms"_s, s.changedMs}};
    if (s.raisedMs)
        o.insert(u"raised_ms"_s, s.raisedMs);
    if (s.clearedMs)
        o.insert(u"cleared_ms"_s, s.clearedMs);
    if (s.ackMs) {
        o.insert(u"ack_by"_s, s.ackBy);
        o.insert(u"ack_ms"_s, s.ackMs);
        o.insert(u"ack_comment"_s, s.ackComment);
    }
    if (s.shelved) {
        o.insert(u"shelved_until_ms"_s, s.shelvedUntilMs);
        o.insert(u"shelved_by"_s, s.shelvedBy);
        o.insert(u"shelve_reason"_s, s.shelveReason);
    }
    o.insert(u"shelved"_s, s.shelved);
    o.insert(u"disabled"_s, s.disabled);
    if (s.disabled)
        o.insert(u"disabled_by"_s, s.disabledBy);
    if (r.commentRequired)
        o.insert(u"ack_comment_required"_s, true);
    return o;
}

Severity AlarmTable::worst() const
{
    Severity w = Severity::None;
    for (int i = 0; i < m_states.size(); ++i)
        if (m_states.at(i).annunciated())
            w = std::max(w, m_rules.rules.at(i).severity);
    return w;
}

QJsonObject AlarmTable::tree(const QString &node) const
{
    // Nodes by path: worst severity and counts below each; alarms under their parent node.
    struct Node
    {
        Severity worst = Severity::None;
        int alarms = 0, annunciated = 0, unacknowledged = 0;
        QStringList children;
    };
    QMap<QString, Node> nodes;
    const QString prefix = node.isEmpty() ? QString() : node + u'/';
    for (int i = 0; i < m_states.size(); ++i) {
        const QString &path = m_rules.rules.at(i).path;
        if (!node.isEmpty() && path != node && !path.startsWith(prefix))
            continue;
        const AlarmState &s = m_states.at(i);
        QString child = path;
        while (child != node) {
            const QString parent = child.contains(u'/') ? child.section(u'/', 0, -2) : QString();
            Node &n = nodes[parent];
            if (!n.children.contains(child))
                n.children << child;
            ++n.alarms;
            if (s.annunciated()) {
                ++n.annunciated;
                n.worst = std::max(n.worst, m_rules.rules.at(i).severity);
                if (s.state == State::Active || s.state == State::Latched)
                    ++n.unacknowledged;
            }
            child = parent;
        }
    }
    std::function<QJsonObject(const QString &)> build = [&](const QString &path) -> QJsonObject {
        const int alarm = m_rules.byPath.value(path, -1);
        if (alarm >= 0)
            return toJson(alarm);
        const Node &n = nodes.value(path);
        QJsonArray children;
        for (const QString &c : n.children)
            children.append(build(c));
        return {{u"path"_s, path},
                {u"worst"_s, severityName(n.worst)},
                {u"alarms"_s, n.alarms},
                {u"annunciated"_s, n.annunciated},
                {u"unacknowledged"_s, n.unacknowledged},
                {u"children"_s, children}};
    };
    return build(node);
}

} // namespace dialog::alarm
