#pragma once

#include "servicestate_p.h"
#include "transport_p.h"

#include "dialog/client.h"

#include <QElapsedTimer>
#include <QHash>
#include <QLoggingCategory>
#include <QPointer>
#include <QReadWriteLock>
#include <QSet>
#include <QThread>
#include <QTimer>
#include <map>

class QTimer;

Q_DECLARE_LOGGING_CATEGORY(lcClient)

namespace dialog {

/// The wait before a CONNECT to the Control Server, so that thousands of processes that lost it at
/// the same moment come back spread out instead of in one storm (DIM's name server was overloaded by
/// its mass restarts). @p attempt 0 is the first try after an established connection was lost:
/// uniform in [0, base). Attempt n >= 1 follows n tries that failed or went unanswered: "equal
/// jitter" exponential back-off, in [c/2, c) with c = base * 2^n, c at most 8 * base and at most
/// 30 s (but never below base). @p random is uniform in [0, 1).
qint64 reconnectDelayMs(int attempt, int baseMs, double random);

/// Which inbound connection is the Control Server's: the one that delivered a
/// SUCCESSFULLY_CONNECTED echoing this incarnation's session bytes (only the Control Server that
/// got our CONNECT knows them). Control frames and commands are believed from it alone: any peer can
/// open a connection to a process's data port and write frames that claim to come from the Control
/// Server. Thread-safe: read by the reader threads (direct command handlers), the server thread and
/// the Client's thread.
class ControlLink
{
public:
    /// From now on, @p peer's connection is the Control Server's.
    void bind(const net::PeerInfo &peer) { m_id.store(peer.connectionId, std::memory_order_release); }
    /// No connection is the Control Server's (lost, or connecting again).
    void clear() { m_id.store(0, std::memory_order_release); }
    /// True when @p peer came by the Control Server's connection.
    bool isControl(const net::PeerPtr &peer) const
    {
        const quint64 id = m_id.load(std::memory_order_acquire);
        return peer && id != 0 && peer->connectionId == id;
    }
    /// Counts a @p what from @p peer that is ignored because it did not come by the Control Server's
    /// connection; true when it is to be logged (the first one, then the 2nd, 4th, 8th …).
    bool countIgnored() const
    {
        const quint64 n = ++m_ignored;
        return (n & (n - 1)) == 0;
    }
    /// Frames ignored so far.
    quint64 ignored() const { return m_ignored.load(); }
    /// The term of the Control Server that accepted us last (Client::controlServerTerm()).
    quint64 term() const { return m_term.load(std::memory_order_acquire); }
    void setTerm(quint64 t) { m_term.store(t, std::memory_order_release); }

private:
    std::atomic<quint64> m_id{0};
    std::atomic<quint64> m_term{0};
    mutable std::atomic<quint64> m_ignored{0};
};
using ControlLinkPtr = std::shared_ptr<ControlLink>;

/// Which connection carries each subscribed service's data: the one on which the provider the
/// directory named (told over the Control Server's connection) echoed the subscription's random
/// token (SUBSCRIBE_SERVICE's token; the provider answers with a SERVICE_MESSAGE of sequence 0
/// whose data is the token, ahead of the values, on the connection its data goes by). Data for the
/// name from any other connection is ignored. Only names subscribed to through the directory are
/// listed; Stream channels (Client::attach) are not. Thread-safe: written by the server thread
/// (expect, forget) and the delivering threads (acknowledgements), read by the delivering threads.
class ProviderLinks
{
public:
    /// What check() says of one SERVICE_MESSAGE.
    enum class Verdict
    {
        Deliver,      ///< from the provider's connection, or a name not listed
        Acknowledged, ///< the provider's echo of the token: the connection is bound, nothing to deliver
        Ignore        ///< another connection's: dropped
    };
    /// @p service is subscribed to through the directory: from now on only the connection that
    /// echoes @p token is believed (empty token: the provider is not known yet, nothing is).
    /// The same token again keeps the connection already bound.
    void expect(const QByteArray &service, const QByteArray &token);
    /// @p service is no longer subscribed to.
    void forget(const QByteArray &service);
    /// Decides on a SERVICE_MESSAGE for @p service with @p sequence and @p data that came by
    /// @p connection. @p askAgain is set for the first ignored message of each other connection
    /// while a provider is known: the provider may have opened a new connection (its old one went
    /// idle), so it is asked to acknowledge again, where it sends now.
    Verdict check(const QByteArray &service, quint64 connection, quint64 sequence, QByteArrayView data,
                  bool *askAgain);
    /// The connection bound to @p service, 0 when none (or the name is not listed: see listed()).
    quint64 connectionOf(const QByteArray &service, bool *listed) const;
    /// Bumped by every change: callers may cache connectionOf() while it stays the same.
    quint64 generation() const { return m_generation.load(std::memory_order_acquire); }
    /// Counts an ignored message; true when it is to be logged (the 1st, 2nd, 4th, 8th …).
    bool countIgnored() const
    {
        const quint64 n = ++m_ignored;
        return (n & (n - 1)) == 0;
    }
    /// Messages ignored so far.
    quint64 ignored() const { return m_ignored.load(); }

private:
    struct Entry
    {
        QByteArray token;
        quint64 connection = 0; // 0: none bound
        quint64 askedFor = 0;   // the last other connection it asked the provider again for
    };
    mutable QReadWriteLock m_lock;
    QHash<QByteArray, Entry> m_entries; // guarded by m_lock
    std::atomic<quint64> m_generation{1};
    mutable std::atomic<quint64> m_ignored{0};
};
using ProviderLinksPtr = std::shared_ptr<ProviderLinks>;

/// Logs (throttled by ProviderLinks::countIgnored) that data for @p service was ignored because it
/// did not come by the connection of the provider subscribed to.
void logNotFromProvider(const ProviderLinks &links, const QByteArray &service);

/// Logs (throttled by ControlLink::countIgnored) that a @p what from @p peer was ignored because
/// it did not come by the Control Server's connection.
void logNotFromControlServer(const ControlLink &link, const char *what, const net::PeerPtr &peer);

/// The server thread of the DIALOG paper: talks to the Control Server (connect, heartbeats,
/// registrations, INFO_SERVICE) and to providers/subscribers about subscriptions.
/// Lives in its own thread; the Client talks to it with queued calls only.
class ClientCore : public QObject
{
    Q_OBJECT
public:
    ClientCore(net::Transport *transport, const ClientOptions &options, const net::PeerInfo &self,
               const QList<net::Endpoint> &controlServers, ControlLinkPtr link);

