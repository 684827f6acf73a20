#include "subscriptions.h"
#include "replies.h"

#include "dialog/client.h"
#include "dialog/is/history.h"
#include "dialog/is/protocol.h"
#include "dialog/is/repository.h"

namespace dialog::isd {

Subscriptions::Subscriptions(is::Repository &repository, Client &client, is::HistoryStore *history,
                             const DispatcherOptions &options, QObject *parent)
    : QObject(parent), m_repository(repository), m_client(client), m_history(history),
      m_dispatcher(std::make_unique<Dispatcher>(repository, options))
{
}

Subscriptions::~Subscriptions() = default;

void Subscriptions::start()
{
    m_repository.addListener([this](const is::Change &c) {
        m_dispatcher->publish(c);
        scheduleFlush();
    });
}

void Subscriptions::scheduleFlush()
{
    if (m_flushScheduled)
        return;
    m_flushScheduled = true;
    // After the requests of the current batch: one hand-over to the workers for all of them.
    QMetaObject::invokeMethod(
        this,
        [this] {
            m_flushScheduled = false;
            m_dispatcher->flush();
        },
        Qt::QueuedConnection);
}

void Subscriptions::subscribe(const Request &request, const Subscription &sub)
{
    if (!sub.criteria.isValid()) {
        replyStatus(m_client, request, Status::Code::BadRequest, sub.criteria.errorString());
        return;
    }
    StreamPtr stream = m_client.openStream(request, sub.channel);
    if (!stream) {
        replyStatus(m_client, request, Status::Code::BadRequest,
                    QStringLiteral("invalid subscription channel '%1'").arg(sub.channel));
        return;
    }
    auto s = std::make_shared<Subscriber>();
    s->origin = request.origin();
    s->channel = sub.channel;
    s->key = request.origin() + QLatin1Char('/') + sub.channel;
    s->stream = stream;
    s->criteria = sub.criteria;
    s->withValues = sub.withValues;
    s->archiveService = sub.archiveService;
    // Taken here, in the thread applying the writes, so the snapshot and the changes that follow it
    // fit exactly.
    s->snapshot = sub.snapshot;
    if (sub.snapshot)
        s->snapshotObjects = m_repository.objects(sub.criteria);
    if (sub.historyUs > 0 && m_history)
        historyRecords(*s, sub.historyUs);
    // Changes already handed to the workers before this point are not for this subscriber.
    m_dispatcher->flush();
    m_dispatcher->addSubscriber(s);
    replyStatus(m_client, request, Status::Code::Ok);
}

void Subscriptions::unsubscribe(const Request &request, const QString &channel)
{
    m_dispatcher->removeSubscriber(request.origin() + QLatin1Char('/') + channel);
    replyStatus(m_client, request, Status::Code::Ok);
}

QString Subscriptions::archiveService() const
{
    for (const SubscriberPtr &s : m_dispatcher->subscribers())
        if (!s->archiveService.isEmpty() && !s->stream->isBroken())
            return s->archiveService;
    return {};
}

void Subscriptions::historyRecords(Subscriber &s, qint64 historyUs)
{
    const is::Time now = is::Time::currentTime();
    QByteArray chunk;
    int records = 0;
    for (const is::ObjectInfo &o : m_repository.list(s.criteria)) {
        is::History h;
        if (!m_history->query(o.name, {}, is::Time(now.microsecondsSinceEpoch() - historyUs), now, 0, &h)
                 .isOk())
            continue;
        is::protocol::ReplyMessage reply;
        reply.history = h;
        is::protocol::appendRecord(chunk, is::protocol::HistoryRecord, o.name.toUtf8(), h.typeName.toUtf8(),
                                   h.oldest.microsecondsSinceEpoch(), is::protocol::serializeReply(reply));
        ++records;
        if (chunk.size() >= m_dispatcher->options().maxMessage)
            s.history.push_back({std::exchange(chunk, {}), std::exchange(records, 0)});
    }
    if (records > 0)
        s.history.push_back({chunk, records});
}

} // namespace dialog::isd
