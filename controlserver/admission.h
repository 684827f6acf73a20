// Admission of processes: CONNECT_TO_CONTROL_SERVER (the connection itself was authenticated by
// the transport's HELLO), the address a process claims to listen on checked against where its
// connection comes from, the name it takes (one live incarnation per name), and the connect-back:
// SUCCESSFULLY_CONNECTED goes to the claimed address, and a process that cannot be reached there is
// refused on the connection it came by.
#pragma once

#include "servercontext.h"

#include <QHash>
#include <QHostAddress>
#include <QList>
#include <QObject>

namespace dialog::cs {

class Registry;

class Admission : public QObject
{
    Q_OBJECT
public:
    Admission(ServerContext &context, Registry &registry, QObject *parent = nullptr);

    /// Reads this host's addresses (a process on this host may claim any of them).
    void start();
    void onConnect(const net::Inbound &in);
    /// A frame came from @p e: it heard SUCCESSFULLY_CONNECTED, so it is reachable.
    void heardFrom(const net::Endpoint &e);
    /// @p e cannot be reached: true if it was a connect-back (the process is refused), false if
    /// it is none of ours.
    bool destinationFailed(const net::Endpoint &e, const QString &why);
    /// Forgets connect-backs and dial failures past their time.
    void expire();

    /// Empty if a process connecting from @p source may advertise @p claimed, which resolved to
    /// @p addresses; else why not. From a loopback source any address of this host
    /// (@p localAddresses) is allowed.
    static QString claimError(const QString &claimed, const QList<QHostAddress> &addresses,
                              const QHostAddress &source, const QList<QHostAddress> &localAddresses);

Q_SIGNALS:
    /// Emitted once per CONNECT accepted, before its registrations; @p fresh unless the same
    /// incarnation connected again.
    void admitted(const ProcessRecord &p, bool fresh);
    /// The connected process @p name (@p incarnation) cannot be reached where it claims to listen.
    void unreachable(const QString &name, quint64 incarnation, const QString &why);
    /// Emitted once per accepted CONNECT; @p routes when commands changed.
    void directoryChanged(bool routes);

private:
    /// The rest of onConnect once the advertised host is known as @p addresses (resolved if a name).
    void admit(const net::Inbound &in, const QList<QHostAddress> &addresses);
    /// Why the claimed endpoint @p reply of a process from @p in may not be used now (empty: it may).
    QString checkEndpoint(const net::Inbound &in, const ProcessRecord &p,
                          const QList<QHostAddress> &addresses) const;
    /// The name is held by another live process: refused, and the holder probed.
    void refuseNameInUse(const net::Inbound &in, const ProcessRecord &p, const QString &why);
    /// Answers a CONNECT on the connection it came by (never by dialling the claimed address).
    void refuseConnect(const net::Inbound &in, const QString &what, const QString &reason);
    void connectBackFailed(const net::Endpoint &e, const QString &reason);

    ServerContext &m_ctx;
    Registry &m_registry;
    QList<QHostAddress> m_localAddresses;
    QHash<QString, int> m_refusedConnects; // connections refused per name in use, until it connects
    // Connect-back: processes accepted but not yet proven reachable (no frame since SUCCESSFULLY_
    // CONNECTED was sent to where they claim to listen), and recent failures to reach a claim.
    struct Unverified
    {
        net::PeerPtr via; // the connection the CONNECT came by: where a refusal goes
        QString name;
        quint64 incarnation = 0;
        qint64 atMs = 0;
    };
    QHash<net::Endpoint, Unverified> m_unverified;
    struct DialFailure
    {
        QString reason;
        qint64 atMs = 0;
    };
    QHash<net::Endpoint, DialFailure> m_dialFailures;
};

} // namespace dialog::cs
