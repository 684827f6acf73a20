#include "requests_p.h"

#include "client_p.h"
#include "payload_p.h"

#include <QTimer>

#include <algorithm>

namespace dialog {

RequestTracker::RequestTracker(ClientPrivate *client) : d(client) {}

RequestTracker::~RequestTracker()
{
    delete m_sweep;
    delete m_linger;
}

quint64 RequestTracker::start(const QString &service, const QByteArray &data, int timeoutMs,
                              const QObject *context, std::function<void(const Reply &)> callback)
{
    const quint64 id = m_nextId++;
    Pending p;
    p.service = service;
    p.context = context;
    p.hasContext = context != nullptr;
    p.callback = std::move(callback);
    Status invalid;
    if (!Client::isValidName(service))
        invalid = Status(Status::Code::InvalidName,
                         QStringLiteral("invalid service name '%1'").arg(service.left(64)));
    else if (data.size() > d->options.maxMessageSize)
        invalid = Status(Status::Code::MessageTooLarge,
                         QStringLiteral("request of %1 bytes exceeds the maximum of %2")
                             .arg(data.size())
                             .arg(d->options.maxMessageSize));
    else if (!d->core)
        invalid = Status(Status::Code::NotConnected, QStringLiteral("the client is not started"));
    if (!invalid.isOk()) {
        // Never call back from within request(): the caller may not be ready for it.
        m_pending.insert(id, p);
        QTimer::singleShot(0, d->q, [this, id, invalid] { finish(id, Reply(id, invalid)); });
        return id;
    }
    quint8 flags = 0;
    const QByteArray prepared = wire_format::prepareData(data, d->options.compressionThreshold, flags);
    p.frame = wire_format::encodeRequestFrame(service.toUtf8(), id, flags, prepared);
    p.timeoutMs = qMax(1, timeoutMs);
    if (!m_clock.isValid())
        m_clock.start();
    p.deadline = m_deadlines.emplace(m_clock.elapsed() + p.timeoutMs, id);
    p.hasDeadline = true;
    m_pending.insert(id, p);
    armSweep();
    // The provider is found like a subscriber finds it; a hidden subscription keeps it located
    // while requests for the service are pending.
    if (!d->subscriptions.contains(service.toUtf8()) && !m_locators.contains(service))
        m_locators.insert(service, d->addSubscription(service));
    m_idleLocators.remove(service); // lingering: in use again
    onProviderKnown(service);
    return id;
}

bool RequestTracker::cancel(quint64 id)
{
    if (!m_pending.contains(id))
        return false;
    finish(id, Reply(), false);
    return true;
}

void RequestTracker::onReply(quint64 id, quint8 wireStatus, const QByteArray &data)
{
    static const Status::Code fromWire[] = {Status::Code::Ok, Status::Code::Failed, Status::Code::NotAccepted,
                                            Status::Code::PermissionDenied};
    const Status::Code code = wireStatus < 4 ? fromWire[wireStatus] : Status::Code::Failed;
    if (code == Status::Code::Ok)
        finish(id, Reply(id, Status(), data));
    else
        finish(id, Reply(id, Status(code, QString::fromUtf8(data))));
}

void RequestTracker::onProviderKnown(const QString &service)
{
    const auto where = d->providers.constFind(service);
    if (where == d->providers.cend() || !d->transport)
        return;
    const net::OutboxPtr box = d->transport->outbox(where.value());
    // In the order they were made (ids grow), not the hash's.
    QList<quint64> waiting;
    for (auto it = m_pending.cbegin(); it != m_pending.cend(); ++it)
        if (it->service == service && !it->sent)
            waiting << it.key();
    std::sort(waiting.begin(), waiting.end());
    for (quint64 id : std::as_const(waiting)) {
        Pending &p = m_pending[id];
        p.sent = true;
        p.sentTo = where.value();
        if (d->transport->send(box, p.frame) == net::Transport::SendResult::Queued)
            continue;
        // Refused by a queue at its bound: nothing went out, so no reply can come; said now rather
        // than at the time-out, from the event loop (this may run within request()).
        const Status full(Status::Code::QueueFull,
                          QStringLiteral("request for '%1' not sent: the queue to %2 is at its bound")
                              .arg(service, where.value().toString()));
        QTimer::singleShot(0, d->q, [this, id, full] { finish(id, Reply(id, full)); });
    }
}

void RequestTracker::onProviderLost(const QString &service, const QString &provider)
{
    QList<quint64> lost;
    for (auto it = m_pending.cbegin(); it != m_pending.cend(); ++it)
        if (it->service == service && it->sent)
            lost << it.key();
    for (quint64 id : std::as_const(lost))
        finish(id, Reply(id, Status(Status::Code::ProviderLost,
                                    QStringLiteral("provider %1 of '%2' was lost").arg(provider, service))));
}

void RequestTracker::onDestinationFailed(const net::Endpoint &destination, const QString &reason)
{
    QList<quint64> failed;
    for (auto it = m_pending.cbegin(); it != m_pending.cend(); ++it)
        if (it->sent && it->sentTo == destination)
            failed << it.key();
    for (quint64 id : std::as_const(failed)) {
        const auto it = m_pending.constFind(id);
        if (it == m_pending.cend())
            continue; // finished by a callback of this loop
        const QString service = it->service;
        finish(id, Reply(id, Status(Status::Code::ProviderLost,
                                    QStringLiteral("connection to the provider of '%1' at %2 failed: %3")
                                        .arg(service, destination.toString(), reason))));
    }
}

QString RequestTracker::providerOf(const QString &service) const
{
    const Subscription *s = m_locators.value(service);
    return s && s->state() != Subscription::State::Lost ? s->provider() : QString();
}

void RequestTracker::finish(quint64 id, const Reply &reply, bool deliver)
{
    auto it = m_pending.find(id);
    if (it == m_pending.end())
        return; // answered already, timed out or cancelled
    const Pending p = it.value();
    m_pending.erase(it);
    if (p.hasDeadline)
        m_deadlines.erase(p.deadline);
    // The locator outlives the callback, which may ask providerOf() or request the same service
    // again (then the locator is kept); the callback may also delete the Client.
    const QPointer<Client> alive(d->q);
    if (deliver && (!p.hasContext || p.context))
        p.callback(reply);
    if (alive)
        releaseLocator(p.service);
}

void RequestTracker::releaseLocator(const QString &service)
{
    if (!m_locators.contains(service))
        return;
    for (const Pending &p : std::as_const(m_pending))
        if (p.service == service)
            return;
    const int linger = d->options.requestLocatorLingerMs;
    if (linger <= 0) {
        delete m_locators.take(service); // unsubscribes from the provider and cancels the request
        return;
    }
    m_idleLocators.insert(service, m_clock.elapsed());
    if (!m_linger) {
        m_linger = new QTimer;
        m_linger->setSingleShot(true);
        QObject::connect(m_linger, &QTimer::timeout, d->q, [this] { dropIdleLocators(); });
    }
    if (!m_linger->isActive())
        m_linger->start(linger);
}

void RequestTracker::dropIdleLocators()
{
    const qint64 now = m_clock.elapsed();
    const int linger = d->options.requestLocatorLingerMs;
    qint64 next = -1; // the next one due, in ms from now
    for (auto it = m_idleLocators.begin(); it != m_idleLocators.end();) {
        const qint64 due = it.value() + linger - now;
        if (due <= 0) {
            delete m_locators.take(it.key());
            it = m_idleLocators.erase(it);
        } else {
            next = next < 0 ? due : qMin(next, due);
            ++it;
        }
    }
    if (next >= 0)
        m_linger->start(int(next));
}

void RequestTracker::armSweep()
{
    if (m_deadlines.empty()) {
        if (m_sweep)
            m_sweep->stop();
        return;
    }
    if (!m_sweep) {
        m_sweep = new QTimer;
        m_sweep->setSingleShot(true);
        m_sweep->setTimerType(Qt::PreciseTimer);
        QObject::connect(m_sweep, &QTimer::timeout, d->q, [this] { sweep(); });
    }
    const int due = int(qMax<qint64>(0, m_deadlines.begin()->first - m_clock.elapsed()));
    if (!m_sweep->isActive() || m_sweep->remainingTime() > due)
        m_sweep->start(due);
}

void RequestTracker::sweep()
{
    const qint64 now = m_clock.elapsed();
    QList<quint64> expired;
    for (auto it = m_deadlines.begin(); it != m_deadlines.end() && it->first <= now; ++it)
        expired << it->second;
    for (quint64 id : std::as_const(expired)) {
        const int ms = m_pending.value(id).timeoutMs;
        finish(id, Reply(id, Status(Status::Code::Timeout, QStringLiteral("no reply within %1 ms").arg(ms))));
    }
    armSweep();
}

// ---------------------------------------------------------------- PendingReply

bool PendingReply::isPending() const
{
    return m_client && m_client->isRequestPending(m_id);
}

bool PendingReply::cancel()
{
    return m_client && m_client->cancelRequest(m_id);
}

} // namespace dialog
