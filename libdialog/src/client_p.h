#pragma once

#include "servicestate_p.h"
#include "transport_p.h"

#include "dialog/client.h"

#include <QElapsedTimer>
#include <QTimer>
#include <QHash>
#include <QPointer>
#include <QLoggingCategory>
#include <QSet>
#include <QThread>
#include <map>

class QTimer;

Q_DECLARE_LOGGING_CATEGORY(lcClient)

namespace dialog {

/// The server thread of the DIALOG paper: talks to the Control Server (connect, heartbeats,
/// registrations, INFO_SERVICE) and to providers/subscribers about subscriptions.
/// Lives in its own thread; the Client talks to it with queued calls only.
class ClientCore : public QObject
{
    Q_OBJECT
public:
    ClientCore(net::Transport *transport, const ClientOptions &options, const net::PeerInfo &self,
               const QList<net::Endpoint> &controlServers);

    // Called (queued) from the Client's thread.
    void start();
    void addService(const ServiceStatePtr &s);
    void removeService(const QString &name);
    void addRequest(const QString &name);
    void removeRequest(const QString &name);
    void addCommand(const QString &name);
    void removeCommand(const QString &name);
    void shutdown();

    /// Current Control Server queue (thread-safe), null while not connected.
    net::OutboxPtr controlOutbox() const;

    void handleControl(net::InboundBatch &batch);

Q_SIGNALS:
    // Delivered to the Client's thread.
    void stateChanged(int state);
    void subscriptionChanged(const QString &service, int state, const QString &provider, const QString &host,
                             quint16 port);
    void refused(const QString &what, const QString &name, const QString &reason);

private:
    void handle(const net::Inbound &in);
    void sendConnect();
    void setState(Client::State s);
    void onDestinationFailed(const net::Endpoint &dest, const QString &reason);
    void forgetProviders(const QString &why);
    void serverLost(const QString &why);
    void sendToControl(const QByteArray &frame);
    void subscribeAt(const QString &service, const net::Endpoint &provider, const QString &providerName,
                     quint64 incarnation);

    struct ProviderRef
    {
        QString name;
        net::Endpoint endpoint;
        quint64 incarnation = 0;
    };

    net::Transport *m_transport;
    ClientOptions m_options;
    net::PeerInfo m_self;
    QList<net::Endpoint> m_servers;
    int m_serverIndex = 0;
    Client::State m_state = Client::State::Unconnected;
    mutable QMutex m_csLock;
    net::OutboxPtr m_cs; // guarded by m_csLock
    QTimer *m_heartbeat = nullptr;
    QTimer *m_retry = nullptr;
    quint64 m_heartbeatSeq = 0;
    bool m_stopping = false;
    bool m_dirty = false;
    QElapsedTimer m_clock;
    qint64 m_lastHeardMs = 0; // last frame from the Control Server
    int m_serverMisses = 3;   // declarations made after the last CONNECT was built

    QHash<QString, ServiceStatePtr> m_services;
    QSet<QString> m_commands;
    QHash<QString, int> m_requests;          // service -> number of Subscription objects
    QHash<QString, ProviderRef> m_providers; // requested service -> where it is
};

struct StreamState
{
    net::Transport *transport = nullptr;
    net::OutboxPtr box;
    QByteArray key; // channel name, UTF-8
    QString channel, peer;
    QMutex lock; // sequence order == queue order
    quint64 sequence = 0;
    std::atomic<bool> broken{false};
};

class ClientPrivate
{
public:
    ClientPrivate(Client *q, const ClientOptions &o);

    void deliver(net::InboundBatch &batch);
    void onSubscriptionChanged(const QString &service, int state, const QString &provider, const QString &host,
                               quint16 port);
    // Requests (user thread)
    struct PendingRequest
    {
        QString service;
        QByteArray frame;
        QPointer<const QObject> context;
        bool hasContext = false;
        std::function<void(const Reply &)> callback;
        bool sent = false;
        int timeoutMs = 0;
        std::multimap<qint64, quint64>::iterator deadline; // in deadlines, unless invalid
        bool hasDeadline = false;
    };
    void handleRequest(const net::Inbound &in);
    void sendPending(const QString &service);
    void finishRequest(quint64 id, const Reply &reply);
    // One timer for the time-outs of every pending request, armed to the earliest deadline.
    void armRequestSweep();
    void sweepRequests();
    bool sendReply(const Request &r, quint8 status, const QByteArray &data);
    void onRefused(const QString &what, const QString &name, const QString &reason);
    void fail(Client::Error e, const QString &why);
    void onDestinationFailed(const net::Endpoint &destination);

    Client *q;
    ClientOptions options;
    QList<net::Endpoint> servers;
    std::unique_ptr<net::Transport> transport;
    ClientCore *core = nullptr;
    QThread coreThread;
    bool started = false;
    Client::State state = Client::State::Unconnected;
    Client::Error error = Client::Error::NoError;
    QString errorString;
    QHash<QString, Service *> services;
    QHash<QByteArray, QList<Subscription *>> subscriptions;
    quint64 subscriptionGeneration = 0; // bumped whenever `subscriptions` changes
    QHash<QString, net::Endpoint> providers;      // where each subscribed service is, as far as we know
    QHash<QString, Subscription *> locators;      // hidden subscriptions that locate request targets
    QHash<quint64, PendingRequest> pending;
    std::multimap<qint64, quint64> deadlines; // requestClock ms -> request id
    QElapsedTimer requestClock;
    QTimer *requestSweep = nullptr;
    quint64 nextRequestId = 1;
    QMutex streamsLock; // streams are used from any thread; failures arrive from sender threads
    std::vector<std::weak_ptr<StreamState>> streams;
};

} // namespace dialog
