#pragma once

#include "dialog/message.h"

#include <QObject>
#include <memory>

namespace dialog {

class Client;
class SubscriptionPrivate;

/// A subscription to one service (Client::subscribe) or a channel of a Stream (Client::attach).
/// Owned by its Client; delete it (or call Client::unsubscribe) to stop receiving. Lives in the
/// Client's thread: every function and signal belongs to that thread.
class Subscription : public QObject
{
    Q_OBJECT
public:
    /// Where the subscription stands (stateChanged() says when it changes).
    enum class State
    {
        Waiting,    ///< no process provides the service (yet); the request is queued by the Control Server
        Connecting, ///< the provider is known, the subscription was sent to it
        Active,     ///< messages are flowing
        Lost,       ///< the provider was lost (LOST_SENDER); waits for a replacement
    };
    Q_ENUM(State)

    ~Subscription() override;

    /// The subscribed service's name.
    QString service() const;
    /// Waiting, Connecting, Active or Lost.
    State state() const;
    /// Name of the providing process, empty while Waiting.
    QString provider() const;
    /// The last message received (a default Message until the first one).
    Message lastMessage() const;
    /// Messages received (and delivered) so far.
    quint64 receivedCount() const;
    /// Updates the provider published but this subscriber never saw (gaps in sequence numbers).
    quint64 lostCount() const;

Q_SIGNALS:
    /// Emitted in the Client's thread once per message received, in the provider's order; a value
    /// re-sent after a re-subscription is not emitted twice.
    void messageReceived(const dialog::Message &message);
    /// Emitted in the Client's thread each time state() changes (never twice with the same state).
    void stateChanged(dialog::Subscription::State state);

private:
    friend class Client;
    friend class ClientPrivate;
    friend class RequestTracker;
    Subscription(const QString &service, Client *client, bool attached);
    std::unique_ptr<SubscriptionPrivate> const d;
};

} // namespace dialog
