// dialog::sampling::SampleReader: the consumer's side. Its channel is attached once; every opening
// asks the sampler for a stream to it, and the sequence numbers of the samples give what was lost.
#include "dialog/sampling.h"

#include "dialog/client.h"
#include "dialog/message.h"
#include "dialog/request.h"
#include "dialog/subscription.h"

#include <QJsonDocument>
#include <QLoggingCategory>
#include <atomic>

Q_DECLARE_LOGGING_CATEGORY(lcSampler)

namespace dialog::sampling {

struct SampleReader::Private
{
    Client *client = nullptr;
    QString sampler, service, channel;
    Criteria criteria;
    Subscription *attached = nullptr, *figures = nullptr;
    bool wasLost = false, finished = false;
    quint64 received = 0, lostBefore = 0, droppedBefore = 0;
    quint64 openReceived = 0, openMaxSequence = 0, openDropped = 0; // of the current opening
    PendingReply pending;

    void restartCounts()
    {
        lostBefore += openMaxSequence > openReceived ? openMaxSequence - openReceived : 0;
        droppedBefore += openDropped;
        openReceived = openMaxSequence = openDropped = 0;
    }
};

SampleReader::SampleReader(Client *client, const QString &sampler, const Criteria &criteria, QObject *parent)
    : QObject(parent), d(new Private)
{
    static std::atomic<quint64> readers{0};
    d->client = client;
    d->sampler = sampler;
    d->service = samplerService(sampler);
    d->criteria = criteria;
    d->channel = QStringLiteral("%1.Samples.%2.%3").arg(client->name(), sampler).arg(++readers);
    d->attached = client->attach(d->channel);
    if (d->attached)
        connect(d->attached, &Subscription::messageReceived, this, [this](const Message &m) {
            Sample s;
            if (const Status bad = Sample::decode(m.data(), &s); !bad.isOk()) {
                qCWarning(lcSampler).noquote() << "from" << d->sampler << bad.toString();
                return;
            }
            if (d->finished)
                return;
            ++d->received;
            ++d->openReceived;
            d->openMaxSequence = qMax(d->openMaxSequence, s.header.sequence);
            d->openDropped = qMax(d->openDropped, s.header.dropped);
            Q_EMIT sampleReceived(s);
            if (d->criteria.count > 0 && d->received >= d->criteria.count && !d->finished) {
                d->finished = true;
                Q_EMIT finished();
            }
        });
    // The sampler's figures service: it going away and coming back is a restart of the sampler.
    d->figures = client->subscribe(d->service);
    if (d->figures)
        connect(d->figures, &Subscription::stateChanged, this, [this](Subscription::State s) {
            if (s == Subscription::State::Lost) {
                d->wasLost = true;
            } else if (s == Subscription::State::Active && d->wasLost && !d->finished) {
                d->wasLost = false;
                open();
            }
        });
}

SampleReader::~SampleReader()
{
    d->pending.cancel();
    const QJsonObject close{{QStringLiteral("op"), QStringLiteral("close")},
                            {QStringLiteral("channel"), d->channel}};
    d->client->request(d->service, QJsonDocument(close).toJson(QJsonDocument::Compact), 1000, d->client,
                       [](const Reply &) {});
    if (d->attached)
        d->client->unsubscribe(d->attached);
    if (d->figures)
        d->client->unsubscribe(d->figures);
}

void SampleReader::open(int timeoutMs)
{
    d->pending.cancel();
    Criteria rest = d->criteria;
    if (rest.count > 0) // what is still wanted after a re-opening
        rest.count = rest.count > d->received ? rest.count - d->received : 1;
    const QJsonObject o{{QStringLiteral("op"), QStringLiteral("open")},
                        {QStringLiteral("channel"), d->channel},
                        {QStringLiteral("criteria"), rest.toString()}};
    d->pending = d->client->request(d->service, QJsonDocument(o).toJson(QJsonDocument::Compact), timeoutMs, this,
                                    [this](const Reply &r) {
                                        if (!r.isOk()) {
                                            Q_EMIT errorOccurred(r.status());
                                            return;
                                        }
                                        d->restartCounts();
                                        Q_EMIT opened();
                                    });
}

quint64 SampleReader::receivedCount() const
{
    return d->received;
}

quint64 SampleReader::lostCount() const
{
    return d->lostBefore + (d->openMaxSequence > d->openReceived ? d->openMaxSequence - d->openReceived : 0);
}

quint64 SampleReader::droppedBySampler() const
{
    return d->droppedBefore + d->openDropped;
}

} // namespace dialog::sampling
