#include "evaluator.h"

#include "dialog/rc/protocol.h"
#include "dialog/rc/staterecord.h"
#include "dialog/glob.h"
#include "dialog/logrecord.h"
#include "dialog/subscription.h"

#include <QDateTime>

#include <algorithm>
#include <cmath>

#include <QLoggingCategory>
#include <QRegularExpression>

using namespace Qt::StringLiterals;

Q_LOGGING_CATEGORY(lcEvaluator, "dialog.alarm.evaluator", QtInfoMsg)

namespace dialog::alarm {

namespace {

/// A regular expression matching exactly the object names @p objects of one server.
QString exactNames(const QStringList &objects)
{
    QStringList escaped;
    for (const QString &o : objects)
        escaped << QRegularExpression::escape(o);
    return u"^("_s + escaped.join(u'|') + u")$"_s;
}

/// How many messages in its window make a Messages condition hold.
int messagesNeeded(const Condition &c)
{
    return std::max(1, int(std::ceil(c.ratePerMin * c.windowS / 60.0 - 1e-9)));
}

bool isNumber(const QVariant &v)
{
    switch (v.typeId()) {
    case QMetaType::Bool:
    case QMetaType::QString:
    case QMetaType::UnknownType:
        return false;
    default:
        return v.canConvert<double>() && v.typeId() != QMetaType::QVariantList;
    }
}

} // namespace

Evaluator::Evaluator(Client *client, is::Dictionary *dictionary, AlarmTable *table, int stalePollMs,
                     QObject *parent)
    : QObject(parent), m_client(client), m_dictionary(dictionary), m_table(table)
{
    const RuleSet &rules = m_table->rules();
    for (int i = 0; i < rules.rules.size(); ++i)
        addLeaves(rules.rules.at(i).condition, i);
    m_staleTimer.setInterval(stalePollMs);
    connect(&m_staleTimer, &QTimer::timeout, this, &Evaluator::pollStale);
    m_messageTimer.setInterval(1000);
    connect(&m_messageTimer, &QTimer::timeout, this,
            [this] { countMessages(QDateTime::currentMSecsSinceEpoch()); });
    connect(m_table, &AlarmTable::raisedChanged, this, [this](int i) {
        for (int d : m_table->rules().dependents.at(i))
            evaluate(d);
    });
}

Evaluator::~Evaluator() = default;

void Evaluator::addLeaves(const Condition &c, int rule)
{
    if (c.kind == Condition::Kind::Any || c.kind == Condition::Kind::All) {
        for (const Condition &child : c.children)
            addLeaves(child, rule);
        return;
    }
    if (c.kind == Condition::Kind::Alarm)
        return; // read from the table
    const int leaf = int(m_leaves.size());
    Leaf leaf0;
    leaf0.condition = &c;
    leaf0.rule = rule;
    m_leaves.append(leaf0);
    m_leafOf.insert(&c, leaf);
    switch (c.kind) {
    case Condition::Kind::IsValue:
        m_valueLeaves[c.object] << leaf;
        break;
    case Condition::Kind::IsStale:
        m_staleLeaves[c.object.section(u'.', 0, 0)][c.object] << leaf;
        break;
    case Condition::Kind::ProcessLost:
        m_lostLeaves[c.process] << leaf;
        break;
    case Condition::Kind::Messages:
        m_leaves[leaf].processGlob = globToRegex(c.process);
        m_messageLeaves << leaf;
        break;
    default:
        m_stateLeaves[c.process] << leaf;
        break;
    }
}

void Evaluator::start()
{
    // IS values: per server, the objects named by the rules (all of the server's beyond 200 names:
    // one long alternation costs the server more than filtering here).
    QHash<QString, QStringList> byServer;
    for (auto it = m_valueLeaves.cbegin(); it != m_valueLeaves.cend(); ++it)
        byServer[it.key().section(u'.', 0, 0)] << it.key().section(u'.', 1);
    if (!byServer.isEmpty()) {
        m_receiver = std::make_unique<is::Receiver>(m_dictionary);
        m_receiver->setCallback([this](const is::Event &e) { onIsEvent(e); });
        connect(m_receiver.get(), &is::Receiver::subscriptionChanged, this,
                [](int id, const Status &status) {
                    if (!status.isOk())
                        qCInfo(lcEvaluator).noquote() << "IS subscription" << id << "inactive:" << status.message();
                });
        for (auto it = byServer.cbegin(); it != byServer.cend(); ++it)
            m_receiver->subscribeWithSnapshot(
                it.key(), is::Criteria(it.value().size() > 200 ? u".*"_s : exactNames(it.value())));
    }
    if (!m_lostLeaves.isEmpty())
        m_client->subscribe(directoryServiceName(), this, [this](const Message &m) { onDirectory(m); });
    for (auto it = m_stateLeaves.cbegin(); it != m_stateLeaves.cend(); ++it) {
        const QString process = it.key();
        m_client->subscribe(rc::stateService(process), this,
                            [this, process](const Message &m) { onState(process, m); });
    }
    if (!m_staleLeaves.isEmpty()) {
        m_staleTimer.start();
        pollStale();
    }
    if (!m_messageLeaves.isEmpty()) {
        m_client->subscribe(logservice::live(), this, [this](const Message &m) { onMessages(m); });
        m_messageTimer.start();
        countMessages(QDateTime::currentMSecsSinceEpoch());
    }
}

void Evaluator::onMessages(const Message &m)
{
    QList<LogRecord> records;
    if (!decodeRecords(m.data(), &records).isOk())
        return;
    const qint64 now = QDateTime::currentMSecsSinceEpoch();
    const QString self = m_client->options().name;
    for (const LogRecord &r : std::as_const(records)) {
        // The alarm server's own messages (its raises among them) would feed the rate they report.
        if (r.process == self)
            continue;
        // A reporter's clock ahead of ours counts as now; messages older than a window do not count.
        const qint64 t = std::min(r.timeMs, now);
        for (int leaf : std::as_const(m_messageLeaves)) {
            Leaf &l = m_leaves[leaf];
            const Condition &c = *l.condition;
            if (r.severity < c.messageSeverity || t < now - qint64(c.windowS * 1000))
                continue;
            if (!l.processGlob.match(r.process).hasMatch())
                continue;
            // Kept sorted and only as many as the condition needs: memory is bounded by the rule.
            l.times.insert(std::upper_bound(l.times.begin(), l.times.end(), t), t);
            if (l.times.size() > messagesNeeded(c))
                l.times.removeFirst();
        }
    }
    ++m_updates;
    countMessages(now);
}

void Evaluator::countMessages(qint64 now)
{
    for (int leaf : std::as_const(m_messageLeaves)) {
        Leaf &l = m_leaves[leaf];
        const Condition &c = *l.condition;
        const qint64 from = now - qint64(c.windowS * 1000);
        while (!l.times.isEmpty() && l.times.first() < from)
            l.times.removeFirst();
        const int needed = messagesNeeded(c);
        const bool on = l.times.size() >= needed;
        const QString value =
            on ? u"%1: %2 or more messages at %3 or worse in %4 s"_s.arg(c.process).arg(needed).arg(
                     dialog::severityName(c.messageSeverity)).arg(c.windowS)
               : u"%1: %2 messages at %3 or worse in %4 s"_s.arg(c.process).arg(l.times.size()).arg(
                     dialog::severityName(c.messageSeverity)).arg(c.windowS);
        if (!l.known || l.on != on)
            setLeaf(leaf, on, value);
        else
            l.value = value;
    }
}

void Evaluator::onIsEvent(const is::Event &e)
{
    if (e.kind() == is::Event::Kind::SnapshotBegin || e.kind() == is::Event::Kind::SnapshotEnd ||
        e.kind() == is::Event::Kind::History)
        return;
    const auto it = m_valueLeaves.constFind(e.name());
    if (it == m_valueLeaves.constEnd())
        return;
    ++m_updates;
    if (e.kind() == is::Event::Kind::Removed) {
        for (int leaf : *it)
            setLeaf(leaf, false, u"%1 removed"_s.arg(e.name()));
        return;
    }
    is::Object o;
    const Status decoded = e.object(&o);
    const QString error = decoded.message();
    for (int leaf : *it) {
        Leaf &l = m_leaves[leaf];
        if (!o.isValid()) {
            setLeaf(leaf, false, u"%1 cannot be decoded: %2"_s.arg(e.name(), error));
            continue;
        }
        const QVariant v = o.variant(l.condition->attribute);
        if (!v.isValid()) {
            const QString why =
                u"%1 (type %2) has no attribute '%3'"_s.arg(e.name(), o.typeName(), l.condition->attribute);
            if (!m_warned.contains(why)) {
                m_warned.insert(why);
                qCWarning(lcEvaluator).noquote()
                    << "alarm" << m_table->rules().rules.at(l.rule).path << ":" << why;
            }
            setLeaf(leaf, false, why);
            continue;
        }
        const bool was = l.on;
        const bool on = compare(l, v);
        const QString value = u"%1.%2 = %3"_s.arg(e.name(), l.condition->attribute, v.toString());
        l.value = value;
        if (!l.known || on != was) {
            setLeaf(leaf, on, value);
        } else if (on) {
            evaluate(l.rule); // a new value of a raised condition
        }
    }
}

bool Evaluator::compare(Leaf &l, const QVariant &v)
{
    const Condition &c = *l.condition;
    const auto mismatch = [&](const QString &needs) {
        const QString why = u"%1.%2 is not %3"_s.arg(c.object, c.attribute, needs);
        if (!m_warned.contains(why)) {
            m_warned.insert(why);
            qCWarning(lcEvaluator).noquote()
                << "alarm" << m_table->rules().rules.at(l.rule).path << ":" << why;
        }
        return false;
    };
    if (c.above || c.below) {
        if (!isNumber(v))
            return mismatch(u"a number"_s);
        const double d = v.toDouble();
        const double h = c.hysteresis;
        const bool hi = c.above && (l.on ? d > *c.above - h : d > *c.above);
        const bool lo = c.below && (l.on ? d < *c.below + h : d < *c.below);
        return hi || lo;
    }
    if (!c.matches.pattern().isEmpty()) {
        if (v.typeId() != QMetaType::QString)
            return mismatch(u"a string"_s);
        return c.matches.match(v.toString()).hasMatch();
    }
    bool equal = false;
    if (c.equals.typeId() == QMetaType::QString) {
        if (v.typeId() != QMetaType::QString)
            return mismatch(u"a string"_s);
        equal = v.toString() == c.equals.toString();
    } else if (c.equals.typeId() == QMetaType::Bool) {
        if (v.typeId() != QMetaType::Bool)
            return mismatch(u"a boolean"_s);
        equal = v.toBool() == c.equals.toBool();
    } else {
        if (!isNumber(v))
            return mismatch(u"a number"_s);
        equal = v.toDouble() == c.equals.toDouble();
    }
    return equal != c.notEquals;
}

void Evaluator::onDirectory(const Message &m)
{
    std::optional<DirectorySnapshot> snapshot;
    if (!m_directory.add(m.data(), &snapshot).isOk() || !snapshot)
        return;
    ++m_updates;
    for (auto it = m_lostLeaves.cbegin(); it != m_lostLeaves.cend(); ++it) {
        const bool alive = snapshot->process(it.key()) != nullptr;
        QString value = alive ? u"%1 alive"_s.arg(it.key()) : u"%1 not in the directory"_s.arg(it.key());
        for (const ProcessEntry &lost : snapshot->lost)
            if (!alive && lost.name == it.key())
                value = u"%1 lost: %2"_s.arg(it.key(), lost.lostReason);
        for (int leaf : it.value())
            setLeaf(leaf, !alive, value);
    }
}

void Evaluator::onState(const QString &process, const Message &m)
{
    std::optional<rc::StateRecord> record{std::in_place};
    if (!rc::StateRecord::fromJson(m.data(), &*record).isOk())
        return;
    ++m_updates;
    const QString state = rc::stateName(record->state);
    for (int leaf : m_stateLeaves.value(process)) {
        const Condition &c = *m_leaves.at(leaf).condition;
        if (c.kind == Condition::Kind::ProcessError)
            setLeaf(leaf, record->state == rc::State::Error,
                    record->error.isEmpty() ? u"%1 %2"_s.arg(process, state)
                                            : u"%1 %2: %3"_s.arg(process, state, record->error));
        else
            setLeaf(leaf, c.states.contains(state) != c.notIn, u"%1 %2"_s.arg(process, state));
    }
}

void Evaluator::pollStale()
{
    for (auto it = m_staleLeaves.cbegin(); it != m_staleLeaves.cend(); ++it) {
        const QString server = it.key();
        if (m_staleInFlight.contains(server))
            continue;
        m_staleInFlight.insert(server);
        QStringList objects;
        for (auto o = it.value().cbegin(); o != it.value().cend(); ++o)
            objects << o.key().section(u'.', 1);
        const QString criteria = objects.size() > 200 ? u".*"_s : exactNames(objects);
        m_dictionary->listStale(
            server, is::Criteria(criteria), [this, server](const Status &st, const QList<is::Entry> &stale) {
                m_staleInFlight.remove(server);
                if (!st.isOk())
                    return; // the server is not there: nothing new is known
                ++m_updates;
                QHash<QString, QString> reasons;
                for (const is::Entry &e : stale)
                    reasons.insert(e.name, e.staleness.reason());
                const auto &objects = m_staleLeaves.value(server);
                for (auto o = objects.cbegin(); o != objects.cend(); ++o) {
                    const auto r = reasons.constFind(o.key());
                    for (int leaf : o.value())
                        setLeaf(leaf, r != reasons.constEnd(),
                                r != reasons.constEnd() ? u"%1 stale: %2"_s.arg(o.key(), *r)
                                                        : u"%1 fresh"_s.arg(o.key()));
                }
            });
    }
}

void Evaluator::setLeaf(int leaf, bool on, const QString &value)
{
    Leaf &l = m_leaves[leaf];
    const bool changed = !l.known || l.on != on;
    l.known = true;
    l.on = on;
    l.value = value;
    if (changed)
        evaluate(l.rule);
}

bool Evaluator::holds(const Condition &c, QStringList *values) const
{
    switch (c.kind) {
    case Condition::Kind::Any:
    case Condition::Kind::All: {
        bool any = false, all = true;
        for (const Condition &child : c.children) {
            const bool h = holds(child, values);
            any = any || h;
            all = all && h;
        }
        return c.kind == Condition::Kind::Any ? any : all;
    }
    case Condition::Kind::Alarm: {
        const int ref = m_table->indexOf(c.alarm);
        const bool raised = ref >= 0 && m_table->state(ref).raised();
        if (raised)
            values->append(u"alarm %1 raised"_s.arg(c.alarm));
        return raised;
    }
    default: {
        const Leaf &l = m_leaves.at(m_leafOf.value(&c));
        if (l.on || values->isEmpty())
            values->append(l.value);
        return l.on;
    }
    }
}

void Evaluator::evaluate(int rule)
{
    QStringList values;
    const bool on = holds(m_table->rules().rules.at(rule).condition, &values);
    values.removeAll(QString());
    m_table->setCondition(rule, on, values.join(u"; "_s));
}

} // namespace dialog::alarm