    // Called (queued) from the Client's thread.
    void start();
    void addService(const ServiceStatePtr &s);
    void removeService(const QString &name);
    void addRequest(const QString &name);
    void removeRequest(const QString &name);
    /// Sends the subscription to @p name's provider again (it has not answered: see
    /// ClientPrivate::checkConnecting()).
    void resubscribe(const QString &name);
    void addCommand(const QString &name);
    void removeCommand(const QString &name);
    void shutdown();

    /// Current Control Server queue (thread-safe), null while not connected.
    net::OutboxPtr controlOutbox() const;
    /// Where the connections believed for each subscription are kept; set before start().
    void setProviderLinks(ProviderLinksPtr links) { m_links = std::move(links); }

    void handleControl(net::InboundBatch &batch);

Q_SIGNALS:
    // Delivered to the Client's thread.
    void stateChanged(int state);
    void subscriptionChanged(const QString &service, int state, const QString &provider, const QString &host,
                             quint16 port);
    void refused(const QString &what, const QString &name, const QString &reason);

private:
    // One function per control message type; handle() dispatches.
    void handle(const net::Inbound &in);
    void onConnected(const net::Inbound &in);
    void onInfoService(const net::Inbound &in);
    void onSubscribe(const net::Inbound &in);
    void onLostSender(const net::Inbound &in);
    void onLostReceiver(const net::Inbound &in);
    void onConnectionLost(const net::Inbound &in);
    void onRefused(const net::Inbound &in);
    /// A Control Server that steps down sent us to @p to (term @p term): connect there now, even
    /// if it is not one of the configured servers. False when @p to is not an address.
    bool redirect(const QString &to, quint64 term, const QString &why);
    void backOffNameInUse();
    /// A REFUSED the Control Server wrote back on our connection: it cannot connect back to us.
    void onAnswered(const net::Endpoint &dest, const QByteArray &payload);
    /// Tells the Service handle (in the Client's thread) its new subscriber count.
    void notifySubscriberCount(const ServiceStatePtr &s);
    void sendConnect();
    /// The next CONNECT in @p delayMs (replaces any planned one).
    void scheduleRetry(qint64 delayMs);
    void onRetry();
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
        QByteArray token; // this subscription's, sent in SUBSCRIBE_SERVICE (ProviderLinks)
    };

