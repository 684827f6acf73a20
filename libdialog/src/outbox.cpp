// The write side of one destination's socket (Outbox): the queue, and the one decision of who
// writes its head — the calling thread at once, a cork later, or the sender thread.
#include "dialog/handoff.h"
#include "transport_p.h"
#include "transport_workers_p.h"

#include <cerrno>
#include <sys/socket.h>
#include <unistd.h>

namespace dialog::net {

namespace {
/// Small frames are packed into chunks of this size, so the sender writes many frames per write().
constexpr qsizetype ChunkTarget = 256 * 1024;

/// One non-blocking write from the calling thread.
ssize_t sendNoWait(int fd, const msghdr &m)
{
    ssize_t n;
    do
        n = ::sendmsg(fd, &m, MSG_DONTWAIT | MSG_NOSIGNAL);
    while (n < 0 && errno == EINTR);
    return n;
}
} // namespace

Outbox::Outbox(const Endpoint &e, SenderWorker *sender, const TransportOptions &options)
    : endpoint(e), m_sender(sender), m_maxQueueBytes(options.maxQueueBytes),
      m_directMaxBytes(options.directWriteMaxBytes), m_directGapNs(options.directWriteGapNs)
{
}

Outbox::~Outbox()
{
    closeDescriptor();
}

void Outbox::closeDescriptor()
{
    if (m_directFd >= 0)
        ::close(m_directFd);
    m_directFd = -1;
}

void Outbox::wakeSender()
{
    SenderWorker *w = m_sender;
    QMetaObject::invokeMethod(w, handoff::handOff([w, box = shared_from_this()] { w->flush(box); }),
                              Qt::QueuedConnection);
}

// ------------------------------------------------------------------ the decision

Outbox::Writer Outbox::chooseWriter(qint64 size, const Admission &a)
{
    if (a.corked && mayHold(size, a))
        return Writer::Cork;
    if (!waitForRoom(size, a.blockMs, a.bound))
        return Writer::Refused;
    return mayWriteNow(size) ? Writer::Caller : Writer::Sender;
}

bool Outbox::mayHold(qint64 size, const Admission &a)
{
    // Held only where the frame would have been written from this thread at once: a connected
    // destination with nothing queued but what the cork holds, and within bounds.
    const qint64 max = qMin(CorkMaxBytes, a.bound > 0 ? a.bound : m_maxQueueBytes);
    if (a.blockMs <= 0 && m_directFd >= 0 && m_onRoom.empty() && m_queued == m_corkedBytes &&
        m_corkedBytes + size <= max)
        return true;
    if (m_corkedBytes > 0)
        handOverHeld(); // this frame goes behind them, as the sender thread's
    return false;
}

bool Outbox::waitForRoom(qint64 size, int blockMs, qint64 bound)
{
    const qint64 max = bound > 0 ? bound : m_maxQueueBytes;
    if (m_queued == 0 || m_queued + size <= max)
        return true;
    if (m_corkedBytes > 0)
        handOverHeld(); // frames a cork holds make room only once they are written
    if (blockMs > 0) {
        QDeadlineTimer deadline(blockMs);
        while (m_queued > 0 && m_queued + size > max)
            if (!handoff::waitOn(m_room, m_lock, deadline))
                break;
    }
    if (m_queued > 0 && m_queued + size > max) {
        framesDropped.fetch_add(1, std::memory_order_relaxed);
        return false;
    }
    return true;
}

bool Outbox::mayWriteNow(qint64 size)
{
    // Only when the frame would be next on the wire: nothing queued, nothing in the socket's buffer
    // (m_queued counts both), so the order of frames is the order of the calls, as on the queue.
    if (m_directFd < 0 || m_queued != 0 || size > m_directMaxBytes)
        return false;
    const qint64 now = steadyNowNs();
    if (m_lastDirectNs != 0 && now - m_lastDirectNs < m_directGapNs)
        return false; // a burst: queued, written in chunks by the sender thread
    m_lastDirectNs = now;
    return true;
}

bool Outbox::take(Writer writer, qint64 size, bool *firstHeld)
{
    m_queued += size;
    switch (writer) {
    case Writer::Cork:
        *firstHeld = m_corkedBytes == 0;
        m_corkedBytes += size;
        return false;
    case Writer::Caller: {
        quint64 frames = 0;
        bool partial = false;
        writeHead(&frames, &partial);
        directWrites.fetch_add(frames + (partial ? 1 : 0), std::memory_order_relaxed);
        if (partial)
            directPartial.fetch_add(1, std::memory_order_relaxed);
        // What the socket did not take (or all of it: full, or broken, which the sender thread's
        // socket reports, counting the frame as dropped) is the sender thread's, first in line.
        return !m_chunks.isEmpty() && leaveToSender();
    }
    case Writer::Sender:
    case Writer::Refused:
        break;
    }
    return leaveToSender();
}

bool Outbox::leaveToSender()
{
    m_corkedBytes = 0; // the sender thread writes the queue, held frames first
    if (m_wakePosted)
        return false;
    m_wakePosted = true;
    return true;
}

void Outbox::handOverHeld()
{
    if (leaveToSender())
        wakeSender();
}

// ------------------------------------------------------------------ the queue

void Outbox::appendPieces(std::initializer_list<QByteArray> pieces)
{
    for (const QByteArray &p : pieces)
        m_chunks.append(Chunk{p, 0});
    m_chunks.last().frames = 1; // the pieces make one frame
}

Outbox::Chunk &Outbox::smallChunk(qint64 size)
{
    if (m_chunks.isEmpty() || m_chunks.last().bytes.size() + size > ChunkTarget ||
        m_chunks.last().bytes.capacity() < ChunkTarget) {
        Chunk chunk;
        if (m_spare.capacity() >= ChunkTarget)
            chunk.bytes = std::move(m_spare);
        else
            chunk.bytes.reserve(ChunkTarget);
        m_chunks.append(std::move(chunk));
    }
    return m_chunks.last();
}

quint64 Outbox::writeHead(quint64 *frames, bool *partial)
{
    quint64 calls = 0;
    bool started = false; // bytes of a frame not yet complete were written
    while (!m_chunks.isEmpty() && m_directFd >= 0) {
        iovec iov[64];
        msghdr m{};
        qint64 total = 0;
        for (const Chunk &c : std::as_const(m_chunks)) {
            if (m.msg_iovlen == std::size(iov))
                break;
            iov[m.msg_iovlen++] = iovec{const_cast<char *>(c.bytes.constData()), size_t(c.bytes.size())};
            total += c.bytes.size();
        }
        m.msg_iov = iov;
        const ssize_t n = sendNoWait(m_directFd, m);
        if (n <= 0)
            break; // full, or broken: the sender thread finds out
        ++calls;
        bytesSent.fetch_add(quint64(n), std::memory_order_relaxed);
        m_queued -= n;
        for (qint64 left = n; left > 0;) {
            Chunk &c = m_chunks.first();
            if (c.bytes.size() > left) {
                c.bytes.remove(0, left);
                started = true;
                break;
            }
            left -= c.bytes.size();
            *frames += quint64(c.frames);
            started = c.frames == 0;
            // A chunk of small frames (not a large frame's own array, which would be held on to)
            // is kept: the next small frame is encoded into it.
            if (m_chunks.size() == 1 && c.bytes.capacity() >= ChunkTarget &&
                c.bytes.capacity() < 2 * ChunkTarget && c.bytes.isDetached()) {
                m_spare = std::move(c.bytes);
                m_spare.resize(0);
            }
            m_chunks.removeFirst();
        }
        if (n < total)
            break;
    }
    *partial = started;
    return calls;
}

// ------------------------------------------------------------------ the calling threads

quint64 Outbox::writeHeld()
{
    QMutexLocker l(&m_lock);
    if (m_corkedBytes == 0)
        return 0; // written already (listed twice), or handed to the sender thread
    m_corkedBytes = 0;
    // All that is queued is held, and nothing is in the socket before it.
    quint64 frames = 0;
    bool partial = false;
    const quint64 calls = writeHead(&frames, &partial);
    directWrites.fetch_add(frames + (partial ? 1 : 0), std::memory_order_relaxed);
    if (partial)
        directPartial.fetch_add(1, std::memory_order_relaxed);
    m_lastDirectNs = steadyNowNs();
    m_room.wakeAll();
    if (!m_chunks.isEmpty())
        handOverHeld();
    return calls;
}

bool Outbox::whenRoom(qint64 level, std::function<void()> &fn)
{
    QMutexLocker l(&m_lock);
    if (m_queued <= level)
        return false;
    // The sender thread runs the callback as it writes: frames a cork holds become its.
    if (m_corkedBytes > 0)
        handOverHeld();
    m_onRoom.emplace_back(level, std::move(fn));
    return true;
}

bool Outbox::waitUntilWritten(QDeadlineTimer deadline)
{
    QMutexLocker l(&m_lock);
    if (m_corkedBytes > 0)
        handOverHeld(); // held by a cork in another thread: the sender thread writes them now
    while (m_queued > 0)
        if (!handoff::waitOn(m_room, m_lock, deadline))
            return false;
    return true;
}

// ------------------------------------------------------------------ the sender thread

quint64 Outbox::connectionOpened() const
{
    QMutexLocker l(&m_lock);
    return m_generation;
}

void Outbox::shareDescriptor(int fd, quint64 generation)
{
    QMutexLocker l(&m_lock);
    closeDescriptor();
    if (generation == m_generation)
        m_directFd = fd;
    else
        ::close(fd);
}

void Outbox::unshareDescriptor()
{
    QMutexLocker l(&m_lock);
    closeDescriptor();
}

void Outbox::handed(qint64 bytes, quint64 generation)
{
    QMutexLocker l(&m_lock);
    if (generation == m_generation)
        m_queued += bytes;
}

std::vector<std::function<void()>> Outbox::written(qint64 bytes, quint64 generation)
{
    std::vector<std::function<void()>> ready;
    QMutexLocker l(&m_lock);
    if (generation != m_generation)
        return ready; // accounting of a connection that failed or closed
    m_queued = qMax<qint64>(0, m_queued - bytes);
    if (m_queued < m_maxQueueBytes)
        m_room.wakeAll();
    for (auto it = m_onRoom.begin(); it != m_onRoom.end();) {
        if (m_queued > it->first) {
            ++it;
            continue;
        }
        ready.push_back(std::move(it->second));
        it = m_onRoom.erase(it);
    }
    return ready;
}

QList<Outbox::Chunk> Outbox::takeForSender()
{
    QList<Chunk> chunks;
    QMutexLocker l(&m_lock);
    chunks.swap(m_chunks);
    m_wakePosted = false;
    m_corkedBytes = 0;
    return chunks;
}

std::pair<qint64, qint64> Outbox::discard()
{
    QMutexLocker l(&m_lock);
    const qint64 lost = m_queued;
    qint64 frames = 0;
    for (const Chunk &chunk : std::as_const(m_chunks))
        frames += chunk.frames;
    closeDescriptor();
    m_queued = 0;
    m_corkedBytes = 0;
    m_chunks.clear();
    m_onRoom.clear();
    m_generation++;
    m_room.wakeAll();
    return {lost, frames};
}

bool Outbox::closeIfIdle()
{
    // Decided under the lock: no write from a calling thread slips in before the close.
    QMutexLocker l(&m_lock);
    const quint64 direct = directWrites.load(std::memory_order_relaxed);
    if (direct != m_directSeen) {
        m_directSeen = direct; // written to from the calling threads meanwhile: not idle
        return false;
    }
    if (!m_chunks.isEmpty() || m_wakePosted)
        return false;
    closeDescriptor();
    m_queued = 0; // accounting restarts with the next connection
    m_generation++;
    return true;
}

} // namespace dialog::net
