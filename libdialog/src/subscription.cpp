#include "client_p.h"
#include "dialog/handoff.h"

namespace dialog {

Subscription::Subscription(const QString &service, Client *client, bool attached)
    : QObject(client), d(std::make_unique<SubscriptionPrivate>())
{
    d->q = this;
    d->client = client;
    d->service = service;
    d->attached = attached;
}

Subscription::~Subscription()
{
    ClientPrivate *cd = d->client->d.get();
    const QByteArray key = d->service.toUtf8();
    ++cd->subscriptionGeneration;
    auto it = cd->subscriptions.find(key);
    if (it != cd->subscriptions.end()) {
        it->removeAll(this);
        if (it->isEmpty())
            cd->subscriptions.erase(it);
    }
    if (d->direct)
        cd->removeDirect(cd->direct.services, key, d->direct);
    cd->refreshQueued(key);
    if (cd->core && !d->attached) {
        const QString name = d->service;
        handoff::post(cd->core, [core = cd->core, name] { core->removeRequest(name); });
    }
}

QString Subscription::service() const
{
    return d->service;
}
Subscription::State Subscription::state() const
{
    return d->state;
}
QString Subscription::provider() const
{
    return d->provider;
}
Message Subscription::lastMessage() const
{
    return d->last;
}
quint64 Subscription::receivedCount() const
{
    return d->received;
}
quint64 Subscription::lostCount() const
{
    return d->lost;
}

void SubscriptionPrivate::setState(Subscription::State s, const QString &newProvider)
{
    if (s == Subscription::State::Connecting && state == Subscription::State::Active &&
        newProvider == provider)
        return; // a re-subscription to the same provider: messages keep flowing
    provider = newProvider;
    if (s == Subscription::State::Lost)
        providerLost = true;
    if (state == s)
        return;
    state = s;
    Q_EMIT q->stateChanged(s);
}

bool SubscriptionPrivate::accept(quint64 sequence, quint64 providerIncarnation)
{
    if (providerIncarnation != incarnation) {
        // A new provider (or a restart): its sequence numbers start afresh.
        incarnation = providerIncarnation;
        lastSequence = sequence - 1;
    }
    if (providerLost && sequence == lastSequence) {
        // The provider was declared lost (hung past its heartbeats) and came back with the same
        // incarnation: the value it re-sends is news to whoever watched it go, so it is delivered
        // again rather than dropped as already seen.
        lastSequence = sequence - 1;
    }
    providerLost = false;
    if (attached && sequence <= lastSequence && received > 0) {
        // A channel's stream is never re-sent, so a number that goes back means the sender opened a
        // new Stream on this channel (it replaced a subscription: the receiver subscribed again after
        // the server was stopped and continued, or after a broken connection): counted afresh.
        lastSequence = sequence - 1;
    }
    if (sequence <= lastSequence && received > 0) {
        // A value already seen (re-sent on re-subscription, e.g. after a Control Server restart):
        // not delivered twice, but it proves the provider is there again.
        if (state != Subscription::State::Active) {
            state = Subscription::State::Active;
            Q_EMIT q->stateChanged(state);
        }
        return false;
    }
    if (sequence > lastSequence + 1 && received > 0)
        lost += sequence - lastSequence - 1;
    lastSequence = sequence;
    ++received;
    return true;
}

void SubscriptionPrivate::deliver(const Message &m, quint64 providerIncarnation)
{
    if (!accept(m.sequence(), providerIncarnation))
        return;
    last = m;
    announce();
}

void SubscriptionPrivate::deliver(const QByteArray &service, net::Inbound &in)
{
    if (!accept(in.sequence, in.incarnation))
        return;
    last.takeInPlace(service, in);
    announce();
}

void SubscriptionPrivate::announce()
{
    // The slots get a copy, not `last` itself: a nested event loop in a slot delivers the next
    // messages (takeInPlace does not reuse a message held twice), and a slot may delete the
    // subscription (and `last`) and still read its message.
    const Message m = last;
    if (state != Subscription::State::Active) {
        state = Subscription::State::Active;
        Q_EMIT q->stateChanged(state);
    }
    Q_EMIT q->messageReceived(m);
}

} // namespace dialog
