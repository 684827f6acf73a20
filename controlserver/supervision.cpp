#include "supervision.h"

#include <QLoggingCategory>
#include <QTimer>

Q_LOGGING_CATEGORY(lcSupervision, "dialog.controlserver.supervision", QtInfoMsg)

namespace dialog::cs {

using namespace wire_format;
using net::Endpoint;

namespace {
// How long a process whose connection broke may take to say it disconnected (see unreachable()).
constexpr int ExitGraceMs = 100;
} // namespace

Supervision::Supervision(ServerContext &context, QObject *parent) : QObject(parent), m_ctx(context) {}

void Supervision::start()
{
    m_timer = new QTimer(this);
    // Processes announce their own intervals; a fine check keeps detection close to misses × interval.
    m_timer->setInterval(20);
    connect(m_timer, &QTimer::timeout, this, &Supervision::checkHeartbeats);
    m_timer->start();
}

void Supervision::admitted(const ProcessRecord &p)
{
    m_shortestHeartbeatMs = qMin(m_shortestHeartbeatMs, p.heartbeatMs);
}

void Supervision::onHeartbeat(const net::Inbound &in)
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
        s.atMs = m_ctx.wallNow();
        m_ctx.directory.setStatistics(in.peer->name, s);
        Q_EMIT statisticsChanged();
        hb.clear_statistics(); // the answer carries liveness only
    }
    // Answered, so that processes can tell a hung Control Server and fail over.
    m_ctx.sendToEndpoint(in.peer->endpoint, controlFrame(Type::Heartbeat, hb));
}

void Supervision::lose(const QString &name, const QString &reason)
{
    Directory &directory = m_ctx.directory;
    const ProcessRecord *cur = directory.process(name);
    if (!cur)
        return;
    const QStringList subscribers = directory.subscribersOf(*cur);
    const QStringList providers = directory.providersFor(*cur);
    const ProcessRecord p = directory.removeProcess(name, reason, m_ctx.wallNow());
    if (reason.isEmpty())
        qCInfo(lcSupervision).noquote() << "process" << name << "disconnected";
    else
        qCWarning(lcSupervision).noquote()
            << "process" << name << QStringLiteral("%1:%2").arg(p.host).arg(p.port) << "pid" << p.pid
            << "lost:" << reason;
    Q_EMIT lost(p);

    wire::LostProcess message;
    message.set_name(ss(p.name));
    message.set_host(ss(p.host));
    message.set_port(p.port);
    message.set_incarnation(p.incarnation);
    for (const QString &s : p.services)
        message.add_services(ss(s));
    const QByteArray lostSender = controlFrame(Type::LostSender, message);
    for (const QString &s : subscribers)
        m_ctx.sendTo(s, lostSender);
    const QByteArray lostReceiver = controlFrame(Type::LostReceiver, message);
    for (const QString &pr : providers)
        m_ctx.sendTo(pr, lostReceiver);
    Q_EMIT directoryChanged(!p.commands.isEmpty());
}

void Supervision::unreachable(const Endpoint &e, const QString &why)
{
    // A process we cannot reach is dead (its receiving socket refuses): no need to wait for
    // heartbeats.
    const QString name = m_ctx.directory.processAt(e.host, e.port);
    if (name.isEmpty())
        return;
    // A process that exits closes its receiving socket at about the time its DISCONNECT
    // (written before) is read: a moment's grace tells an exit from a crash in the log.
    const quint64 incarnation = m_ctx.directory.process(name)->incarnation;
    QTimer::singleShot(ExitGraceMs, this, [this, name, incarnation, why] {
        if (m_ctx.directory.connected(name, incarnation))
            lose(name, QStringLiteral("unreachable (%1)").arg(why));
    });
}

void Supervision::probe(const QString &name, quint64 incarnation)
{
    if (const ProcessRecord *p = m_ctx.directory.connected(name, incarnation))
        m_ctx.sendToEndpoint(Endpoint{p->host, p->port}, controlFrame(Type::Heartbeat, wire::Heartbeat()));
}

bool Supervision::stalled(qint64 gapMs, int misses, int heartbeatMs, int shortestMs)
{
    return gapMs > qMax<qint64>(200, qint64(misses) * qMin(heartbeatMs, shortestMs));
}

void Supervision::checkHeartbeats()
{
    const ServerOptions &o = m_ctx.options;
    const qint64 t = m_ctx.now();
    const qint64 gap = m_lastCheckMs < 0 ? 0 : t - m_lastCheckMs;
    m_lastCheckMs = t;
    // Processes (and the standby) give up on us after misses × their own interval.
    if (stalled(gap, o.heartbeatMisses, o.heartbeatMs, m_shortestHeartbeatMs)) {
        qCWarning(lcSupervision).noquote()
            << QStringLiteral("this Control Server did not run for %1 ms (stopped or starved)").arg(gap);
        // The heartbeats it missed are its own fault: every process gets a fresh interval.
        for (const QString &name : m_ctx.directory.processNames())
            m_ctx.directory.heartbeat(name, m_ctx.now());
        Q_EMIT stalledFor(gap);
    }
    if (m_held)
        return; // nobody is declared lost until we know whether we still serve
    Q_EMIT checked();
    for (const QString &name : m_ctx.directory.expired(m_ctx.now(), o.heartbeatMisses))
        lose(name, QStringLiteral("no heartbeat for %1 intervals").arg(o.heartbeatMisses));
    if (m_ctx.directory.lostCount() > 0 && m_ctx.directory.expireLost(m_ctx.wallNow()))
        Q_EMIT directoryChanged(false); // the list of lost processes only
}

} // namespace dialog::cs
