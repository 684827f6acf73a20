#pragma once

#include "dialog/clientoptions.h"
#include "dialog/message.h"
#include "dialog/request.h"
#include "dialog/service.h"
#include "dialog/status.h"
#include "dialog/stream.h"
#include "dialog/subscription.h"

#include <QObject>
#include <functional>
#include <memory>

namespace dialog {

class ClientPrivate;

/// All of DIALOG for one process: connection to the Control Server, services published and
/// subscribed, commands registered and sent. Live in the thread that will receive the messages:
/// every signal of the Client and of its Subscription and Service objects is emitted in that
/// thread (the Client's thread), unless its comment says otherwise.
///
///     dialog::Client dialog(dialog::ClientOptions::fromArguments(app.arguments(), "Readout1"));
///     dialog.publish(QStringLiteral("Readout1/State"))->update("Running");
///
/// The connection starts when the event loop runs (or at start()); registration and subscriptions
/// made before are sent then, and again after every reconnection.
class Client : public QObject
{
    Q_OBJECT
public:
    /// The Client's connection to the Control Server (stateChanged() says when it changes).
    enum class State
    {
        Unconnected, ///< not (yet, or no longer) connected to a Control Server
        Connecting,  ///< CONNECT sent, waiting for SUCCESSFULLY_CONNECTED
        Connected,   ///< registered with the Control Server
    };
    Q_ENUM(State)
    /// The library's one table of errors. A Client reports ListenFailed, InvalidAddress,
    /// ServiceRefused, ProtocolError, InvalidName and MessageTooLarge.
    using Error = Status::Code;

    /// @p options come from ClientOptions::fromEnvironment(), fromArguments() or a parser
    /// (ClientOptions::addParserOptions()); the Client reads no arguments by itself.
    explicit Client(const ClientOptions &options, QObject *parent = nullptr);
    ~Client() override;

    /// Opens the receiving socket and connects; also done automatically when the event loop runs.
    bool start();
    /// The process name (ClientOptions::name, or "APPLICATION-PID").
    QString name() const;
    /// The options the Client was made with.
    const ClientOptions &options() const;
    /// Listening port (valid after start()).
    quint16 port() const;
    /// Unconnected, Connecting or Connected.
    State state() const;
    /// The fencing term of the Control Server that accepted this client last (docs/controlserver.md:
    /// a standby that takes over serves with a higher term than the server it replaced); 0 before
    /// the first connection. Thread-safe.
    quint64 controlServerTerm() const;
    /// The last error (Status::Code::Ok when none).
    Error error() const;
    /// The detail of error().
    QString errorString() const;

    /// Declares a service (unique in the system). Returns the existing handle if already published here,
    /// nullptr (and errorOccurred(InvalidName)) for an empty name or one over 1024 bytes.
    Service *publish(const QString &name);
    /// The handle of the service @p name published here; nullptr when it is not.
    Service *service(const QString &name) const;
    /// Withdraws the service @p name (the Control Server is told it is no longer provided here) and
    /// deletes its handle.
    void unpublish(const QString &name);

    /// Subscribes to a service; messages arrive as Subscription::messageReceived in this thread.
    /// nullptr (and errorOccurred(InvalidName)) for an invalid name.
    Subscription *subscribe(const QString &name);
    /// Same, delivering each message to @p callback (called in this thread while @p context lives).
    template <typename Callback>
    Subscription *subscribe(const QString &name, const QObject *context, Callback &&callback)
    {
        Subscription *s = subscribe(name);
        if (s)
            connect(s, &Subscription::messageReceived, context, std::forward<Callback>(callback));
        return s;
    }
    /// Direct delivery, for latency-sensitive subscribers: subscribes as subscribe() does, but each
    /// message is passed to @p handler in the reader thread that decoded it, as soon as it is
    /// decoded, instead of being emitted as Subscription::messageReceived in the Client's thread (one
    /// thread hand-off fewer). The handler must be thread-safe and short: that reader thread reads
    /// nothing else meanwhile. It may call Service::update() and sendCommand(). Messages of a
    /// provider come in its order, one call at a time; a value re-sent after a re-subscription is
    /// not passed twice. The Subscription reports its state as usual (Active from the first
    /// message) but keeps no count and no last message. Other Subscriptions of the same service
    /// in this process still receive its messages in the Client's thread. Deleting the
    /// Subscription waits for a call of the handler in progress; no call follows.
    Subscription *subscribeDirect(const QString &name, std::function<void(const dialog::Message &)> handler);
    /// Ends @p subscription and deletes it (the same as deleting it).
    void unsubscribe(Subscription *subscription);

    /// Accepts commands of this name (any number of processes may register the same name).
    /// An invalid name is refused with errorOccurred(InvalidName).
    void registerCommand(const QString &name);
    /// Direct delivery, for latency-sensitive commands: registers @p name as registerCommand()
    /// does, and each command of that name is passed to @p handler in the reader thread that
    /// decoded it (in the order the Control Server relayed them, one call at a time) instead of
    /// being emitted as commandReceived(). The handler must be thread-safe and short; it may call
    /// Service::update() and sendCommand().
    void registerCommandDirect(const QString &name, std::function<void(const dialog::Command &)> handler);
    /// Also removes the direct handlers of @p name (waiting for a call in progress).
    void unregisterCommand(const QString &name);
    /// Sends a command to every registrant via the Control Server. False when not connected, for an
    /// invalid name or for data over the maximum message size. When the partition's access list
    /// refuses it, the Control Server does not relay it and says so: errorOccurred(PermissionDenied)
    /// follows (errorString() names the command and the rule). Thread-safe once started (failures
    /// are reported in the Client's thread).
    bool sendCommand(const QString &name, const QByteArray &data = QByteArray());

