// What every part of the Control Server shares: its settings, the directory, the transport once it
// serves, its identity and its clock. Owned by ControlServer, which gives each part a reference;
// used in the main thread only.
#pragma once

#include "directory.h"
#include "serveroptions.h"

#include "controlprotocol_p.h"

#include <QElapsedTimer>

namespace dialog::cs {

class ServerContext
{
public:
    explicit ServerContext(const ServerOptions &options);

    ServerOptions options;
    Directory directory;
    /// Null until the server serves (a standby waits without one); owned by ControlServer.
    net::Transport *transport = nullptr;
    /// DIALOG.ControlServer at the address processes reach it by (set when it serves).
    net::PeerInfo self;
    /// The fencing term this server serves with (options.term until a takeover or an adoption).
    quint64 term = 1;
    /// Set while this server steps down: where the server that serves now is, and its term. A
    /// CONNECT is then answered with a redirect there, never accepted.
    net::Endpoint redirectTo;
    quint64 redirectTerm = 0;

    /// Milliseconds on a monotonic clock since the server was made: heartbeats, time-outs.
    qint64 now() const { return m_clock.elapsed(); }
    /// The same instant as now(), in milliseconds since the epoch: what the directory publishes.
    qint64 wallNow() const { return m_epochOffset + now(); }

    void sendToEndpoint(const net::Endpoint &e, const QByteArray &frame) const;
    /// To the connected process named @p process (nothing if there is none).
    void sendTo(const QString &process, const QByteArray &frame) const;
    /// CONNECTION_LOST to a process whose frame came before its CONNECT (it will want to connect).
    void tellNotConnected(const net::Inbound &in) const;
    /// Where the sender of @p in stands: its HELLO names a connected process, and the frame came by
    /// the connection that process connected by (Connected), by another one (OtherConnection: the
    /// name and incarnation are public, so anyone can claim them), or it names none (NotConnected).
    enum class Standing
    {
        Connected,
        OtherConnection,
        NotConnected
    };
    Standing standing(const net::Inbound &in) const;
    /// The frame @p in came by another connection than its process connected by: refused on that
    /// connection ("session"), never attributed to the process, and logged (the first time, then at
    /// 2, 4, 8 … times). The process itself, whose connection was opened anew, connects again.
    void refuseOtherConnection(const net::Inbound &in);
    /// The REFUSED frame: @p what was refused (service, command, address, …), its @p name, why.
    static QByteArray refusal(const QString &what, const QString &name, const QString &reason,
                              quint32 retryMs = 0);

private:
    QElapsedTimer m_clock;
    qint64 m_epochOffset = 0;
    quint64 m_otherConnection = 0; // frames refused by refuseOtherConnection()
};

} // namespace dialog::cs
