// One delivery thread of the Dispatcher: the subscribers it serves, their batches and their own
// queues (the ATLAS IS paper, section 2.5).
#pragma once

#include "dispatcher.h"

#include <QHash>
#include <QMutex>
#include <QString>
#include <QWaitCondition>
#include <atomic>
#include <memory>
#include <thread>
#include <vector>

namespace dialog::isd {

/// A worker thread of the Dispatcher. It owns the delivery state of its subscribers: it matches
/// each change against their criteria, batches the notifications per subscriber, sends them on the
/// subscriber's stream, keeps a slow subscriber's own bounded queue and drains it when the stream
/// has room again. The Dispatcher talks to it only by posting jobs.
class DeliveryWorker : public std::enable_shared_from_this<DeliveryWorker>
{
public:
    explicit DeliveryWorker(Dispatcher &owner);
    ~DeliveryWorker();

    /// Starts the thread (once, after the worker is owned by a shared_ptr).
    void start();
    /// Stops the thread after the jobs posted before, and joins it.
    void stop();

    /// Queues a batch of changes for the subscribers of this worker.
    void postNotes(const NoteBatch &notes);
    /// Adds @p s (counted at once, served from the thread).
    void postAdd(const SubscriberPtr &s);
    /// Removes @p s (uncounted from the thread).
    void postRemove(const SubscriberPtr &s);

    /// The subscribers assigned to this worker, including those whose job is not yet run.
    int count() const { return m_count.load(std::memory_order_relaxed); }
    /// Changes handed over and not yet placed.
    qint64 queuedNotes() const { return m_queuedNotes.load(std::memory_order_relaxed); }

private:
    struct Job
    {
        enum Kind
        {
            Notes,
            Add,
            Remove,
            Room,
            Stop
        } kind;
        NoteBatch notes;
        SubscriberPtr subscriber;
    };
    struct Match
    {
        QString type;
        std::vector<Subscriber *> subs;
    };

    void post(Job job);
    void run();
    void add(const SubscriberPtr &s);
    void removeBroken();
    void removeFrom(Subscriber *s);
    const std::vector<Subscriber *> &match(const Note &n);
    void process(const std::vector<Note> &notes);
    void flushSubscriber(Subscriber &s);
    void toBacklog(Subscriber &s, const QByteArray &records, int count);
    void drop(Subscriber &s, const QString &name);
    void sendSnapshot(Subscriber &s);
    void drain(Subscriber &s);
    /// Once caught up: the newest value of every object whose notifications were dropped, and the
    /// count. False when the stream had no room (retried when it has).
    bool sendCatchUp(Subscriber &s);
    void waitForRoom(Subscriber &s);
    void delivered(Subscriber &s, int records);

    Dispatcher &m_owner;
    const DispatcherOptions &m_options;
    QMutex m_lock;
    QWaitCondition m_wake;
    std::vector<Job> m_jobs; // under m_lock
    std::thread m_thread;
    std::atomic<int> m_count{0};
    std::atomic<qint64> m_queuedNotes{0};
    // Owned by the thread:
    std::vector<SubscriberPtr> m_subs;
    QHash<QString, Match> m_cache;
    std::vector<Subscriber *> m_dirty;
};

} // namespace dialog::isd
