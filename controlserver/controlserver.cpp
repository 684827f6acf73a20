#include "controlserver.h"

#include "admission.h"
#include "commandrelay.h"
#include "directorypublisher.h"
#include "fencing.h"
#include "registry.h"
#include "standby.h"
#include "supervision.h"

#include <QCoreApplication>
#include <QHostInfo>
#include <QLoggingCategory>
#include <QRandomGenerator>

Q_LOGGING_CATEGORY(lcServer, "dialog.controlserver", QtInfoMsg)

namespace dialog::cs {

using namespace wire_format;
using net::Endpoint;

ControlServer::ControlServer(const ServerOptions &options, QObject *parent)
    : QObject(parent), m_ctx(options), m_relay(new CommandRelay(m_ctx, this)),
      m_publisher(new DirectoryPublisher(m_ctx, *m_relay, this)),
      m_registry(new Registry(m_ctx, *m_publisher, this)),
      m_admission(new Admission(m_ctx, *m_registry, this)), m_supervision(new Supervision(m_ctx, this)),
      m_standby(new Standby(m_ctx, this)), m_fencing(new Fencing(m_ctx, this))
{
    connectParts();
}

ControlServer::~ControlServer()
{
    // The transport first: its reader threads route commands through the relay until it is gone.
    // Then the parts, which keep references to the context.
    m_transport.reset();
    m_ctx.transport = nullptr;
    delete m_fencing;
    delete m_standby;
    delete m_supervision;
    delete m_admission;
    delete m_registry;
    delete m_publisher;
    delete m_relay;
}

quint16 ControlServer::port() const
{
    return m_transport ? m_transport->serverPort() : 0;
}

void ControlServer::connectParts()
{
    connect(m_admission, &Admission::admitted, this, [this](const ProcessRecord &p, bool fresh) {
        if (fresh)
            m_relay->admitted(p); // (refreshed: the same process, already there)
        m_supervision->admitted(p);
        m_fencing->admitted(p);
    });
    connect(m_admission, &Admission::unreachable, this,
            [this](const QString &name, quint64, const QString &why) { m_supervision->lose(name, why); });
    connect(m_relay, &CommandRelay::heardFrom, m_admission, &Admission::heardFrom);
    connect(m_supervision, &Supervision::lost, this, [this](const ProcessRecord &p) {
        m_relay->lost(p);
        m_registry->forget(p.name);
        m_publisher->forget(p);
    });
    connect(m_supervision, &Supervision::checked, this, [this] {
        m_admission->expire();
        m_relay->expire();
    });
    connect(m_supervision, &Supervision::stalledFor, m_fencing, &Fencing::afterStall);
    connect(m_fencing, &Fencing::probingChanged, m_supervision, &Supervision::setHeld);
    // The processes are leaving for the serving server: none is declared lost meanwhile.
    connect(m_fencing, &Fencing::steppingDown, m_supervision, [this] { m_supervision->setHeld(true); });
    connect(m_supervision, &Supervision::statisticsChanged, m_publisher,
            &DirectoryPublisher::statisticsChanged);
    connect(m_admission, &Admission::directoryChanged, this, &ControlServer::directoryChanged);
    connect(m_registry, &Registry::directoryChanged, this, &ControlServer::directoryChanged);
    connect(m_supervision, &Supervision::directoryChanged, this, &ControlServer::directoryChanged);
    connect(m_standby, &Standby::takeOver, this, [this] {
        m_ctx.term = m_standby->takeOverTerm();
        QString why;
        if (!activate(&why)) {
            qCCritical(lcServer).noquote() << "cannot take over:" << why;
            QCoreApplication::exit(1);
            return;
        }
        m_fencing->serving(m_ctx.options.standbyOf); // and watch the one replaced, should it serve again
    });
}

bool ControlServer::start(QString *error)
{
    ServerOptions &o = m_ctx.options;
    if (!net::applySecurity(o.secretFile, o.tls, o.transport, error))
        return false;
    if (!o.identityFile.isEmpty()) {
        // The proofs of names travel in the handshake of the shared secret.
        if (o.transport.secret.isEmpty())
            return *error = QStringLiteral("--identity-file needs the partition's --secret-file"), false;
        if (const Status st = security::readSecretFile(o.identityFile, &o.transport.identitySecret); !st.isOk())
            return *error = st.message(), false;
    } else if (!o.provenNames.isEmpty()) {
        return *error = QStringLiteral("--proven-names needs --identity-file"), false;
    }
    if (o.standbyOf.isEmpty()) {
        if (!activate(error))
            return false;
        m_fencing->serving(QString());
        return true;
    }
    net::Endpoint primary;
    if (!net::Endpoint::parse(o.standbyOf, primary)) {
        *error = QStringLiteral("invalid --standby-of '%1' (expected host:port)").arg(o.standbyOf);
        return false;
    }
    m_standby->watchPrimary();
    return true;
}

bool ControlServer::activate(QString *error)
{
    const ServerOptions &o = m_ctx.options;
    m_transport = std::make_unique<net::Transport>(o.transport);
    m_ctx.transport = m_transport.get();
    m_transport->setControlSink(this, [this](net::InboundBatch &b) { handleControl(b); });
    m_transport->setDataSink(this, [this](net::InboundBatch &b) { m_relay->handleData(b); });
    if (!m_relay->start(error))
        return false;
    m_transport->setDirectRoute([relay = m_relay](const net::Inbound &in) { return relay->route(in); });
    if (!m_transport->listen(o.bind, o.port, error))
        return false;
    QString host = o.advertisedHost;
    if (host.isEmpty())
        host = (o.bind == QHostAddress::Any || o.bind == QHostAddress::AnyIPv4) ? QHostInfo::localHostName()
                                                                                : o.bind.toString();
    m_admission->start();
    m_ctx.self.name = QStringLiteral("DIALOG.ControlServer");
    m_ctx.self.endpoint = Endpoint{host, m_transport->serverPort()};
    m_ctx.self.pid = quint32(QCoreApplication::applicationPid());
    m_ctx.self.incarnation = QRandomGenerator::system()->generate64() | 1;
    m_transport->setIdentity(m_ctx.self);
    connectTransport();
    m_publisher->start();
    m_supervision->start();
    qCInfo(lcServer).noquote() << "Control Server listening on"
                               << o.bind.toString() + QLatin1Char(':') + QString::number(port());
    return true;
}

void ControlServer::connectTransport()
{
    connect(m_transport.get(), &net::Transport::destinationFailed, this,
            [this](const QString &host, quint16 port, const QString &why) {
                const Endpoint e{host, port};
                if (!m_admission->destinationFailed(e, why))
                    m_supervision->unreachable(e, why);
            });
    connect(m_transport.get(), &net::Transport::protocolError, this,
            [this](const QString &peer, const QString &why, const QString &name, quint64 incarnation,
                   quint64 connection) {
                qCWarning(lcServer).noquote() << "disconnected" << peer << "for a protocol violation:" << why;
                // A registered process that misbehaves is dropped from the system; the others are told.
                // Not one whose name another connection merely claimed.
                const ProcessRecord *p =
                    name.isEmpty() ? nullptr : m_ctx.directory.connected(name, incarnation);
                if (p && (p->via == 0 || p->via == connection))
                    m_supervision->lose(name,
                                        QStringLiteral("disconnected for a protocol violation: %1").arg(why));
            });
    // A process closed its connection without DISCONNECT: crashed, or idle. Probed, a dead one
    // refuses the connection and is declared lost at once instead of after the heartbeat time-out.
    connect(m_transport.get(), &net::Transport::peerClosed, m_supervision, &Supervision::probe);
}

void ControlServer::handleControl(net::InboundBatch &batch)
{
    m_relay->beginBatch();
    for (const net::Inbound &in : std::as_const(batch))
        handle(in);
    m_relay->endBatch();
}

void ControlServer::handle(const net::Inbound &in)
{
    switch (in.type) {
    case Type::ConnectToControlServer:
        m_admission->onConnect(in);
        return;
    case Type::SubscribeService:
    case Type::UnsubscribeService:
        m_publisher->onSubscribe(in); // the Control Server's own services: open to unconnected processes too
        return;
    default:
        break;
    }
    const ServerContext::Standing standing = m_ctx.standing(in);
    if (standing == ServerContext::Standing::OtherConnection) {
        if (in.type != Type::Disconnect)
            m_ctx.refuseOtherConnection(in);
        return;
    }
    if (standing == ServerContext::Standing::NotConnected) {
        // DIALOG paper: frames of processes that are not connected are ignored, and the sender
        // is told so (it will probably want to connect).
        qCDebug(lcServer).noquote() << "ignoring" << typeName(in.type) << "from unconnected" << in.peer->name
                                    << in.peer->endpoint.toString();
        if (in.type != Type::Disconnect)
            m_ctx.tellNotConnected(in);
        return;
    }
    m_ctx.directory.heartbeat(in.peer->name, m_ctx.now());
    m_admission->heardFrom(in.peer->endpoint);
    if (in.type == Type::Heartbeat)
        m_supervision->onHeartbeat(in);
    else if (in.type == Type::Disconnect)
        m_supervision->lose(in.peer->name, QString());
    else if (!m_registry->handle(in))
        qCDebug(lcServer) << "unexpected" << typeName(in.type) << "from" << in.peer->name;
}

void ControlServer::directoryChanged(bool routes)
{
    m_relay->directoryChanged(routes);
    m_publisher->directoryChanged();
}

} // namespace dialog::cs
