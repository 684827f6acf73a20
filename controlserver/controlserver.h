// The DIALOG Control Server: keeps the directory, answers requests, forwards commands,
// supervises heartbeats and tells processes about lost partners.
#pragma once

#include "dialog/audit.h"
#include "dialog/client.h"
#include "directory.h"
#include "servicestate_p.h"
#include "transport_p.h"

#include <QElapsedTimer>
#include <QHash>
#include <QHostAddress>
#include <QObject>
#include <QReadWriteLock>
#include <QSet>

class QTimer;

namespace dialog::cs {

struct ServerOptions
{
    QHostAddress bind{QHostAddress::LocalHost};
    quint16 port = 3425;
    QString advertisedHost;  ///< how processes reach us (default: the bind address, or the host name)
    int heartbeatMs = 1000;  ///< expected heartbeat interval (processes may announce their own)
    int heartbeatMisses = 3; ///< missed intervals before a process is declared lost
    int maxServicesPerProcess = 10000; ///< services one process may provide; more are refused
    int maxServices = 100000;          ///< services in the directory; more are refused
    int maxNamesPerProcess = 10000;    ///< commands one process registers, services it requests (each)
    int maxNames = 200000;             ///< command registrations + requests in the directory
    /// Processes from one source address that may wait for their connect-back (accepted, not yet heard
    /// from since) at once; more are refused with "try again later" and come back paced.
    int maxConnectingPerAddress = 256; // a host starting its whole farm at once fits
    /// Largest DIALOG.Directory message (JSON bytes): a larger directory goes out in pages. Below
    /// the message limit (64 MiB) so that every subscriber can take it.
    qint64 directoryPageBytes = 8 * 1024 * 1024;
    LostLimits lost;   ///< bounds of the "lost" history
    QString standbyOf; ///< "host:port" of the primary: wait as a spare until it is gone
    /// Accept any address a process advertises. By default it must be the address its connection
    /// comes from (or, from this host, one of this host's addresses).
    bool trustAdvertised = false;
    net::TransportOptions transport;
    /// The partition's secret and TLS files (loaded into transport by start(); also those of the
    /// standby's connection to its primary).
    QString secretFile;
    security::TlsFiles tls;
    /// Publish this process' reported messages (dialog::installMessageHandler()) on
    /// logservice::controlServer() for dialog-logger (the daemon does; in-process servers do not).
    bool reportMessages = false;
    /// Who may send which command, and the audit trail of commands (dialog/audit.h).
    AccessOptions access;
};

class MessageLog;

class ControlServer : public QObject
{
    Q_OBJECT
public:
    explicit ControlServer(const ServerOptions &options, QObject *parent = nullptr);
    ~ControlServer() override;

    /// Listens (or, as a standby, starts watching the primary). False with @p error on failure.
    bool start(QString *error);
    bool isActive() const { return m_transport != nullptr; }
    quint16 port() const;
    const Directory &directory() const { return m_directory; }

