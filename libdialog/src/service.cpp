#include "client_p.h"
#include "payload_p.h"

#include <QDateTime>

namespace dialog {

Service::Service(std::shared_ptr<ServiceState> state, Client *client) : QObject(client), d(std::move(state))
{
}

Service::~Service() = default;

QString Service::name() const
{
    return d->name;
}

bool Service::update(const QByteArray &data)
{
    if (data.size() > d->maxMessageSize) {
        // Receivers would reject the frame and close the connection: refuse it here, loudly.
        qCWarning(lcClient).noquote() << "service" << d->name << ": update of" << data.size()
                                      << "bytes refused, over the maximum message size of" << d->maxMessageSize;
        return false;
    }
    const bool all = d->publish(data);
    if (!all) {
        const qint64 now = QDateTime::currentMSecsSinceEpoch();
        if (now - d->lastDropSignalMs.load() >= 100) {
            d->lastDropSignalMs.store(now);
            Q_EMIT messagesDropped(d->dropped.load());
        }
    }
    return all;
}

quint64 Service::sequence() const
{
    QMutexLocker l(&d->lock);
    return d->sequence;
}

int Service::subscriberCount() const
{
    QMutexLocker l(&d->lock);
    return int(d->subscribers.size());
}

quint64 Service::droppedCount() const
{
    return d->dropped.load();
}

Service::FlowControl Service::flowControl() const
{
    return FlowControl(d->flowControl.load());
}

void Service::setFlowControl(FlowControl mode, int blockTimeoutMs)
{
    d->flowControl.store(int(mode));
    d->blockTimeoutMs.store(qMax(1, blockTimeoutMs));
}

// ---------------------------------------------------------------- Subscription

Subscription::Subscription(const QString &service, Client *client)
    : QObject(client), m_client(client), m_service(service)
{
}

Subscription::~Subscription()
{
    ClientPrivate *d = m_client->d.get();
    const QByteArray key = m_service.toUtf8();
    ++d->subscriptionGeneration;
    auto it = d->subscriptions.find(key);
    if (it != d->subscriptions.end()) {
        it->removeAll(this);
        if (it->isEmpty())
            d->subscriptions.erase(it);
    }
    if (d->core && !m_attached) {
        const QString name = m_service;
        QMetaObject::invokeMethod(d->core, [core = d->core, name] { core->removeRequest(name); });
    }
}

void Subscription::setState(State s, const QString &provider)
{
    if (s == State::Connecting && m_state == State::Active && provider == m_provider)
        return; // a re-subscription to the same provider: messages keep flowing
    m_provider = provider;
    if (m_state == s)
        return;
    m_state = s;
    Q_EMIT stateChanged(s);
}

void Subscription::deliver(const Message &m, quint64 providerIncarnation)
{
    if (providerIncarnation != m_incarnation) {
        // A new provider (or a restart): its sequence numbers start afresh.
        m_incarnation = providerIncarnation;
        m_lastSequence = m.sequence() - 1;
    }
    if (m.sequence() <= m_lastSequence && m_received > 0)
        return; // a value already seen (re-sent on re-subscription)
    if (m.sequence() > m_lastSequence + 1 && m_received > 0)
        m_lost += m.sequence() - m_lastSequence - 1;
    m_lastSequence = m.sequence();
    ++m_received;
    m_last = m;
    if (m_state != State::Active) {
        m_state = State::Active;
        Q_EMIT stateChanged(m_state);
    }
    Q_EMIT messageReceived(m);
}

} // namespace dialog
