#pragma once

#include "dialog/status.h"

#include <QString>
#include <QStringList>

class QCommandLineParser;

namespace dialog {

class OptionTable;

/// Settings of a DIALOG process. Defaults come from the environment
/// (DIALOG_CONTROL_SERVER=host:port[,host:port…]); command-line options override them.
struct ClientOptions
{
    QString name; ///< process name, unique in the DIALOG system
    QStringList controlServers{QStringLiteral("127.0.0.1:3425")}; ///< tried in order, then round
    /// The address other processes use to reach this one (--advertise, $DIALOG_ADVERTISE). Empty: the
    /// local address of the route to the Control Server (127.0.0.1 when it is on this host), which
    /// works where host names do not resolve across hosts.
    QString host;
    quint16 port = 0;                          ///< listening port, 0 = any free port
    int senderThreads = 2;                     ///< n in the DIALOG paper
    int readerThreads = 2;                     ///< m in the DIALOG paper
    qint64 maxQueueBytes = 8 * 1024 * 1024;    ///< bound of each per-destination queue
    qint64 maxPendingBytes = 32 * 1024 * 1024; ///< received data not yet delivered before reading pauses
    qint64 receiveBufferBytes = 0; ///< socket receive buffer of inbound connections (0: the system's)
    qint64 maxMessageSize = 64 * 1024 * 1024; ///< largest message accepted from the network
    /// Inbound connections from one address that may wait for their HELLO at once; past it the oldest
    /// of them is closed for the newcomer (never a lockout; its sender retries). Raise it where hundreds
    /// of processes of one host (a big node, NAT) start at once (--max-handshaking-per-address).
    int maxHandshakingPerAddress = 64;
    /// A message for a destination with nothing queued is written to its socket from the calling
    /// thread instead of waking a sender thread (one thread hand-off fewer per hop; bursts are still
    /// queued and written in chunks; never with TLS). --no-direct-writes or $DIALOG_DIRECT_WRITES=0
    /// turn it off.
    bool directWrites = true;
    /// Latency-sensitive processes (request/reply, command round trips): after receiving, the
    /// reader threads stay awake this many µs, polling, before they sleep (see the README's
    /// Performance section). 0 (default): they sleep at once. --receive-spin-us or
    /// $DIALOG_RECEIVE_SPIN_US.
    int receiveSpinUs = 0;
    int compressionThreshold =
        64 * 1024;             ///< data at least this large is zstd-compressed if it pays (0 = never)
    int idleTimeoutMs = 60000; ///< outgoing sockets close after this much silence
    /// Client::request() finds a provider through a hidden subscription to the service; it is kept
    /// this long after the last reply, so that periodic requests (an IS writer updating its object
    /// every second) do not subscribe and unsubscribe through the Control Server each time.
    /// 0: dropped with the last reply.
    int requestLocatorLingerMs = 30000;
    int heartbeatMs = 1000; ///< heartbeat interval towards the Control Server
    /// Control Server reconnection interval (0: the heartbeat interval): the first try after losing it
    /// comes within one interval, later ones back off to 8 intervals (at most 30 s), with jitter.
    int retryMs = 0;
    /// Exit the process (status 1, the reason on stderr) when the Control Server refuses a service
    /// name, as the DIALOG rule wants for daemons. Off by default: the library reports the refusal
    /// (Client::errorOccurred(ServiceRefused)) and the application decides; the daemons and the
    /// dialogctl tool turn it on.
    bool exitOnRefusal = false;
    /// For the Control Server's own watches of its peer (a standby's of its primary, a server's of
    /// the one it took over from): the fencing term this client speaks for, announced in every
    /// CONNECT together with fencingServer ("host:port", where the server of that term serves).
    /// 0 (every ordinary process): the highest term of a Control Server that accepted this client.
    quint64 fencingTerm = 0;
    QString fencingServer; ///< with fencingTerm: where the server of that term serves
    /// Shared secret of the partition (--secret-file, $DIALOG_SECRET_FILE; see dialog/security.h).
    /// Empty: no authentication.
    QString secretFile;
    /// The partition's identity secret, for a daemon that checks the proofs of names on its own
    /// connections (dialog-configdb --identity-file): Request::originProven() says whether a
    /// requester proved its name. Needs secretFile. Empty: names are claims.
    QString identityFile;
    ///@{
    /// TLS files (--tls-cert/--tls-key/--tls-ca, $DIALOG_TLS_CERT/_KEY/_CA). Empty: plain TCP.
    QString tlsCert, tlsKey, tlsCa;
    ///@}
    /// Listen beyond loopback without a shared secret (--insecure, $DIALOG_INSECURE=1). Without it
    /// the daemons told an address to listen on (dialog-controlserver --bind, dialog-isserver
    /// --mirror-listen) refuse one other than loopback when they have no secret, since whoever
    /// reaches the port would be believed. A Client's own port is warned of, not refused.
    bool insecure = false;

    /// Defaults plus DIALOG_CONTROL_SERVER, DIALOG_ADVERTISE, DIALOG_SECRET_FILE, DIALOG_TLS_*,
    /// DIALOG_INSECURE and DIALOG_DIRECT_WRITES.
    static ClientOptions fromEnvironment(const QString &name = QString());
    /// fromEnvironment() plus the options of addTo() found in @p arguments (app.arguments(): the first,
    /// the program, is skipped), each checked as the option table checks it. A bad value keeps its
    /// default and is logged in dialog.client ("invalid --heartbeat-ms '5' (out of range 10..3600000
    /// milliseconds)"). Other arguments are ignored; programs with options of their own use addTo().
    static ClientOptions fromArguments(const QStringList &arguments, const QString &name = QString());
    /// Adds the common options (--control-server, --heartbeat-ms, --retry-ms, --sender-threads,
    /// --reader-threads, --queue-bytes, --pending-bytes, --receive-buffer-bytes,
    /// --max-handshaking-per-address, --no-direct-writes,
    /// --advertise, --dialog-port, --secret-file, --tls-cert, --tls-key, --tls-ca) to a parser.
    static void addParserOptions(QCommandLineParser &parser);
    /// Adds --secret-file, --tls-cert, --tls-key and --tls-ca alone (part of addParserOptions(),
    /// for programs that take no other client option, such as dialog-controlserver).
    static void addSecurityParserOptions(QCommandLineParser &parser);
    /// Applies the options added by addParserOptions(); errors as Option::apply(): BadRequest on a bad value, its
    /// message naming the option and the allowed range ("invalid --heartbeat-ms '5' (out of range
    /// 10..3600000 milliseconds)").
    Status applyParser(const QCommandLineParser &parser);
    /// Adds the options of addParserOptions() to @p table as rows that write to this object when
    /// the table parses (this object must outlive the parse; set the defaults, for example
    /// fromEnvironment(), before).
    void addTo(OptionTable &table);
    /// Adds the options of addSecurityParserOptions() to @p table, as addTo() does.
    void addSecurityTo(OptionTable &table);
};

} // namespace dialog