    /// Name of the service carrying the directory as JSON.
    static QString directoryService() { return directoryServiceName(); }
    /// Name of the service carrying every process's communication figures as JSON, published at most
    /// once per statisticsIntervalMs() while they change (they arrive with the heartbeats).
    static QString statisticsService() { return statisticsServiceName(); }
    /// Name of the service whose requests are commands, forwarded and confirmed (dialog send).
    static QString commandService() { return commandServiceName(); }
    static constexpr int statisticsIntervalMs() { return 1000; }

private:
    bool activate(QString *error);
    void watchPrimary();
    void handleControl(net::InboundBatch &batch);
    void handleData(net::InboundBatch &batch);
    /// Dispatches one control frame to its handler (one per message type).
    void handle(const net::Inbound &in);
    void tellNotConnected(const net::Inbound &in);
    static QStringList namesIn(const net::Inbound &in);
    void onConnect(const net::Inbound &in);
    /// The rest of onConnect once the advertised host is known as @p addresses (resolved if a name).
    void admit(const net::Inbound &in, const QList<QHostAddress> &addresses);
    /// Empty if a process connecting from in.peer->source may advertise @p addresses, else why not.
    QString checkClaim(const net::Inbound &in, const QString &claimed,
                       const QList<QHostAddress> &addresses) const;
    /// Answers a CONNECT on the connection it came by (never by dialling the claimed address).
    void refuseConnect(const net::Inbound &in, const QString &what, const QString &reason);
    void onDestinationFailed(const net::Endpoint &e, const QString &why);
    void connectBackFailed(const net::Endpoint &e, const QString &reason);
    void expireConnectBacks();
    void onSubscribe(const net::Inbound &in);
    void onRegisterService(const net::Inbound &in);
    void onUnregisterService(const net::Inbound &in);
    void onRegisterCommand(const net::Inbound &in);
    void onUnregisterCommand(const net::Inbound &in);
    void onRequestService(const net::Inbound &in);
    void onCancelRequest(const net::Inbound &in);
    void registerService(const QString &process, const QString &service);
    void request(const QString &process, const QString &service);
    void registerCommand(const QString &process, const QString &command);
    /// True if @p process may have @p name in @p have (its commands or requests); else false, and
    /// the refusal is sent back as REFUSED of @p what (and logged at the 1st, 2nd, 4th … time).
    bool admitName(const QString &process, const QString &what, const QString &name,
                   const QSet<QString> &have);
    void sendInfo(const QString &to, const QString &service);
    void lose(const QString &name, const QString &reason);
    void sendTo(const QString &process, const QByteArray &frame);
    void sendToEndpoint(const net::Endpoint &e, const QByteArray &frame);
    void checkHeartbeats();
    /// After this server was not running for longer than processes wait for it (SIGSTOP, a swap
    /// storm): nobody is blamed for heartbeats it could not read, and if its standby took over
    /// meanwhile it steps down to be that server's standby.
    void wokeUp(qint64 stalledMs);
    void stepDown(const net::Endpoint &active);
    bool routeCommand(const net::Inbound &in); // reader threads
    /// A request to DIALOG.Command: forwards the command and answers whom it was handed to.
    void onCommandRequest(const net::Inbound &in);
    static QByteArray relayedCommand(const net::Inbound &in);
    /// Checks @p command from @p in against the access list and audits it; false when refused
    /// (logged and counted; the caller tells the sender).
    bool permitCommand(const net::Inbound &in, const QString &command, QString *why);
    void rebuildRoutes();
    /// The directory changed: published soon; with @p routes, the command routes the reader
    /// threads use are rebuilt (processes or commands changed, not only services).
    void directoryChanged(bool routes = true);
    void addPeer(const QPair<QString, quint64> &peer);
    void dropPeer(const QPair<QString, quint64> &peer);
    void publishDirectory();
    void publishStatistics();
    void onHeartbeat(const net::Inbound &in);
    ServiceStatePtr ownService(const QString &name) const;
    ServiceStatePtr makeService(const QString &name);
    qint64 now() const;

    ServerOptions m_options;
    bool m_checkCommands = false; // access list or audit: commands go through the main thread
    std::unique_ptr<AuditTrail> m_audit;
    quint64 m_commandsRefused = 0;
    net::Transport *m_transport = nullptr;
    Directory m_directory;
    net::PeerInfo m_self;
    ServiceStatePtr m_directoryService;
    ServiceStatePtr m_statisticsService;
    ServiceStatePtr m_commandService;   // takes requests only, publishes nothing
    ServiceStatePtr m_logService;       // with reportMessages only
    MessageLog *m_messageLog = nullptr; // with reportMessages only
    QTimer *m_statisticsTimer = nullptr;
    QTimer *m_heartbeatTimer = nullptr;
    QTimer *m_publishTimer = nullptr;
    int m_controlBatchDepth = 0; // > 0 while a batch of control frames is handled
    bool m_routesDirty = false;  // the directory changed since rebuildRoutes()
    QElapsedTimer m_clock;
    quint64 m_directoryGeneration = 0;
    qint64 m_epochOffset = 0;
    QHash<QString, int> m_refusedConnects; // connections refused per name in use, until it connects
    QHash<QString, int> m_refusedNames;    // command/subscription refusals per process (for the log)
    std::unique_ptr<Client> m_primaryWatch;
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
    QList<QHostAddress> m_localAddresses;
    // Command routing for the reader threads, rebuilt by the main thread on every directory change.
    mutable QReadWriteLock m_routesLock;
    QHash<QByteArray, QList<net::OutboxPtr>> m_commandRoutes;
    QSet<QPair<QString, quint64>> m_connectedPeers; // processes whose commands are forwarded
    /// Main thread: why each of m_connectedPeers is there (connected, recently lost: 1 or 2), so
    /// that a process coming or going changes one entry instead of rebuilding them all.
    QHash<QPair<QString, quint64>, int> m_peerRefs;
    // Processes lost a moment ago, whose commands are still forwarded: a short-lived sender (dialog
    // send) may be declared lost (its receiving socket closed when it exited) before its command,
    // written earlier on its own connection, was read. They completed CONNECT; the command is theirs.
    QHash<QPair<QString, quint64>, qint64> m_recentlyLost; // -> when (now())
    bool mayCommand(const net::Inbound &in) const;
    qint64 m_lastCheckMs = -1;
    int m_shortestHeartbeatMs = 1 << 30; // of the processes admitted so far
    net::Endpoint m_standby;             // where our standby serves once it takes over (from its name)
    bool m_probingStandby = false;
};

} // namespace dialog::cs
