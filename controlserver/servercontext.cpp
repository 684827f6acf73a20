#include "servercontext.h"

#include <QDateTime>
#include <QLoggingCategory>

Q_LOGGING_CATEGORY(lcContext, "dialog.controlserver.identity", QtInfoMsg)

namespace dialog::cs {

using namespace wire_format;

ServerContext::ServerContext(const ServerOptions &o) : options(o), term(qMax<quint64>(1, o.term))
{
    directory.setLostLimits(options.lost);
    m_clock.start();
    m_epochOffset = QDateTime::currentMSecsSinceEpoch();
}

void ServerContext::sendToEndpoint(const net::Endpoint &e, const QByteArray &frame) const
{
    transport->send(transport->outbox(e), frame);
}

void ServerContext::sendTo(const QString &process, const QByteArray &frame) const
{
    if (const ProcessRecord *p = directory.process(process))
        sendToEndpoint(net::Endpoint{p->host, p->port}, frame);
}

void ServerContext::tellNotConnected(const net::Inbound &in) const
{
    wire::ConnectionLost cl;
    cl.set_reason("not connected: send CONNECT_TO_CONTROL_SERVER first");
    sendToEndpoint(in.peer->endpoint, controlFrame(Type::ConnectionLost, cl));
}

ServerContext::Standing ServerContext::standing(const net::Inbound &in) const
{
    const ProcessRecord *p = directory.connected(in.peer->name, in.peer->incarnation);
    if (!p)
        return Standing::NotConnected;
    return p->via == 0 || p->via == in.peer->connectionId ? Standing::Connected : Standing::OtherConnection;
}

void ServerContext::refuseOtherConnection(const net::Inbound &in)
{
    const QString why =
        QStringLiteral("%1 is connected by another connection: CONNECT again").arg(in.peer->name);
    const quint64 n = ++m_otherConnection;
    if ((n & (n - 1)) == 0)
        qCWarning(lcContext).noquote()
            << "refused" << typeName(in.type) << "naming" << in.peer->name << "from"
            << in.peer->source.toString() << "- not the connection it connected by"
            << (n > 1 ? QStringLiteral("(%1 such frames)").arg(n) : QString());
    transport->answer(in.peer, refusal(QStringLiteral("session"), in.peer->name, why));
}

QByteArray ServerContext::refusal(const QString &what, const QString &name, const QString &reason,
                                  quint32 retryMs)
{
    wire::Refused r;
    r.set_what(ss(what));
    r.set_name(ss(name));
    r.set_reason(ss(reason));
    r.set_retry_ms(retryMs);
    return controlFrame(Type::Refused, r);
}

} // namespace dialog::cs
