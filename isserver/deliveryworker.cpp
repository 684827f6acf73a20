#include "deliveryworker.h"

#include "dialog/handoff.h"
#include "dialog/is/codec.h"
#include "dialog/is/protocol.h"

namespace dialog::isd {

using is::protocol::appendRecord;

DeliveryWorker::DeliveryWorker(Dispatcher &owner) : m_owner(owner), m_options(owner.m_options) {}

DeliveryWorker::~DeliveryWorker() = default;

void DeliveryWorker::start()
{
    m_thread = std::thread([this] { run(); });
}

void DeliveryWorker::stop()
{
    post(Job{Job::Stop, {}, {}});
    m_thread.join();
}

void DeliveryWorker::postNotes(const NoteBatch &notes)
{
    m_queuedNotes.fetch_add(qint64(notes->size()), std::memory_order_relaxed);
    post(Job{Job::Notes, notes, {}});
}

void DeliveryWorker::postAdd(const SubscriberPtr &s)
{
    m_count.fetch_add(1);
    post(Job{Job::Add, {}, s});
}

void DeliveryWorker::postRemove(const SubscriberPtr &s)
{
    post(Job{Job::Remove, {}, s});
}

void DeliveryWorker::post(Job job)
{
    QMutexLocker l(&m_lock);
    const bool wasEmpty = m_jobs.empty();
    m_jobs.push_back(std::move(job));
    if (wasEmpty)
        m_wake.wakeOne();
}

void DeliveryWorker::run()
{
    std::vector<Job> jobs;
    for (;;) {
        {
            QMutexLocker l(&m_lock);
            while (m_jobs.empty())
                handoff::waitOn(m_wake, m_lock);
            jobs.swap(m_jobs);
        }
        for (Job &j : jobs) {
            switch (j.kind) {
            case Job::Stop:
                return;
            case Job::Notes:
                process(*j.notes);
                m_queuedNotes.fetch_sub(qint64(j.notes->size()), std::memory_order_relaxed);
                m_owner.m_paceWake.wakeAll();
                break;
            case Job::Add:
                add(j.subscriber);
                break;
            case Job::Remove:
                removeFrom(j.subscriber.get());
                break;
            case Job::Room:
                if (!j.subscriber->removed) {
                    j.subscriber->waitingRoom = false;
                    drain(*j.subscriber);
                }
                break;
            }
        }
        jobs.clear();
        removeBroken();
    }
}

void DeliveryWorker::add(const SubscriberPtr &s)
{
    m_subs.push_back(s);
    m_cache.clear();
    if (!s->history.empty()) {
        // To its own queue whole, beyond its bound, like a snapshot (bounded by the ring).
        for (Subscriber::Chunk &c : std::exchange(s->history, {})) {
            s->backlogRecords += c.records;
            s->backlogBytes += c.data.size();
            s->backlog.push_back(std::move(c));
        }
        if (!s->snapshot)
            drain(*s);
    }
    if (s->snapshot)
        sendSnapshot(*s);
}

void DeliveryWorker::removeBroken()
{
    // Subscribers whose process is gone.
    std::vector<SubscriberPtr> broken;
    for (const SubscriberPtr &s : m_subs)
        if (s->stream->isBroken())
            broken.push_back(s);
    for (const SubscriberPtr &s : broken) {
        m_owner.forget(s);
        removeFrom(s.get());
    }
}

void DeliveryWorker::removeFrom(Subscriber *s)
{
    s->removed = true;
    m_owner.account(*s);
    for (auto it = m_subs.begin(); it != m_subs.end(); ++it) {
        if (it->get() == s) {
            m_subs.erase(it);
            m_count.fetch_sub(1);
            break;
        }
    }
    m_cache.clear();
}

const std::vector<Subscriber *> &DeliveryWorker::match(const Note &n)
{
    auto it = m_cache.find(n.name);
    if (it != m_cache.end() && it->type == n.type)
        return it->subs;
    Match m;
    m.type = n.type;
    for (const auto &s : m_subs)
        if (!s->removed && s->criteria.matches(n.name, n.type, m_owner.m_repository.registry()))
            m.subs.push_back(s.get());
    if (m_cache.size() > 200000)
        m_cache.clear(); // bound the cache (many short-lived object names)
    return m_cache.insert(n.name, std::move(m))->subs;
}

void DeliveryWorker::process(const std::vector<Note> &notes)
{
    for (const Note &n : notes) {
        for (Subscriber *s : match(n)) {
            const QByteArray &rec = s->withValues ? n.full : n.bare;
            if (s->priority.load(std::memory_order_relaxed) == 0) {
                // Slow: straight to its own queue (or dropped), no transport work.
                if (s->backlogRecords >= m_options.queueRecords ||
                    s->backlogBytes + rec.size() > m_options.queueBytes)
                    drop(*s, n.name);
                else
                    toBacklog(*s, rec, 1);
                continue;
            }
            if (s->pendingRecords == 0)
                s->pending = rec; // shared, not copied: a lone notification goes out as encoded
            else
                s->pending.append(rec);
            ++s->pendingRecords;
            if (!s->dirty) {
                s->dirty = true;
                m_dirty.push_back(s);
            }
            if (s->pending.size() >= m_options.maxMessage)
                flushSubscriber(*s);
        }
    }
    for (Subscriber *s : m_dirty) {
        s->dirty = false;
        if (!s->removed)
            flushSubscriber(*s);
    }
    m_dirty.clear();
}

void DeliveryWorker::delivered(Subscriber &s, int records)
{
    s.delivered.fetch_add(quint64(records), std::memory_order_relaxed);
    m_owner.m_deliveries.fetch_add(quint64(records), std::memory_order_relaxed);
}

void DeliveryWorker::drop(Subscriber &s, const QString &name)
{
    s.dropped.fetch_add(1, std::memory_order_relaxed);
    m_owner.m_drops.fetch_add(1, std::memory_order_relaxed);
    ++s.unreported;
    s.stale.insert(name);
    // Its own queue is full: slow. Its notifications now bypass the transport until it caught up.
    s.priority.store(0, std::memory_order_relaxed);
    m_owner.account(s);
}

void DeliveryWorker::sendSnapshot(Subscriber &s)
{
    // The snapshot goes to the subscriber's own queue whole, beyond its bound: it is the content of
    // the repository, bounded by it, and a receiver needs all of it to hold an exact copy. Changes
    // queue behind it (and are dropped and re-sent newest-only if the subscriber is slow).
    const QList<is::StoredObject> objects = std::exchange(s.snapshotObjects, {});
    QByteArray chunk;
    int records = 0;
    appendRecord(chunk, is::protocol::SnapshotBegin, {}, {}, is::Time::currentTime().microsecondsSinceEpoch(),
                 {});
    ++records;
    for (const is::StoredObject &o : objects) {
        appendRecord(chunk, is::protocol::Created, o.name.toUtf8(), o.object.typeName().toUtf8(),
                     o.time.microsecondsSinceEpoch(), s.withValues ? is::encode(o.object) : QByteArray());
        ++records;
        if (chunk.size() >= m_options.maxMessage) {
            s.backlog.push_back({std::exchange(chunk, QByteArray()), std::exchange(records, 0)});
            s.backlogRecords += s.backlog.back().records;
            s.backlogBytes += s.backlog.back().data.size();
        }
    }
    appendRecord(chunk, is::protocol::SnapshotEnd, {}, {}, is::Time::currentTime().microsecondsSinceEpoch(),
                 {});
    s.backlog.push_back({chunk, records + 1});
    s.backlogRecords += records + 1;
    s.backlogBytes += chunk.size();
    drain(s);
}

void DeliveryWorker::toBacklog(Subscriber &s, const QByteArray &records, int count)
{
    if (!s.backlog.empty() && s.backlog.back().data.size() + records.size() <= m_options.backlogChunk) {
        s.backlog.back().data.append(records);
        s.backlog.back().records += count;
    } else {
        s.backlog.push_back({records, count});
    }
    s.backlogRecords += count;
    s.backlogBytes += records.size();
    m_owner.account(s);
}

void DeliveryWorker::flushSubscriber(Subscriber &s)
{
    if (s.pendingRecords == 0)
        return;
    const QByteArray data = std::exchange(s.pending, QByteArray());
    const int count = std::exchange(s.pendingRecords, 0);
    if (s.backlog.empty() && s.priority.load(std::memory_order_relaxed) > 0) {
        switch (s.stream->send(data)) {
        case Status::Code::Ok: {
            delivered(s, count);
            const int p = s.priority.load(std::memory_order_relaxed);
            if (p < m_options.workers)
                s.priority.store(p + 1, std::memory_order_relaxed);
            return;
        }
        case Status::Code::Broken:
            return; // removed after this round of jobs
        case Status::Code::QueueFull:
        default: // send() answers Ok, QueueFull or Broken only; anything else is kept, as here
            // Behind, not yet slow: its own queue takes the rest (and counts towards pacing).
            break;
        }
    }
    // Keep the order: behind what is already queued, within the bound of the subscriber's queue.
    if (s.backlogRecords + count <= m_options.queueRecords &&
        s.backlogBytes + data.size() <= m_options.queueBytes) {
        toBacklog(s, data, count);
    } else {
        qsizetype pos = 0;
        is::protocol::RecordView r;
        while (pos < data.size() && is::protocol::nextRecord(data, pos, r).isOk()) {
            const qsizetype start = r.nameOffset - 3;
            const qsizetype len = pos - start;
            if (s.backlogRecords < m_options.queueRecords && s.backlogBytes + len <= m_options.queueBytes)
                toBacklog(s, data.mid(start, len), 1);
            else
                drop(s, QString::fromUtf8(data.constData() + r.nameOffset, r.nameLength));
        }
    }
    m_owner.account(s);
    waitForRoom(s);
}

void DeliveryWorker::waitForRoom(Subscriber &s)
{
    if (s.waitingRoom)
        return;
    s.waitingRoom = true;
    SubscriberPtr self;
    for (const auto &sp : m_subs)
        if (sp.get() == &s)
            self = sp;
    if (!self)
        return;
    std::weak_ptr<DeliveryWorker> weakWorker = weak_from_this();
    std::weak_ptr<Subscriber> weakSub = self;
    s.stream->whenRoom(m_owner.m_roomContext, [weakWorker, weakSub] {
        const auto worker = weakWorker.lock();
        const auto sub = weakSub.lock();
        if (worker && sub)
            worker->post(Job{Job::Room, {}, sub});
    });
}

void DeliveryWorker::drain(Subscriber &s)
{
    int turn = 0;
    while (!s.backlog.empty()) {
        if (turn++ == m_options.drainTurn) {
            // Its turn is over: the subscriptions that share its process's queue take theirs first
            // (whenRoom() calls back in the order asked).
            waitForRoom(s);
            return;
        }
        Subscriber::Chunk &c = s.backlog.front();
        const Status::Code r = s.stream->send(c.data);
        if (r == Status::Code::Broken)
            return;
        if (r == Status::Code::QueueFull) {
            m_owner.account(s);
            waitForRoom(s);
            return;
        }
        delivered(s, c.records);
        s.backlogRecords -= c.records;
        s.backlogBytes -= c.data.size();
        s.backlog.pop_front();
        s.progressMs.store(m_owner.m_clock.elapsed(), std::memory_order_relaxed);
        m_owner.account(s);
    }
    if (!sendCatchUp(s))
        return;
    if (s.priority.load(std::memory_order_relaxed) == 0)
        s.priority.store(1, std::memory_order_relaxed);
    m_owner.account(s);
}

bool DeliveryWorker::sendCatchUp(Subscriber &s)
{
    if (s.stale.isEmpty() && s.unreported == 0)
        return true;
    const is::Repository &repository = m_owner.m_repository;
    QByteArray out;
    int count = 0;
    for (const QString &name : std::as_const(s.stale)) {
        is::Object obj;
        is::ObjectInfo info;
        const QByteArray n = name.toUtf8();
        if (repository.get(name, &obj, {}, &info).isOk()) {
            if (!s.criteria.matches(name, info.typeName, repository.registry()))
                continue;
            appendRecord(out, is::protocol::Updated, n, info.typeName.toUtf8(),
                         info.time.microsecondsSinceEpoch(), s.withValues ? is::encode(obj) : QByteArray());
        } else {
            appendRecord(out, is::protocol::Removed, n, {}, is::Time::currentTime().microsecondsSinceEpoch(),
                         {});
        }
        ++count;
    }
    appendRecord(out, is::protocol::Dropped, {}, {}, qint64(s.unreported), {});
    if (s.stream->send(out) != Status::Code::Ok) {
        waitForRoom(s);
        return false;
    }
    delivered(s, count);
    s.stale.clear();
    s.unreported = 0;
    return true;
}

} // namespace dialog::isd
