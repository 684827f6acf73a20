// A process that is nothing but a transport on 127.0.0.1, for the Control Server's unit tests: it
// listens under a name and keeps the control frames it receives, so that what the Control Server
// (or one of its parts) sends it is read as it arrives, byte for byte.
#pragma once

#include "controlprotocol_p.h"

#include <QObject>
#include <algorithm>

namespace dialog::test {

struct WireProcess
{
    QObject context; // the control frames are handed to this (the test's) thread
    net::Transport transport{net::TransportOptions()};
    QList<net::Inbound> control;

    /// Listens on a free port of 127.0.0.1 as @p name; false if it cannot.
    bool start(const QString &name, quint64 incarnation)
    {
        transport.setControlSink(&context, [this](net::InboundBatch &b) {
            for (const net::Inbound &in : std::as_const(b))
                control.append(in);
        });
        QString error;
        if (!transport.listen(QHostAddress::LocalHost, 0, &error))
            return false;
        net::PeerInfo me;
        me.name = name;
        me.endpoint = net::Endpoint{QStringLiteral("127.0.0.1"), transport.serverPort()};
        me.pid = 1;
        me.incarnation = incarnation;
        transport.setIdentity(me);
        return true;
    }
    bool received(wire_format::Type type) const
    {
        return std::any_of(control.cbegin(), control.cend(),
                           [type](const net::Inbound &in) { return in.type == type; });
    }
};

} // namespace dialog::test
