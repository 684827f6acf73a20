// dialog::sampling::Sampler: the producer's side. offer() runs in the producer's threads and takes
// a lock only to copy the list of consumers; everything per consumer is atomic, and a stream that
// cannot take a sample (QueueFull) costs one failed send.
#include "dialog/sampling.h"

#include "dialog/client.h"
#include "dialog/request.h"
#include "dialog/service.h"
#include "dialog/stream.h"

#include <QDateTime>
#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QLoggingCategory>
#include <QPointer>
#include <QTimer>
#include <atomic>
#include <mutex>
#include <vector>

Q_LOGGING_CATEGORY(lcSampler, "dialog.sampling", QtInfoMsg)

namespace dialog::sampling {

namespace {

struct Consumer
{
    QString origin, channel;
    Criteria criteria;
    StreamPtr stream;
    qint64 intervalNs = 0; // from Criteria::maxRateHz
    std::atomic<quint64> matched{0}, selected{0}, sent{0}, dropped{0}, reserved{0};
    std::atomic<qint64> nextNs{0};
    std::atomic<bool> done{false};

    /// Takes the event if the criteria select it: false to skip it.
    bool select(quint32 trigger, quint32 spill, const QElapsedTimer &clock)
    {
        if (done.load(std::memory_order_relaxed) || !criteria.selects(trigger, spill))
            return false;
        const quint64 m = matched.fetch_add(1, std::memory_order_relaxed);
        if (m % criteria.everyNth)
            return false;
        if (intervalNs > 0) {
            const qint64 now = clock.nsecsElapsed();
            qint64 next = nextNs.load(std::memory_order_relaxed);
            if (now < next || !nextNs.compare_exchange_strong(next, now + intervalNs))
                return false;
        }
        if (criteria.count > 0 && reserved.fetch_add(1) >= criteria.count) {
            reserved.fetch_sub(1);
            return false;
        }
        return true;
    }
};
using ConsumerPtr = std::shared_ptr<Consumer>;
using ConsumerList = std::vector<ConsumerPtr>;

} // namespace

struct Sampler::Private
{
    Client *client = nullptr;
    QString name, service;
    Service *figuresService = nullptr;
    QTimer timer;
    QElapsedTimer clock;
    mutable std::mutex lock; // guards consumers (the pointer; the list it points to is never changed)
    std::shared_ptr<const ConsumerList> consumers = std::make_shared<const ConsumerList>();
    std::atomic<int> consumerCount{0};
    std::atomic<quint64> offered{0};

