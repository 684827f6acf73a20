#include "servercontext.h"

#include <QDateTime>

namespace dialog::cs {

using namespace wire_format;

ServerContext::ServerContext(const ServerOptions &o) : options(o)
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

QByteArray ServerContext::refusal(const QString &what, const QString &name, const QString &reason)
{
    wire::Refused r;
    r.set_what(ss(what));
    r.set_name(ss(name));
    r.set_reason(ss(reason));
    return controlFrame(Type::Refused, r);
}

} // namespace dialog::cs
