#pragma once

#include "dialog/message.h"

#include <QObject>

namespace dialog {

class Client;

/// A subscription to one service. Messages are delivered in the thread of the Client.
/// Owned by its Client; delete it (or call Client::unsubscribe) to stop receiving.
class Subscription : public QObject
{
    Q_OBJECT
public:
    enum class State
    {
        Waiting,    ///< no process provides the service (yet); the request is queued by the Control Server
        Connecting, ///< the provider is known, the subscription was sent to it
        Active,     ///< messages are flowing
        Lost,       ///< the provider was lost (LOST_SENDER); waits for a replacement
    };
    Q_ENUM(State)

    ~Subscription() override;

    QString service() const { return m_service; }
    State state() const { return m_state; }
    /// Name of the providing process, empty while Waiting.
    QString provider() const { return m_provider; }
    /// The last message received (invalid until the first one).
    Message lastMessage() const { return m_last; }
    quint64 receivedCount() const { return m_received; }
    /// Updates the provider published but this subscriber never saw (gaps in sequence numbers).
    quint64 lostCount() const { return m_lost; }

Q_SIGNALS:
    /// Emitted for every message, in order, in the Client's thread.
    void messageReceived(const dialog::Message &message);
    void stateChanged(dialog::Subscription::State state);

private:
    friend class Client;
    friend class ClientPrivate;
    Subscription(const QString &service, Client *client);
    void setState(State s, const QString &provider);
    void deliver(const Message &m, quint64 providerIncarnation);

    Client *m_client;
    QString m_service;
    QString m_provider;
    State m_state = State::Waiting;
    Message m_last;
    quint64 m_incarnation = 0;
    quint64 m_lastSequence = 0;
    quint64 m_received = 0;
    quint64 m_lost = 0;
    bool m_attached = false; // a channel of a Stream (Client::attach): no Control Server request
};

} // namespace dialog
