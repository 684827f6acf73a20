#pragma once

#include <QByteArray>
#include <QObject>
#include <memory>

namespace dialog {

class Client;
struct ServiceState;

/// A published service. update() is thread-safe and never waits on the network unless the
/// flow control is Block. Owned by its Client.
class Service : public QObject
{
    Q_OBJECT
public:
    /// What update() does when a subscriber's queue is full (the subscriber cannot keep up).
    enum class FlowControl
    {
        Drop,  ///< the update is not queued for that subscriber (counted in droppedCount()); once its
               ///< queue drains it is sent the latest value, so it always ends up current
        Block, ///< update() waits for room up to blockTimeoutMs(), then drops and counts
    };
    Q_ENUM(FlowControl)

    ~Service() override;

    /// The service's name, as given to Client::publish().
    QString name() const;
    /// Publishes new data to every subscriber (and keeps it for subscribers that come later).
    /// Returns false if at least one subscriber's queue was full and the update was dropped for it,
    /// or if @p data is larger than the maximum message size (then nothing is sent or kept).
    bool update(const QByteArray &data);
    /// The sequence number of the last update (0 before the first): subscribers see gaps in it as
    /// Subscription::lostCount().
    quint64 sequence() const;
    /// Processes subscribed at this moment.
    int subscriberCount() const;
    /// Updates not delivered to a subscriber because its queue was full (summed over subscribers).
    quint64 droppedCount() const;

    /// What update() does when a subscriber's queue is full (Drop by default).
    FlowControl flowControl() const;
    /// Drop: an update is not queued for a subscriber whose queue is full (it gets the latest value once it
    /// drained); Block: update() waits up to @p blockTimeoutMs for room, then drops and counts.
    void setFlowControl(FlowControl mode, int blockTimeoutMs = 1000);

Q_SIGNALS:
    /// Emitted in the Client's thread (queued from the server thread) each time a subscriber comes
    /// or goes; @p count is the number at that moment.
    void subscriberCountChanged(int count);
    /// Emitted at most once per 100 ms when updates were dropped for a slow subscriber, in the
    /// thread that called update() (directly: it may be any thread; connect with a context object
    /// to receive it in yours).
    void messagesDropped(quint64 totalDropped);

private:
    friend class Client;
    friend class ClientPrivate;
    Service(std::shared_ptr<ServiceState> state, Client *client);
    std::shared_ptr<ServiceState> const d;
};

} // namespace dialog
