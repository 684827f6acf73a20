#include "servicestate_p.h"

#include "payload_p.h"

namespace dialog {

using namespace wire_format;

QByteArray ServiceState::prepare(const QByteArray &data, quint8 &flags)
{
    if (compressionThreshold <= 0 || data.size() < compressionThreshold) {
        flags = 0;
        return data;
    }
    // A service whose data did not compress is sent as it is for its next few updates without
    // trying: probing each 100 KB update of random data cost its publisher a sixth of its time.
    if (skipCompression.load(std::memory_order_relaxed) > 0) {
        skipCompression.fetch_sub(1, std::memory_order_relaxed);
        flags = 0;
        return data;
    }
    QByteArray prepared = prepareData(data, compressionThreshold, flags);
    if (!(flags & Compressed))
        skipCompression.store(IncompressibleSkip, std::memory_order_relaxed);
    return prepared;
}

bool ServiceState::publish(const QByteArray &data)
{
    quint8 flags = 0;
    const QByteArray prepared = prepare(data, flags);
    QMutexLocker serial(&updateLock);
    QList<Subscriber> subs;
    quint64 seq;
    {
        QMutexLocker l(&lock);
        seq = ++sequence;
        lastData = prepared;
        lastFlags = flags;
        leadingPages.clear();
        hasValue = true;
        subs = subscribers; // implicitly shared snapshot, no copy unless the list changes
    }
    if (subs.isEmpty() || !transport)
        return true;
    const int blockMs = flowControl.load(std::memory_order_relaxed) == int(Service::FlowControl::Block)
                            ? blockTimeoutMs.load(std::memory_order_relaxed)
                            : 0;
    bool all = true;
    for (const Subscriber &s : std::as_const(subs)) {
        if (!sendTo(s, seq, flags, prepared, blockMs)) {
            all = false;
            dropped.fetch_add(1, std::memory_order_relaxed);
            markBehind(s);
        }
    }
    return all;
}

bool ServiceState::publishPages(const QList<QByteArray> &pages)
{
    if (pages.size() == 1)
        return publish(pages.first());
    QList<Page> prepared;
    prepared.reserve(pages.size());
    for (const QByteArray &p : pages) {
        Page page;
        page.data = prepare(p, page.flags);
        prepared.append(page);
    }
    QMutexLocker serial(&updateLock);
    QList<Subscriber> subs;
    {
        QMutexLocker l(&lock);
        for (Page &p : prepared)
            p.sequence = ++sequence;
        lastData = prepared.last().data;
        lastFlags = prepared.last().flags;
        leadingPages = prepared.first(prepared.size() - 1);
        hasValue = true;
        subs = subscribers;
    }
    if (subs.isEmpty() || !transport)
        return true;
    bool all = true;
    for (const Subscriber &s : std::as_const(subs)) {
        for (const Page &p : std::as_const(prepared)) {
            if (!sendTo(s, p.sequence, p.flags, p.data, 0)) {
                // The rest of this value comes, in order, when there is room.
                all = false;
                dropped.fetch_add(1, std::memory_order_relaxed);
                {
                    QMutexLocker l(&lock);
                    resumeAt.insert(s.box.get(), p.sequence);
                }
                markBehind(s);
                break;
            }
        }
    }
    return all;
}

bool ServiceState::sendCurrent(const Subscriber &s)
{
    // A value in pages resumes at the first page this subscriber was not given (an older value's
    // mark means: from the start). The pages go in order, so the subscriber sees no gap.
    const quint64 first = leadingPages.isEmpty() ? sequence : leadingPages.first().sequence;
    quint64 from = resumeAt.value(s.box.get(), 0);
    if (from < first || from > sequence)
        from = first;
    for (const Page &p : std::as_const(leadingPages)) {
        if (p.sequence < from)
            continue;
        if (!sendTo(s, p.sequence, p.flags, p.data, 0)) {
            resumeAt.insert(s.box.get(), p.sequence);
            return false;
        }
    }
    if (!sendTo(s, sequence, lastFlags, lastData, 0)) {
        resumeAt.insert(s.box.get(), sequence);
        return false;
    }
    resumeAt.remove(s.box.get());
    return true;
}

qint64 ServiceState::nextCatchUpBytes(const net::Outbox *box) const
{
    const quint64 from = resumeAt.value(box, 0);
    qint64 size = lastData.size();
    for (const Page &p : leadingPages) {
        if (p.sequence >= from) {
            size = p.data.size();
            break;
        }
    }
    return size + HeaderSize + 2 + key.size() + 8;
}

bool ServiceState::sendTo(const Subscriber &s, quint64 seq, quint8 flags, const QByteArray &data, int blockMs)
{
    constexpr qsizetype InlineLimit = 16 * 1024;
    if (data.size() <= InlineLimit) {
        const qint64 size = HeaderSize + 2 + key.size() + 8 + data.size();
        return transport->sendSmall(
                   s.box, size, [&](QByteArray &out) { appendServiceFrame(out, key, seq, flags, data); },
                   blockMs) == net::Transport::SendResult::Queued;
    }
    // Large data: header and name in a small buffer, the data itself shared, never copied.
    return transport->send(s.box, {serviceFramePrefix(key, seq, flags, data.size()), data}, blockMs) ==
           net::Transport::SendResult::Queued;
}

void ServiceState::addSubscriber(const Subscriber &s)
{
    QMutexLocker l(&lock);
    QList<Subscriber> next;
    next.reserve(subscribers.size() + 1);
    for (const Subscriber &x : std::as_const(subscribers))
        if (x.box != s.box)
            next.append(x);
    next.append(s);
    // The acknowledgement is queued before the subscriber is listed: every value published to it
    // follows on the same connection.
    if (transport && !s.token.isEmpty() && !sendTo(s, 0, 0, s.token, 0))
        dropped.fetch_add(1, std::memory_order_relaxed); // it asks again (its data is ignored meanwhile)
    replaceSubscribers(std::move(next));
    if (hasValue && !sendCurrent(s)) {
        dropped.fetch_add(1, std::memory_order_relaxed);
        l.unlock();
        markBehind(s);
    }
}

void ServiceState::markBehind(const Subscriber &s)
{
    qint64 bytes = 0;
    {
        QMutexLocker l(&lock);
        if (behind.contains(s.box.get()))
            return;
        behind.insert(s.box.get());
        // A value above half the queue's bound waits until it fits: the catch-up always queues
        // something, so it never comes back at once for nothing.
        bytes = nextCatchUpBytes(s.box.get());
    }
    std::weak_ptr<ServiceState> weak = weak_from_this();
    net::OutboxPtr box = s.box;
    transport->whenRoom(box, [weak, box] {
        const auto self = weak.lock();
        if (!self)
            return;
        QMutexLocker l(&self->lock);
        self->behind.remove(box.get());
        for (const Subscriber &sub : std::as_const(self->subscribers)) {
            if (sub.box != box)
                continue;
            if (self->hasValue && !self->sendCurrent(sub)) {
                l.unlock();
                self->markBehind(sub); // still full: try again at the next drain
            }
            return;
        }
    }, bytes);
}

int ServiceState::removeSubscribers(const net::Endpoint &endpoint, quint64 incarnation)
{
    QMutexLocker l(&lock);
    QList<Subscriber> next;
    for (const Subscriber &s : std::as_const(subscribers)) {
        if (s.box->endpoint == endpoint && (incarnation == 0 || s.incarnation == incarnation))
            resumeAt.remove(s.box.get());
        else
            next.append(s);
    }
    const int n = int(subscribers.size() - next.size());
    if (n > 0)
        replaceSubscribers(std::move(next));
    return n;
}

void ServiceState::replaceSubscribers(QList<Subscriber> &&next)
{
    // Never changed in place: publish() reads a snapshot (an implicitly shared copy) outside the
    // lock, and a QList written in place after it found itself no longer shared (a relaxed load of
    // the count) would not be ordered after the snapshot's last reads. A new list is; the old one is
    // freed by whoever drops it last. Subscribers change rarely, messages often.
    subscribers = std::move(next);
}

} // namespace dialog
