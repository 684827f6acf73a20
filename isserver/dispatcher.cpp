#include "dispatcher.h"

#include "dialog/handoff.h"
#include "dialog/is/codec.h"
#include "dialog/is/protocol.h"

namespace dialog::isd {


using is::protocol::appendRecord;

Dispatcher::Dispatcher(const is::Repository &repository, const DispatcherOptions &options)
    : m_repository(repository), m_options(options)
{
    m_options.workers = qMax(1, m_options.workers);
    m_clock.start();
    m_roomThread.setObjectName(QStringLiteral("is-room"));
    m_roomContext = new QObject;
    m_roomContext->moveToThread(&m_roomThread);
    handoff::startThread(m_roomThread);
    for (int i = 0; i < m_options.workers; ++i) {
        auto w = std::make_shared<Worker>();
        Worker *raw = w.get();
        w->thread = std::thread([this, raw] { run(*raw); });
        m_workers.push_back(std::move(w));
    }
}

Dispatcher::~Dispatcher()
{
    for (const auto &w : m_workers)
        post(*w, Job{Job::Stop, {}, {}});
    for (const auto &w : m_workers)
        w->thread.join();
    m_roomThread.quit();
    m_roomThread.wait();
    delete m_roomContext; // its thread has finished: no event is being delivered to it
}

void Dispatcher::publish(const is::Change &c)
{
    Note n;
    n.name = c.name;
    n.type = c.typeName;
    const QByteArray name = c.name.toUtf8();
    const QByteArray type = c.typeName.toUtf8();
    const quint8 kind = c.kind == is::Change::Kind::Created   ? is::protocol::Created
                        : c.kind == is::Change::Kind::Updated ? is::protocol::Updated
                                                              : is::protocol::Removed;
    const qint64 t = c.time.microsecondsSinceEpoch();
    appendRecord(n.bare, kind, name, type, t, {});
    if (c.kind == is::Change::Kind::Removed)
        n.full = n.bare;
    else
        appendRecord(n.full, kind, name, type, t, is::encode(c.object));
    m_batchBytes += n.full.size();
    m_batch.push_back(std::move(n));
    // Handed over in pieces (and paced between them): what a held-back burst of updates turns into
    // at once is bounded.
    if (m_batch.size() >= 1024 ||
        m_batchBytes * qMax(1, m_subscriberCount.load(std::memory_order_relaxed)) >= m_options.maxBatchBytes)
        flush();
}

void Dispatcher::flush()
{
    if (m_batch.empty())
        return;
    if (m_subscriberCount.load() == 0) {
        m_batch.clear();
        m_batchBytes = 0;
        return;
    }
    auto batch = std::make_shared<const std::vector<Note>>(std::move(m_batch));
    m_batch = {};
    m_batchBytes = 0;
    for (const auto &w : m_workers) {
        if (w->count.load(std::memory_order_relaxed) > 0) {
            w->queuedNotes.fetch_add(qint64(batch->size()), std::memory_order_relaxed);
            post(*w, Job{Job::Notes, batch, {}});
        }
    }
    pace();
}

bool Dispatcher::congested(QStringList *graced)
{
    // The workers' own backlog of changes: a bound on the notifications they have yet to place.
    // (At most a pacing threshold of a subscriber's own queue, so that a subscriber that keeps up
    // is never pushed past its bound by what was handed over before it fell behind.)
    const qint64 maxNotes = qMax<qint64>(1, m_options.queueRecords / qMax(1, m_options.paceFraction));
    for (const auto &w : m_workers) {
        const qint64 queued = w->queuedNotes.load(std::memory_order_relaxed);
        if (queued > maxNotes ||
            queued * qMax(1, w->count.load(std::memory_order_relaxed)) > m_options.maxQueuedDeliveries)
            return true;
    }
    if (m_behind.load(std::memory_order_relaxed) == 0)
        return false;
    // Counted by subscriber process: the subscriptions of one process share its queue, and some of
    // them falling behind means the process is.
    const qint64 now = m_clock.elapsed();
    QSet<QString> behindProcesses;
    QMutexLocker l(&m_subsLock);
    for (const auto &p : m_subs) {
        const Subscriber &s = *p.first;
        if (s.priority.load(std::memory_order_relaxed) > 0 && s.lagging.load(std::memory_order_relaxed) &&
            now - s.progressMs.load(std::memory_order_relaxed) < m_options.pacingStallMs)
            behindProcesses.insert(s.origin);
    }
    if (behindProcesses.isEmpty())
        return false;
    // Several, holding a good share of the subscriptions, is the server outrunning its
    // subscribers: then the updates wait.
    int live = 0, behind = 0;
    for (const auto &p : m_subs) {
        const Subscriber &s = *p.first;
        if (s.priority.load(std::memory_order_relaxed) == 0)
            continue; // slow: served from its own queue, dropped for
        ++live;
        behind += behindProcesses.contains(s.origin);
    }
    if (qint64(behind) * qMax(1, m_options.paceShare) >= live && behindProcesses.size() >= 2)
        return true;
    // One or a few may be slow subscribers (a GUI on a slow link, a remote mirror): they are
    // waited for within their grace only, then dropped for, never followed.
    for (const QString &origin : std::as_const(behindProcesses)) {
        Grace &g = m_grace[origin];
        if (now - g.windowStartMs >= m_options.slowWindowMs)
            g = {now, 0};
        if (g.usedMs < m_options.slowGraceMs)
            graced->append(origin);
    }
    if (m_grace.size() > 2 * m_subs.size() + 16) // forget the processes whose windows are over
        m_grace.removeIf([&](const auto &it) { return now - it.value().windowStartMs >= m_options.slowWindowMs; });
    return !graced->isEmpty();
}

void Dispatcher::pace()
{
    // The IS paper delivers from the thread that handles the update, so that the updates go no
    // faster than the subscribers take them; here the workers deliver, and the thread handing them
    // the changes waits instead while many subscribers are behind. A few (slow or hung
    // subscribers) hold it only within their grace: then their own queues fill and their newest
    // notifications are dropped; a subscriber that took nothing for pacingStallMs does not hold it.
    QMutexLocker l(&m_paceLock);
    QStringList graced;
    while (congested(&graced)) {
        const qint64 start = m_clock.elapsed();
        handoff::waitOn(m_paceWake, m_paceLock, QDeadlineTimer(20));
        for (const QString &origin : std::as_const(graced)) {
            const auto it = m_grace.find(origin);
            if (it != m_grace.end())
                it->usedMs += m_clock.elapsed() - start;
        }
        graced.clear();
    }
}

void Dispatcher::account(Subscriber &s)
{
    const qint64 f = qMax(1, m_options.paceFraction);
    const bool behind =
        !s.removed && s.priority.load(std::memory_order_relaxed) > 0 &&
        (s.backlogRecords * f >= m_options.queueRecords || s.backlogBytes * f >= m_options.queueBytes);
    if (behind == s.behind)
        return;
    s.behind = behind;
    if (behind)
        s.progressMs.store(m_clock.elapsed(), std::memory_order_relaxed);
    s.lagging.store(behind, std::memory_order_relaxed);
    m_behind.fetch_add(behind ? 1 : -1, std::memory_order_relaxed);
    if (!behind)
        m_paceWake.wakeAll();
}

void Dispatcher::drop(Subscriber &s, const QString &name)
{
    s.dropped.fetch_add(1, std::memory_order_relaxed);
    m_drops.fetch_add(1, std::memory_order_relaxed);
    ++s.unreported;
    s.stale.insert(name);
    // Its own queue is full: slow. Its notifications now bypass the transport until it caught up.
    s.priority.store(0, std::memory_order_relaxed);
    account(s);
}

void Dispatcher::addSubscriber(const SubscriberPtr &s)
{
    s->priority.store(m_options.workers);
    QMutexLocker l(&m_subsLock);
    auto old = m_subs.constFind(s->key);
    if (old != m_subs.cend()) {
        old->first->removed = true;
        post(*m_workers[old->second], Job{Job::Remove, {}, old->first});
        m_subs.erase(old);
        m_subscriberCount.fetch_sub(1);
    }
    // The least loaded worker.
    int best = 0;
    for (int i = 1; i < int(m_workers.size()); ++i)
        if (m_workers[i]->count.load() < m_workers[best]->count.load())
            best = i;
    m_workers[best]->count.fetch_add(1);
    m_subs.insert(s->key, {s, best});
    m_subscriberCount.fetch_add(1);
    post(*m_workers[best], Job{Job::Add, {}, s});
}

bool Dispatcher::removeSubscriber(const QString &key)
{
    QMutexLocker l(&m_subsLock);
    auto it = m_subs.find(key);
    if (it == m_subs.end())
        return false;
    post(*m_workers[it->second], Job{Job::Remove, {}, it->first});
    m_subs.erase(it);
    m_subscriberCount.fetch_sub(1);
    return true;
}

std::vector<SubscriberPtr> Dispatcher::subscribers() const
{
    std::vector<SubscriberPtr> out;
    QMutexLocker l(&m_subsLock);
    for (const auto &p : m_subs)
        out.push_back(p.first);
    return out;
}

void Dispatcher::post(Worker &w, Job job)
{
    QMutexLocker l(&w.lock);
    const bool wasEmpty = w.jobs.empty();
    w.jobs.push_back(std::move(job));
    if (wasEmpty)
        w.wake.wakeOne();
}

void Dispatcher::run(Worker &w)
{
    std::vector<Job> jobs;
    for (;;) {
        {
            QMutexLocker l(&w.lock);
            while (w.jobs.empty())
                handoff::waitOn(w.wake, w.lock);
            jobs.swap(w.jobs);
        }
        for (Job &j : jobs) {
            switch (j.kind) {
            case Job::Stop:
                return;
            case Job::Notes:
                process(w, *j.notes);
                w.queuedNotes.fetch_sub(qint64(j.notes->size()), std::memory_order_relaxed);
                m_paceWake.wakeAll();
                break;
            case Job::Add:
                w.subs.push_back(j.subscriber);
                w.cache.clear();
                if (!j.subscriber->history.empty()) {
                    // To its own queue whole, beyond its bound, like a snapshot (bounded by the ring).
                    for (Subscriber::Chunk &c : std::exchange(j.subscriber->history, {})) {
                        j.subscriber->backlogRecords += c.records;
                        j.subscriber->backlogBytes += c.data.size();
                        j.subscriber->backlog.push_back(std::move(c));
                    }
                    if (!j.subscriber->snapshot)
                        drain(w, *j.subscriber);
                }
                if (j.subscriber->snapshot)
                    sendSnapshot(w, *j.subscriber);
                break;
            case Job::Remove:
                removeFrom(w, j.subscriber.get());
                break;
            case Job::Room:
                if (!j.subscriber->removed) {
                    j.subscriber->waitingRoom = false;
                    drain(w, *j.subscriber);
                }
                break;
            }
        }
        jobs.clear();
        // Subscribers whose process is gone.
        std::vector<SubscriberPtr> broken;
        for (const SubscriberPtr &s : w.subs)
            if (s->stream->isBroken())
                broken.push_back(s);
        for (const SubscriberPtr &s : broken) {
            {
                QMutexLocker l(&m_subsLock);
                const auto it = m_subs.constFind(s->key);
                if (it != m_subs.cend() && it->first == s) {
                    m_subs.erase(it);
                    m_subscriberCount.fetch_sub(1);
                }
            }
            removeFrom(w, s.get());
        }
    }
}

void Dispatcher::removeFrom(Worker &w, Subscriber *s)
{
    s->removed = true;
    account(*s);
    for (auto it = w.subs.begin(); it != w.subs.end(); ++it) {
        if (it->get() == s) {
            w.subs.erase(it);
            w.count.fetch_sub(1);
            break;
        }
    }
    w.cache.clear();
}

const std::vector<Subscriber *> &Dispatcher::match(Worker &w, const Note &n)
{
    auto it = w.cache.find(n.name);
    if (it != w.cache.end() && it->type == n.type)
        return it->subs;
    Worker::Match m;
    m.type = n.type;
    for (const auto &s : w.subs)
        if (!s->removed && s->criteria.matches(n.name, n.type, m_repository.registry()))
            m.subs.push_back(s.get());
    if (w.cache.size() > 200000)
        w.cache.clear(); // bound the cache (many short-lived object names)
    return w.cache.insert(n.name, std::move(m))->subs;
}

void Dispatcher::process(Worker &w, const std::vector<Note> &notes)
{
    for (const Note &n : notes) {
        for (Subscriber *s : match(w, n)) {
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
                w.dirty.push_back(s);
            }
            if (s->pending.size() >= m_options.maxMessage)
                flushSubscriber(w, *s);
        }
    }
    for (Subscriber *s : w.dirty) {
        s->dirty = false;
        if (!s->removed)
            flushSubscriber(w, *s);
    }
    w.dirty.clear();
}

