#include "alarms.h"

#include "dialog/handoff.h"
#include "dialog/is/repository.h"
#include "dialog/is/typeregistry.h"
#include "dialog/report.h"

#include <QLoggingCategory>
#include <QThread>
#include <QTimer>

Q_LOGGING_CATEGORY(lcAlarm, "dialog.is.alarm")

namespace dialog::isd {

namespace {

const QString AlarmPrefix = QStringLiteral("Alarm.");

/// A numeric scalar as a double; false for anything else.
bool numberOf(const is::Value &value, double *out)
{
    return std::visit(
        [out](const auto &v) -> bool {
            using T = std::decay_t<decltype(v)>;
            if constexpr (std::is_arithmetic_v<T>) {
                *out = double(v);
                return true;
            } else {
                return false;
            }
        },
        value.storage());
}

/// The attribute @p path ("a" or "a.b") of @p object as a number.
bool attributeOf(const is::Object &object, const QString &path, double *out)
{
    const qsizetype dot = path.indexOf(QLatin1Char('.'));
    const is::Value *v = object.value(dot < 0 ? path : path.left(dot));
    if (!v)
        return false;
    if (dot < 0)
        return numberOf(*v, out);
    const is::Object *nested = v->getIf<is::Object>();
    return nested && attributeOf(*nested, path.mid(dot + 1), out);
}

} // namespace

AlarmEvaluator::AlarmEvaluator(is::Repository &repository, const QList<AlarmRule> &rules, QObject *parent)
    : QObject(parent), m_repository(repository), m_rules(rules)
{
    m_clock.start();
}

AlarmEvaluator::~AlarmEvaluator()
{
    if (m_listener)
        m_repository.removeListener(m_listener);
}

QString AlarmEvaluator::typeName()
{
    return QStringLiteral("Alarm");
}

Status AlarmEvaluator::declareType(is::TypeRegistry &types)
{
    if (types.contains(typeName()))
        return {};
    using is::AttributeInfo;
    using is::BasicType;
    is::TypeInfo t(typeName(), QStringLiteral("An active alarm raised by an IS server's alarm rule"));
    t.setAttributes({
        AttributeInfo(QStringLiteral("severity"), BasicType::String,
                      QStringLiteral("info, warning, error or fatal")),
        AttributeInfo(QStringLiteral("text"), BasicType::String, QStringLiteral("What the rule says")),
        AttributeInfo(QStringLiteral("object"), BasicType::String,
                      QStringLiteral("The object (Server.Object)")),
        AttributeInfo(QStringLiteral("attribute"), BasicType::String, QStringLiteral("The attribute tested")),
        AttributeInfo(QStringLiteral("value"), BasicType::Double, QStringLiteral("Its value when raised")),
        AttributeInfo(QStringLiteral("rule"), BasicType::String, QStringLiteral("The rule as written")),
        AttributeInfo(QStringLiteral("raised"), BasicType::Time, QStringLiteral("When it was raised")),
    });
    return types.declareType(t);
}

void AlarmEvaluator::start()
{
    m_listener = m_repository.addListener([this](const is::Change &c) {
        if (c.name.startsWith(AlarmPrefix))
            return;
        if (QThread::currentThread() != thread()) {
            QMetaObject::invokeMethod(this, handoff::handOff([this, c] { onChange(c); }),
                                      Qt::QueuedConnection);
            return;
        }
        onChange(c);
    });
    // Alarms of an earlier run (a checkpoint) are raised again if their conditions still hold.
    for (const is::ObjectInfo &o : m_repository.list(is::Criteria(QStringLiteral("Alarm\\..*"))))
        m_repository.remove(m_repository.serverName() + QLatin1Char('.') + o.name);
    for (const is::StoredObject &o : m_repository.objects())
        if (!o.name.startsWith(AlarmPrefix))
            for (int r = 0; r < m_rules.size(); ++r)
                evaluate(r, o.name, &o.object);
    m_timer = new QTimer(this);
    connect(m_timer, &QTimer::timeout, this, &AlarmEvaluator::tick);
    m_timer->start(200);
}

void AlarmEvaluator::onChange(const is::Change &change)
{
    for (int r = 0; r < m_rules.size(); ++r)
        evaluate(r, change.name, change.kind == is::Change::Kind::Removed ? nullptr : &change.object);
}

QString AlarmEvaluator::alarmName(int rule, const QString &object) const
{
    // Written with the server's name: the alarm's object name holds dots.
    return QStringLiteral("%1.%2%3.%4")
        .arg(m_repository.serverName(), AlarmPrefix)
        .arg(m_rules.at(rule).line)
        .arg(object);
}

void AlarmEvaluator::evaluate(int rule, const QString &object, const is::Object *value)
{
    const AlarmRule &r = m_rules.at(rule);
    if (!r.pattern.match(m_repository.serverName() + QLatin1Char('.') + object).hasMatch())
        return;
    const QPair<int, QString> key(rule, object);
    double v = 0;
    const bool holds = value && attributeOf(*value, r.attribute, &v) && r.holds(v);
    auto it = m_states.find(key);
    if (!holds) {
        if (it != m_states.end()) {
            clear(rule, object, *it);
            m_states.erase(it);
        }
        return;
    }
    if (it == m_states.end())
        it = m_states.insert(key, State{m_clock.elapsed(), v, false});
    it->value = v;
    if (!it->raised && m_clock.elapsed() - it->sinceMs >= r.forMs)
        raise(rule, object, *it);
}

void AlarmEvaluator::tick()
{
    const qint64 now = m_clock.elapsed();
    for (auto it = m_states.begin(); it != m_states.end(); ++it)
        if (!it->raised && now - it->sinceMs >= m_rules.at(it.key().first).forMs)
            raise(it.key().first, it.key().second, *it);
}

void AlarmEvaluator::raise(int rule, const QString &object, State &state)
{
    const AlarmRule &r = m_rules.at(rule);
    state.raised = true;
    const QString full = m_repository.serverName() + QLatin1Char('.') + object;
    is::Object a = is::Object::create(m_repository.registry(), typeName());
    a.set(QStringLiteral("severity"), r.severityName());
    a.set(QStringLiteral("text"), r.text);
    a.set(QStringLiteral("object"), full);
    a.set(QStringLiteral("attribute"), r.attribute);
    a.set(QStringLiteral("value"), state.value);
    a.set(QStringLiteral("rule"), r.source);
    a.set(QStringLiteral("raised"), is::Time::currentTime());
    if (const Status st = m_repository.upsert(alarmName(rule, object), a); !st.isOk())
        qCWarning(lcAlarm, "%s: alarm of line %d cannot be written: %s",
                  qPrintable(m_repository.serverName()), r.line, qPrintable(st.message()));
    report(r.severity, QStringLiteral("dialog.is.alarm"),
           QStringLiteral("alarm raised: %1 (%2.%3 = %4)").arg(r.text, full, r.attribute).arg(state.value),
           {{QStringLiteral("object"), full}, {QStringLiteral("rule"), r.source}});
}

void AlarmEvaluator::clear(int rule, const QString &object, State &state)
{
    if (!state.raised)
        return;
    const AlarmRule &r = m_rules.at(rule);
    m_repository.remove(alarmName(rule, object));
    const QString full = m_repository.serverName() + QLatin1Char('.') + object;
    report(Severity::Info, QStringLiteral("dialog.is.alarm"),
           QStringLiteral("alarm cleared: %1 (%2)").arg(r.text, full),
           {{QStringLiteral("object"), full}, {QStringLiteral("rule"), r.source}});
}

} // namespace dialog::isd
