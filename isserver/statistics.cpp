#include "statistics.h"

#include "dialog/is/repository.h"
#include "dialog/is/typeregistry.h"

#include <QTimer>

namespace dialog::isd {

namespace {
const QString StatisticsType = QStringLiteral("ISServerStatistics");

is::TypeInfo statisticsType()
{
    using is::AttributeInfo;
    using is::BasicType;
    is::TypeInfo t(StatisticsType, QStringLiteral("Figures of an IS server, updated every second"));
    t.setAttributes({
        AttributeInfo(QStringLiteral("objects"), BasicType::U64, QStringLiteral("Objects held")),
        AttributeInfo(QStringLiteral("changes"), BasicType::U64,
                      QStringLiteral("Creations, updates and removals since start")),
        AttributeInfo(QStringLiteral("changesPerSecond"), BasicType::Double,
                      QStringLiteral("Changes per second (last interval)")),
        AttributeInfo(QStringLiteral("deliveries"), BasicType::U64,
                      QStringLiteral("Notifications delivered to subscribers since start")),
        AttributeInfo(QStringLiteral("deliveriesPerSecond"), BasicType::Double,
                      QStringLiteral("Deliveries per second (last interval)")),
        AttributeInfo(QStringLiteral("subscribers"), BasicType::U32, QStringLiteral("Active subscriptions")),
        AttributeInfo(QStringLiteral("slowSubscribers"), BasicType::U32,
                      QStringLiteral("Subscriptions at priority 0 (served from their own queue)")),
        AttributeInfo(QStringLiteral("dropped"), BasicType::U64,
                      QStringLiteral("Notifications dropped for slow subscribers since start")),
        AttributeInfo(QStringLiteral("requests"), BasicType::U64,
                      QStringLiteral("Requests served since start")),
        AttributeInfo(QStringLiteral("lastCheckpoint"), BasicType::Time,
                      QStringLiteral("Time of the last checkpoint written")),
        AttributeInfo(QStringLiteral("checkpointErrors"), BasicType::U64,
                      QStringLiteral("Checkpoints that could not be written")),
        AttributeInfo(QStringLiteral("subscriberNames"), BasicType::String,
                      QStringLiteral("Subscribing process and channel"), true),
        AttributeInfo(QStringLiteral("subscriberPriorities"), BasicType::U32,
                      QStringLiteral("Current priority of each subscriber"), true),
        AttributeInfo(QStringLiteral("subscriberDelivered"), BasicType::U64,
                      QStringLiteral("Notifications delivered to each subscriber"), true),
        AttributeInfo(QStringLiteral("subscriberDropped"), BasicType::U64,
                      QStringLiteral("Notifications dropped for each subscriber"), true),
        AttributeInfo(QStringLiteral("quotaRefused"), BasicType::U64,
                      QStringLiteral("Writes refused for a quota since start")),
        AttributeInfo(QStringLiteral("accessRefused"), BasicType::U64,
                      QStringLiteral("Writes refused by the access list since start")),
        AttributeInfo(QStringLiteral("journalErrors"), BasicType::U64,
                      QStringLiteral("Writes refused since start because their journal record could not "
                                     "be written")),
    });
    return t;
}
} // namespace

QString ServerStatistics::objectName()
{
    return QStringLiteral("Statistics");
}

Status ServerStatistics::declareType(is::TypeRegistry &types)
{
    return types.contains(StatisticsType) ? Status() : types.declareType(statisticsType());
}

ServerStatistics::ServerStatistics(is::Repository &repository, const is::TypeRegistry &types, Source source,
                                   QObject *parent)
    : QObject(parent), m_repository(repository), m_types(types), m_source(std::move(source))
{
    m_clock.start();
}

void ServerStatistics::start(int intervalMs)
{
    auto *timer = new QTimer(this);
    connect(timer, &QTimer::timeout, this, &ServerStatistics::publish);
    timer->start(intervalMs);
    publish();
}

void ServerStatistics::publish()
{
    const Figures f = m_source();
    const qint64 nowMs = m_clock.elapsed();
    const is::Repository::Statistics rs = m_repository.statistics();
    const quint64 changes = rs.inserts + rs.updates + rs.removes - m_published;
    const double dt = qMax<qint64>(1, nowMs - m_lastMs) / 1000.0;
    is::Object o = is::Object::create(m_types, StatisticsType);
    o.set<quint64>(QStringLiteral("objects"), quint64(rs.objects));
    o.set<quint64>(QStringLiteral("changes"), changes);
    o.set<double>(QStringLiteral("changesPerSecond"), m_lastMs ? (changes - m_lastChanges) / dt : 0.0);
    o.set<quint64>(QStringLiteral("deliveries"), f.deliveries);
    o.set<double>(QStringLiteral("deliveriesPerSecond"),
                  m_lastMs ? (f.deliveries - m_lastDeliveries) / dt : 0.0);
    o.set<quint64>(QStringLiteral("dropped"), f.dropped);
    o.set<quint64>(QStringLiteral("requests"), f.requests);
    o.set<is::Time>(QStringLiteral("lastCheckpoint"), is::Time(f.lastCheckpointUs));
    o.set<quint64>(QStringLiteral("checkpointErrors"), f.checkpointErrors);
    QList<QString> names;
    QList<quint32> prios;
    QList<quint64> delivered, dropped;
    quint32 slow = 0;
    for (const SubscriberPtr &s : f.subscribers) {
        names << s->key;
        const int p = s->priority.load();
        prios << quint32(p);
        slow += p == 0;
        delivered << s->delivered.load();
        dropped << s->dropped.load();
    }
    o.set<quint32>(QStringLiteral("subscribers"), quint32(names.size()));
    o.set<quint32>(QStringLiteral("slowSubscribers"), slow);
    o.set(QStringLiteral("subscriberNames"), names);
    o.set(QStringLiteral("subscriberPriorities"), prios);
    o.set(QStringLiteral("subscriberDelivered"), delivered);
    o.set(QStringLiteral("subscriberDropped"), dropped);
    o.set<quint64>(QStringLiteral("quotaRefused"), f.quotaRefused);
    o.set<quint64>(QStringLiteral("journalErrors"), f.journalErrors);
    o.set<quint64>(QStringLiteral("accessRefused"), f.accessRefused);
    if (m_repository.upsert(objectName(), o).isOk())
        ++m_published; // the server's own figures are not counted as changes
    m_lastMs = nowMs;
    m_lastChanges = changes;
    m_lastDeliveries = f.deliveries;
}

} // namespace dialog::isd
