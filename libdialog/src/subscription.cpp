#include "client_p.h"

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
    if (cd->core && !d->attached) {
        const QString name = d->service;
        QMetaObject::invokeMethod(cd->core, [core = cd->core, name] { core->removeRequest(name); });
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
    if (state == s)
        return;
    state = s;
    Q_EMIT q->stateChanged(s);
}

void SubscriptionPrivate::deliver(const Message &m, quint64 providerIncarnation)
{
    if (providerIncarnation != incarnation) {
        // A new provider (or a restart): its sequence numbers start afresh.
        incarnation = providerIncarnation;
        lastSequence = m.sequence() - 1;
    }
    if (m.sequence() <= lastSequence && received > 0)
        return; // a value already seen (re-sent on re-subscription)
    if (m.sequence() > lastSequence + 1 && received > 0)
        lost += m.sequence() - lastSequence - 1;
    lastSequence = m.sequence();
    ++received;
    last = m;
    if (state != Subscription::State::Active) {
        state = Subscription::State::Active;
        Q_EMIT q->stateChanged(state);
    }
    Q_EMIT q->messageReceived(m);
}

} // namespace dialog
