#include "commandrelay.h"

#include <QDateTime>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLoggingCategory>

Q_LOGGING_CATEGORY(lcRelay, "dialog.controlserver.relay", QtInfoMsg)

namespace dialog::cs {

using namespace wire_format;

namespace {
// Commands of a process are forwarded for this long after it was lost (see m_recentlyLost).
constexpr qint64 RecentlyLostMs = 10000;
constexpr int MaxRecentlyLost = 4096;
} // namespace

CommandRelay::CommandRelay(ServerContext &context, QObject *parent) : QObject(parent), m_ctx(context) {}

bool CommandRelay::start(QString *error)
{
    const AccessOptions &access = m_ctx.options.access;
    m_checkCommands = !access.access.isEmpty() || access.audit;
    if (access.audit) {
        AuditTrail::Options trail = access.trail;
        trail.secret = m_ctx.options.transport.secret; // keys the chain (read by applySecurity)
        m_audit = std::make_unique<AuditTrail>(trail);
        if (const Status st = m_audit->open(); !st.isOk()) {
            *error = st.message();
            return false;
        }
    }
    return true;
}

bool CommandRelay::route(const net::Inbound &in)
{
    // Forward in the reader thread: a command does not wait for the main thread. Commands that are
    // checked or audited go through the main thread (where the access list and the trail are used).
    if (in.type != Type::CommandMessage || m_checkCommands)
        return false;
    QList<net::OutboxPtr> targets;
    {
        ReadLocker l(&m_routesLock);
        const auto peer = m_connectedPeers.constFind(qMakePair(in.peer->name, in.peer->incarnation));
        if (peer == m_connectedPeers.cend() || (*peer != 0 && *peer != in.peer->connectionId))
            return false; // the main thread tells it it is not connected, or refuses it
        targets = m_commandRoutes.value(in.name);
    }
    const QByteArray frame = relayedCommand(in);
    for (const net::OutboxPtr &t : std::as_const(targets))
        m_ctx.transport->send(t, frame);
    return true;
}

void CommandRelay::handleData(net::InboundBatch &batch)
{
    for (const net::Inbound &in : std::as_const(batch)) {
        if (in.type == Type::Request)
            onCommandRequest(in);
        else if (in.type == Type::CommandMessage)
            relay(in);
    }
}

void CommandRelay::relay(const net::Inbound &in)
{
    if (!mayCommand(in)) {
        if (m_ctx.standing(in) == ServerContext::Standing::OtherConnection)
            m_ctx.refuseOtherConnection(in);
        else
            m_ctx.tellNotConnected(in);
        return;
    }
    const QString command = QString::fromUtf8(in.name);
    QString why;
    if (m_checkCommands && !permitCommand(in, command, &why)) {
        m_ctx.transport->answer(in.peer, ServerContext::refusal(QStringLiteral("permission"), command, why));
        return;
    }
    const QStringList targets = m_ctx.directory.commandTargets(command);
    const QByteArray frame = relayedCommand(in);
    for (const QString &t : targets)
        m_ctx.sendTo(t, frame);
    if (targets.isEmpty())
        qCDebug(lcRelay) << "command" << command << "from" << in.peer->name << "has no registrant";
}

bool CommandRelay::mayCommand(const net::Inbound &in) const
{
    const auto by = [&](quint64 via) { return via == 0 || via == in.peer->connectionId; };
    if (const ProcessRecord *p = m_ctx.directory.connected(in.peer->name, in.peer->incarnation))
        return by(p->via);
    const auto lost = m_recentlyLost.constFind(qMakePair(in.peer->name, in.peer->incarnation));
    return lost != m_recentlyLost.cend() && by(lost->via);
}

void CommandRelay::onCommandRequest(const net::Inbound &in)
{
    const auto answer = [&](quint8 status, const QByteArray &text) {
        quint8 flags = 0;
        const QByteArray data = prepareData(text, 64 * 1024, flags);
        m_ctx.sendToEndpoint(in.peer->endpoint, encodeReplyFrame(in.sequence, status, flags, data));
    };
    constexpr quint8 Ok = 0, Failed = 1, NotAccepted = 2, PermissionDenied = 3; // the wire's reply status
    if (QString::fromUtf8(in.name) != commandServiceName()) {
        answer(NotAccepted, QStringLiteral("%1 does not provide '%2'")
                                .arg(m_ctx.self.name, QString::fromUtf8(in.name.left(MaxNameLength)))
                                .toUtf8());
        return;
    }
    if (!mayCommand(in)) {
        answer(Failed, "not connected to the Control Server: send CONNECT_TO_CONTROL_SERVER first");
        return;
    }
    Q_EMIT heardFrom(in.peer->endpoint);
    QByteArray name, data;
    if (!splitCommandRequest(in.data, name, data) || name.isEmpty() || name.size() > MaxNameLength) {
        answer(Failed, "invalid command request (a command name of 1 to 1024 bytes, NUL, the data)");
        return;
    }
    const QString command = QString::fromUtf8(name);
    QString why;
    if (m_checkCommands && !permitCommand(in, command, &why)) {
        answer(PermissionDenied, why.toUtf8());
        return;
    }
    const QStringList targets = m_ctx.directory.commandTargets(command);
    if (targets.isEmpty()) {
        answer(Failed, QStringLiteral("no process registered command '%1'").arg(command).toUtf8());
        return;
    }
    quint8 flags = 0;
    const QByteArray prepared = prepareData(data, 64 * 1024, flags);
    const QByteArray frame = encodeCommandFrame(name, in.peer->name.toUtf8(), flags, prepared);
    QJsonArray delivered, failed;
    for (const QString &t : targets) {
        const ProcessRecord *p = m_ctx.directory.process(t);
        if (p && m_ctx.transport->send(m_ctx.transport->outbox(net::Endpoint{p->host, p->port}), frame) ==
                     net::Transport::SendResult::Queued) {
            delivered.append(t);
            continue;
        }
        failed.append(QJsonObject{{QStringLiteral("name"), t},
                                  {QStringLiteral("reason"), QStringLiteral("its queue is full")}});
        qCWarning(lcRelay).noquote() << "command" << command << "from" << in.peer->name << "not delivered to"
                                     << t << "- its queue is full";
    }
    answer(Ok, QJsonDocument(
                   QJsonObject{{QStringLiteral("delivered"), delivered}, {QStringLiteral("failed"), failed}})
                   .toJson(QJsonDocument::Compact));
}

bool CommandRelay::permitCommand(const net::Inbound &in, const QString &command, QString *why)
{
    const AccessOptions &access = m_ctx.options.access;
    const Origin origin{in.peer->name, in.peer->user, in.peer->hostName, in.peer->source.toString()};
    const AccessList::Decision d = access.access.check(AccessList::Kind::Command, command, origin);
    if (!d.allowed) {
        ++m_commandsRefused;
        *why =
            QStringLiteral("permission denied: the access list (%1) does not let %2 (user '%3', host '%4') "
                           "send '%5'")
                .arg(d.because, origin.process, origin.user, origin.host, command);
        qCWarning(lcRelay).noquote() << "command" << command << "from" << origin.process << "user"
                                     << origin.user << "host" << origin.host << origin.address << "refused by"
                                     << d.because << "of the access list";
    }
    if (m_audit) {
        AuditRecord r;
        r.timeMs = QDateTime::currentMSecsSinceEpoch();
        r.daemon = m_ctx.self.name;
        r.kind = AccessList::Kind::Command;
        r.name = command;
        r.operation = QStringLiteral("send");
        r.origin = origin;
        r.allowed = d.allowed;
        r.because = access.access.isEmpty() ? QString() : d.because;
        m_audit->record(r);
    }
    return d.allowed;
}

QByteArray CommandRelay::relayedCommand(const net::Inbound &in)
{
    // The transport leaves command data as it came (see Transport::setDirectRoute), checked but
    // not decompressed for us: it is relayed as the sender compressed it, never recompressed.
    return encodeCommandFrame(in.name, in.peer->name.toUtf8(), in.flags, in.data);
}

void CommandRelay::endBatch()
{
    // The command routes are rebuilt once for the batch, not once per CONNECT in it: with thousands
    // of processes (re)connecting at once, a rebuild per change made the storm quadratic. Meanwhile
    // the reader threads route with the routes as they were; a command from a process they do not
    // list yet takes the main thread's path (handleData), which reads the directory itself.
    if (--m_batchDepth == 0 && m_routesDirty)
        rebuildRoutes();
}

void CommandRelay::directoryChanged(bool routes)
{
    if (!routes)
        return;
    m_routesDirty = true;
    if (m_batchDepth == 0)
        rebuildRoutes();
}

void CommandRelay::rebuildRoutes()
{
    m_routesDirty = false;
    QHash<QByteArray, QList<net::OutboxPtr>> routes;
    QHash<Peer, quint64> peers;
    QHash<Peer, int> refs;
    const Directory &directory = m_ctx.directory;
    peers.reserve(m_recentlyLost.size() + directory.processCount());
    refs.reserve(m_recentlyLost.size() + directory.processCount());
    for (auto it = m_recentlyLost.cbegin(); it != m_recentlyLost.cend(); ++it) {
        peers.insert(it.key(), it->via);
        ++refs[it.key()];
    }
    for (const ProcessRecord &p : directory.processRecords()) {
        peers.insert(qMakePair(p.name, p.incarnation), p.via);
        ++refs[qMakePair(p.name, p.incarnation)];
        if (p.commands.isEmpty())
            continue;
        const net::OutboxPtr box = m_ctx.transport->outbox(net::Endpoint{p.host, p.port});
        for (const QString &c : p.commands)
            routes[c.toUtf8()].append(box);
    }
    m_peerRefs.swap(refs);
    WriteLocker l(&m_routesLock);
    m_commandRoutes.swap(routes);
    m_connectedPeers.swap(peers);
}

void CommandRelay::admitted(const ProcessRecord &p)
{
    addPeer(qMakePair(p.name, p.incarnation), p.via);
}

void CommandRelay::lost(const ProcessRecord &p)
{
    const Peer peer = qMakePair(p.name, p.incarnation);
    if (m_recentlyLost.size() >= MaxRecentlyLost) { // bounded; entries are short-lived anyway
        for (auto it = m_recentlyLost.cbegin(); it != m_recentlyLost.cend(); ++it)
            dropPeer(it.key());
        m_recentlyLost.clear();
    }
    if (!m_recentlyLost.contains(peer))
        addPeer(peer, p.via); // still forwarded for a while, as recently lost ...
    m_recentlyLost.insert(peer, Lost{m_ctx.now(), p.via});
    dropPeer(peer); // ... no longer as connected
}

void CommandRelay::expire()
{
    const qint64 t = m_ctx.now();
    for (auto it = m_recentlyLost.begin(); it != m_recentlyLost.end();) {
        if (t - it->atMs > RecentlyLostMs) {
            dropPeer(it.key());
            it = m_recentlyLost.erase(it);
        } else {
            ++it;
        }
    }
}

void CommandRelay::addPeer(const Peer &peer, quint64 via)
{
    if (++m_peerRefs[peer] > 1)
        return;
    WriteLocker l(&m_routesLock);
    m_connectedPeers.insert(peer, via);
}

void CommandRelay::dropPeer(const Peer &peer)
{
    const auto it = m_peerRefs.find(peer);
    if (it == m_peerRefs.end() || --it.value() > 0)
        return;
    m_peerRefs.erase(it);
    WriteLocker l(&m_routesLock);
    m_connectedPeers.remove(peer);
}

} // namespace dialog::cs