    /// Sends @p data to the process providing @p service (found as a subscription finds it, so the
    /// provider may start later) and calls @p callback (in this thread, while @p context lives) with
    /// the Reply exactly once, unless the request is cancelled first: the answer, or Timeout after
    /// @p timeoutMs, or ProviderLost, or (called from the event loop, never from within request())
    /// InvalidName, MessageTooLarge or NotConnected, or QueueFull when the queue to the provider
    /// (ClientOptions::maxQueueBytes) could not take the request. The provider is located through a hidden
    /// subscription that lasts only while requests for @p service are pending.
    /// The handle cancels the request (PendingReply::cancel()).
    PendingReply request(const QString &service, const QByteArray &data, int timeoutMs,
                         const QObject *context, std::function<void(const dialog::Reply &)> callback);
    /// Cancels request @p id (as PendingReply::cancel()); false if it is no longer pending.
    bool cancelRequest(quint64 id);
    /// True while request @p id waits for its reply.
    bool isRequestPending(quint64 id) const;
    /// The process known to provide @p service (one this process subscribed to or sent requests
    /// to), empty if none is known (yet).
    QString providerOf(const QString &service) const;
    /// Direct delivery, for latency-sensitive providers: each request for @p service is passed to
    /// @p handler in the reader thread that decoded it, as soon as it is decoded, instead of being
    /// emitted as requestReceived() in the Client's thread (one thread hand-off fewer). The handler
    /// must be thread-safe and short (that reader thread reads nothing else meanwhile); it answers
    /// with reply() or replyError(), which may be called from any thread, there or later. Requests
    /// of one requester come in its order, one call at a time. The service should be one this
    /// process publishes (requests are delivered to the handler either way). Replaces an earlier
    /// handler of @p service; an empty one removes it, waiting for a call in progress.
    void setRequestHandlerDirect(const QString &service, std::function<void(const dialog::Request &)> handler);
    /// Answers a request received through requestReceived() or a direct handler. Thread-safe. False
    /// if it could not be queued.
    bool reply(const Request &request, const QByteArray &data);
    /// Answers @p request with the error text @p error (the requester's Reply::status() is Failed).
    /// Thread-safe. False if it could not be queued.
    bool replyError(const Request &request, const QString &error);

    /// Opens a Stream to the process that sent @p from, which receives its messages through
    /// attach(@p channel). nullptr for an invalid channel name or a request without origin.
    StreamPtr openStream(const Request &from, const QString &channel);
    /// Receives the messages other processes send to this one on @p channel through a Stream
    /// (no Control Server registration: the channel name is private to the two processes; pick
    /// one that is unique, e.g. with the process name in it). nullptr for an invalid name.
    Subscription *attach(const QString &channel);

    /// Waits (blocking, for command-line tools) until everything queued was written, up to @p timeoutMs.
    bool flush(int timeoutMs = 5000);

    /// True for a name DIALOG accepts: not empty, at most 1024 bytes in UTF-8.
    static bool isValidName(const QString &name);

    /// Communication figures of this process since it started, summed over its connections
    /// (frames of every kind, control frames included). They are also sent with every heartbeat,
    /// and the Control Server publishes those of all processes as the service DIALOG.Statistics.
    struct Statistics
    {
        ///@{
        /// Frames sent, their bytes, and messages dropped for destinations whose queue was full.
        quint64 messagesOut = 0, bytesOut = 0, dropped = 0;
        ///@}
        quint64 reconnects = 0; ///< connections opened again to a destination (after a failure or idle close)
        ///@{
        /// Frames received, their bytes, and frames refused as malformed (each closes its connection).
        quint64 messagesIn = 0, bytesIn = 0, protocolErrors = 0;
        ///@}
        qint64 queuedBytes = 0; ///< handed to DIALOG, not yet written to the sockets
        ///@{
        /// Open connections: to other processes (each carries one direction only), and from them.
        int outgoingConnections = 0, incomingConnections = 0;
        ///@}
        /// Connections refused, or given up, for a failed authentication (shared secret) or TLS
        /// handshake, both ways. Not sent with the heartbeats.
        quint64 authFailures = 0;
    };
    /// The figures at this moment (thread-safe).
    Statistics statistics() const;

Q_SIGNALS:
    /// Emitted in the Client's thread each time state() changes (never twice with the same state);
    /// error() is already set when a failure caused the change.
    void stateChanged(dialog::Client::State state);
    /// Emitted in the Client's thread once per connection to a Control Server (after stateChanged
    /// (Connected); again after every reconnection).
    void connected();
    /// Emitted in the Client's thread once per failure, after error() and errorString() were set
    /// (and, for ListenFailed and InvalidAddress, after the state became Unconnected for good).
    void errorOccurred(dialog::Status::Code error);
    /// Emitted in the Client's thread once per command received for a registered name, in the
    /// order the Control Server relayed them.
    void commandReceived(const dialog::Command &command);
    /// Emitted in the Client's thread once per request received for a service this process
    /// publishes. Connect to this signal to accept requests; without a connection, requesters get
    /// Status::Code::NotAccepted.
    void requestReceived(const dialog::Request &request);

private:
    friend class ClientPrivate;
    friend class RequestTracker;
    friend class Subscription;
    std::unique_ptr<ClientPrivate> const d;
};

} // namespace dialog