    net::Transport *m_transport;
    ClientOptions m_options;
    net::PeerInfo m_self;
    ControlLinkPtr m_link;
    ProviderLinksPtr m_links = std::make_shared<ProviderLinks>();
    /// The token of each subscription, per provider incarnation (kept while the Control Server is
    /// away, when m_providers is not).
    struct Token
    {
        QString provider;
        quint64 incarnation = 0;
        QByteArray token;
    };
    QHash<QString, Token> m_tokens;
    /// Services the Control Server refused for now (the directory was full): registered again
    /// when m_registerTimer fires, after m_registerBackoffMs (doubled per round, at most 30 s).
    QSet<QString> m_registerLater;
    QTimer *m_registerTimer = nullptr;
    qint64 m_registerBackoffMs = 0;
    /// @p service was refused for now (REFUSED with retry_ms): asks again later, paced.
    void registerLater(const QString &service, quint32 retryMs, const QString &reason);
    QByteArray m_session; // random, for the lifetime of this incarnation
    /// Connect.session for the Control Server at @p server (derived from m_session).
    QByteArray sessionFor(const net::Endpoint &server) const;
    QList<net::Endpoint> m_servers;
    int m_serverIndex = 0;
    /// Fencing: the highest term of a Control Server that accepted us, and where it served.
    quint64 m_term = 0;
    QString m_termServer;
    Client::State m_state = Client::State::Unconnected;
    mutable QMutex m_csLock;
    net::OutboxPtr m_cs; // guarded by m_csLock
    QTimer *m_heartbeat = nullptr;
    QTimer *m_retry = nullptr;
    int m_retryBaseMs = 1000;
    int m_connectRefusals = 0; // in a row; the retry interval doubles with each (name in use)
    int m_attempts = 0;        // CONNECTs since the last SUCCESSFULLY_CONNECTED (paced back-off)
    quint64 m_heartbeatSeq = 0;
    bool m_stopping = false;
    bool m_dirty = false;
    QElapsedTimer m_clock;
    qint64 m_lastHeardMs = 0; // last frame from the Control Server
    qint64 m_backoffMs = 0;   // after a refused CONNECT: the wait before the next, doubling
    qint64 m_nextConnectMs = 0;
    int m_serverMisses = 3; // declarations made after the last CONNECT was built

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

class RequestPrivate : public QSharedData
{
public:
    QString service, origin, host;
    QString originUser, originHost, originAddress;
    QByteArray data;
    quint64 id = 0;
    quint16 port = 0;
    bool originProven = false;
};

/// The local address of the route to the Control Server @p cs (what a process advertises by
/// default). May block on a name look-up when @p cs is given by name.
QString routeAddress(const net::Endpoint &cs);

/// A handler called in the reader threads (Client::subscribeDirect, Client::registerCommandDirect).
struct DirectHandler
{
    QMutex call;          // held while the handler runs: removing it waits for a call in progress
    bool removed = false; // guarded by call
    std::function<void(const Message &)> onMessage;
    std::function<void(const Command &)> onCommand;
    std::function<void(const Request &)> onRequest;
    quint64 incarnation = 0, lastSequence = 0, received = 0; // guarded by call
    std::atomic<bool> active{false};                         // its Subscription was told it is Active
};
using DirectHandlerPtr = std::shared_ptr<DirectHandler>;

/// The direct handlers by service or command name, read by the reader threads.
struct DirectRoutes
{
    struct Name
    {
        QList<DirectHandlerPtr> handlers;
        bool alsoQueued = false; // services: other Subscriptions of the name want the message too
    };
    QReadWriteLock lock;
    QHash<QByteArray, Name> services, commands, requests; // guarded by lock
    std::atomic<int> count{0};                            // handlers in both: none, no look-up at all
};

class SubscriptionPrivate
{
public:
    void setState(Subscription::State s, const QString &provider);
    /// Delivers @p m unless it was seen already (a re-sent value): kept as the last message and
    /// emitted.
    void deliver(const Message &m, quint64 providerIncarnation);
    /// The same for a message still in the receive batch: the last message's storage is reused
    /// when nothing else holds it (no allocation per message for a subscriber that keeps none).
    void deliver(const QByteArray &service, net::Inbound &in);
    /// Sequence bookkeeping of a message: false for a value already seen (not delivered again).
    bool accept(quint64 sequence, quint64 providerIncarnation);
    void announce();

    Subscription *q = nullptr;
    Client *client = nullptr;
    QString service;
    QString provider;
    Subscription::State state = Subscription::State::Waiting;
    Message last;
    quint64 incarnation = 0;
    quint64 lastSequence = 0;
    quint64 received = 0;
    quint64 lost = 0;
    bool providerLost = false; // told Lost since the last message: its re-sent value is delivered
    bool attached = false;     // a channel of a Stream (Client::attach): no Control Server request
    DirectHandlerPtr direct;   // Client::subscribeDirect: messages go to its handler instead
};

class RequestTracker;

class ClientPrivate
{
public:
    ClientPrivate(Client *q, const ClientOptions &o);
    ~ClientPrivate();

