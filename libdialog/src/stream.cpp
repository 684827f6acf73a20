#include "client_p.h"
#include "dialog/handoff.h"

#include "requests_p.h"
#include <QPointer>

#include <algorithm>

namespace dialog {

Stream::Stream(std::shared_ptr<StreamState> state) : d(std::move(state)) {}
Stream::~Stream() = default;

QString Stream::channel() const
{
    return d->channel;
}
QString Stream::peer() const
{
    return d->peer;
}
bool Stream::isBroken() const
{
    return d->broken.load(std::memory_order_relaxed);
}
qint64 Stream::queuedBytes() const
{
    return d->box->queuedBytes();
}
quint64 Stream::sentCount() const
{
    QMutexLocker l(&d->lock);
    return d->sequence;
}

Status::Code Stream::send(const QByteArray &data)
{
    if (isBroken())
        return Status::Code::Broken;
    QMutexLocker l(&d->lock);
    const quint64 seq = d->sequence + 1;
    const QByteArray prefix = wire_format::serviceFramePrefix(d->key, seq, 0, data.size());
    if (d->transport->send(d->box, {prefix, data}) != net::Transport::SendResult::Queued)
        return Status::Code::QueueFull;
    d->sequence = seq;
    return Status::Code::Ok;
}

void Stream::whenRoom(const QObject *context, std::function<void()> fn)
{
    if (isBroken() || !context)
        return;
    // The transport calls back in a sender thread (or here); the caller gets it in its context's
    // thread, and not at all once the context is gone.
    QPointer<const QObject> guard(context);
    d->transport->whenRoom(d->box, [guard, fn = std::move(fn)]() mutable {
        if (const QObject *c = guard.data())
            QMetaObject::invokeMethod(const_cast<QObject *>(c), handoff::handOff(std::move(fn)),
                                      Qt::QueuedConnection);
    });
}

StreamPtr Client::openStream(const Request &from, const QString &channel)
{
    if (!d->transport || from.d->port == 0 || !isValidName(channel))
        return nullptr;
    auto st = std::make_shared<StreamState>();
    st->transport = d->transport.get();
    st->box = d->transport->outbox(net::Endpoint{from.d->host, from.d->port});
    st->key = channel.toUtf8();
    st->channel = channel;
    st->peer = from.d->origin;
    QMutexLocker l(&d->streamsLock);
    // Forget the streams nobody holds any more.
    d->streams.erase(std::remove_if(d->streams.begin(), d->streams.end(),
                                    [](const std::weak_ptr<StreamState> &w) { return w.expired(); }),
                     d->streams.end());
    d->streams.push_back(st);
    return StreamPtr(new Stream(st));
}

Subscription *Client::attach(const QString &channel)
{
    if (!isValidName(channel)) {
        d->fail(Error::InvalidName, QStringLiteral("invalid channel name '%1' (empty or over %2 bytes)")
                                        .arg(channel.left(64))
                                        .arg(wire_format::MaxNameLength));
        return nullptr;
    }
    auto *s = new Subscription(channel, this, true);
    d->subscriptions[channel.toUtf8()].append(s);
    ++d->subscriptionGeneration;
    return s;
}

QString Client::providerOf(const QString &service) const
{
    for (Subscription *s : d->subscriptions.value(service.toUtf8()))
        if (!s->provider().isEmpty() && s->state() != Subscription::State::Lost)
            return s->provider();
    return d->requests->providerOf(service);
}

void ClientPrivate::onDestinationFailed(const net::Endpoint &destination)
{
    QMutexLocker l(&streamsLock);
    for (const auto &w : streams)
        if (const auto st = w.lock(); st && st->box->endpoint == destination)
            st->broken.store(true);
}

} // namespace dialog
