#include "controlserver.h"

#include "control_p.h"
#include "messagelog.h"
#include "payload_p.h"
#include "rwlock_p.h"

#include <QCoreApplication>
#include <QDateTime>
#include <QFile>
#include <QHostInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QLoggingCategory>
#include <QNetworkInterface>
#include <QNetworkProxy>
#include <QRandomGenerator>
#include <QTcpSocket>
#include <QTimer>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <unistd.h>

Q_LOGGING_CATEGORY(lcServer, "dialog.controlserver", QtInfoMsg)

namespace dialog::cs {

using namespace wire_format;
using net::Endpoint;

namespace {
// A claimed address that could not be reached is refused without dialling it again for this long.
constexpr qint64 DialRetryMs = 5000;
// An accepted process that sends nothing within this time is no longer remembered as unverified.
constexpr qint64 UnverifiedForgetMs = 60000;
// Commands of a process are forwarded for this long after it was lost (see m_recentlyLost).
constexpr qint64 RecentlyLostMs = 10000;
constexpr int MaxRecentlyLost = 4096;
// How long a process whose connection broke may take to say it disconnected (see destinationFailed).
constexpr int ExitGraceMs = 100;

bool sameAddress(const QHostAddress &a, const QHostAddress &b)
{
    return a.isEqual(b, QHostAddress::TolerantConversion);
}

bool isLoopback(const QHostAddress &a)
{
    bool v4 = false;
    const quint32 ip = a.toIPv4Address(&v4);
    return a.isLoopback() || (v4 && (ip >> 24) == 127);
}
} // namespace

ControlServer::ControlServer(const ServerOptions &options, QObject *parent)
    : QObject(parent), m_options(options)
{
    m_directory.setLostLimits(m_options.lost);
    m_clock.start();
    m_epochOffset = QDateTime::currentMSecsSinceEpoch();
    if (m_options.reportMessages) // from the start: a standby's messages are published once it serves
        m_messageLog = new MessageLog(QStringLiteral("DIALOG.ControlServer"), MessageLog::Options(), this);
}

ControlServer::~ControlServer()
{
    delete m_transport;
}

qint64 ControlServer::now() const
{
    return m_clock.elapsed();
}

quint16 ControlServer::port() const
{
    return m_transport ? m_transport->serverPort() : 0;
}

bool ControlServer::start(QString *error)
{
    if (!net::applySecurity(m_options.secretFile, m_options.tls, m_options.transport, error))
        return false;
    if (m_options.standbyOf.isEmpty())
        return activate(error);
    net::Endpoint primary;
    if (!net::Endpoint::parse(m_options.standbyOf, primary)) {
        *error = QStringLiteral("invalid --standby-of '%1' (expected host:port)").arg(m_options.standbyOf);
        return false;
    }
    watchPrimary();
    return true;
}

void ControlServer::watchPrimary()
{
    // The standby is an ordinary DIALOG process of the primary: the primary answers its heartbeats,
    // so a dead or hung primary shows up as a lost connection.
    ClientOptions o;
    o.name = QStringLiteral("DIALOG.Standby.%1").arg(m_options.port);
    o.secretFile = m_options.secretFile;
    o.tlsCert = m_options.tls.cert;
    o.tlsKey = m_options.tls.key;
    o.tlsCa = m_options.tls.ca;
    o.controlServers = {m_options.standbyOf};
    o.heartbeatMs = m_options.heartbeatMs;
    o.exitOnRefusal = false;
    m_primaryWatch = std::make_unique<Client>(o);
    qCInfo(lcServer).noquote() << "standby of" << m_options.standbyOf << "- will serve on port"
                               << m_options.port << "when it is gone";
    auto *deadline = new QTimer(this);
    deadline->setSingleShot(true);
    deadline->setInterval(m_options.heartbeatMisses * m_options.heartbeatMs);
    connect(deadline, &QTimer::timeout, this, [this, deadline] {
        qCWarning(lcServer).noquote()
            << "primary Control Server" << m_options.standbyOf << "is gone: taking over";
        m_primaryWatch.reset();
        deadline->deleteLater();
        QString why;
        if (!activate(&why)) {
            qCCritical(lcServer).noquote() << "cannot take over:" << why;
            QCoreApplication::exit(1);
        }
    });
    connect(m_primaryWatch.get(), &Client::stateChanged, deadline, [deadline](Client::State st) {
        if (st == Client::State::Connected)
            deadline->stop();
        else if (!deadline->isActive())
            deadline->start();
    });
    deadline->start(); // also covers a primary that is not there at all
    m_primaryWatch->start();
}

bool ControlServer::activate(QString *error)
{
    m_transport = new net::Transport(m_options.transport);
    m_transport->setControlSink(this, [this](net::InboundBatch &b) { handleControl(b); });
    m_transport->setDataSink(this, [this](net::InboundBatch &b) { handleData(b); });
    m_checkCommands = !m_options.access.access.isEmpty() || m_options.access.audit;
    if (m_options.access.audit) {
        m_audit = std::make_unique<AuditTrail>(m_options.access.trail);
        if (!m_audit->open(error))
            return false;
    }
    m_transport->setDirectRoute([this](const net::Inbound &in) { return routeCommand(in); });
    if (!m_transport->listen(m_options.bind, m_options.port, error))
        return false;
    QString host = m_options.advertisedHost;
    if (host.isEmpty())
        host = (m_options.bind == QHostAddress::Any || m_options.bind == QHostAddress::AnyIPv4)
                   ? QHostInfo::localHostName()
                   : m_options.bind.toString();
    m_localAddresses = QNetworkInterface::allAddresses();
    m_self.name = QStringLiteral("DIALOG.ControlServer");
    m_self.endpoint = Endpoint{host, m_transport->serverPort()};
    m_self.pid = quint32(QCoreApplication::applicationPid());
    m_self.incarnation = QRandomGenerator::system()->generate64() | 1;
    m_transport->setIdentity(m_self);

    connect(m_transport, &net::Transport::destinationFailed, this,
            [this](const QString &host, quint16 port, const QString &why) {
                onDestinationFailed(Endpoint{host, port}, why);
            });
    connect(m_transport, &net::Transport::protocolError, this,
            [this](const QString &peer, const QString &why, const QString &name, quint64 incarnation) {
                qCWarning(lcServer).noquote() << "disconnected" << peer << "for a protocol violation:" << why;
                // A registered process that misbehaves is dropped from the system; the others are told.
                if (!name.isEmpty() && m_directory.connected(name, incarnation))
                    lose(name, QStringLiteral("disconnected for a protocol violation: %1").arg(why));
            });
    connect(m_transport, &net::Transport::peerClosed, this, [this](const QString &name, quint64 incarnation) {
        // A process closed its connection without DISCONNECT: crashed, or idle. Probe it; a dead one
        // refuses the connection and is declared lost at once instead of after the heartbeat time-out.
        if (const ProcessRecord *p = m_directory.connected(name, incarnation)) {
            wire::Heartbeat probe;
            sendToEndpoint(Endpoint{p->host, p->port}, controlFrame(Type::Heartbeat, probe));
        }
    });

    m_directoryService = makeService(directoryService());
    m_statisticsService = makeService(statisticsService());
    m_commandService = makeService(commandService());
    if (m_messageLog) {
        m_logService = makeService(logservice::controlServer());
        m_messageLog->setService(m_logService);
    }
    m_statisticsTimer = new QTimer(this);
    m_statisticsTimer->setSingleShot(true);
    m_statisticsTimer->setInterval(statisticsIntervalMs()); // one snapshot for many heartbeats
    connect(m_statisticsTimer, &QTimer::timeout, this, &ControlServer::publishStatistics);

    m_heartbeatTimer = new QTimer(this);
    // Processes announce their own intervals; a fine check keeps detection close to misses × interval.
    m_heartbeatTimer->setInterval(20);
    connect(m_heartbeatTimer, &QTimer::timeout, this, &ControlServer::checkHeartbeats);
    m_heartbeatTimer->start();
    m_publishTimer = new QTimer(this);
    m_publishTimer->setSingleShot(true);
    m_publishTimer->setInterval(50); // coalesce bursts of directory changes
    connect(m_publishTimer, &QTimer::timeout, this, &ControlServer::publishDirectory);
    publishDirectory();
    publishStatistics();
    qCInfo(lcServer).noquote() << "Control Server listening on"
                               << m_options.bind.toString() + QLatin1Char(':') + QString::number(port());
    return true;
}

void ControlServer::sendToEndpoint(const Endpoint &e, const QByteArray &frame)
{
    m_transport->send(m_transport->outbox(e), frame);
}

void ControlServer::sendTo(const QString &process, const QByteArray &frame)
{
    if (const ProcessRecord *p = m_directory.process(process))
        sendToEndpoint(Endpoint{p->host, p->port}, frame);
}

void ControlServer::handleControl(net::InboundBatch &batch)
{
    // The command routes are rebuilt once for the batch, not once per CONNECT in it: with thousands
    // of processes (re)connecting at once, a rebuild per change made the storm quadratic. Meanwhile
    // the reader threads route with the routes as they were; a command from a process they do not
    // list yet takes the main thread's path (handleData), which reads the directory itself.
    ++m_controlBatchDepth;
    for (const net::Inbound &in : std::as_const(batch))
        handle(in);
    if (--m_controlBatchDepth == 0 && m_routesDirty)
        rebuildRoutes();
}

void ControlServer::handleData(net::InboundBatch &batch)
{
    for (const net::Inbound &in : std::as_const(batch)) {
        if (in.type == Type::Request) {
            onCommandRequest(in);
            continue;
        }
        if (in.type != Type::CommandMessage)
            continue;
        if (!mayCommand(in)) {
            tellNotConnected(in);
            continue;
        }
        const QString command = QString::fromUtf8(in.name);
        QString why;
        if (m_checkCommands && !permitCommand(in, command, &why)) {
            wire::Refused r;
            r.set_what("permission");
            r.set_name(ss(command));
            r.set_reason(ss(why));
            m_transport->answer(in.peer, controlFrame(Type::Refused, r));
            continue;
        }
        const QStringList targets = m_directory.commandTargets(command);
        const QByteArray frame = relayedCommand(in);
        for (const QString &t : targets)
            sendTo(t, frame);
        if (targets.isEmpty())
            qCDebug(lcServer) << "command" << command << "from" << in.peer->name << "has no registrant";
    }
}

bool ControlServer::mayCommand(const net::Inbound &in) const
{
    return m_directory.connected(in.peer->name, in.peer->incarnation) ||
           m_recentlyLost.contains(qMakePair(in.peer->name, in.peer->incarnation));
}

void ControlServer::handle(const net::Inbound &in)
{
    switch (in.type) {
    case Type::ConnectToControlServer:
        onConnect(in);
        return;
    case Type::SubscribeService:
    case Type::UnsubscribeService:
        onSubscribe(in); // the Control Server's own services: open to unconnected processes too
        return;
    default:
        break;
    }
    if (!m_directory.connected(in.peer->name, in.peer->incarnation)) {
        // DIALOG paper: frames of processes that are not connected are ignored, and the sender
        // is told so (it will probably want to connect).
        qCDebug(lcServer).noquote() << "ignoring" << typeName(in.type) << "from unconnected" << in.peer->name
                                    << in.peer->endpoint.toString();
        if (in.type != Type::Disconnect)
            tellNotConnected(in);
        return;
    }
    m_directory.heartbeat(in.peer->name, now());
    if (!m_unverified.isEmpty())
        m_unverified.remove(in.peer->endpoint); // it heard SUCCESSFULLY_CONNECTED: we reach it
    switch (in.type) {
    case Type::Heartbeat:
        onHeartbeat(in);
        break;
    case Type::RegisterService:
        onRegisterService(in);
        break;
    case Type::UnregisterService:
        onUnregisterService(in);
        break;
    case Type::RegisterCommand:
        onRegisterCommand(in);
        break;
    case Type::UnregisterCommand:
        onUnregisterCommand(in);
        break;
    case Type::RequestService:
        onRequestService(in);
        break;
    case Type::CancelRequest:
        onCancelRequest(in);
        break;
    case Type::Disconnect:
        lose(in.peer->name, QString());
        break;
    default:
        qCDebug(lcServer) << "unexpected" << typeName(in.type) << "from" << in.peer->name;
        break;
    }
}

void ControlServer::tellNotConnected(const net::Inbound &in)
{
    wire::ConnectionLost cl;
    cl.set_reason("not connected: send CONNECT_TO_CONTROL_SERVER first");
    sendToEndpoint(in.peer->endpoint, controlFrame(Type::ConnectionLost, cl));
}

void ControlServer::onSubscribe(const net::Inbound &in)
{
    wire::Subscribe sub;
    parseControl(in.data, sub);
    const ServiceStatePtr service = ownService(qs(sub.name()));
    if (!service)
        return;
    if (in.type == Type::UnsubscribeService) {
        service->removeSubscribers(in.peer->endpoint);
        return;
    }
    service->addSubscriber(
        Subscriber{m_transport->outbox(in.peer->endpoint), in.peer->name, in.peer->incarnation});
    if (service == m_statisticsService && !m_statisticsTimer->isActive())
        m_statisticsTimer->start(); // its first snapshot
}

QStringList ControlServer::namesIn(const net::Inbound &in)
{
    wire::Names names;
    parseControl(in.data, names);
    return namesOf(names);
}

void ControlServer::onRegisterService(const net::Inbound &in)
{
    for (const QString &s : namesIn(in))
        registerService(in.peer->name, s);
    directoryChanged(false); // services only: the command routes stay
}

void ControlServer::onUnregisterService(const net::Inbound &in)
{
    for (const QString &s : namesIn(in)) {
        if (!m_directory.unregisterService(in.peer->name, s))
            continue;
        wire::InfoService info;
        info.set_name(ss(s));
        info.set_available(false);
        for (const QString &r : m_directory.requesters(s))
            sendTo(r, controlFrame(Type::InfoService, info));
    }
    directoryChanged(false); // services only: the command routes stay
}

void ControlServer::onRegisterCommand(const net::Inbound &in)
{
    for (const QString &c : namesIn(in))
        registerCommand(in.peer->name, c);
    directoryChanged();
}

void ControlServer::onUnregisterCommand(const net::Inbound &in)
{
    for (const QString &c : namesIn(in))
        m_directory.unregisterCommand(in.peer->name, c);
    directoryChanged();
}

void ControlServer::onRequestService(const net::Inbound &in)
{
    for (const QString &s : namesIn(in))
        request(in.peer->name, s);
    directoryChanged(false); // services only: the command routes stay
}

void ControlServer::onCancelRequest(const net::Inbound &in)
{
    for (const QString &s : namesIn(in))
        m_directory.cancelRequest(in.peer->name, s);
    directoryChanged(false); // services only: the command routes stay
}

void ControlServer::onConnect(const net::Inbound &in)
{
    wire::Connect c;
    parseControl(in.data, c);
    const QString host = qs(c.host());
    if (c.name().empty() || c.port() == 0 || c.port() > 65535 || host.isEmpty()) {
        refuseConnect(in, QStringLiteral("connect"),
                      QStringLiteral("CONNECT without a process name, host or port"));
        return;
    }
    const QHostAddress literal(host);
    if (!literal.isNull() || m_options.trustAdvertised) {
        admit(in, {literal});
        return;
    }
    // An advertised name is checked against the connection as what it resolves to (asynchronously).
    QHostInfo::lookupHost(host, this, [this, in](const QHostInfo &info) {
        if (m_transport)
            admit(in, info.addresses());
    });
}

QString ControlServer::checkClaim(const net::Inbound &in, const QString &claimed,
                                  const QList<QHostAddress> &addresses) const
{
    if (m_options.trustAdvertised)
        return {};
    const QHostAddress &source = in.peer->source;
    if (addresses.isEmpty() || addresses.first().isNull())
        return QStringLiteral("cannot resolve the advertised host '%1' — advertise an address (--advertise)")
            .arg(claimed);
    for (const QHostAddress &a : addresses) {
        if (sameAddress(a, source))
            return {};
        // From this host (loopback): any address of this host, not another host's.
        if (isLoopback(source) &&
            (isLoopback(a) || std::any_of(m_localAddresses.cbegin(), m_localAddresses.cend(),
                                          [&a](const QHostAddress &l) { return sameAddress(a, l); })))
            return {};
    }
    return QStringLiteral("advertises %1 but connected from %2 — advertise the address the Control Server "
                          "sees (--advertise %2), or start it with --trust-advertised")
        .arg(claimed, source.toString());
}

void ControlServer::refuseConnect(const net::Inbound &in, const QString &what, const QString &reason)
{
    wire::Refused r;
    r.set_what(ss(what));
    r.set_name(ss(in.peer->name));
    r.set_reason(ss(reason));
    m_transport->answer(in.peer, controlFrame(Type::Refused, r));
}

void ControlServer::admit(const net::Inbound &in, const QList<QHostAddress> &addresses)
{
    wire::Connect c;
    parseControl(in.data, c);
    ProcessRecord p;
    p.name = qs(c.name());
    p.host = qs(c.host());
    p.port = quint16(c.port());
    p.pid = c.pid();
    p.incarnation = c.incarnation();
    p.heartbeatMs = c.heartbeat_ms() > 0 ? int(c.heartbeat_ms()) : m_options.heartbeatMs;
    p.connectedAtMs = m_epochOffset + now();
    p.lastSeenMs = now();
    const Endpoint reply{p.host, p.port};
    QString why = checkClaim(in, p.host, addresses);
    if (why.isEmpty()) {
        const QString holder = m_directory.processAt(p.host, p.port);
        if (!holder.isEmpty() && holder != p.name)
            why = QStringLiteral("%1 is where process %2 listens").arg(reply.toString(), holder);
    }
    if (why.isEmpty()) {
        const auto failed = m_dialFailures.constFind(reply);
        if (failed != m_dialFailures.cend() && now() - failed->atMs < DialRetryMs)
            why = failed->reason; // not dialled again so soon
    }
    // (Counted only when it may matter: fewer waiting in all than the limit cannot reach it.)
    if (why.isEmpty() && m_unverified.size() >= m_options.maxConnectingPerAddress &&
        !m_unverified.contains(reply)) {
        const auto fromSource =
            std::count_if(m_unverified.cbegin(), m_unverified.cend(),
                          [&](const Unverified &u) { return sameAddress(u.via->source, in.peer->source); });
        if (fromSource >= m_options.maxConnectingPerAddress)
            why = QStringLiteral("too many processes from %1 wait for their connect-back; try again later")
                      .arg(in.peer->source.toString());
    }
    if (!why.isEmpty()) {
        qCInfo(lcServer).noquote() << "refused connection of" << p.name << "from"
                                   << in.peer->source.toString() << "-" << why;
        refuseConnect(in, QStringLiteral("address"), why);
        return;
    }
    const ProcessRecord *before = m_directory.process(p.name);
    const bool hadCommands = before && !before->commands.isEmpty(); // a refresh starts without them
    const auto result = m_directory.connectProcess(p, &why);
    if (result == Directory::ConnectResult::NameInUse) {
        // One line for the first refusal of a name and then at 2, 4, 8, … (the refused process
        // backs off, but a misconfigured one may keep knocking).
        const int times = ++m_refusedConnects[p.name];
        if ((times & (times - 1)) == 0)
            qCInfo(lcServer).noquote()
                << "refused connection of" << p.name << "from" << in.peer->source.toString() << "-" << why
                << (times > 1 ? QStringLiteral("(%1 times)").arg(times) : QString());
        refuseConnect(in, QStringLiteral("connect"), why);
        // A replacement is knocking: if the holder of the name is dead, the probe finds out now.
        if (const ProcessRecord *old = m_directory.process(p.name))
            sendToEndpoint(Endpoint{old->host, old->port}, controlFrame(Type::Heartbeat, wire::Heartbeat()));
        return;
    }
    m_refusedConnects.remove(p.name);
    if (result == Directory::ConnectResult::Accepted)
        addPeer(qMakePair(p.name, p.incarnation)); // (refreshed: the same process, already there)
    m_shortestHeartbeatMs = qMin(m_shortestHeartbeatMs, p.heartbeatMs);
    if (p.name.startsWith(QLatin1String("DIALOG.Standby."))) {
        // A standby is named after the port it takes over on; it serves from its own host.
        bool ok = false;
        const quint16 port = p.name.mid(int(qstrlen("DIALOG.Standby."))).toUShort(&ok);
        if (ok && port != 0)
            m_standby = Endpoint{p.host, port};
    }
    qCInfo(lcServer).noquote() << "process" << p.name << "connected from" << reply.toString() << "pid"
                               << p.pid << (result == Directory::ConnectResult::Refreshed ? "(again)" : "");
    // Until it answers, it is on probation: if SUCCESSFULLY_CONNECTED cannot be delivered, the
    // refusal goes back on the connection the CONNECT came by.
    m_unverified.insert(reply, Unverified{in.peer, p.name, p.incarnation, now()});
    wire::Connected ok;
    ok.set_server(ss(m_self.name));
    ok.set_heartbeat_ms(quint32(p.heartbeatMs));
    ok.set_heartbeat_misses(quint32(m_options.heartbeatMisses));
    sendToEndpoint(reply, controlFrame(Type::SuccessfullyConnected, ok));
    for (const auto &s : c.services())
        registerService(p.name, qs(s));
    for (const auto &cmd : c.commands())
        registerCommand(p.name, qs(cmd));
    for (const auto &r : c.requests())
        request(p.name, qs(r));
    directoryChanged(c.commands_size() > 0 || hadCommands);
}

void ControlServer::onDestinationFailed(const Endpoint &e, const QString &why)
{
    if (m_unverified.contains(e)) {
        connectBackFailed(e, why);
        return;
    }
    // A process we cannot reach is dead (its receiving socket refuses): no need to wait for
    // heartbeats.
    const QString name = m_directory.processAt(e.host, e.port);
    if (name.isEmpty())
        return;
    // A process that exits closes its receiving socket at about the time its DISCONNECT
    // (written before) is read: a moment's grace tells an exit from a crash in the log.
    const quint64 incarnation = m_directory.process(name)->incarnation;
    QTimer::singleShot(ExitGraceMs, this, [this, name, incarnation, why] {
        if (m_directory.connected(name, incarnation))
            lose(name, QStringLiteral("unreachable (%1)").arg(why));
    });
}

void ControlServer::connectBackFailed(const Endpoint &e, const QString &reason)
{
    const Unverified u = m_unverified.take(e);
    QString detail = reason;
    if (!detail.isEmpty())
        detail[0] = detail[0].toLower();
    const QString why = QStringLiteral("cannot connect back to %1: %2 — check --advertise / firewall")
                            .arg(e.toString(), detail);
    if (m_dialFailures.size() > 4096)
        m_dialFailures.clear(); // bounded; entries are short-lived anyway
    m_dialFailures.insert(e, DialFailure{why, now()});
    wire::Refused r;
    r.set_what("address");
    r.set_name(ss(u.name));
    r.set_reason(ss(why));
    m_transport->answer(u.via, controlFrame(Type::Refused, r));
    if (m_directory.connected(u.name, u.incarnation))
        lose(u.name, why);
}

void ControlServer::expireConnectBacks()
{
    const qint64 t = now();
    for (auto it = m_unverified.begin(); it != m_unverified.end();)
        it = t - it->atMs > UnverifiedForgetMs ? m_unverified.erase(it) : std::next(it);
    for (auto it = m_dialFailures.begin(); it != m_dialFailures.end();)
        it = t - it->atMs > DialRetryMs ? m_dialFailures.erase(it) : std::next(it);
    for (auto it = m_recentlyLost.begin(); it != m_recentlyLost.end();) {
        if (t - it.value() > RecentlyLostMs) {
            dropPeer(it.key());
            it = m_recentlyLost.erase(it);
        } else {
            ++it;
        }
    }
}

void ControlServer::registerService(const QString &process, const QString &service)
{
    QString owner;
    const qsizetype length = service.toUtf8().size();
    const bool validName = length > 0 && length <= MaxNameLength;
    const bool own = ownService(service) != nullptr;
    // Registrations are bounded: one process cannot make the directory grow without limit.
    const ProcessRecord *rec = m_directory.process(process);
    QString limit;
    if (rec && rec->services.size() >= m_options.maxServicesPerProcess && !rec->services.contains(service))
        limit = QStringLiteral("%1 provides %2 services, the most one process may")
                    .arg(process)
                    .arg(m_options.maxServicesPerProcess);
    else if (m_directory.serviceCount() >= m_options.maxServices && !(rec && rec->services.contains(service)))
        limit = QStringLiteral("the directory holds %1 services, its limit").arg(m_options.maxServices);
    if (!limit.isEmpty() || !validName || own || !m_directory.registerService(process, service, &owner)) {
        if (own)
            owner = m_self.name;
        const QString why =
            !limit.isEmpty() ? limit
            : validName      ? QStringLiteral("service '%1' is already provided by %2").arg(service, owner)
                        : QStringLiteral("invalid service name (empty or over %1 bytes)").arg(MaxNameLength);
        qCWarning(lcServer).noquote() << "refused service" << service << "of" << process << "-" << why;
        wire::Refused r;
        r.set_what("service");
        r.set_name(ss(service));
        r.set_reason(ss(why));
        sendTo(process, controlFrame(Type::Refused, r));
        return;
    }
    qCDebug(lcServer) << "service" << service << "provided by" << process;
    // Requests queued for this service are answered now: start order never matters.
    for (const QString &r : m_directory.requesters(service))
        sendInfo(r, service);
}

bool ControlServer::admitName(const QString &process, const QString &what, const QString &name,
                              const QSet<QString> &have)
{
    if (have.contains(name))
        return true;
    const qsizetype length = name.toUtf8().size();
    QString why;
    if (length == 0 || length > MaxNameLength)
        why = QStringLiteral("invalid name (empty or over %1 bytes)").arg(MaxNameLength);
    else if (have.size() >= m_options.maxNamesPerProcess)
        why = QStringLiteral("%1 has %2 %3s, the most one process may")
                  .arg(process)
                  .arg(m_options.maxNamesPerProcess)
                  .arg(what);
    else if (m_directory.nameCount() >= m_options.maxNames)
        why = QStringLiteral("the directory holds %1 commands and subscriptions, its limit")
                  .arg(m_options.maxNames);
    if (why.isEmpty())
        return true;
    // One line for the first refusal and then at 2, 4, 8 … (a flood of names is not a flood of lines).
    const int times = ++m_refusedNames[process];
    if ((times & (times - 1)) == 0)
        qCWarning(lcServer).noquote() << "refused" << what << name.left(64) << "of" << process << "-" << why
                                      << (times > 1 ? QStringLiteral("(%1 refusals)").arg(times) : QString());
    wire::Refused r;
    r.set_what(ss(what));
    r.set_name(ss(name.left(MaxNameLength)));
    r.set_reason(ss(why));
    sendTo(process, controlFrame(Type::Refused, r));
    return false;
}

void ControlServer::registerCommand(const QString &process, const QString &command)
{
    const ProcessRecord *p = m_directory.process(process);
    if (p && admitName(process, QStringLiteral("command"), command, p->commands))
        m_directory.registerCommand(process, command);
}

void ControlServer::request(const QString &process, const QString &service)
{
    const ProcessRecord *p = m_directory.process(process);
    if (!p || !admitName(process, QStringLiteral("subscription"), service, p->requests))
        return;
    m_directory.request(process, service);
    sendInfo(process, service);
}

void ControlServer::sendInfo(const QString &to, const QString &service)
{
    wire::InfoService info;
    info.set_name(ss(service));
    if (ownService(service)) {
        info.set_available(true);
        info.set_provider(ss(m_self.name));
        info.set_host(ss(m_self.endpoint.host));
        info.set_port(m_self.endpoint.port);
        info.set_incarnation(m_self.incarnation);
    } else if (const ProcessRecord *p = m_directory.provider(service)) {
        info.set_available(true);
        info.set_provider(ss(p->name));
        info.set_host(ss(p->host));
        info.set_port(p->port);
        info.set_incarnation(p->incarnation);
    } else {
        info.set_available(false);
    }
    sendTo(to, controlFrame(Type::InfoService, info));
}

void ControlServer::lose(const QString &name, const QString &reason)
{
    const ProcessRecord *cur = m_directory.process(name);
    if (!cur)
        return;
    const QStringList subscribers = m_directory.subscribersOf(*cur);
    const QStringList providers = m_directory.providersFor(*cur);
    const ProcessRecord p =
        m_directory.removeProcess(name, reason.isEmpty() ? QString() : reason, m_epochOffset + now());
    const auto peer = qMakePair(p.name, p.incarnation);
    if (m_recentlyLost.size() >= MaxRecentlyLost) { // bounded; entries are short-lived anyway
        for (auto it = m_recentlyLost.cbegin(); it != m_recentlyLost.cend(); ++it)
            dropPeer(it.key());
        m_recentlyLost.clear();
    }
    if (!m_recentlyLost.contains(peer))
        addPeer(peer); // still forwarded for a while, as recently lost ...
    m_recentlyLost.insert(peer, now());
    dropPeer(peer); // ... no longer as connected
    m_refusedNames.remove(p.name);
    if (reason.isEmpty())
        qCInfo(lcServer).noquote() << "process" << name << "disconnected";
    else
        qCWarning(lcServer).noquote() << "process" << name << QStringLiteral("%1:%2").arg(p.host).arg(p.port)
                                      << "pid" << p.pid << "lost:" << reason;
    m_directoryService->removeSubscribers(Endpoint{p.host, p.port}, p.incarnation);
    m_statisticsService->removeSubscribers(Endpoint{p.host, p.port}, p.incarnation);
    if (m_logService)
        m_logService->removeSubscribers(Endpoint{p.host, p.port}, p.incarnation);
    if (p.statistics.atMs != 0 && !m_statisticsTimer->isActive())
        m_statisticsTimer->start(); // its figures leave the snapshot

    wire::LostProcess lost;
    lost.set_name(ss(p.name));
    lost.set_host(ss(p.host));
    lost.set_port(p.port);
    lost.set_incarnation(p.incarnation);
    for (const QString &s : p.services)
        lost.add_services(ss(s));
    const QByteArray lostSender = controlFrame(Type::LostSender, lost);
    for (const QString &s : subscribers)
        sendTo(s, lostSender);
    const QByteArray lostReceiver = controlFrame(Type::LostReceiver, lost);
    for (const QString &pr : providers)
        sendTo(pr, lostReceiver);
    directoryChanged(!p.commands.isEmpty());
}

void ControlServer::checkHeartbeats()
{
    const qint64 t = now();
    const qint64 gap = m_lastCheckMs < 0 ? 0 : t - m_lastCheckMs;
    m_lastCheckMs = t;
    // Processes (and the standby) give up on us after misses × their own interval.
    if (gap > qMax<qint64>(200, qint64(m_options.heartbeatMisses) *
                                    qMin(m_options.heartbeatMs, m_shortestHeartbeatMs)))
        wokeUp(gap);
    if (m_probingStandby)
        return; // nobody is declared lost until we know whether we still serve
    if (!m_unverified.isEmpty() || !m_dialFailures.isEmpty() || !m_recentlyLost.isEmpty())
        expireConnectBacks();
    for (const QString &name : m_directory.expired(now(), m_options.heartbeatMisses))
        lose(name, QStringLiteral("no heartbeat for %1 intervals").arg(m_options.heartbeatMisses));
    if (m_directory.lostCount() > 0 && m_directory.expireLost(m_epochOffset + now()))
        directoryChanged(false); // the list of lost processes only
}

void ControlServer::wokeUp(qint64 stalledMs)
{
    qCWarning(lcServer).noquote()
        << QStringLiteral("this Control Server did not run for %1 ms (stopped or starved)").arg(stalledMs);
    // The heartbeats it missed are its own fault: every process gets a fresh interval.
    for (const QString &name : m_directory.processNames())
        m_directory.heartbeat(name, now());
    if (m_standby.port == 0 || m_probingStandby)
        return;
    // Its processes may have moved to the standby, which serves only once it took over.
    m_probingStandby = true;
    auto *probe = new QTcpSocket(this);
    probe->setProxy(QNetworkProxy::NoProxy);
    auto *timeout = new QTimer(probe);
    timeout->setSingleShot(true);
    const net::Endpoint standby = m_standby;
    auto finish = [this, probe, timeout](bool listening, const net::Endpoint &at) {
        // Whichever comes first (connected, an error, the time-out) decides, once.
        probe->disconnect();
        timeout->disconnect();
        probe->deleteLater();
        m_probingStandby = false;
        if (listening)
            stepDown(at);
        else
            qCInfo(lcServer).noquote()
                << "the standby at" << at.toString() << "did not take over: still serving";
    };
    connect(probe, &QTcpSocket::connected, this, [finish, standby] { finish(true, standby); });
    connect(probe, &QTcpSocket::errorOccurred, this, [finish, standby] { finish(false, standby); });
    connect(timeout, &QTimer::timeout, this, [finish, standby] { finish(false, standby); });
    timeout->start(qMax(500, m_options.heartbeatMs));
    probe->connectToHost(standby.host, standby.port);
}

void ControlServer::stepDown(const net::Endpoint &active)
{
    // Two servers must not serve one partition. The standby that took over keeps serving (the
    // processes are there now); this one becomes its standby with a clean slate: the process
    // executes itself again with --standby-of the active server (same PID, so a supervisor keeps
    // watching it; every socket is closed on exec, and the processes still here fail over).
    const QString at = active.toString();
    qCWarning(lcServer).noquote()
        << "the standby at" << at
        << "took over while this server was not running: stepping down to be its standby";
    QStringList args = QCoreApplication::arguments();
    const QString program = QCoreApplication::applicationFilePath();
    if (!args.isEmpty())
        args.removeFirst();
    for (int i = 0; i < args.size();) {
        if (args.at(i) == QLatin1String("--standby-of") && i + 1 < args.size())
            args.remove(i, 2);
        else if (args.at(i).startsWith(QLatin1String("--standby-of=")))
            args.remove(i);
        else
            ++i;
    }
    for (int i = 0; i < args.size();) { // a standby needs a real port: the one it served on
        if (args.at(i) == QLatin1String("--port") && i + 1 < args.size())
            args.remove(i, 2);
        else if (args.at(i).startsWith(QLatin1String("--port=")))
            args.remove(i);
        else
            ++i;
    }
    args << QStringLiteral("--port") << QString::number(port()) << QStringLiteral("--standby-of") << at;
    std::vector<QByteArray> storage;
    storage.push_back(QFile::encodeName(program));
    for (const QString &a : std::as_const(args))
        storage.push_back(a.toLocal8Bit());
    std::vector<char *> argv;
    for (QByteArray &b : storage)
        argv.push_back(b.data());
    argv.push_back(nullptr);
    fflush(stdout);
    fflush(stderr);
    ::execv(argv[0], argv.data());
    qCCritical(lcServer).noquote() << "cannot step down (exec" << program
                                   << "failed:" << qt_error_string(errno)
                                   << "); exiting so that the standby serves alone";
    QCoreApplication::exit(1);
}

bool ControlServer::routeCommand(const net::Inbound &in)
{
    // Forward in the reader thread: a command does not wait for the main thread. Commands that are
    // checked or audited go through the main thread (where the access list and the trail are used).
    if (in.type != Type::CommandMessage || m_checkCommands)
        return false;
    QList<net::OutboxPtr> targets;
    {
        ReadLocker l(&m_routesLock);
        if (!m_connectedPeers.contains(qMakePair(in.peer->name, in.peer->incarnation)))
            return false; // the main thread tells it it is not connected
        targets = m_commandRoutes.value(in.name);
    }
    const QByteArray frame = relayedCommand(in);
    for (const net::OutboxPtr &t : std::as_const(targets))
        m_transport->send(t, frame);
    return true;
}

void ControlServer::onCommandRequest(const net::Inbound &in)
{
    const auto answer = [&](quint8 status, const QByteArray &text) {
        quint8 flags = 0;
        const QByteArray data = prepareData(text, 64 * 1024, flags);
        m_transport->send(m_transport->outbox(in.peer->endpoint),
                          encodeReplyFrame(in.sequence, status, flags, data));
    };
    constexpr quint8 Ok = 0, Failed = 1, NotAccepted = 2, PermissionDenied = 3; // the wire's reply status
    if (QString::fromUtf8(in.name) != commandService()) {
        answer(NotAccepted, QStringLiteral("%1 does not provide '%2'")
                                .arg(m_self.name, QString::fromUtf8(in.name.left(MaxNameLength)))
                                .toUtf8());
        return;
    }
    if (!mayCommand(in)) {
        answer(Failed, "not connected to the Control Server: send CONNECT_TO_CONTROL_SERVER first");
        return;
    }
    m_unverified.remove(in.peer->endpoint); // it heard SUCCESSFULLY_CONNECTED: we reach it
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
    const QStringList targets = m_directory.commandTargets(command);
    if (targets.isEmpty()) {
        answer(Failed, QStringLiteral("no process registered command '%1'").arg(command).toUtf8());
        return;
    }
    quint8 flags = 0;
    const QByteArray prepared = prepareData(data, 64 * 1024, flags);
    const QByteArray frame = encodeCommandFrame(name, in.peer->name.toUtf8(), flags, prepared);
    QJsonArray delivered, failed;
    for (const QString &t : targets) {
        const ProcessRecord *p = m_directory.process(t);
        if (p && m_transport->send(m_transport->outbox(Endpoint{p->host, p->port}), frame) ==
                     net::Transport::SendResult::Queued) {
            delivered.append(t);
            continue;
        }
        failed.append(QJsonObject{{QStringLiteral("name"), t},
                                  {QStringLiteral("reason"), QStringLiteral("its queue is full")}});
        qCWarning(lcServer).noquote() << "command" << command << "from" << in.peer->name << "not delivered to"
                                      << t << "- its queue is full";
    }
    answer(Ok, QJsonDocument(
                   QJsonObject{{QStringLiteral("delivered"), delivered}, {QStringLiteral("failed"), failed}})
                   .toJson(QJsonDocument::Compact));
}

bool ControlServer::permitCommand(const net::Inbound &in, const QString &command, QString *why)
{
    const Origin origin{in.peer->name, in.peer->user, in.peer->hostName, in.peer->source.toString()};
    const AccessList::Decision d = m_options.access.access.check(AccessList::Kind::Command, command, origin);
    if (!d.allowed) {
        ++m_commandsRefused;
        *why =
            QStringLiteral("permission denied: the access list (%1) does not let %2 (user '%3', host '%4') "
                           "send '%5'")
                .arg(d.because, origin.process, origin.user, origin.host, command);
        qCWarning(lcServer).noquote()
            << "command" << command << "from" << origin.process << "user" << origin.user << "host"
            << origin.host << origin.address << "refused by" << d.because << "of the access list";
    }
    if (m_audit) {
        AuditRecord r;
        r.timeMs = QDateTime::currentMSecsSinceEpoch();
        r.daemon = m_self.name;
        r.kind = AccessList::Kind::Command;
        r.name = command;
        r.operation = QStringLiteral("send");
        r.origin = origin;
        r.allowed = d.allowed;
        r.because = m_options.access.access.isEmpty() ? QString() : d.because;
        m_audit->record(r);
    }
    return d.allowed;
}

QByteArray ControlServer::relayedCommand(const net::Inbound &in)
{
    // The transport leaves command data as it came (see Transport::setDirectRoute), checked but
    // not decompressed for us: it is relayed as the sender compressed it, never recompressed.
    return encodeCommandFrame(in.name, in.peer->name.toUtf8(), in.flags, in.data);
}

void ControlServer::rebuildRoutes()
{
    m_routesDirty = false;
    QHash<QByteArray, QList<net::OutboxPtr>> routes;
    QSet<QPair<QString, quint64>> peers;
    QHash<QPair<QString, quint64>, int> refs;
    peers.reserve(m_recentlyLost.size() + m_directory.processCount());
    refs.reserve(m_recentlyLost.size() + m_directory.processCount());
    for (auto it = m_recentlyLost.cbegin(); it != m_recentlyLost.cend(); ++it) {
        peers.insert(it.key());
        ++refs[it.key()];
    }
    for (const ProcessRecord &p : m_directory.processRecords()) {
        peers.insert(qMakePair(p.name, p.incarnation));
        ++refs[qMakePair(p.name, p.incarnation)];
        if (p.commands.isEmpty())
            continue;
        const net::OutboxPtr box = m_transport->outbox(Endpoint{p.host, p.port});
        for (const QString &c : p.commands)
            routes[c.toUtf8()].append(box);
    }
    m_peerRefs.swap(refs);
    WriteLocker l(&m_routesLock);
    m_commandRoutes.swap(routes);
    m_connectedPeers.swap(peers);
}

void ControlServer::addPeer(const QPair<QString, quint64> &peer)
{
    if (++m_peerRefs[peer] > 1)
        return;
    WriteLocker l(&m_routesLock);
    m_connectedPeers.insert(peer);
}

void ControlServer::dropPeer(const QPair<QString, quint64> &peer)
{
    const auto it = m_peerRefs.find(peer);
    if (it == m_peerRefs.end() || --it.value() > 0)
        return;
    m_peerRefs.erase(it);
    WriteLocker l(&m_routesLock);
    m_connectedPeers.remove(peer);
}

void ControlServer::directoryChanged(bool routes)
{
    if (routes) {
        m_routesDirty = true;
        if (m_controlBatchDepth == 0)
            rebuildRoutes();
    }
    if (!m_publishTimer->isActive())
        m_publishTimer->start();
}

ServiceStatePtr ControlServer::makeService(const QString &name)
{
    auto s = std::make_shared<ServiceState>();
    s->name = name;
    s->key = name.toUtf8();
    s->transport = m_transport;
    s->compressionThreshold = 64 * 1024;
    return s;
}

ServiceStatePtr ControlServer::ownService(const QString &name) const
{
    if (name == directoryService())
        return m_directoryService;
    if (name == statisticsService())
        return m_statisticsService;
    if (name == commandService())
        return m_commandService;
    if (m_logService && name == logservice::controlServer())
        return m_logService;
    return nullptr;
}

void ControlServer::onHeartbeat(const net::Inbound &in)
{
    wire::Heartbeat hb;
    parseControl(in.data, hb);
    if (hb.has_statistics()) {
        const wire::Statistics &w = hb.statistics();
        ProcessStatistics s;
        s.messagesOut = w.messages_out();
        s.bytesOut = w.bytes_out();
        s.messagesIn = w.messages_in();
        s.bytesIn = w.bytes_in();
        s.dropped = w.dropped();
        s.reconnects = w.reconnects();
        s.protocolErrors = w.protocol_errors();
        s.queuedBytes = w.queued_bytes();
        s.outgoingConnections = w.outgoing_connections();
        s.incomingConnections = w.incoming_connections();
        s.atMs = m_epochOffset + now();
        m_directory.setStatistics(in.peer->name, s);
        if (!m_statisticsTimer->isActive())
            m_statisticsTimer->start();
        hb.clear_statistics(); // the answer carries liveness only
    }
    // Answered, so that processes can tell a hung Control Server and fail over.
    sendToEndpoint(in.peer->endpoint, controlFrame(Type::Heartbeat, hb));
}

void ControlServer::publishDirectory()
{
    // The same path as Service::update: a subscriber that fell behind gets the latest value. A
    // directory over the page size goes out in pages, so no message exceeds the message limit.
    QElapsedTimer cost;
    cost.start();
    m_directoryService->publishPages(m_directory.snapshot(m_epochOffset + now())
                                         .toPages(m_options.directoryPageBytes, ++m_directoryGeneration));
    // A large directory costs tens of ms to publish: while it changes all the time (thousands of
    // processes registering) it is published at most every 10 times that, at least every 50 ms.
    m_publishTimer->setInterval(int(qBound(qint64(50), 10 * cost.elapsed(), qint64(2000))));
}

void ControlServer::publishStatistics()
{
    {
        // Nobody watching (the usual case): no snapshot is built. A new subscriber gets the next
        // one, at most statisticsIntervalMs() later (heartbeats keep the timer going).
        QMutexLocker l(&m_statisticsService->lock);
        if (m_statisticsService->subscribers.isEmpty()) {
            m_statisticsService->hasValue = false;
            m_statisticsService->lastData.clear();
            return;
        }
    }
    QJsonObject stats = m_directory.statisticsJson(m_epochOffset + now());
    stats.insert(QStringLiteral("commandsRefused"), qint64(m_commandsRefused));
    m_statisticsService->publish(QJsonDocument(stats).toJson(QJsonDocument::Compact));
}

} // namespace dialog::cs