void Dispatcher::sendSnapshot(Worker &w, Subscriber &s)
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
    drain(w, s);
}

void Dispatcher::toBacklog(Subscriber &s, const QByteArray &records, int count)
{
    if (!s.backlog.empty() && s.backlog.back().data.size() + records.size() <= m_options.backlogChunk) {
        s.backlog.back().data.append(records);
        s.backlog.back().records += count;
    } else {
        s.backlog.push_back({records, count});
    }
    s.backlogRecords += count;
    s.backlogBytes += records.size();
    account(s);
}

void Dispatcher::flushSubscriber(Worker &w, Subscriber &s)
{
    if (s.pendingRecords == 0)
        return;
    const QByteArray data = std::exchange(s.pending, QByteArray());
    const int count = std::exchange(s.pendingRecords, 0);
    if (s.backlog.empty() && s.priority.load(std::memory_order_relaxed) > 0) {
        switch (s.stream->send(data)) {
        case Status::Code::Ok: {
            s.delivered.fetch_add(quint64(count), std::memory_order_relaxed);
            m_deliveries.fetch_add(quint64(count), std::memory_order_relaxed);
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
        while (is::protocol::nextRecord(data, pos, r, nullptr)) {
            const qsizetype start = r.nameOffset - 3;
            const qsizetype len = pos - start;
            if (s.backlogRecords < m_options.queueRecords && s.backlogBytes + len <= m_options.queueBytes)
                toBacklog(s, data.mid(start, len), 1);
            else
                drop(s, QString::fromUtf8(data.constData() + r.nameOffset, r.nameLength));
        }
    }
    account(s);
    waitForRoom(w, s);
}

void Dispatcher::waitForRoom(Worker &w, Subscriber &s)
{
    if (s.waitingRoom)
        return;
    s.waitingRoom = true;
    std::weak_ptr<Worker> weakWorker;
    for (const auto &sp : m_workers)
        if (sp.get() == &w)
            weakWorker = sp;
    SubscriberPtr self;
    for (const auto &sp : w.subs)
        if (sp.get() == &s)
            self = sp;
    if (!self)
        return;
    std::weak_ptr<Subscriber> weakSub = self;
    s.stream->whenRoom(m_roomContext, [weakWorker, weakSub] {
        const auto worker = weakWorker.lock();
        const auto sub = weakSub.lock();
        if (worker && sub)
            post(*worker, Job{Job::Room, {}, sub});
    });
}

void Dispatcher::drain(Worker &w, Subscriber &s)
{
    int turn = 0;
    while (!s.backlog.empty()) {
        if (turn++ == m_options.drainTurn) {
            // Its turn is over: the subscriptions that share its process's queue take theirs first
            // (whenRoom() calls back in the order asked).
            waitForRoom(w, s);
            return;
        }
        Subscriber::Chunk &c = s.backlog.front();
        const Status::Code r = s.stream->send(c.data);
        if (r == Status::Code::Broken)
            return;
        if (r == Status::Code::QueueFull) {
            account(s);
            waitForRoom(w, s);
            return;
        }
        s.delivered.fetch_add(quint64(c.records), std::memory_order_relaxed);
        m_deliveries.fetch_add(quint64(c.records), std::memory_order_relaxed);
        s.backlogRecords -= c.records;
        s.backlogBytes -= c.data.size();
        s.backlog.pop_front();
        s.progressMs.store(m_clock.elapsed(), std::memory_order_relaxed);
        account(s);
    }
    // Caught up: the newest value of every object whose notifications were dropped, and the count.
    if (!s.stale.isEmpty() || s.unreported > 0) {
        QByteArray out;
        int count = 0;
        for (const QString &name : std::as_const(s.stale)) {
            is::Object obj;
            is::ObjectInfo info;
            const QByteArray n = name.toUtf8();
            if (m_repository.get(name, &obj, {}, nullptr, &info) == is::Repository::Result::Ok) {
                if (!s.criteria.matches(name, info.typeName, m_repository.registry()))
                    continue;
                appendRecord(out, is::protocol::Updated, n, info.typeName.toUtf8(),
                             info.time.microsecondsSinceEpoch(),
                             s.withValues ? is::encode(obj) : QByteArray());
            } else {
                appendRecord(out, is::protocol::Removed, n, {},
                             is::Time::currentTime().microsecondsSinceEpoch(), {});
            }
            ++count;
        }
        appendRecord(out, is::protocol::Dropped, {}, {}, qint64(s.unreported), {});
        if (s.stream->send(out) != Status::Code::Ok) {
            waitForRoom(w, s);
            return;
        }
        s.delivered.fetch_add(quint64(count), std::memory_order_relaxed);
        m_deliveries.fetch_add(quint64(count), std::memory_order_relaxed);
        s.stale.clear();
        s.unreported = 0;
    }
    if (s.priority.load(std::memory_order_relaxed) == 0)
        s.priority.store(1, std::memory_order_relaxed);
    account(s);
}

} // namespace dialog::isd
