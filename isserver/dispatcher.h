// Delivery of IS notifications to subscribers (the ATLAS IS paper, section 2.5).
#pragma once

#include "dialog/is/criteria.h"
#include "dialog/is/repository.h"
#include "dialog/stream.h"

#include <QByteArray>
#include <QElapsedTimer>
#include <QHash>
#include <QMutex>
#include <QObject>
#include <QString>
#include <QStringList>
#include <QThread>
#include <QWaitCondition>
#include <atomic>
#include <deque>
#include <memory>
#include <vector>

namespace dialog::isd {

/// One change, encoded once for every subscriber: the record with and without the value.
struct Note
{
    QString name; // object name (criteria match on it)
    QString type;
    QByteArray full;
    QByteArray bare;
};
using NoteBatch = std::shared_ptr<const std::vector<Note>>;

/// A subscription: its criteria, its stream and its delivery state. The delivery state belongs to
/// the subscriber's worker thread; counters are atomics read by the statistics.
struct Subscriber
{
    QString key; // origin + channel
    QString origin, channel;
    StreamPtr stream;
    is::Criteria criteria;
    bool withValues = true;
    /// Subscribed with a snapshot: these objects (the matching content when the subscription was
    /// made) are sent first, framed by SnapshotBegin/End records, before any change.
    bool snapshot = false;
    QList<is::StoredObject> snapshotObjects;
    /// Set by an archiver (dialog-archiver): the service answering HISTORY from its archive.
    QString archiveService;

    std::atomic<quint64> delivered{0}, dropped{0};
    std::atomic<int> priority{0};

    // Worker-thread state.
    struct Chunk
    {
        QByteArray data;
        int records = 0;
    };
    QByteArray pending; // records waiting for the end of the current batch
    int pendingRecords = 0;
    std::deque<Chunk> backlog; // the subscriber's own queue (used when it is slow)
    /// History records (one per matching object) sent first, before the snapshot and any change.
    std::vector<Chunk> history;
    qint64 backlogRecords = 0, backlogBytes = 0;
    QSet<QString> stale;      // objects with dropped notifications: their newest value is re-sent
    quint64 unreported = 0;   // drops not yet told to the subscriber
    bool waitingRoom = false; // a whenRoom() callback is registered
    bool dirty = false;
    bool removed = false;
    bool behind = false; // counted in Dispatcher::m_behind
    /// Read by the pacing: behind, and when it last took a notification (or fell behind), in ms of
    /// Dispatcher's clock.
    std::atomic<bool> lagging{false};
    std::atomic<qint64> progressMs{0};
};
using SubscriberPtr = std::shared_ptr<Subscriber>;

struct DispatcherOptions
{
    int workers = 2;               ///< delivery threads; also the maximum priority of a subscriber
    int queueRecords = 10000;      ///< bound of a slow subscriber's own queue, in notifications
    qint64 queueBytes = 4 << 20;   ///< and in bytes
    qint64 maxMessage = 256 << 10; ///< a stream message is sent once this many bytes are batched
    /// Notifications waiting in a subscriber's own queue are joined into messages of up to this
    /// many bytes: small enough that the subscriptions sharing a process's queue take turns.
    qint64 backlogChunk = 32 << 10;
    /// Messages of a subscriber's own queue sent at a time, before the others' turn.
    int drainTurn = 2;
    /// Pacing: a subscriber is behind while more than 1/paceFraction of its own queue bound waits
    /// and it took a notification in the last pacingStallMs. While the processes with a subscriber
    /// behind (at least two of them) hold at least 1/paceShare of the subscribers that are not slow,
    /// flush() waits.
    int paceFraction = 8;
    int paceShare = 4;
    int pacingStallMs = 3000;
    /// A few processes behind (too few to pace by the rule above) still hold the updates, each for
    /// at most slowGraceMs in every slowWindowMs: a healthy subscriber that lost the CPU for a moment
    /// catches up instead of being dropped for, and one too slow for the update rate costs the
    /// others at most that share of their time.
    int slowGraceMs = 500;
    int slowWindowMs = 30000;
    /// And while a worker has more than queueRecords / paceFraction changes, or more than this many
    /// notifications (changes x its subscribers), to place.
    qint64 maxQueuedDeliveries = 1 << 20;
    /// Changes are handed to the workers at least every 1,024 changes, and once the bytes of the
    /// changes times the subscribers reach this.
    qint64 maxBatchBytes = 8 << 20;
};

class DeliveryWorker;

/// The fan-out of an IS server's changes: encodes each change once, hands batches of them to the
/// DeliveryWorker threads that serve the subscribers, and paces the writers while many subscribers
/// are behind.
class Dispatcher
{
public:
    Dispatcher(const is::Repository &repository, const DispatcherOptions &options);
    ~Dispatcher();

    /// Encodes a change and queues it for delivery (call from one thread, in change order).
    void publish(const is::Change &change);
    /// Hands the changes published so far to the workers. Waits while many subscribers are behind
    /// (see DispatcherOptions::paceFraction): the update rate is paced by the subscribers that keep
    /// up, and a few slow or hung ones are left behind, their newest notifications dropped.
    void flush();
    bool hasPending() const { return !m_batch.empty(); }

    /// Adds (or replaces, same key) a subscriber.
    void addSubscriber(const SubscriberPtr &s);
    bool removeSubscriber(const QString &key);
    /// Subscribers whose stream broke (the process is gone) are removed by the workers.
    std::vector<SubscriberPtr> subscribers() const;

    quint64 deliveries() const { return m_deliveries.load(std::memory_order_relaxed); }
    quint64 drops() const { return m_drops.load(std::memory_order_relaxed); }
    const DispatcherOptions &options() const { return m_options; }

private:
    friend class DeliveryWorker;

    /// Drops @p s from the subscribers (its stream broke), unless it was replaced or removed.
    void forget(const SubscriberPtr &s);
    /// Updates the behind count and flag after a change of @p s's queue or priority.
    void account(Subscriber &s);
    /// Whether flush() waits; @p graced is set to the few processes behind it waits for, if any.
    bool congested(QStringList *graced);
    void pace();

    const is::Repository &m_repository;
    DispatcherOptions m_options;
    // Stream::whenRoom() calls back in this object's thread: its own, as the thread calling flush()
    // may be waiting for the subscribers to take their notifications.
    QThread m_roomThread;
    QObject *m_roomContext = nullptr;
    std::vector<std::shared_ptr<DeliveryWorker>> m_workers;
    std::vector<Note> m_batch;
    qint64 m_batchBytes = 0;
    mutable QMutex m_subsLock;
    QHash<QString, std::pair<SubscriberPtr, int>> m_subs; // key -> subscriber, worker
    std::atomic<quint64> m_deliveries{0}, m_drops{0};
    std::atomic<int> m_subscriberCount{0};
    std::atomic<int> m_behind{0};
    QElapsedTimer m_clock;
    QMutex m_paceLock;
    QWaitCondition m_paceWake;
    /// Under m_paceLock: the grace each subscriber process used in its current window.
    struct Grace
    {
        qint64 windowStartMs = 0;
        qint64 usedMs = 0;
    };
    QHash<QString, Grace> m_grace;
};

} // namespace dialog::isd
