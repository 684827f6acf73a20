#include "client_p.h"
#include "control_p.h"
#include "dialog/handoff.h"

#include "dialog/httpauth.h"

#include <QCryptographicHash>
#include <QRandomGenerator>
#include <QTimer>

Q_LOGGING_CATEGORY(lcClient, "dialog.client", QtInfoMsg)

namespace dialog {

using namespace wire_format;
using net::Endpoint;

ClientCore::ClientCore(net::Transport *transport, const ClientOptions &options, const net::PeerInfo &self,
                       const QList<Endpoint> &controlServers, ControlLinkPtr link)
    : m_transport(transport), m_options(options), m_self(self), m_link(std::move(link)),
      m_session(security::newNonce().left(16)), m_servers(controlServers)
{
}

QByteArray ClientCore::sessionFor(const Endpoint &server) const
{
    // One per Control Server: a primary that wakes from a hang answers the CONNECTs it was sent
    // before the fail-over, and must not be taken for the standby they were sent again to.
    QCryptographicHash h(QCryptographicHash::Sha256);
    h.addData(m_session);
    h.addData(server.toString().toUtf8());
    return h.result().left(16);
}

void logNotFromControlServer(const ControlLink &link, const char *what, const net::PeerPtr &peer)
{
    if (!link.countIgnored())
        return;
    const quint64 n = link.ignored();
    qCWarning(lcClient).noquote() << "ignored" << what << "from" << (peer ? peer->name : QStringLiteral("?"))
                                  << "at" << (peer ? peer->source.toString() : QString())
                                  << "- it did not come by the Control Server's connection"
                                  << (n > 1 ? QStringLiteral("(%1 such frames)").arg(n) : QString());
}

void ProviderLinks::expect(const QByteArray &service, const QByteArray &token)
{
    QWriteLocker l(&m_lock);
    Entry &e = m_entries[service];
    if (!token.isEmpty() && e.token == token)
        return;
    e = Entry{token, 0, 0};
    m_generation.fetch_add(1, std::memory_order_acq_rel);
}

void ProviderLinks::forget(const QByteArray &service)
{
    QWriteLocker l(&m_lock);
    if (m_entries.remove(service))
        m_generation.fetch_add(1, std::memory_order_acq_rel);
}

quint64 ProviderLinks::connectionOf(const QByteArray &service, bool *listed) const
{
    QReadLocker l(&m_lock);
    const auto it = m_entries.constFind(service);
    *listed = it != m_entries.cend();
    return *listed ? it->connection : 0;
}

ProviderLinks::Verdict ProviderLinks::check(const QByteArray &service, quint64 connection, quint64 sequence,
                                            QByteArrayView data, bool *askAgain)
{
    *askAgain = false;
    {
        QReadLocker l(&m_lock);
        const auto it = m_entries.constFind(service);
        if (it == m_entries.cend())
            return Verdict::Deliver;
        if (sequence != 0 && connection != 0 && it->connection == connection)
            return Verdict::Deliver;
    }
    QWriteLocker l(&m_lock);
    const auto it = m_entries.find(service);
    if (it == m_entries.end())
        return Verdict::Deliver;
    if (sequence == 0) {
        // Only the provider the directory named got the token: on our own connection to it.
        if (it->token.isEmpty() || !http::constantTimeEquals(it->token, data.toByteArray()))
            return Verdict::Ignore;
        if (it->connection != connection) {
            it->connection = connection;
            m_generation.fetch_add(1, std::memory_order_acq_rel);
        }
        return Verdict::Acknowledged;
    }
    if (connection == it->connection && connection != 0)
        return Verdict::Deliver;
    if (!it->token.isEmpty() && it->askedFor != connection) {
        it->askedFor = connection;
        *askAgain = true;
    }
    return Verdict::Ignore;
}

void logNotFromProvider(const ProviderLinks &links, const QByteArray &service)
{
    if (!links.countIgnored())
        return;
    const quint64 n = links.ignored();
    qCWarning(lcClient).noquote() << "ignored SERVICE_MESSAGE for" << QString::fromUtf8(service)
                                  << "- it did not come by the connection of the provider subscribed to"
                                  << (n > 1 ? QStringLiteral("(%1 such frames)").arg(n) : QString());
}

void ClientCore::start()
{
    m_heartbeat = new QTimer(this);
    m_heartbeat->setInterval(qMax(10, m_options.heartbeatMs));
    connect(m_heartbeat, &QTimer::timeout, this, [this] {
        if (m_state != Client::State::Connected)
            return;
        // The Control Server answers every heartbeat: silence means it is dead or hung.
        if (m_clock.elapsed() - m_lastHeardMs > qint64(m_serverMisses) * m_options.heartbeatMs) {
            serverLost(QStringLiteral("no answer from the Control Server for %1 heartbeat intervals")
                           .arg(m_serverMisses));
            return; // the retry timer reconnects, paced
        }
        wire::Heartbeat hb;
        hb.set_incarnation(m_self.incarnation);
        hb.set_sequence(++m_heartbeatSeq);
        // The figures ride on the heartbeat: other processes see them through the Control Server
        // (DIALOG.Statistics) at no cost to the message path.
        const net::Transport::Stats t = m_transport->stats();
        wire::Statistics *st = hb.mutable_statistics();
        st->set_messages_out(t.framesOut);
        st->set_bytes_out(t.bytesOut);
        st->set_messages_in(t.framesIn);
        st->set_bytes_in(t.bytesIn);
        st->set_dropped(t.framesDropped);
        st->set_reconnects(t.reconnects);
        st->set_protocol_errors(t.protocolErrors);
        st->set_queued_bytes(t.queuedBytes);
        st->set_outgoing_connections(quint32(qMax(0, t.outgoingConnections)));
        st->set_incoming_connections(quint32(qMax(0, t.incomingConnections)));
        sendToControl(controlFrame(Type::Heartbeat, hb));
    });
    m_retry = new QTimer(this);
    m_retry->setSingleShot(true);
    m_retryBaseMs = qMax(10, m_options.retryMs > 0 ? m_options.retryMs : m_options.heartbeatMs);
    m_clock.start();
    connect(m_retry, &QTimer::timeout, this, &ClientCore::onRetry);
    connect(m_transport, &net::Transport::destinationFailed, this,
            [this](const QString &host, quint16 port, const QString &why) {
                onDestinationFailed(Endpoint{host, port}, why);
            });
    connect(m_transport, &net::Transport::answered, this,
            [this](const QString &host, quint16 port, const QByteArray &payload) {
                // A reference of our own, dropped here by instrumented code: when the sender thread
                // drops the last one later, ThreadSanitizer orders our reads before its free.
                const QByteArray own = payload;
                onAnswered(Endpoint{host, port}, own);
            });
    sendConnect();
}

qint64 reconnectDelayMs(int attempt, int baseMs, double random)
{
    const qint64 base = qMax(1, baseMs);
    random = qBound(0.0, random, 1.0);
    if (attempt <= 0)
        return qint64(random * double(base));
    const qint64 cap = qMax<qint64>(base, qMin<qint64>(30000, 8 * base));
    const qint64 ceiling = qMin<qint64>(cap, base << qMin(attempt, 20));
    return ceiling / 2 + qint64(random * double(ceiling - ceiling / 2));
}

void ClientCore::scheduleRetry(qint64 delayMs)
{
    if (m_stopping)
        return;
    m_retry->start(int(qBound(qint64(0), delayMs, qint64(3600000))));
}

void ClientCore::onRetry()
{
    if (m_state == Client::State::Connected)
        return;
    const qint64 wait = m_nextConnectMs - m_clock.elapsed();
    if (wait > 0) { // backing off after a refusal of our address
        scheduleRetry(wait);
        return;
    }
    if (m_state == Client::State::Connecting && m_servers.size() > 1)
        m_serverIndex = (m_serverIndex + 1) % m_servers.size(); // no answer: try the next one
    sendConnect();
}

net::OutboxPtr ClientCore::controlOutbox() const
{
    QMutexLocker l(&m_csLock);
    return m_state == Client::State::Connected ? m_cs : nullptr;
}

void ClientCore::setState(Client::State s)
{
    if (m_state == s)
        return;
    m_state = s;
    if (s == Client::State::Connected)
        m_heartbeat->start();
    else
        m_heartbeat->stop();
    Q_EMIT stateChanged(int(s));
}

void ClientCore::sendToControl(const QByteArray &frame)
{
    net::OutboxPtr box;
    {
        QMutexLocker l(&m_csLock);
        box = m_cs;
    }
    if (box)
        m_transport->send(box, frame);
}

void ClientCore::sendConnect()
{
    if (m_stopping || m_servers.isEmpty())
        return;
    const Endpoint server = m_servers.at(m_serverIndex);
    if (m_options.host.isEmpty() && m_servers.size() > 1) {
        // After a failover the interface that reaches the new Control Server is the one to advertise.
        const QString host = routeAddress(server);
        if (host != m_self.endpoint.host) {
            qCInfo(lcClient).noquote() << m_self.name << "advertises" << host << "instead of"
                                       << m_self.endpoint.host << "to reach" << server.toString();
            m_self.endpoint.host = host;
            m_transport->setIdentity(m_self);
        }
    }
    {
        QMutexLocker l(&m_csLock);
        m_cs = m_transport->outbox(server);
    }
    wire::Connect c;
    c.set_name(ss(m_self.name));
    c.set_host(ss(m_self.endpoint.host));
    c.set_port(m_self.endpoint.port);
    c.set_pid(m_self.pid);
    c.set_incarnation(m_self.incarnation);
    c.set_heartbeat_ms(quint32(m_options.heartbeatMs));
    const QByteArray session = sessionFor(server);
    c.set_session(session.constData(), size_t(session.size()));
    // Fencing: a Control Server of a lower term that hears of a higher one serving steps down.
    if (m_options.fencingTerm > 0) {
        c.set_term(m_options.fencingTerm);
        c.set_term_server(ss(m_options.fencingServer));
    } else if (m_term > 0) {
        c.set_term(m_term);
        c.set_term_server(ss(m_termServer));
    }
    m_link->clear(); // the next SUCCESSFULLY_CONNECTED with our session names the connection
    for (auto it = m_services.cbegin(); it != m_services.cend(); ++it)
        c.add_services(ss(it.key()));
    for (const QString &cmd : std::as_const(m_commands))
        c.add_commands(ss(cmd));
    for (auto it = m_requests.cbegin(); it != m_requests.cend(); ++it)
        c.add_requests(ss(it.key()));
    setState(Client::State::Connecting);
    m_dirty = false;
    qCDebug(lcClient) << m_self.name << "connecting to Control Server" << server.toString();
    sendToControl(controlFrame(Type::ConnectToControlServer, c));
    // Unanswered or failed, it is asked again later and later, with jitter (a refusal reschedules).
    scheduleRetry(
        reconnectDelayMs(++m_attempts, m_retryBaseMs, QRandomGenerator::global()->generateDouble()));
}

void ClientCore::forgetProviders(const QString &why)
{
    // Without a Control Server nothing we know about others can be trusted: drop it, as the
    // DIALOG paper prescribes. Established provider->subscriber flows continue meanwhile.
    for (auto it = m_providers.cbegin(); it != m_providers.cend(); ++it)
        Q_EMIT subscriptionChanged(it.key(), int(Subscription::State::Waiting), QString(), QString(), 0);
    m_providers.clear();
    qCInfo(lcClient).noquote() << m_self.name << "lost the Control Server:" << why;
}

void ClientCore::serverLost(const QString &why)
{
    const bool wasConnected = m_state == Client::State::Connected;
    if (m_state != Client::State::Unconnected)
        forgetProviders(why);
    setState(Client::State::Unconnected);
    if (m_servers.size() > 1)
        m_serverIndex = (m_serverIndex + 1) % m_servers.size(); // fail over to the next one
    // Every process of the partition loses the Control Server at the same moment: the first attempt
    // is spread over one retry interval. A failed attempt keeps the back-off sendConnect() planned.
    if (wasConnected || !m_retry->isActive())
        scheduleRetry(reconnectDelayMs(wasConnected ? 0 : m_attempts, m_retryBaseMs,
                                       QRandomGenerator::global()->generateDouble()));
}

void ClientCore::onDestinationFailed(const Endpoint &dest, const QString &reason)
{
    if (m_stopping)
        return;
    bool isServer = false;
    {
        QMutexLocker l(&m_csLock);
        isServer = m_cs && m_cs->endpoint == dest;
    }
    if (isServer) {
        serverLost(reason);
        return; // the retry timer reconnects
    }
    // A subscriber that cannot be reached is gone: stop sending to it.
    for (const ServiceStatePtr &s : std::as_const(m_services)) {
        if (s->removeSubscribers(dest) > 0)
            notifySubscriberCount(s);
    }
}

void ClientCore::addService(const ServiceStatePtr &s)
{
    m_services.insert(s->name, s);
    m_dirty = m_dirty || m_state == Client::State::Connecting;
    if (m_state == Client::State::Connected)
        sendToControl(namesFrame(Type::RegisterService, {s->name}));
}

void ClientCore::removeService(const QString &name)
{
    if (m_services.remove(name) && m_state == Client::State::Connected)
        sendToControl(namesFrame(Type::UnregisterService, {name}));
}

void ClientCore::addRequest(const QString &name)
{
    m_dirty = m_dirty || m_state == Client::State::Connecting;
    if (m_requests[name]++ > 0) {
        // Another Subscription for a service already requested: tell it where things stand.
        auto it = m_providers.constFind(name);
        if (it != m_providers.cend())
            subscribeAt(name, it->endpoint, it->name, it->incarnation); // provider re-sends the current value
        return;
    }
    m_links->expect(name.toUtf8(), {}); // nothing believed for it until its provider answers
    if (m_state == Client::State::Connected)
        sendToControl(namesFrame(Type::RequestService, {name}));
}

void ClientCore::removeRequest(const QString &name)
{
    auto it = m_requests.find(name);
    if (it == m_requests.end() || --it.value() > 0)
        return;
    m_requests.erase(it);
    m_links->forget(name.toUtf8());
    m_tokens.remove(name);
    const ProviderRef p = m_providers.take(name);
    if (p.endpoint.isValid()) {
        wire::Subscribe s;
        s.set_name(ss(name));
        m_transport->send(m_transport->outbox(p.endpoint), controlFrame(Type::UnsubscribeService, s));
    }
    if (m_state == Client::State::Connected)
        sendToControl(namesFrame(Type::CancelRequest, {name}));
}

void ClientCore::addCommand(const QString &name)
{
    m_commands.insert(name);
    m_dirty = m_dirty || m_state == Client::State::Connecting;
    if (m_state == Client::State::Connected)
        sendToControl(namesFrame(Type::RegisterCommand, {name}));
}

void ClientCore::removeCommand(const QString &name)
{
    if (m_commands.remove(name) && m_state == Client::State::Connected)
        sendToControl(namesFrame(Type::UnregisterCommand, {name}));
}

void ClientCore::shutdown()
{
    m_stopping = true;
    if (m_state == Client::State::Connected)
        sendToControl(encodeFrame(Type::Disconnect, 0, {}));
    if (m_heartbeat)
        m_heartbeat->stop();
    if (m_retry)
        m_retry->stop();
}

void ClientCore::subscribeAt(const QString &service, const Endpoint &provider, const QString &providerName,
                             quint64 incarnation)
{
    // One token per provider incarnation: subscribing again to the same one (another Subscription,
    // the Control Server back) keeps the connection its data comes by.
    Token &t = m_tokens[service];
    if (t.token.isEmpty() || t.provider != providerName || t.incarnation != incarnation)
        t = Token{providerName, incarnation, security::newNonce().left(16)};
    m_links->expect(service.toUtf8(), t.token);
    m_providers.insert(service, ProviderRef{providerName, provider, incarnation, t.token});
    wire::Subscribe s;
    s.set_name(ss(service));
    s.set_token(t.token.toStdString());
    m_transport->send(m_transport->outbox(provider), controlFrame(Type::SubscribeService, s));
    Q_EMIT subscriptionChanged(service, int(Subscription::State::Connecting), providerName, provider.host,
                               provider.port);
}

void ClientCore::resubscribe(const QString &name)
{
    const auto it = m_providers.constFind(name);
    if (it == m_providers.cend() || !m_requests.contains(name))
        return;
    wire::Subscribe s;
    s.set_name(ss(name));
    s.set_token(it->token.toStdString());
    m_transport->send(m_transport->outbox(it->endpoint), controlFrame(Type::SubscribeService, s));
}

void ClientCore::handleControl(net::InboundBatch &batch)
{
    for (const net::Inbound &in : std::as_const(batch))
        handle(in);
}

void ClientCore::handle(const net::Inbound &in)
{
    switch (in.type) {
    case Type::SuccessfullyConnected:
        onConnected(in); // it proves itself by echoing our session
        return;
    case Type::SubscribeService:
    case Type::UnsubscribeService:
        onSubscribe(in); // from our subscribers, each on its own connection
        return;
    default:
        break;
    }
    // Everything else speaks for the Control Server: a redirected INFO_SERVICE or a forged LOST_*
    // from any other connection would send our subscriptions and requests elsewhere.
    if (!m_link->isControl(in.peer)) {
        if (in.type != Type::Heartbeat) // a liveness probe of a process that is not connected
            logNotFromControlServer(*m_link, typeName(in.type), in.peer);
        return;
    }
    m_lastHeardMs = m_clock.elapsed();
    switch (in.type) {
    case Type::Heartbeat:
        break; // the Control Server's answer: liveness only
    case Type::InfoService:
        onInfoService(in);
        break;
    case Type::LostSender:
        onLostSender(in);
        break;
    case Type::LostReceiver:
        onLostReceiver(in);
        break;
    case Type::ConnectionLost:
        onConnectionLost(in);
        break;
    case Type::Refused:
        onRefused(in);
        break;
    default:
        qCDebug(lcClient) << "ignoring" << typeName(in.type) << "from"
                          << (in.peer ? in.peer->name : QString());
        break;
    }
}

void ClientCore::onConnected(const net::Inbound &in)
{
    wire::Connected c;
    parseControl(in.data, c);
    if (!security::proofsEqual(sessionFor(m_servers.at(m_serverIndex)),
                               QByteArray::fromStdString(c.session()))) {
        logNotFromControlServer(*m_link, "a SUCCESSFULLY_CONNECTED without our session", in.peer);
        return;
    }
    m_link->bind(*in.peer);
    if (c.term() >= m_term && c.term() > 0) {
        m_term = c.term();
        m_termServer = m_servers.at(m_serverIndex).toString();
    }
    m_link->setTerm(c.term());
    m_serverMisses = c.heartbeat_misses() > 0 ? int(c.heartbeat_misses()) : 3;
    m_lastHeardMs = m_clock.elapsed();
    m_backoffMs = 0;
    m_nextConnectMs = 0;
    m_connectRefusals = 0;
    m_attempts = 0;
    m_retry->stop();
    qCInfo(lcClient).noquote() << m_self.name << "connected to Control Server"
                               << m_servers.at(m_serverIndex).toString();
    setState(Client::State::Connected);
    if (!m_dirty)
        return;
    // Declared while our CONNECT was on its way: register them now (idempotent on the server).
    m_dirty = false;
    if (!m_services.isEmpty())
        sendToControl(
            namesFrame(Type::RegisterService, QStringList(m_services.keyBegin(), m_services.keyEnd())));
    if (!m_commands.isEmpty())
        sendToControl(namesFrame(Type::RegisterCommand, QStringList(m_commands.cbegin(), m_commands.cend())));
    if (!m_requests.isEmpty())
        sendToControl(
            namesFrame(Type::RequestService, QStringList(m_requests.keyBegin(), m_requests.keyEnd())));
}

void ClientCore::onInfoService(const net::Inbound &in)
{
    wire::InfoService info;
    parseControl(in.data, info);
    const QString name = qs(info.name());
    if (!m_requests.contains(name))
        return;
    if (!info.available()) {
        m_providers.remove(name);
        m_links->expect(name.toUtf8(), {});
        Q_EMIT subscriptionChanged(name, int(Subscription::State::Waiting), QString(), QString(), 0);
        return;
    }
    Endpoint where{qs(info.host()), quint16(info.port())};
    if (info.provider() == "DIALOG.ControlServer" && where.port == m_servers.at(m_serverIndex).port)
        where.host = m_servers.at(m_serverIndex).host; // its own services: where we reached it, not
                                                       // a host name it guessed for itself
    subscribeAt(name, where, qs(info.provider()), info.incarnation());
}

void ClientCore::onSubscribe(const net::Inbound &in)
{
    wire::Subscribe sub;
    parseControl(in.data, sub);
    const ServiceStatePtr s = m_services.value(qs(sub.name()));
    if (!s) {
        qCDebug(lcClient) << "subscription from" << in.peer->name << "to unknown service" << qs(sub.name());
        return;
    }
    if (in.type == Type::SubscribeService)
        s->addSubscriber(Subscriber{m_transport->outbox(in.peer->endpoint), in.peer->name,
                                    in.peer->incarnation, subscriptionToken(sub)});
    else
        s->removeSubscribers(in.peer->endpoint);
    notifySubscriberCount(s);
}

void ClientCore::notifySubscriberCount(const ServiceStatePtr &s)
{
    if (!s->handle)
        return;
    const int n = [&] {
        QMutexLocker l(&s->lock);
        return int(s->subscribers.size());
    }();
    handoff::post(s->handle, [h = s->handle, n] {
        if (h)
            Q_EMIT h->subscriberCountChanged(n);
    });
}

void ClientCore::onLostSender(const net::Inbound &in)
{
    wire::LostProcess lost;
    parseControl(in.data, lost);
    for (auto it = m_providers.begin(); it != m_providers.end();) {
        if (it->name == qs(lost.name()) &&
            (lost.incarnation() == 0 || it->incarnation == lost.incarnation())) {
            Q_EMIT subscriptionChanged(it.key(), int(Subscription::State::Lost), it->name, QString(), 0);
            it = m_providers.erase(it);
        } else {
            ++it;
        }
    }
}

void ClientCore::onLostReceiver(const net::Inbound &in)
{
    wire::LostProcess lost;
    parseControl(in.data, lost);
    const Endpoint ep{qs(lost.host()), quint16(lost.port())};
    for (const ServiceStatePtr &s : std::as_const(m_services))
        if (s->removeSubscribers(ep, lost.incarnation()) > 0)
            notifySubscriberCount(s);
}

void ClientCore::onConnectionLost(const net::Inbound &in)
{
    wire::ConnectionLost cl;
    parseControl(in.data, cl);
    if (!cl.redirect().empty() && redirect(qs(cl.redirect()), cl.term(), qs(cl.reason())))
        return;
    if (m_state == Client::State::Connecting) {
        // The Control Server answers our CONNECT with SUCCESSFULLY_CONNECTED or REFUSED, never with
        // this: it answers a frame we sent before the CONNECT now on its way (heartbeats that were
        // stuck behind a pulled cable, each told "not connected"). Connecting again for each one
        // would register us again and again; the retry timer covers an unanswered CONNECT.
        qCDebug(lcClient).noquote() << m_self.name << "ignoring a stale" << qs(cl.reason())
                                    << "while connecting";
        return;
    }
    if (m_state != Client::State::Unconnected)
        forgetProviders(qs(cl.reason()));
    setState(Client::State::Unconnected);
    sendConnect();
}

void ClientCore::onAnswered(const Endpoint &dest, const QByteArray &payload)
{
    {
        QMutexLocker l(&m_csLock);
        if (!m_cs || m_cs->endpoint != dest)
            return; // only the Control Server answers on our connection
    }
    wire::Refused r;
    if (!r.ParseFromArray(payload.constData(), int(payload.size())))
        return;
    if (r.what() == "connect") { // our name is in use
        backOffNameInUse();
        Q_EMIT refused(qs(r.what()), qs(r.name()), qs(r.reason()));
        return;
    }
    if (r.what() == "redirect") {
        if (!redirect(qs(r.redirect()), r.term(), qs(r.reason())))
            Q_EMIT refused(qs(r.what()), qs(r.name()), qs(r.reason()));
        return;
    }
    if (r.what() == "session") {
        // Our connection to the Control Server was opened anew since our CONNECT: it believes
        // frames only from the connection that connected, so we connect again on this one.
        if (m_state == Client::State::Connected)
            sendConnect();
        return;
    }
    if (r.what() != "address" && r.what() != "auth") { // "auth": we or it lack the partition's secret
        Q_EMIT refused(qs(r.what()), qs(r.name()), qs(r.reason()));
        return;
    }
    // Not in a tight loop: the next CONNECT waits up to 2, 4, 8 … up to 30 s (reset once connected),
    // at least half of it, with jitter: processes refused together (a server that is busy with
    // connect-backs says "try again later") do not come back together.
    const qint64 base = qMax<qint64>(1000, m_retryBaseMs);
    m_backoffMs = qMin<qint64>(30000, m_backoffMs > 0 ? 2 * m_backoffMs : 2 * base);
    const qint64 wait =
        m_backoffMs / 2 + qint64(QRandomGenerator::global()->generateDouble() * double(m_backoffMs / 2));
    m_nextConnectMs = m_clock.elapsed() + wait;
    if (m_state == Client::State::Connected)
        serverLost(qs(r.reason()));
    else
        setState(Client::State::Unconnected);
    scheduleRetry(wait);
    Q_EMIT refused(
        QStringLiteral("address"), qs(r.name()),
        QStringLiteral("%1 (next attempt within %2 s)").arg(qs(r.reason())).arg(m_backoffMs / 1000.0));
}

void ClientCore::onRefused(const net::Inbound &in)
{
    wire::Refused r;
    parseControl(in.data, r);
    if (r.what() == "service" && r.retry_ms() > 0 && m_services.contains(qs(r.name()))) {
        registerLater(qs(r.name()), r.retry_ms(), qs(r.reason()));
        return;
    }
    if (r.what() == "service")
        m_services.remove(qs(r.name()));
    if (r.what() == "connect")
        backOffNameInUse();
    Q_EMIT refused(qs(r.what()), qs(r.name()), qs(r.reason()));
}

void ClientCore::registerLater(const QString &service, quint32 retryMs, const QString &reason)
{
    m_registerLater.insert(service);
    if (!m_registerTimer) {
        m_registerTimer = new QTimer(this);
        m_registerTimer->setSingleShot(true);
        connect(m_registerTimer, &QTimer::timeout, this, [this] {
            QStringList names;
            for (const QString &n : std::as_const(m_registerLater))
                if (m_services.contains(n))
                    names.append(n);
            m_registerLater.clear();
            if (m_state == Client::State::Connected && !names.isEmpty())
                sendToControl(namesFrame(Type::RegisterService, names));
        });
    }
    if (m_registerTimer->isActive())
        return; // one round for every name refused meanwhile, one report for it
    // 1, 2, 4 … s up to 30 s, half of it at least, with jitter: the processes a full directory
    // refused together do not all come back together.
    m_registerBackoffMs = qBound<qint64>(retryMs, 2 * m_registerBackoffMs, 30000);
    const qint64 wait = m_registerBackoffMs / 2 + qint64(QRandomGenerator::global()->generateDouble() *
                                                         double(m_registerBackoffMs / 2));
    m_registerTimer->start(int(qMax<qint64>(wait, retryMs)));
    Q_EMIT refused(
        QStringLiteral("service-later"), service,
        QStringLiteral("%1 - asking again in %2 s").arg(reason).arg(double(wait) / 1000.0, 0, 'f', 1));
}

bool ClientCore::redirect(const QString &to, quint64 term, const QString &why)
{
    Endpoint target;
    if (!Endpoint::parse(to, target) || target.port == 0)
        return false;
    int index = m_servers.indexOf(target);
    if (index < 0) {
        // Configured with the server that steps down only (an IS server beside it, say): from now on
        // this one is known too, and tried in turn if it goes.
        m_servers.append(target);
        index = int(m_servers.size()) - 1;
    }
    qCInfo(lcClient).noquote() << m_self.name << "redirected to the Control Server at" << target.toString()
                               << QStringLiteral("(term %1)").arg(term) << "-" << why;
    if (term > m_term) {
        m_term = term;
        m_termServer = target.toString();
    }
    // Goodbye to the server we leave: one that steps down becomes a standby as soon as nobody is
    // left to redirect, instead of redirecting for its last rounds.
    bool leaving = false;
    {
        QMutexLocker l(&m_csLock);
        leaving = m_cs && m_cs->endpoint != target;
    }
    if (m_state == Client::State::Connected && leaving)
        sendToControl(encodeFrame(Type::Disconnect, 0, {}));
    if (m_state != Client::State::Unconnected)
        forgetProviders(why);
    setState(Client::State::Unconnected);
    m_serverIndex = index;
    m_backoffMs = 0;
    m_nextConnectMs = 0;
    m_attempts = 0;
    sendConnect();
    return true;
}

void ClientCore::backOffNameInUse()
{
    if (m_state == Client::State::Connected)
        return;
    // Our name is in use: ask again, less and less often (at most every 30 s), not at the
    // heartbeat rate for ever.
    ++m_connectRefusals;
    scheduleRetry(qMin<qint64>(30000, qint64(m_retryBaseMs) << qMin(m_connectRefusals, 15)));
}

} // namespace dialog
