// The Control Server's command relay: a command from a connected process goes to every process
// that registered its name. Unchecked commands are forwarded by the transport's reader threads
// (route()), with routes the main thread rebuilds when processes or their commands change; with an
// access list or an audit trail every command goes through the main thread, is checked, audited,
// and refused or forwarded. A request to DIALOG.Command forwards a command and answers whom it was
// handed to (dialogctl send).
#pragma once

#include "servercontext.h"

#include "dialog/audit.h"

#include <QHash>
#include <QObject>
#include <QReadWriteLock>
#include <QSet>
#include <memory>

namespace dialog::cs {

class CommandRelay : public QObject
{
    Q_OBJECT
public:
    explicit CommandRelay(ServerContext &context, QObject *parent = nullptr);

    /// Opens the audit trail if there is one; false with @p error if it cannot be.
    bool start(QString *error);
    /// Reader threads: forwards @p in if it is a command this thread may forward; false when the
    /// main thread must see it (handleData()).
    bool route(const net::Inbound &in);
    /// Main thread: commands the reader threads did not forward, and requests to DIALOG.Command.
    void handleData(net::InboundBatch &batch);
    /// Commands refused by the access list since the start.
    quint64 commandsRefused() const { return m_commandsRefused; }

    /// While a batch of control frames is handled, route changes are rebuilt once at its end.
    void beginBatch() { ++m_batchDepth; }
    void endBatch();
    /// The directory changed; with @p routes, processes or their commands did.
    void directoryChanged(bool routes);
    /// @p p completed CONNECT (a new incarnation): its commands are forwarded from now on.
    void admitted(const ProcessRecord &p);
    /// @p p is gone: its commands are still forwarded for a moment (see m_recentlyLost).
    void lost(const ProcessRecord &p);
    /// Forgets the processes lost longer ago than that moment.
    void expire();

Q_SIGNALS:
    /// A frame came from the process at @p e: it heard SUCCESSFULLY_CONNECTED, so it is reachable.
    void heardFrom(const net::Endpoint &e);

private:
    using Peer = QPair<QString, quint64>;
    bool mayCommand(const net::Inbound &in) const;
    void relay(const net::Inbound &in);
    /// A request to DIALOG.Command: forwards the command and answers whom it was handed to.
    void onCommandRequest(const net::Inbound &in);
    static QByteArray relayedCommand(const net::Inbound &in);
    /// Checks @p command from @p in against the access list and audits it; false when refused
    /// (logged and counted; the caller tells the sender).
    bool permitCommand(const net::Inbound &in, const QString &command, QString *why);
    void rebuildRoutes();
    void addPeer(const Peer &peer, quint64 via);
    void dropPeer(const Peer &peer);

    ServerContext &m_ctx;
    bool m_checkCommands = false; // access list or audit: commands go through the main thread
    std::unique_ptr<AuditTrail> m_audit;
    quint64 m_commandsRefused = 0;
    int m_batchDepth = 0;       // > 0 while a batch of control frames is handled
    bool m_routesDirty = false; // the directory changed since rebuildRoutes()
    // Command routing for the reader threads, rebuilt by the main thread on every directory change.
    mutable QReadWriteLock m_routesLock;
    QHash<QByteArray, QList<net::OutboxPtr>> m_commandRoutes;
    /// Processes whose commands are forwarded -> the connection they come by (ProcessRecord::via).
    QHash<Peer, quint64> m_connectedPeers;
    /// Main thread: why each of m_connectedPeers is there (connected, recently lost: 1 or 2), so
    /// that a process coming or going changes one entry instead of rebuilding them all.
    QHash<Peer, int> m_peerRefs;
    // Processes lost a moment ago, whose commands are still forwarded: a short-lived sender (dialog
    // send) may be declared lost (its receiving socket closed when it exited) before its command,
    // written earlier on its own connection, was read. They completed CONNECT; the command is theirs.
    struct Lost
    {
        qint64 atMs = 0; // now()
        quint64 via = 0;
    };
    QHash<Peer, Lost> m_recentlyLost;
};

} // namespace dialog::cs
