// The DIALOG transport (DIALOG paper, Fig. 2): n sender threads owning one outgoing socket per
// destination, a receiver thread accepting connections, m reader threads parsing frames.
// Frames are handed to two sinks (control, data) in the sinks' own threads, in batches.
#pragma once

#include "connectionlimits_p.h"
#include "dialog/security.h"
#include "frame_p.h"
#include "payload_p.h"

#include <QDeadlineTimer>
#include <QHash>
#include <QHostAddress>
#include <QList>
#include <QLoggingCategory>
#include <QMutex>
#include <QObject>
#include <QPointer>
#include <QSslConfiguration>
#include <QThread>
#include <QWaitCondition>
#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <sched.h>
#include <time.h>
#include <vector>

Q_DECLARE_LOGGING_CATEGORY(lcSender)
Q_DECLARE_LOGGING_CATEGORY(lcReceiver)

class QThread;

namespace dialog::net {

struct Endpoint
{
    QString host;
    quint16 port = 0;
    QString toString() const { return host + QLatin1Char(':') + QString::number(port); }
    bool isValid() const { return !host.isEmpty() && port != 0; }
    bool operator==(const Endpoint &o) const { return port == o.port && host == o.host; }
    bool operator!=(const Endpoint &o) const { return !(*this == o); }
    /// Parses "host:port"; false on a malformed address.
    static bool parse(const QString &text, Endpoint &out);
};
inline size_t qHash(const Endpoint &e, size_t seed = 0)
{
    return ::qHash(e.host, seed) ^ e.port;
}

/// Who is at the other end of an inbound connection (from its HELLO).
struct PeerInfo
{
    QString name;
    Endpoint endpoint; // where it listens (as it claims in its HELLO)
    quint32 pid = 0;
    quint64 incarnation = 0;
    QString user;     // the OS user it runs as, as it claims in its HELLO (empty: not said)
    QString hostName; // its host name, as it claims in its HELLO (empty: not said)
    QString version;  // its software version (dialog::version()) from its HELLO (empty: not said)
    // Inbound peers only: the address the connection came from, and the connection itself (for
    // Transport::answer; an opaque key, never dereferenced outside its reader thread).
    QHostAddress source;
    QObject *reader = nullptr;
    const void *connection = nullptr;
    /// Inbound peers only: a number no other connection of this process has had or will have, so
    /// that "the connection X came by" can be remembered after X is closed without being mistaken
    /// for a later one (which may reuse X's address).
    quint64 connectionId = 0;
    /// Inbound peers of a transport with an identity secret only: the connection proved the name
    /// in its HELLO with that name's process key (TransportOptions::identitySecret).
    bool proven = false;
};
using PeerPtr = std::shared_ptr<const PeerInfo>;

/// One decoded inbound frame. For data frames name/origin/sequence/data are decoded (and
/// decompressed); for control frames data holds the protobuf payload. peer is set for every type
/// but SERVICE_MESSAGE (the hot path carries only the sender's incarnation).
/// The steady clock in ns (CLOCK_MONOTONIC through the vDSO: no system call).
inline qint64 steadyNowNs()
{
    timespec ts;
    ::clock_gettime(CLOCK_MONOTONIC, &ts);
    return qint64(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

/// The receive spin (TransportOptions::receiveSpinUs): busy-waits until @p ready() or until the
/// steady clock reaches @p untilNs, yielding the core to any other runnable thread meanwhile (with
/// more spinning threads than cores, the one that is to answer must run). True if @p ready().
template <typename Ready> bool spinUntil(qint64 untilNs, Ready ready)
{
    do {
        if (ready())
            return true;
        ::sched_yield();
    } while (steadyNowNs() < untilNs);
    return false;
}

struct Inbound
{
    wire_format::Type type = wire_format::Type::Hello;
    PeerPtr peer;
    quint64 incarnation = 0;
    /// SERVICE_MESSAGE (which carries no peer): the connection it came by (PeerInfo::connectionId).
    quint64 connection = 0;
    quint8 status = 0; ///< REPLY only
    /// COMMAND_MESSAGE seen by a direct route only: the frame's flags, data left as it came (still
    /// compressed when they say so), so that a router relays it unchanged.
    quint8 flags = 0;
    QByteArray name;
    QByteArray origin;
    quint64 sequence = 0;
    QByteArray data;
    /// SERVICE_MESSAGE read with others in one receive buffer: its data is [dataOffset,
    /// +dataLength) of that buffer, shared rather than copied in the reader thread; the thread that
    /// takes it copies it out (allocated and freed there, not across threads). data is empty then.
    QByteArray chunk;
    qsizetype dataOffset = 0;
    qsizetype dataLength = 0;
    /// Set by a resumable sink when it takes the frame (Transport::setDataSink).
    bool taken = false;

    qsizetype dataSize() const { return chunk.isNull() ? data.size() : dataLength; }
    /// The data, wherever it is held, without a copy (valid while this Inbound is).
    QByteArrayView dataView() const
    {
        return chunk.isNull() ? QByteArrayView(data)
                              : QByteArrayView(chunk.constData() + dataOffset, dataLength);
    }
    /// The data, wherever it is held.
    QByteArray dataCopy() const
    {
        return chunk.isNull() ? data : QByteArray(chunk.constData() + dataOffset, dataLength);
    }
    /// The data, moved out (no copy when it has its own buffer); the receive buffer is let go.
    QByteArray takeData()
    {
        if (chunk.isNull())
            return std::move(data);
        QByteArray out = dataCopy();
        chunk = QByteArray();
        return out;
    }
};
using InboundBatch = QList<Inbound>;
/// What one queued Inbound costs beyond its data, for the bound on undelivered messages.
constexpr qint64 InboundOverhead = 192;
/// Qt's read buffer of an inbound socket unless TransportOptions::receiveBufferBytes says otherwise:
/// at most this much and, with many connections, smaller (readBufferBytesFor()).
constexpr qint64 DefaultReadBufferBytes = 256 * 1024;
constexpr qint64 MinReadBufferBytes = 32 * 1024;
/// A configured socket receive buffer (TransportOptions::receiveBufferBytes) below this is warned
/// about: a full window of it is as large as a loopback segment, and the sender then waits for
/// the zero-window probe (~200 ms) again and again.
constexpr qint64 SmallReceiveBufferBytes = 256 * 1024;
/// Qt's read buffer of each of @p connections inbound sockets: together at most half of
/// @p maxPending (what a paused reader leaves in Qt's buffers adds to what waits for delivery, so
/// memory is bounded by the configuration, not by the number of senders), each a power of two
/// between MinReadBufferBytes and DefaultReadBufferBytes (a few sizes only: resized rarely).
constexpr qint64 readBufferBytesFor(qint64 connections, qint64 maxPending)
{
    qint64 size = DefaultReadBufferBytes;
    while (size > MinReadBufferBytes && size * 2 * connections > maxPending)
        size /= 2;
    return size;
}

struct TransportOptions
{
    int senderThreads = 2;
    int readerThreads = 2;
    qint64 maxQueueBytes = 8 * 1024 * 1024; ///< per destination
    qint64 maxMessageSize = wire_format::DefaultMaxMessageSize;
    qint64 maxPendingDelivery = 32 * 1024 * 1024; ///< decoded bytes waiting for a sink
    int idleTimeoutMs = 60000;
    int connectTimeoutMs = 5000;
    /// Kernel and Qt buffer of each inbound socket (0: the system's kernel buffer, Qt's
    /// DefaultReadBufferBytes)
    qint64 receiveBufferBytes = 0;
    // Inbound connections before their HELLO cost a descriptor and memory and say nothing about who
    // they are: they get a time-out and are capped, per source address and in total.
    int handshakeTimeoutMs = 5000;     ///< an inbound connection without HELLO by then is closed
    int maxHandshaking = 1024;         ///< inbound connections waiting for their HELLO, in total
    int maxHandshakingPerAddress = 64; ///< the same, from one source address
    /// Inbound connections past their handshake, in total (0: as many as the descriptor limit
    /// leaves room for) and from one source address; see ConnectionLimits.
    int maxConnections = 0;
    int maxConnectionsPerAddress = 1024;
    int listenBacklog = 1024; ///< the kernel's queue of connections not yet accepted
    /// The partition's shared secret: every connection, both ways, proves it (challenge-response
    /// with AUTH frames) before any frame is accepted or sent. Empty: no authentication.
    QByteArray secret;
    /// This process's key (security::processKey), for the name in its HELLO: with a secret, every
    /// outgoing connection proves that name with it in its AUTH. Empty: no proof of a name.
    QByteArray identityKey;
    /// The partition's identity secret (the Control Server's): an inbound connection that offers
    /// a proof of its name is checked against the key of that name, refused when it is wrong, and
    /// marked PeerInfo::proven when it is right. Empty: proofs of names are not looked at.
    QByteArray identitySecret;
    /// TLS with mutual authentication on every connection (see security::tlsConfiguration). Null:
    /// plain TCP.
    std::shared_ptr<const QSslConfiguration> tls;
    /// listen() beyond loopback without a secret all the same (else it refuses, saying why).
    bool insecure = false;
    /// A frame for a destination whose queue is empty (nothing queued, nothing left in the socket's
    /// buffer) is written straight to the socket from the calling thread, without waking the
    /// sender thread; what the socket does not take is queued, first in line, for the sender thread.
    /// Never with TLS (the QSslSocket encrypts in the sender thread).
    bool directWrites = true;
    /// Latency: a reader thread that received a frame less than this many µs ago polls its sockets
    /// (without sleeping) until the rest of that time has passed before its event loop blocks, so
    /// that the answer to what it just delivered finds it awake. On a virtual machine a sleeping
    /// core takes tens of µs to wake. Costs at most this much CPU per received burst; 0: never.
    int receiveSpinUs = 0;
    /// Within this many ns of the previous direct write to the same destination frames are queued
    /// instead: a burst is written by the sender thread in chunks of many frames, not one system
    /// call per frame.
    qint64 directWriteGapNs = 10000;
    /// Larger frames always go through the sender thread.
    qint64 directWriteMaxBytes = 64 * 1024;
    /// A corked thread (Transport::cork) holds frames at most this long: the next frame it sends
    /// after that writes everything it holds.
    qint64 corkHoldNs = 100000;
};

class SenderWorker;

/// The write side of one destination's socket, and its only owner. Every frame for the destination
/// enters this object's queue, and this object decides who writes the head of that queue:
/// - the calling thread, at once (TransportOptions::directWrites): the queue was empty, the
///   connection shares its descriptor, and the last such write was not within directWriteGapNs;
/// - the calling thread, later (a cork, Transport::cork): the frame is held until the cork ends,
///   corkHoldNs passes or the corking thread's event loop turns;
/// - the sender thread, which owns the connection (opens, authenticates, closes it) and writes
///   whatever the other two leave, in order.
/// Whoever writes takes the bytes from the head of the one queue, so frames leave in the order of
/// the calls. Thread-safe (one mutex, m_lock); owned jointly by the transport and its users.
class Outbox : public std::enable_shared_from_this<Outbox>
{
public:
    const Endpoint endpoint;

    Outbox(const Endpoint &e, SenderWorker *sender, const TransportOptions &options);
    ~Outbox();

    std::atomic<quint64> framesSent{0};
    std::atomic<quint64> bytesSent{0};
    std::atomic<quint64> framesDropped{0}; ///< refused when full, or discarded with a failed connection
    std::atomic<quint64> reconnects{0};    ///< connections opened to this destination, the first included
    /// Frames written (in full or in part) from the calling thread (directly or by a cork).
    std::atomic<quint64> directWrites{0};
    /// Of those, frames the socket took only in part: the rest went to the sender thread.
    std::atomic<quint64> directPartial{0};
    /// Bytes queued and not yet written (held by a cork, waiting for the sender thread, or in the
    /// sender thread's socket).
    qint64 queuedBytes() const
    {
        QMutexLocker l(&m_lock);
        return m_queued;
    }

    /// The most a cork holds for one destination.
    static constexpr qint64 CorkMaxBytes = 64 * 1024;

    /// Who writes a frame: submit()'s decision.
    enum class Writer
    {
        Refused, ///< no room (counted as dropped)
        Caller,  ///< written from the calling thread at once (what the socket did not take: Sender)
        Cork,    ///< held for the corking thread
        Sender   ///< queued for the sender thread
    };
    /// What the caller of submit() is and asks for.
    struct Admission
    {
        bool corked = false; ///< the calling thread holds a cork (Transport::cork)
        int blockMs = 0;     ///< > 0: wait this long for room (a blocking send is never held)
        qint64 bound = 0;    ///< the queue's bound for this frame (0: TransportOptions::maxQueueBytes)
    };
    struct Outcome
    {
        Writer writer = Writer::Refused;
        bool firstHeld = false; ///< Cork: the box held nothing before (the cork lists it)
    };

    /// Takes one frame of @p size bytes: @p append(Outbox &) puts it into the queue with
    /// appendPieces() or appendSmall(), then the frame is written by the writer decided here.
    /// Never blocks unless Admission::blockMs > 0. Called with m_lock not held.
    template <typename Append> Outcome submit(qint64 size, const Admission &a, Append &&append)
    {
        Outcome out;
        bool wake = false;
        {
            QMutexLocker l(&m_lock);
            out.writer = chooseWriter(size, a);
            if (out.writer == Writer::Refused)
                return out;
            append(*this);
            wake = take(out.writer, size, &out.firstHeld);
        }
        framesSent.fetch_add(1, std::memory_order_relaxed);
        if (wake)
            wakeSender();
        return out;
    }
    /// For submit()'s @p append: the pieces of one frame, shared (never copied).
    void appendPieces(std::initializer_list<QByteArray> pieces);
    /// For submit()'s @p append: @p write(QByteArray &) appends exactly @p size encoded bytes to the
    /// queue's current chunk (no allocation on the hot path).
    template <typename Encode> void appendSmall(qint64 size, Encode &&write)
    {
        Chunk &chunk = smallChunk(size);
        write(chunk.bytes);
        ++chunk.frames;
    }

    /// The corking thread, at the end of its cork: writes what it holds, as many frames as the
    /// socket takes per system call (the rest goes to the sender thread). Returns the system calls
    /// made. Called with m_lock not held.
    quint64 writeHeld();
    /// Runs @p fn from the sender thread once the queue holds at most @p level bytes; false (and
    /// @p fn not taken) when it already does. Frames a cork holds become the sender thread's.
    bool whenRoom(qint64 level, std::function<void()> &fn);
    /// Blocks until everything queued was written (or dropped with a failed connection), or until
    /// @p deadline; false on time-out. Frames a cork holds become the sender thread's.
    bool waitUntilWritten(QDeadlineTimer deadline);

    /// A run of bytes in the queue.
    struct Chunk
    {
        QByteArray bytes;
        qint64 frames = 0; // frames that end in this chunk (a large frame may span two chunks)
    };

    // The sender thread's side: it owns the connection and tells the outbox what became of it.
    /// A connection is being opened; returns its generation (accounting from an older one is ignored).
    quint64 connectionOpened() const;
    /// The connection of @p generation is up (and authenticated, without TLS): @p fd, a duplicate
    /// of its descriptor, may be written from the calling threads. Taken over (closed here).
    void shareDescriptor(int fd, quint64 generation);
    /// No more writes from the calling threads (the connection is going away).
    void unshareDescriptor();
    /// The sender thread handed @p bytes of its own (HELLO, AUTH) to the connection of @p generation.
    void handed(qint64 bytes, quint64 generation);
    /// The socket of @p generation wrote @p bytes; returns the whenRoom() callbacks now due (the
    /// caller runs them without the lock).
    std::vector<std::function<void()>> written(qint64 bytes, quint64 generation);
    /// The frames waiting for the sender thread, now its own (held frames included, first).
    QList<Chunk> takeForSender();
    /// The connection failed: everything queued is discarded. Returns the queued bytes and the
    /// frames in the queue that were discarded.
    std::pair<qint64, qint64> discard();
    /// For the idle time-out: true when nothing was written or queued since the last look; the
    /// queue's accounting then restarts with the next connection.
    bool closeIfIdle();

private:
    // All called with m_lock held.
    Writer chooseWriter(qint64 size, const Admission &a);
    bool mayHold(qint64 size, const Admission &a);
    bool waitForRoom(qint64 size, int blockMs, qint64 bound);
    bool mayWriteNow(qint64 size);
    /// Accounts for the frame just appended as @p writer's, writes it when that is the caller; true
    /// when the sender thread is to be woken (outside the lock).
    bool take(Writer writer, qint64 size, bool *firstHeld);
    /// Writes the head of the queue from the calling thread until the socket takes no more; returns
    /// the system calls made, with the frames completed and whether the last was taken in part.
    quint64 writeHead(quint64 *frames, bool *partial);
    Chunk &smallChunk(qint64 size);
    /// The sender thread is to write the queue (held frames first); true when it must be woken.
    bool leaveToSender();
    /// leaveToSender(), waking the sender thread at once.
    void handOverHeld();
    void wakeSender();
    void closeDescriptor();

    SenderWorker *const m_sender;
    const qint64 m_maxQueueBytes;
    const qint64 m_directMaxBytes; // 0: no direct writes
    const qint64 m_directGapNs;

    mutable QMutex m_lock;
    QWaitCondition m_room;
    QList<Chunk> m_chunks; // the queue
    qint64 m_queued = 0;   // bytes in m_chunks + bytes handed to the socket but not yet written
    bool m_wakePosted = false;
    quint64 m_generation = 0; // bumped when the connection fails or closes
    // Run (in the sender thread) once the queue holds at most `first` bytes (see whenRoom).
    std::vector<std::pair<qint64, std::function<void()>>> m_onRoom;
    // A duplicate of the connection's descriptor while frames may be written to it from the calling
    // threads (connected, authenticated, no TLS); -1 otherwise. Written to and closed only under
    // m_lock: the sender thread closes it before its socket, so it never names another file.
    int m_directFd = -1;
    /// Bytes at the head of m_chunks held by a cork, with nothing before them in the socket: the
    /// corking thread writes them itself. 0 as soon as the sender thread is to write the queue.
    qint64 m_corkedBytes = 0;
    qint64 m_lastDirectNs = 0; // when the calling thread last wrote (steady clock)
    quint64 m_directSeen = 0;  // directWrites when the idle time-out last looked
    QByteArray m_spare;        // a small-frame chunk written by the caller, kept for the next
};
using OutboxPtr = std::shared_ptr<Outbox>;

/// Loads the shared secret in @p secretFile and the TLS files @p tls (each optional) into @p to.
/// False with @p error when one is given but cannot be used.
bool applySecurity(const QString &secretFile, const security::TlsFiles &tls, TransportOptions &to,
                   QString *error);

class ReaderWorker;
class Listener;

class Transport : public QObject
{
    Q_OBJECT
public:
    using Sink = std::function<void(InboundBatch &)>;
    enum class SendResult
    {
        Queued,
        Full
    };

    explicit Transport(const TransportOptions &options, QObject *parent = nullptr);
    ~Transport() override;

    const TransportOptions &options() const { return m_options; }

    /// Listens on @p address:@p port (0 = any free port). Blocking; call once before traffic.
    bool listen(const QHostAddress &address, quint16 port, QString *error);
    quint16 serverPort() const { return m_port; }

    /// The HELLO sent first on every outgoing connection.
    void setIdentity(const PeerInfo &self);
    PeerInfo identity() const;

    /// Sinks are called in @p context's thread with batches of frames. Set before listen().
    void setControlSink(QObject *context, Sink sink);
    /// With @p resumable, the sink marks each frame it takes (Inbound::taken) and skips the marked
    /// ones: a delivery entered from a nested event loop in the sink's slots then first hands it
    /// again the batches of the deliveries it interrupted, so that their frames are taken before
    /// newer ones (none overtakes an older one).
    void setDataSink(QObject *context, Sink sink, bool resumable = false);

    /// Optional: called in the reader thread for each data frame before it is queued for the data
    /// sink; returns true if it consumed the frame (a router that must not wait for another thread,
    /// or a receiver that asked for direct delivery). Must be thread-safe. Set before listen(). With
    /// @p rawCommands (a router) it sees COMMAND_MESSAGE frames only, and their data is left as it
    /// came (Inbound::flags says whether it is compressed; compressed data has been checked to
    /// decompress within the bound), for it as for the data sink; without, it sees every data frame
    /// decoded as the data sink would.
    using DirectRoute = std::function<bool(const Inbound &)>;
    void setDirectRoute(DirectRoute route, bool rawCommands = true)
    {
        m_directRoute = std::move(route);
        m_routeRawCommands = rawCommands;
    }

    /// The outgoing queue for a destination (created on first use). Thread-safe.
    OutboxPtr outbox(const Endpoint &destination);
    /// Queues frames for a destination. Thread-safe, never blocks unless @p blockMs > 0: then waits
    /// up to that long for room. A single message larger than the bound is accepted into an empty queue.
    /// @p bound: the queue's bound for these frames (0: TransportOptions::maxQueueBytes).
    SendResult send(const OutboxPtr &box, std::initializer_list<QByteArray> frames, int blockMs = 0,
                    qint64 bound = 0);
    SendResult send(const OutboxPtr &box, const QByteArray &frame, int blockMs = 0, qint64 bound = 0)
    {
        return send(box, {frame}, blockMs, bound);
    }
    /// Appends a small frame to the queue's current chunk (no allocation on the hot path).
    /// @p write(QByteArray &) appends exactly @p size encoded bytes.
    template <typename Writer>
    SendResult sendSmall(const OutboxPtr &box, qint64 size, Writer &&write, int blockMs = 0)
    {
        return sent(box, box->submit(size, admission(blockMs, 0),
                                     [&](Outbox &b) { b.appendSmall(size, std::forward<Writer>(write)); }));
    }

    /// Corks this thread's sends: a frame for a destination with nothing queued (that would be
    /// written from the calling thread) is held instead, and what is held for each destination is
    /// written with one system call at the outermost uncork(), so that the replies and updates a
    /// thread sends while it handles a batch of deliveries leave together rather than one system
    /// call (and one wake-up of the receiver) each. Nothing is held longer than
    /// TransportOptions::corkHoldNs (checked as frames are sent), past
    /// Outbox::CorkMaxBytes per destination, or for a blocking send; a nested event loop (a slot waiting
    /// for a reply) writes what is held as it starts turning (a posted flush, @p context's thread
    /// = this thread). Nests. Only for the thread that calls it.
    void cork(QObject *context);
    void uncork();

    /// Runs @p fn once the queue of @p box has drained to half its bound (at once if it already has),
    /// or, with @p bytes, once a message of that many bytes fits (the queue is empty, or it fits
    /// within the bound). Called from the sender thread; dropped if the connection fails.
    void whenRoom(const OutboxPtr &box, std::function<void()> fn, qint64 bytes = 0);

    /// Blocks until everything queued for every destination was written (or dropped with its failed
    /// connection), or until @p deadline; false on time-out. Waits on each queue's condition (woken
    /// by the sender threads), never polls. Thread-safe; called with no outbox lock held.
    bool waitUntilWritten(QDeadlineTimer deadline);

    /// Writes @p frame back on the inbound connection @p peer came by (not to where it listens):
    /// the answer to a peer that cannot be reached at the address it claims. Thread-safe; dropped
    /// if that connection is gone. The peer's transport reports it with answered().
    void answer(const PeerPtr &peer, const QByteArray &frame);

    /// Communication figures summed over all destinations and connections.
    struct Stats
    {
        quint64 framesOut = 0, bytesOut = 0, framesDropped = 0, reconnects = 0;
        quint64 framesIn = 0, bytesIn = 0, protocolErrors = 0;
        /// Connections refused, or given up, for a failed authentication or TLS handshake (both ways).
        quint64 authFailures = 0;
        qint64 queuedBytes = 0;
        int outgoingConnections = 0, incomingConnections = 0;
        /// Times freed heap was handed back to the system after a burst of received data.
        quint64 heapTrims = 0;
        /// TransportOptions::receiveSpinUs: times a reader stayed awake before sleeping, and times
        /// data arrived while it did (its wake-up saved).
        quint64 receiveSpins = 0, receiveSpinHits = 0;
        /// The same for the data sink's thread (it stays awake for the next delivery).
        quint64 sinkSpins = 0, sinkSpinHits = 0;
        /// Frames a cork held (see cork()), and the system calls that wrote them.
        quint64 heldFrames = 0, heldWrites = 0;
    };
    Stats stats() const;
    /// See trimAfterBurst().
    static constexpr qint64 TrimAfterBytes = 8 * 1024 * 1024;
    static constexpr qint64 TrimLowBytes = 1024 * 1024;
    static constexpr int TrimQuietMs = 1000;

Q_SIGNALS:
    /// Emitted (from a sender thread) when a destination cannot be reached or its connection broke;
    /// everything queued for it was dropped and counted. (Arguments of Qt's own types only: Qt
    /// copies them for queued connections in its own code, outside ThreadSanitizer's view; a type
    /// of ours would be copied by our instrumented code, unordered with the receiving thread.)
    void destinationFailed(const QString &host, quint16 port, const QString &reason);
    /// Emitted (from a reader thread) when an inbound connection was closed for a protocol error.
    /// @p name / @p incarnation identify the sender if it had sent its HELLO (else empty / 0), as
    /// it claimed them; @p connectionId is its PeerInfo::connectionId (0 before its HELLO).
    void protocolError(const QString &peer, const QString &reason, const QString &name, quint64 incarnation,
                       quint64 connectionId);
    /// Emitted (from a sender thread) for a REFUSED frame a destination wrote back on our outgoing
    /// connection to it (see answer()); other frames there are a protocol error.
    void answered(const QString &host, quint16 port, const QByteArray &refusedPayload);
    /// Emitted (from a reader thread) when an identified peer closed its connection to us.
    void peerClosed(const QString &name, quint64 incarnation);

private:
    friend class SenderWorker;
    friend class ReaderWorker;
    friend class Listener;

    struct DeliveryQueue
    {
        QMutex lock;
        /// The readers' batches as they came, with their bytes (InboundOverhead included): handed
        /// over whole, never merged (merging moved every queued Inbound again each time).
        std::vector<std::pair<InboundBatch, qint64>> items;
        bool posted = false;
        QPointer<QObject> context; // a deleted context takes its posted deliveries with it
        Sink sink;
        bool resumable = false; // see setDataSink()
        // The context's thread only: the batches of the drains in progress, outermost first.
        std::vector<std::vector<std::pair<InboundBatch, qint64>> *> inProgress;
    };
    void deliver(DeliveryQueue &q, InboundBatch &items, qint64 bytes);
    void drain(DeliveryQueue &q);
    /// An empty batch with room for many small messages, reused: a batch used to be allocated
    /// (~120 KiB) and grown for every read, and freed after its delivery, which cost the subscriber
    /// of small messages more than decoding them. Thread-safe.
    InboundBatch takeBatch();
    /// Empties @p batch and keeps it for takeBatch() (a few at most). Thread-safe.
    void recycleBatch(InboundBatch &&batch);
    static constexpr qsizetype BatchReserve = 1024;
    static constexpr size_t BatchPoolSize = 8;
    QMutex m_batchLock;
    std::vector<InboundBatch> m_batchPool; // guarded by m_batchLock
    bool deliveryBlocked() const { return m_pendingDelivery.load() > m_options.maxPendingDelivery; }
    /// After a burst (TrimAfterBytes or more waited for delivery) has been delivered, hands the
    /// freed heap back to the system once delivery stays low for TrimQuietMs: the allocator keeps
    /// freed memory of its per-thread arenas otherwise, and a subscriber at rest would hold its
    /// busiest moment for ever. Called in a sink's thread after a drain.
    void trimAfterBurst();
    void acceptDescriptor(qintptr fd);
    Outbox::Admission admission(int blockMs, qint64 bound) const
    {
        return Outbox::Admission{corkedHere(), blockMs, bound};
    }
    /// What send() and sendSmall() return for @p outcome; a frame held by this thread's cork is
    /// noted for its flush.
    SendResult sent(const OutboxPtr &box, const Outbox::Outcome &outcome);
    /// Whether this thread holds a cork (see cork()).
    bool corkedHere() const
    {
        const Qt::HANDLE corking = m_corkThread.load(std::memory_order_relaxed);
        return corking && corking == QThread::currentThreadId(); // one load when nobody corks
    }
    /// The corking thread, after @p box held a frame (@p first: its first since the last flush):
    /// lists the box, posts the flush for a nested event loop, flushes after corkHoldNs.
    void noteHeld(const OutboxPtr &box, bool first);
    /// Writes what is held, from this thread (the rest goes to the sender threads).
    void flushCorked();
    std::atomic<Qt::HANDLE> m_corkThread{nullptr};
    std::atomic<quint64> m_heldFrames{0}, m_heldWrites{0};
    // The corking thread's own:
    int m_corkDepth = 0;
    qint64 m_corkSinceNs = 0;
    QObject *m_corkContext = nullptr;
    bool m_corkFlushPosted = false;
    std::vector<OutboxPtr> m_corkedBoxes;

    TransportOptions m_options;
    quint16 m_port = 0;
    QList<QThread *> m_threads;
    QList<SenderWorker *> m_senders;
    QList<ReaderWorker *> m_readers;
    /// Inbound connections in their handshake and past it (reader threads).
    ConnectionLimits m_limits;
    std::atomic<quint64> m_nextConnectionId{1};
    /// Counts in @p times and logs @p what, a connection given up or refused for a cap, the first
    /// time and then at 2, 4, 8, … times (a flood logs a few lines, not one per connection).
    /// Thread-safe.
    void capReached(std::atomic<quint64> &times, const QString &what);
    std::atomic<quint64> m_handshakesGivenUp{0}, m_connectionsRefused{0};
    /// Counts a failed authentication (or TLS handshake) with @p peer and logs it: the first time
    /// for that address and then at 2, 4, 8, … times, not at every retry. Thread-safe.
    void authFailed(const QHostAddress &address, const QString &peer, const QString &reason);
    QHash<QHostAddress, quint64> m_authFailuresFrom; // guarded by m_handshakeLock
    QMutex m_handshakeLock;
    Listener *m_listener = nullptr;
    QThread *m_listenerThread = nullptr;
    std::mutex m_joined; // see startThread() in transport.cpp
    std::atomic<int> m_nextReader{0};
    std::atomic<int> m_nextSender{0};

    mutable QMutex m_outboxLock;
    QHash<Endpoint, OutboxPtr> m_outboxes;
    mutable QMutex m_identityLock;
    PeerInfo m_identity;

    DirectRoute m_directRoute;
    bool m_routeRawCommands = true;
    DeliveryQueue m_control;
    DeliveryQueue m_data;
    std::atomic<qint64> m_pendingDelivery{0};
    std::atomic<qint64> m_pendingHigh{0}; // highest m_pendingDelivery since the last trim
    std::atomic<bool> m_trimScheduled{false};
    std::atomic<quint64> m_heapTrims{0};
    std::atomic<quint64> m_receiveSpins{0}, m_receiveSpinHits{0};
    std::atomic<quint64> m_sinkSpins{0}, m_sinkSpinHits{0};
    std::atomic<int> m_postsPending{0};   // drains posted to a sink's thread, not yet started
    std::atomic<qint64> m_lastDrainNs{0}; // steady clock, the end of the last drain (spin only)
    /// receiveSpinUs: called by the data sink thread's dispatcher just before that thread sleeps.
    void spinForDeliveries();
    std::atomic<bool> m_readersPaused{false};

    std::atomic<quint64> m_framesIn{0}, m_bytesIn{0}, m_protocolErrors{0}, m_authFailures{0};
    std::atomic<int> m_incoming{0}, m_outgoing{0};
};

} // namespace dialog::net

Q_DECLARE_METATYPE(dialog::net::Endpoint)
