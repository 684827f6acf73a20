#pragma once

#include "dialog/request.h"
#include "transport_p.h"

#include <QElapsedTimer>
#include <QHash>
#include <QPointer>
#include <functional>
#include <map>

class QTimer;

namespace dialog {

class ClientPrivate;
class Subscription;

/// The requests a Client has sent and waits for (Client::request): time-outs, replies, lost
/// providers, cancellation, and the hidden subscriptions ("locators") that find the provider of a
/// requested service. A locator lives while a request for its service is pending and then
/// ClientOptions::requestLocatorLingerMs longer (a request in that time uses it again).
/// Lives in the Client's thread; every function is called there.
class RequestTracker
{
public:
    explicit RequestTracker(ClientPrivate *client);
    ~RequestTracker();

    quint64 start(const QString &service, const QByteArray &data, int timeoutMs, const QObject *context,
                  std::function<void(const Reply &)> callback);
    bool cancel(quint64 id);
    bool isPending(quint64 id) const { return m_pending.contains(id); }
    /// A REPLY frame arrived.
    void onReply(quint64 id, quint8 wireStatus, const QByteArray &data);
    /// The provider of @p service is known: sends the requests waiting for it.
    void onProviderKnown(const QString &service);
    /// The provider of @p service was lost: requests already sent to it will never be answered.
    void onProviderLost(const QString &service, const QString &provider);
    /// The connection to @p destination failed: requests sent there may never arrive, and a
    /// provider that went away and came back elsewhere would never answer them. They fail now
    /// (ProviderLost, with the reason) instead of waiting out their time-out.
    void onDestinationFailed(const net::Endpoint &destination, const QString &reason);
    /// The provider found by a locator (empty if none, or none is pending).
    QString providerOf(const QString &service) const;
    /// Hidden subscriptions alive (one per service with pending requests and no user subscription).
    int locatorCount() const { return int(m_locators.size()); }

private:
    struct Pending
    {
        QString service;
        QByteArray frame;
        QPointer<const QObject> context;
        bool hasContext = false;
        std::function<void(const Reply &)> callback;
        bool sent = false;
        net::Endpoint sentTo; ///< where the frame went, if sent
        int timeoutMs = 0;
        std::multimap<qint64, quint64>::iterator deadline; // in m_deadlines, if hasDeadline
        bool hasDeadline = false;
    };
    /// Removes request @p id; with @p deliver, calls its callback with @p reply (once).
    void finish(quint64 id, const Reply &reply, bool deliver = true);
    /// Once no pending request needs the locator of @p service: drops it, or lets it linger.
    void releaseLocator(const QString &service);
    /// Drops the locators that lingered long enough; arms m_linger for the next one.
    void dropIdleLocators();
    // One timer for the time-outs of every pending request, armed to the earliest deadline.
    void armSweep();
    void sweep();

    ClientPrivate *const d;
    QHash<quint64, Pending> m_pending;
    QHash<QString, Subscription *> m_locators;
    QHash<QString, qint64> m_idleLocators; // service -> m_clock ms when its last request finished
    QTimer *m_linger = nullptr;
    std::multimap<qint64, quint64> m_deadlines; // m_clock ms -> request id
    QElapsedTimer m_clock;
    QTimer *m_sweep = nullptr;
    quint64 m_nextId = 1;
};

} // namespace dialog
