#include "directorypublisher.h"

#include "commandrelay.h"
#include "messagelog.h"

#include "dialog/logrecord.h"

#include <QElapsedTimer>
#include <QJsonDocument>
#include <QLoggingCategory>
#include <QTimer>

Q_LOGGING_CATEGORY(lcPublisher, "dialog.controlserver.publisher", QtInfoMsg)

namespace dialog::cs {

using namespace wire_format;

DirectoryPublisher::DirectoryPublisher(ServerContext &context, const CommandRelay &relay, QObject *parent)
    : QObject(parent), m_ctx(context), m_relay(relay)
{
    if (m_ctx.options.reportMessages) // from the start: a standby's messages are published once it serves
        m_messageLog = new MessageLog(QStringLiteral("DIALOG.ControlServer"), MessageLog::Options(), this);
}

void DirectoryPublisher::start()
{
    m_directoryService = makeService(directoryServiceName());
    m_statisticsService = makeService(statisticsServiceName());
    m_commandService = makeService(commandServiceName());
    if (m_messageLog) {
        m_logService = makeService(logservice::controlServer());
        m_messageLog->setService(m_logService);
    }
    m_statisticsTimer = new QTimer(this);
    m_statisticsTimer->setSingleShot(true);
    m_statisticsTimer->setInterval(statisticsIntervalMs); // one snapshot for many heartbeats
    connect(m_statisticsTimer, &QTimer::timeout, this, &DirectoryPublisher::publishStatistics);
    m_publishTimer = new QTimer(this);
    m_publishTimer->setSingleShot(true);
    m_publishTimer->setInterval(50); // coalesce bursts of directory changes
    connect(m_publishTimer, &QTimer::timeout, this, &DirectoryPublisher::publishDirectory);
    publishDirectory();
    publishStatistics();
}

ServiceStatePtr DirectoryPublisher::makeService(const QString &name) const
{
    auto s = std::make_shared<ServiceState>();
    s->name = name;
    s->key = name.toUtf8();
    s->transport = m_ctx.transport;
    s->compressionThreshold = 64 * 1024;
    return s;
}

ServiceStatePtr DirectoryPublisher::ownService(const QString &name) const
{
    if (name == directoryServiceName())
        return m_directoryService;
    if (name == statisticsServiceName())
        return m_statisticsService;
    if (name == commandServiceName())
        return m_commandService;
    if (m_logService && name == logservice::controlServer())
        return m_logService;
    return nullptr;
}

void DirectoryPublisher::onSubscribe(const net::Inbound &in)
{
    wire::Subscribe sub;
    parseControl(in.data, sub);
    const ServiceStatePtr service = ownService(qs(sub.name()));
    if (!service)
        return;
    if (in.type == Type::UnsubscribeService) {
        service->removeSubscribers(in.peer->endpoint);
        return;
    }
    service->addSubscriber(Subscriber{m_ctx.transport->outbox(in.peer->endpoint), in.peer->name,
                                      in.peer->incarnation, subscriptionToken(sub)});
    qCDebug(lcPublisher).noquote() << in.peer->name << "subscribed to" << service->name;
    if (service == m_statisticsService)
        statisticsChanged(); // its first snapshot
}

void DirectoryPublisher::directoryChanged()
{
    if (!m_publishTimer->isActive())
        m_publishTimer->start();
}

void DirectoryPublisher::statisticsChanged()
{
    if (!m_statisticsTimer->isActive())
        m_statisticsTimer->start();
}

void DirectoryPublisher::forget(const ProcessRecord &p)
{
    const net::Endpoint at{p.host, p.port};
    m_directoryService->removeSubscribers(at, p.incarnation);
    m_statisticsService->removeSubscribers(at, p.incarnation);
    if (m_logService)
        m_logService->removeSubscribers(at, p.incarnation);
    if (p.statistics.atMs != 0)
        statisticsChanged(); // its figures leave the snapshot
}

void DirectoryPublisher::publishDirectory()
{
    // The same path as Service::update: a subscriber that fell behind gets the latest value. A
    // directory over the page size goes out in pages, so no message exceeds the message limit.
    QElapsedTimer cost;
    cost.start();
    m_directoryService->publishPages(m_ctx.directory.snapshot(m_ctx.wallNow())
                                         .toPages(m_ctx.options.directoryPageBytes, ++m_directoryGeneration));
    // A large directory costs tens of ms to publish: while it changes all the time (thousands of
    // processes registering) it is published at most every 10 times that, at least every 50 ms.
    m_publishTimer->setInterval(int(qBound(qint64(50), 10 * cost.elapsed(), qint64(2000))));
}

void DirectoryPublisher::publishStatistics()
{
    {
        // Nobody watching (the usual case): no snapshot is built. A new subscriber gets the next
        // one, at most statisticsIntervalMs later (heartbeats keep the timer going).
        QMutexLocker l(&m_statisticsService->lock);
        if (m_statisticsService->subscribers.isEmpty()) {
            m_statisticsService->hasValue = false;
            m_statisticsService->lastData.clear();
            return;
        }
    }
    QJsonObject stats = m_ctx.directory.statisticsJson(m_ctx.wallNow());
    stats.insert(QStringLiteral("commandsRefused"), qint64(m_relay.commandsRefused()));
    m_statisticsService->publish(QJsonDocument(stats).toJson(QJsonDocument::Compact));
}

} // namespace dialog::cs