    std::shared_ptr<const ConsumerList> snapshot() const
    {
        std::lock_guard l(lock);
        return consumers;
    }
    /// Called in the sampler's thread: replaces the list with @p list.
    void replace(ConsumerList list)
    {
        const int n = int(list.size());
        auto next = std::make_shared<const ConsumerList>(std::move(list));
        std::lock_guard l(lock);
        consumers = std::move(next);
        consumerCount.store(n);
    }
    void handle(Sampler *q, const Request &request);
    void open(const Request &request, const QJsonObject &o);
    void close(const QString &origin, const QString &channel);
    void sweep();
};

void Sampler::Private::handle(Sampler *q, const Request &request)
{
    const QJsonObject o = QJsonDocument::fromJson(request.data()).object();
    const QString op = o.value(QStringLiteral("op")).toString();
    if (op == QLatin1String("open")) {
        open(request, o);
    } else if (op == QLatin1String("close")) {
        close(request.origin(), o.value(QStringLiteral("channel")).toString());
        client->reply(request, "{}");
    } else if (op == QLatin1String("figures")) {
        client->reply(request, QJsonDocument(q->figures()).toJson(QJsonDocument::Compact));
    } else {
        client->replyError(request, QStringLiteral("unknown sampler request '%1' (open, close, figures)").arg(op));
    }
}

void Sampler::Private::open(const Request &request, const QJsonObject &o)
{
    auto c = std::make_shared<Consumer>();
    c->origin = request.origin();
    c->channel = o.value(QStringLiteral("channel")).toString();
    if (const Status s = Criteria::parse(o.value(QStringLiteral("criteria")).toString(), &c->criteria);
        !s.isOk()) {
        client->replyError(request, s.message());
        return;
    }
    c->stream = client->openStream(request, c->channel);
    if (!c->stream) {
        client->replyError(request, QStringLiteral("invalid sample channel '%1'").arg(c->channel));
        return;
    }
    if (c->criteria.maxRateHz > 0)
        c->intervalNs = qMax<qint64>(1, qint64(1e9 / c->criteria.maxRateHz));
    ConsumerList list;
    for (const ConsumerPtr &old : *snapshot())
        if (old->origin != c->origin || old->channel != c->channel)
            list.push_back(old);
    list.push_back(c);
    replace(std::move(list));
    qCInfo(lcSampler).noquote() << name << "samples for" << c->origin << "on" << c->channel
                                << (c->criteria.toString().isEmpty() ? QStringLiteral("(every event)")
                                                                     : c->criteria.toString());
    client->reply(request, "{}");
}

void Sampler::Private::close(const QString &origin, const QString &channel)
{
    ConsumerList list;
    for (const ConsumerPtr &c : *snapshot())
        if (c->origin != origin || c->channel != channel)
            list.push_back(c);
        else
            qCInfo(lcSampler).noquote() << name << "closed by" << origin << "after" << c->sent.load()
                                        << "samples," << c->dropped.load() << "dropped";
    replace(std::move(list));
}

void Sampler::Private::sweep()
{
    const auto current = snapshot();
    ConsumerList list;
    for (const ConsumerPtr &c : *current) {
        if (c->stream->isBroken())
            qCInfo(lcSampler).noquote() << name << "lost consumer" << c->origin << "after" << c->sent.load()
                                        << "samples," << c->dropped.load() << "dropped";
        else if (!c->done.load())
            list.push_back(c);
    }
    if (list.size() != current->size())
        replace(std::move(list));
}

Sampler::Sampler(Client *client, const QString &name, QObject *parent) : QObject(parent), d(new Private)
{
    d->client = client;
    d->name = name;
    d->service = samplerService(name);
    d->clock.start();
    d->figuresService = client->publish(d->service);
    QPointer<Sampler> self(this);
    client->setRequestHandlerDirect(d->service, [self](const Request &r) {
        // In a reader thread: the work is done in the sampler's thread.
        QMetaObject::invokeMethod(
            self.data(), [self, r] {
                if (self)
                    self->d->handle(self, r);
            },
            Qt::QueuedConnection);
    });
    d->timer.setInterval(1000);
    connect(&d->timer, &QTimer::timeout, this, [this] {
        d->sweep();
        if (d->figuresService)
            d->figuresService->update(QJsonDocument(figures()).toJson(QJsonDocument::Compact));
    });
    d->timer.start();
    if (d->figuresService)
        d->figuresService->update(QJsonDocument(figures()).toJson(QJsonDocument::Compact));
}

Sampler::~Sampler()
{
    d->client->setRequestHandlerDirect(d->service, {});
    d->client->unpublish(d->service);
}

bool Sampler::hasConsumers() const
{
    return d->consumerCount.load(std::memory_order_relaxed) > 0;
}

void Sampler::offer(const Header &header, const char *data, qsizetype size)
{
    d->offered.fetch_add(1, std::memory_order_relaxed);
    if (!hasConsumers())
        return;
    const auto consumers = d->snapshot();
    for (const ConsumerPtr &c : *consumers) {
        if (!c->select(header.triggerType, header.spill, d->clock))
            continue;
        Sample s{header, QByteArray::fromRawData(data, size)};
        s.header.sequence = c->selected.fetch_add(1) + 1;
        s.header.dropped = c->dropped.load(std::memory_order_relaxed);
        const Status::Code code = c->stream->send(s.encode());
        if (code == Status::Code::Ok) {
            if (c->criteria.count > 0 && c->sent.fetch_add(1) + 1 >= c->criteria.count)
                c->done = true;
            else if (c->criteria.count == 0)
                c->sent.fetch_add(1, std::memory_order_relaxed);
            continue;
        }
        c->dropped.fetch_add(1, std::memory_order_relaxed);
        if (c->criteria.count > 0)
            c->reserved.fetch_sub(1);
        if (code == Status::Code::Broken)
            c->done = true;
    }
}

quint64 Sampler::offeredCount() const
{
    return d->offered.load();
}

QList<Sampler::ConsumerFigures> Sampler::consumers() const
{
    QList<ConsumerFigures> out;
    for (const ConsumerPtr &c : *d->snapshot())
        out.append({c->origin, c->channel, c->criteria.toString(), c->matched.load(), c->sent.load(),
                    c->dropped.load()});
    return out;
}

QJsonObject Sampler::figures() const
{
    QJsonArray list;
    for (const ConsumerFigures &c : consumers())
        list.append(QJsonObject{{QStringLiteral("consumer"), c.consumer},
                                {QStringLiteral("channel"), c.channel},
                                {QStringLiteral("criteria"), c.criteria},
                                {QStringLiteral("matched"), qint64(c.matched)},
                                {QStringLiteral("sent"), qint64(c.sent)},
                                {QStringLiteral("dropped"), qint64(c.dropped)}});
    return QJsonObject{{QStringLiteral("sampler"), d->name},
                       {QStringLiteral("offered"), qint64(offeredCount())},
                       {QStringLiteral("consumers"), list},
                       {QStringLiteral("time_ms"), QDateTime::currentMSecsSinceEpoch()}};
}

} // namespace dialog::sampling