    void deliver(net::InboundBatch &batch);
    /// One message on its way to the several Subscriptions of its service in this process.
    struct FanOut
    {
        const net::Inbound *frame;
        QByteArray key;
        Message message;
        QList<Subscription *> subs;
        quint64 generation;
        qsizetype next = 0; ///< the subscription whose turn it is
    };
    /// Gives @p f's message to the subscriptions whose turn has not come yet.
    void fanOut(FanOut &f, quint64 incarnation);
    void onSubscriptionChanged(const QString &service, int state, const QString &provider,
                               const QString &host, quint16 port);
    void handleRequest(const net::Inbound &in);
    static Request makeRequest(const net::Inbound &in);
    bool sendReply(const Request &r, quint8 status, const QByteArray &data);
    void onRefused(const QString &what, const QString &name, const QString &reason);
    /// Refusals of this process's name in a row after which a process with exitOnRefusal exits:
    /// long enough for the Control Server to find a dead holder of the name (it probes it at the
    /// first refusal), short enough that a true duplicate does not linger.
    static constexpr int MaxConnectRefusals = 3;
    int connectRefusals = 0; // in a row; reset when connected
    /// The one exit for failures: sets error and errorString, and for a failure that leaves the
    /// client unusable (ListenFailed, InvalidAddress) the state, then emits stateChanged (if it
    /// changed) and errorOccurred. Called in the Client's thread.
    void fail(Status::Code e, const QString &why);
    /// The one place the state changes (core reports, fatal failures); emits stateChanged and, on
    /// Connected, connected().
    void setState(Client::State s);
    void onDestinationFailed(const net::Endpoint &destination);
    /// Subscribes without the public checks (the hidden locators of RequestTracker too).
    Subscription *addSubscription(const QString &name);
    /// Called in the reader threads for every data frame: true if a direct handler took it.
    bool routeDirect(const net::Inbound &in);
    void addDirect(QHash<QByteArray, DirectRoutes::Name> &table, const QByteArray &name, DirectHandlerPtr h);
    /// Removes @p h (every handler of @p name when null), waiting for a call in progress.
    void removeDirect(QHash<QByteArray, DirectRoutes::Name> &table, const QByteArray &name,
                      const DirectHandlerPtr &h);
    /// Whether Subscriptions of @p service other than direct ones exist (they get its messages too).
    void refreshQueued(const QByteArray &service);
    /// In the Client's thread, after a direct handler took a first message: the direct
    /// Subscriptions of @p service are Active.
    void directActive(const QByteArray &service);

    Client *q;
    ClientOptions options;
    QList<net::Endpoint> servers;
    std::unique_ptr<net::Transport> transport;
    ClientCore *core = nullptr;
    QThread coreThread;
    bool started = false;
    Client::State state = Client::State::Unconnected;
    Status::Code error = Status::Code::Ok;
    QString errorString;
    QHash<QString, Service *> services;
    QHash<QByteArray, QList<Subscription *>> subscriptions;
    quint64 subscriptionGeneration = 0; // bumped whenever `subscriptions` changes
    /// Fan-outs in progress, outermost first: more than one when a slot ran a nested event loop.
    std::vector<FanOut *> fanOuts;
    QHash<QString, net::Endpoint> providers; // where each subscribed service is, as far as we know
    /// Subscriptions sent to a provider that has not answered yet (state Connecting): when, and
    /// how many times it was sent again. The provider drops a subscriber it cannot connect to (a
    /// refused or failed connection): sent again, the subscription never stays stuck.
    struct Connecting
    {
        qint64 sinceMs = 0;
        int resent = 0;
    };
    QHash<QString, Connecting> connecting;
    QTimer *connectingCheck = nullptr;
    QElapsedTimer clock;
    /// Sends each subscription still in Connecting 2 s after it was sent to its provider, again
    /// after 4, 8, 16 s, then every 32 s.
    void checkConnecting();
    std::unique_ptr<RequestTracker> requests;
    QMutex streamsLock; // streams are used from any thread; failures arrive from sender threads
    DirectRoutes direct;
    // What sendCommand() uses, published once started: it may be called from any thread.
    std::atomic<ClientCore *> sendCore{nullptr};
    std::atomic<net::Transport *> sendTransport{nullptr};
    ControlLinkPtr link = std::make_shared<ControlLink>();
    ProviderLinksPtr links = std::make_shared<ProviderLinks>();
    /// A SERVICE_MESSAGE for @p service that did not come by its provider's connection: logged
    /// (throttled), and with @p askAgain the provider is asked to acknowledge again. Any thread.
    void ignoreNotFromProvider(const QByteArray &service, bool askAgain);
    std::vector<std::weak_ptr<StreamState>> streams;
};

} // namespace dialog
