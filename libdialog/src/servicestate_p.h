// Provider-side state of one published service, shared by the publishing thread (update) and
// the server thread (subscribers come and go).
#pragma once

#include "transport_p.h"

#include "dialog/service.h"

#include <QMutex>
#include <QPointer>
#include <QHash>
#include <QSet>
#include <atomic>

namespace dialog {

struct Subscriber
{
    net::OutboxPtr box;
    QString name;
    quint64 incarnation = 0;
    /// The token of its SUBSCRIBE_SERVICE (empty: it sent none): echoed to it, as a SERVICE_MESSAGE
    /// of sequence 0, on the connection its data goes by, when it is added.
    QByteArray token;
};

struct ServiceState : std::enable_shared_from_this<ServiceState>
{
    QString name;
    QByteArray key; // UTF-8 name, as on the wire
    net::Transport *transport = nullptr;
    int compressionThreshold = 0;
    qint64 maxMessageSize = wire_format::DefaultMaxMessageSize;

    QMutex updateLock;   // serializes update(): sequence order == queue order
    mutable QMutex lock; // protects the members below; never held while waiting for room
    QList<Subscriber> subscribers; // replaced as a whole, never changed in place (replaceSubscribers)
    QByteArray lastData; // prepared (possibly compressed)
    quint8 lastFlags = 0;
    quint64 sequence = 0;
    /// A value published in pages (publishPages): the pages before the last one, which is
    /// lastData / lastFlags / sequence. Empty for a value of one message.
    struct Page
    {
        QByteArray data;
        quint8 flags = 0;
        quint64 sequence = 0;
    };
    QList<Page> leadingPages;
    /// Per subscriber that fell behind on a paged value: the sequence of the first page it was not
    /// given (its catch-up resumes there, so a value larger than its queue still gets through).
    QHash<const net::Outbox *, quint64> resumeAt;
    bool hasValue = false;

    /// Updates at or above compressionThreshold still to be sent without trying to compress them
    /// (prepare()): set to IncompressibleSkip by one that did not compress.
    std::atomic<int> skipCompression{0};
    static constexpr int IncompressibleSkip = 15;
    /// The data as sent (compressed when it is at least compressionThreshold and compresses), and
    /// its flags.
    QByteArray prepare(const QByteArray &data, quint8 &flags);

    std::atomic<int> flowControl{int(Service::FlowControl::Drop)};
    std::atomic<int> blockTimeoutMs{1000};
    std::atomic<quint64> dropped{0};
    std::atomic<qint64> lastDropSignalMs{0};
    QPointer<Service> handle;
    QSet<const net::Outbox *> behind; // subscribers waiting for a catch-up (guarded by lock)

    /// Publishes @p data to every subscriber (compressed above compressionThreshold) and keeps it
    /// as the current value: the one path of Service::update and of the Control Server's services.
    /// Waits for room as flowControl says. False if it was dropped for at least one subscriber
    /// (counted in dropped; that subscriber gets the latest value once it has room).
    bool publish(const QByteArray &data);
    /// Publishes one value as several messages (pages), each with its own sequence number, sent
    /// in order. A subscriber that cannot take one page gets none of the rest now and the whole
    /// current value (every page) once it has room; a new subscriber gets every page. @p pages
    /// must not be empty.
    bool publishPages(const QList<QByteArray> &pages);
    /// Queues one update for one subscriber. Called with no lock or with `lock` held (blockMs 0).
    bool sendTo(const Subscriber &s, quint64 seq, quint8 flags, const QByteArray &data, int blockMs);
    /// Queues the current value (every page of it, from where it was left) for one subscriber;
    /// called with `lock` held.
    bool sendCurrent(const Subscriber &s);
    /// The bytes the next catch-up of @p box must queue at once; called with `lock` held.
    qint64 nextCatchUpBytes(const net::Outbox *box) const;
    /// Adds (or replaces, same endpoint) a subscriber and sends it its token (when it sent one: the
    /// acknowledgement that binds the subscription to this connection at the subscriber) and then
    /// the current value.
    void addSubscriber(const Subscriber &s);
    /// Records that an update was dropped for @p s: once its queue drains, the latest value is sent
    /// to it, so a subscriber that fell behind always ends up with the current value.
    void markBehind(const Subscriber &s);
    /// Removes subscribers at @p endpoint (with @p incarnation if non-zero). Returns how many.
    int removeSubscribers(const net::Endpoint &endpoint, quint64 incarnation = 0);
    /// Called with lock held.
    void replaceSubscribers(QList<Subscriber> &&next);
};
using ServiceStatePtr = std::shared_ptr<ServiceState>;

} // namespace dialog
