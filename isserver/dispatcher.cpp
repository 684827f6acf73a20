#include "dispatcher.h"
#include "deliveryworker.h"

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
        m_workers.push_back(std::make_shared<DeliveryWorker>(*this));
        m_workers.back()->start();
    }
}

Dispatcher::~Dispatcher()
{
    for (const auto &w : m_workers)
        w->stop();
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
        if (w->count() > 0)
            w->postNotes(batch);
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
        const qint64 queued = w->queuedNotes();
        if (queued > maxNotes || queued * qMax(1, w->count()) > m_options.maxQueuedDeliveries)
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
        m_grace.removeIf(
            [&](const auto &it) { return now - it.value().windowStartMs >= m_options.slowWindowMs; });
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

void Dispatcher::addSubscriber(const SubscriberPtr &s)
{
    s->priority.store(m_options.workers);
    QMutexLocker l(&m_subsLock);
    auto old = m_subs.constFind(s->key);
    if (old != m_subs.cend()) {
        old->first->removed = true;
        m_workers[old->second]->postRemove(old->first);
        m_subs.erase(old);
        m_subscriberCount.fetch_sub(1);
    }
    // The least loaded worker.
    int best = 0;
    for (int i = 1; i < int(m_workers.size()); ++i)
        if (m_workers[i]->count() < m_workers[best]->count())
            best = i;
    m_subs.insert(s->key, {s, best});
    m_subscriberCount.fetch_add(1);
    m_workers[best]->postAdd(s);
}

bool Dispatcher::removeSubscriber(const QString &key)
{
    QMutexLocker l(&m_subsLock);
    auto it = m_subs.find(key);
    if (it == m_subs.end())
        return false;
    m_workers[it->second]->postRemove(it->first);
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

void Dispatcher::forget(const SubscriberPtr &s)
{
    QMutexLocker l(&m_subsLock);
    const auto it = m_subs.constFind(s->key);
    if (it != m_subs.cend() && it->first == s) {
        m_subs.erase(it);
        m_subscriberCount.fetch_sub(1);
    }
}

} // namespace dialog::isd
