#include "transport_p.h"

#include "control_p.h"
#include "dialog/handoff.h"
#include "transport_workers_p.h"

#include <QAbstractEventDispatcher>
#include <QCoreApplication>
#include <QThread>
#include <QTimer>

#include <atomic>
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#include <mutex>
#include <time.h>

Q_LOGGING_CATEGORY(lcSender, "dialog.net.sender", QtInfoMsg)
Q_LOGGING_CATEGORY(lcReceiver, "dialog.net.receiver", QtInfoMsg)

namespace dialog::net {

bool Endpoint::parse(const QString &text, Endpoint &out)
{
    const int colon = text.lastIndexOf(QLatin1Char(':'));
    if (colon <= 0)
        return false;
    bool ok = false;
    const uint port = text.mid(colon + 1).toUInt(&ok);
    if (!ok || port == 0 || port > 65535)
        return false;
    out.host = text.left(colon);
    out.port = quint16(port);
    return true;
}

bool applySecurity(const QString &secretFile, const security::TlsFiles &tls, TransportOptions &to,
                   QString *error)
{
    Status st = secretFile.isEmpty() ? Status() : security::readSecretFile(secretFile, &to.secret);
    QSslConfiguration config;
    if (st.isOk() && !tls.isEmpty())
        st = security::tlsConfiguration(tls, &config);
    if (!st.isOk()) {
        if (error)
            *error = st.message();
        return false;
    }
    if (tls.isEmpty())
        return true;
    to.tls = std::make_shared<const QSslConfiguration>(config);
    return true;
}

namespace {
// Starts @p worker's thread and returns once that thread runs its event loop's dispatcher. Qt
// publishes a new thread's event dispatcher (and its wake-up eventfd) through atomics in
// uninstrumented libQt6Core; waiting here on a wait condition (handoff::waitOn()), signalled from
// the new thread's started(), makes that ordering visible to ThreadSanitizer for every later post
// to the thread. The worker, when it is destroyed at the thread's end, passes through @p joined: the
// destructor of the transport takes it after QThread::wait() (whose own ordering TSan cannot see
// when the thread had already finished). Neither is on a per-message path.
QThread *startThread(const QString &name, QObject *worker, std::mutex *joined)
{
    auto *t = new QThread;
    t->setObjectName(name);
    worker->moveToThread(t);
    QObject::connect(t, &QThread::finished, worker, &QObject::deleteLater);
    QObject::connect(
        worker, &QObject::destroyed, t, [joined] { std::lock_guard<std::mutex> l(*joined); },
        Qt::DirectConnection);
    // A QMutex and handoff::waitOn(): their ordering is annotated for ThreadSanitizer, which did not see
    // this wait through std::condition_variable (libstdc++ is not instrumented).
    struct
    {
        QMutex lock;
        QWaitCondition cond;
        std::atomic<bool> running{false};
    } start;
    const auto started = QObject::connect(
        t, &QThread::started, t,
        [&start, t] {
            handoff::tsanAcquire(t); // see net::startThread()
            QMutexLocker l(&start.lock);
            start.running.store(true);
            start.cond.wakeAll();
        },
        Qt::DirectConnection);
    handoff::tsanRelease(t);
    t->start();
    {
        QMutexLocker l(&start.lock);
        while (!start.running.load())
            handoff::waitOn(start.cond, start.lock);
    }
    QObject::disconnect(started);
    return t;
}
} // namespace

Transport::Transport(const TransportOptions &options, QObject *parent)
    : QObject(parent), m_options(options),
      m_limits(ConnectionLimits::Caps{options.maxHandshaking, options.maxHandshakingPerAddress,
                                      options.maxConnections, options.maxConnectionsPerAddress})
{
    qRegisterMetaType<dialog::net::Endpoint>();
    m_options.senderThreads = qMax(1, m_options.senderThreads);
    m_options.readerThreads = qMax(1, m_options.readerThreads);
    if (m_options.receiveBufferBytes > 0 && m_options.receiveBufferBytes < SmallReceiveBufferBytes)
        qCWarning(lcReceiver).noquote()
            << QStringLiteral("receive buffer of %1 bytes: below %2 a busy connection may stall for "
                              "about 200 ms at a time (the window fills, the sender waits for the kernel's "
                              "zero-window probe; loopback's segments are 64 KiB)")
                   .arg(m_options.receiveBufferBytes)
                   .arg(SmallReceiveBufferBytes);
    for (int i = 0; i < m_options.senderThreads; ++i) {
        auto *w = new SenderWorker(this);
        m_senders.append(w);
        m_threads.append(startThread(QStringLiteral("dialog-sender-%1").arg(i), w, &m_joined));
    }
    for (int i = 0; i < m_options.readerThreads; ++i) {
        auto *w = new ReaderWorker(this);
        m_readers.append(w);
        m_threads.append(startThread(QStringLiteral("dialog-reader-%1").arg(i), w, &m_joined));
    }
}

Transport::~Transport()
{
    // Listener and readers first (no more inbound frames), then the senders.
    if (m_listenerThread) {
        m_listenerThread->quit();
        m_listenerThread->wait();
        std::lock_guard<std::mutex> l(m_joined);
        delete m_listenerThread;
    }
    for (QThread *t : std::as_const(m_threads)) {
        t->quit();
        t->wait();
    }
    {
        // Every worker was destroyed in its thread and passed through m_joined (see startThread).
        std::lock_guard<std::mutex> l(m_joined);
    }
    qDeleteAll(m_threads);
    // Deliveries posted but not run must not reach a destroyed transport.
    if (m_control.context)
        QCoreApplication::removePostedEvents(m_control.context, QEvent::MetaCall);
    if (m_data.context)
        QCoreApplication::removePostedEvents(m_data.context, QEvent::MetaCall);
}

bool Transport::listen(const QHostAddress &address, quint16 port, QString *error)
{
    Q_ASSERT(!m_listener);
    // Listen here, then move the listening server to its thread and start that thread: the results
    // (m_port, the error) never cross threads, and whatever the server set up happens before the
    // thread starts (pthread_create orders it, for ThreadSanitizer too). QSocketNotifier re-arms
    // itself in the new thread. The calling thread needs an event dispatcher (any QThread or the
    // main thread of a QCoreApplication).
    if (m_options.secret.isEmpty() && !address.isLoopback() && !m_options.insecure) {
        if (error)
            *error = QStringLiteral("refusing to listen on %1:%2 without a shared secret: any process that "
                                    "can reach this port would be believed; give the partition's "
                                    "--secret-file (dialogctl secret generate makes one), or --insecure to "
                                    "run open all the same")
                         .arg(address.toString())
                         .arg(port);
        return false;
    }
    auto *listener = new Listener(this);
    // Qt accepts in a loop (until EAGAIN) on each notification; the backlog absorbs bursts.
    listener->setListenBacklogSize(m_options.listenBacklog);
    if (!listener->listen(address, port)) {
        if (error)
            *error = QStringLiteral("cannot listen on %1:%2: %3")
                         .arg(address.toString())
                         .arg(port)
                         .arg(listener->errorString());
        delete listener;
        return false;
    }
    m_port = listener->serverPort();
    if (m_options.secret.isEmpty() && !address.isLoopback())
        qCWarning(lcReceiver).noquote()
            << QStringLiteral("listening on %1:%2 without a shared secret: any process that can reach "
                              "this port is believed (--insecure; see --secret-file)")
                   .arg(address.toString())
                   .arg(m_port);
    m_listener = listener;
    m_listenerThread = startThread(QStringLiteral("dialog-receiver"), m_listener, &m_joined);
    return true;
}

void Transport::setIdentity(const PeerInfo &self)
{
    QMutexLocker l(&m_identityLock);
    m_identity = self;
}

PeerInfo Transport::identity() const
{
    QMutexLocker l(&m_identityLock);
    return m_identity;
}

// Under the queue's lock: Client::start() sets its control sink after listen(), when a reader
// thread may already deliver (any peer may connect once we listen) and read the context.
void Transport::setControlSink(QObject *context, Sink sink)
{
    QMutexLocker l(&m_control.lock);
    m_control.context = context;
    m_control.sink = std::move(sink);
}

void Transport::setDataSink(QObject *context, Sink sink, bool resumable)
{
    {
        QMutexLocker l(&m_data.lock);
        m_data.context = context;
        m_data.sink = std::move(sink);
        m_data.resumable = resumable;
    }
    // receiveSpinUs: the sink's thread, too, stays awake a while after a delivery (the answer to
    // what it delivered, or the next message, finds it awake). Its dispatcher says when it is about
    // to sleep; the connection goes with the context.
    QAbstractEventDispatcher *dispatcher =
        context ? QAbstractEventDispatcher::instance(context->thread()) : nullptr;
    if (m_options.receiveSpinUs > 0 && dispatcher)
        connect(
            dispatcher, &QAbstractEventDispatcher::aboutToBlock, context, [this] { spinForDeliveries(); },
            Qt::DirectConnection);
}

void Transport::spinForDeliveries()
{
    const qint64 until =
        m_lastDrainNs.load(std::memory_order_relaxed) + qint64(m_options.receiveSpinUs) * 1000;
    if (steadyNowNs() >= until)
        return;
    m_sinkSpins.fetch_add(1, std::memory_order_relaxed);
    // A delivery posted: the event loop takes it without sleeping.
    if (spinUntil(until, [this] { return m_postsPending.load(std::memory_order_relaxed) > 0; }))
        m_sinkSpinHits.fetch_add(1, std::memory_order_relaxed);
}

OutboxPtr Transport::outbox(const Endpoint &destination)
{
    QMutexLocker l(&m_outboxLock);
    OutboxPtr &box = m_outboxes[destination];
    if (!box)
        box = std::make_shared<Outbox>(destination,
                                       m_senders.at(m_nextSender.fetch_add(1) % m_senders.size()), m_options);
    return box;
}

Transport::SendResult Transport::send(const OutboxPtr &box, std::initializer_list<QByteArray> frames,
                                      int blockMs, qint64 bound)
{
    qint64 size = 0;
    for (const QByteArray &f : frames)
        size += f.size();
    return sent(box,
                box->submit(size, admission(blockMs, bound), [&](Outbox &b) { b.appendPieces(frames); }));
}

Transport::SendResult Transport::sent(const OutboxPtr &box, const Outbox::Outcome &outcome)
{
    switch (outcome.writer) {
    case Outbox::Writer::Refused:
        return SendResult::Full;
    case Outbox::Writer::Cork:
        noteHeld(box, outcome.firstHeld);
        break;
    case Outbox::Writer::Caller:
    case Outbox::Writer::Sender:
        break;
    }
    return SendResult::Queued;
}

void Transport::cork(QObject *context)
{
    if (m_corkDepth++ > 0)
        return;
    m_corkContext = context;
    m_corkThread.store(QThread::currentThreadId(), std::memory_order_relaxed);
}

void Transport::uncork()
{
    if (--m_corkDepth > 0)
        return;
    m_corkThread.store(nullptr, std::memory_order_relaxed);
    flushCorked();
}

void Transport::noteHeld(const OutboxPtr &box, bool first)
{
    m_heldFrames.fetch_add(1, std::memory_order_relaxed);
    const qint64 now = steadyNowNs();
    if (first) {
        if (m_corkedBoxes.empty())
            m_corkSinceNs = now;      // the first frame held since the last flush
        m_corkedBoxes.push_back(box); // a box handed over meanwhile holds nothing at the flush
    }
    if (!m_corkFlushPosted && m_corkContext) {
        // A slot that waits for an answer in a nested event loop must not wait for its own
        // request: the loop runs this before anything else it does.
        m_corkFlushPosted = true;
        QMetaObject::invokeMethod(m_corkContext, handoff::handOff([this] {
                                      m_corkFlushPosted = false;
                                      flushCorked();
                                  }),
                                  Qt::QueuedConnection);
    }
    if (now - m_corkSinceNs > m_options.corkHoldNs)
        flushCorked();
}

void Transport::flushCorked()
{
    if (m_corkedBoxes.empty())
        return;
    const std::vector<OutboxPtr> boxes = std::exchange(m_corkedBoxes, {});
    for (const OutboxPtr &box : boxes)
        m_heldWrites.fetch_add(box->writeHeld(), std::memory_order_relaxed);
}

void Transport::whenRoom(const OutboxPtr &box, std::function<void()> fn, qint64 bytes)
{
    const qint64 max = m_options.maxQueueBytes;
    const qint64 level = bytes <= 0 ? max / 2 : qMax<qint64>(0, qMin(max / 2, max - bytes));
    if (!box->whenRoom(level, fn))
        fn();
}

void Transport::acceptDescriptor(qintptr fd)
{
    ReaderWorker *r = m_readers.at(m_nextReader.fetch_add(1) % m_readers.size());
    QMetaObject::invokeMethod(r, handoff::handOff([r, fd] { r->addDescriptor(fd); }), Qt::QueuedConnection);
}

void Transport::capReached(std::atomic<quint64> &count, const QString &what)
{
    const quint64 times = count.fetch_add(1) + 1;
    if ((times & (times - 1)) == 0)
        qCWarning(lcReceiver).noquote()
            << what << (times > 1 ? QStringLiteral("(%1 connections so far)").arg(times) : QString());
}

void Transport::authFailed(const QHostAddress &address, const QString &peer, const QString &reason)
{
    m_authFailures.fetch_add(1);
    quint64 times = 0;
    {
        QMutexLocker l(&m_handshakeLock);
        if (m_authFailuresFrom.size() >= 4096 && !m_authFailuresFrom.contains(address))
            m_authFailuresFrom.clear(); // bounded: a flood from many addresses only logs more
        times = ++m_authFailuresFrom[address];
    }
    if ((times & (times - 1)) == 0)
        qCWarning(lcReceiver).noquote()
            << "authentication failed with" << peer << "-" << reason
            << (times > 1 ? QStringLiteral("(%1 times from %2)").arg(times).arg(address.toString())
                          : QString());
}

void Transport::deliver(DeliveryQueue &q, InboundBatch &items, qint64 bytes)
{
    if (items.isEmpty())
        return;
    const qint64 pending = m_pendingDelivery.fetch_add(bytes) + bytes;
    qint64 high = m_pendingHigh.load(std::memory_order_relaxed);
    while (pending > high && !m_pendingHigh.compare_exchange_weak(high, pending, std::memory_order_relaxed)) {
    }
    bool post = false;
    QObject *context = nullptr;
    {
        QMutexLocker l(&q.lock);
        q.items.emplace_back(std::move(items), bytes);
        // Without a sink yet the frames wait: the first delivery after it is set posts them.
        context = q.context;
        post = !q.posted && context;
        q.posted = q.posted || post;
    }
    if (post)
        m_postsPending.fetch_add(1, std::memory_order_relaxed);
    items.clear();
    if (post)
        QMetaObject::invokeMethod(context, handoff::handOff([this, &q] { drain(q); }), Qt::QueuedConnection);
}

void Transport::drain(DeliveryQueue &q)
{
    std::vector<std::pair<InboundBatch, qint64>> batches;
    {
        QMutexLocker l(&q.lock);
        batches.swap(q.items);
        q.posted = false;
    }
    m_postsPending.fetch_sub(1, std::memory_order_relaxed);
    if (q.resumable) {
        // Entered from a nested event loop in a slot of a delivery in progress: what the drains it
        // interrupted took is handed over first (the sink skips the frames it took already), so
        // that no message overtakes an older one; they keep their batches and free them. This
        // drain's own batches are listed first, for a drain nested in this one.
        q.inProgress.push_back(&batches);
        for (size_t f = 0; f + 1 < q.inProgress.size() && q.sink; ++f)
            for (auto &earlier : *q.inProgress[f])
                q.sink(earlier.first);
    }
    qint64 bytes = 0;
    for (auto &[batch, batchBytes] : batches) {
        if (q.sink)
            q.sink(batch);
        bytes += batchBytes;
        recycleBatch(std::move(batch));
    }
    if (q.resumable)
        q.inProgress.pop_back();
    m_pendingDelivery.fetch_sub(bytes);
    if (m_options.receiveSpinUs > 0)
        m_lastDrainNs.store(steadyNowNs(), std::memory_order_relaxed);
    trimAfterBurst();
    // Readers set the flag before re-checking deliveryBlocked(), so a pause is never missed here.
    if (!deliveryBlocked() && m_readersPaused.exchange(false)) {
        for (ReaderWorker *r : std::as_const(m_readers))
            QMetaObject::invokeMethod(r, handoff::handOff([r] { r->resume(); }), Qt::QueuedConnection);
    }
}

InboundBatch Transport::takeBatch()
{
    {
        QMutexLocker l(&m_batchLock);
        if (!m_batchPool.empty()) {
            InboundBatch b = std::move(m_batchPool.back());
            m_batchPool.pop_back();
            return b;
        }
    }
    InboundBatch b;
    b.reserve(BatchReserve);
    return b;
}

void Transport::recycleBatch(InboundBatch &&batch)
{
    if (batch.capacity() < BatchReserve || batch.capacity() > 4 * BatchReserve || !batch.isDetached())
        return;    // not worth keeping, or too large to hold on to
    batch.clear(); // keeps the capacity (Qt 6)
    QMutexLocker l(&m_batchLock);
    if (m_batchPool.size() < BatchPoolSize)
        m_batchPool.push_back(std::move(batch));
}

void Transport::trimAfterBurst()
{
#if defined(__GLIBC__)
    if (m_pendingHigh.load(std::memory_order_relaxed) < TrimAfterBytes ||
        m_pendingDelivery.load(std::memory_order_relaxed) > TrimLowBytes || m_trimScheduled.exchange(true))
        return;
    // In this object's thread (a timer dies with it); everything it touches is atomic.
    QTimer::singleShot(TrimQuietMs, this, [this] {
        m_trimScheduled = false;
        if (m_pendingDelivery.load(std::memory_order_relaxed) > TrimLowBytes)
            return; // busy again: the next drain asks again
        m_pendingHigh.store(m_pendingDelivery.load(std::memory_order_relaxed), std::memory_order_relaxed);
        ::malloc_trim(0);
        m_heapTrims.fetch_add(1, std::memory_order_relaxed);
    });
#endif
}

bool Transport::waitUntilWritten(QDeadlineTimer deadline)
{
    if (corkedHere())
        flushCorked(); // waiting for frames this thread holds would wait for ever
    QList<OutboxPtr> boxes;
    {
        QMutexLocker l(&m_outboxLock);
        boxes = m_outboxes.values();
    }
    for (const OutboxPtr &b : std::as_const(boxes))
        if (!b->waitUntilWritten(deadline))
            return false;
    return true;
}

void Transport::answer(const PeerPtr &peer, const QByteArray &frame)
{
    auto *reader = peer ? qobject_cast<ReaderWorker *>(peer->reader) : nullptr;
    if (!reader)
        return;
    const void *connection = peer->connection;
    QMetaObject::invokeMethod(
        reader, handoff::handOff([reader, connection, frame] { reader->answer(connection, frame); }));
}

Transport::Stats Transport::stats() const
{
    Stats s;
    {
        QMutexLocker l(&m_outboxLock);
        for (const OutboxPtr &b : m_outboxes) {
            s.framesOut += b->framesSent.load();
            s.bytesOut += b->bytesSent.load();
            s.framesDropped += b->framesDropped.load();
            // The counter counts every connection opened; the first to a destination is no reconnect.
            const quint64 opened = b->reconnects.load();
            s.reconnects += opened > 0 ? opened - 1 : 0;
            s.queuedBytes += b->queuedBytes();
        }
    }
    s.framesIn = m_framesIn.load();
    s.bytesIn = m_bytesIn.load();
    s.protocolErrors = m_protocolErrors.load();
    s.authFailures = m_authFailures.load();
    s.heapTrims = m_heapTrims.load(std::memory_order_relaxed);
    s.receiveSpins = m_receiveSpins.load(std::memory_order_relaxed);
    s.receiveSpinHits = m_receiveSpinHits.load(std::memory_order_relaxed);
    s.sinkSpins = m_sinkSpins.load(std::memory_order_relaxed);
    s.heldFrames = m_heldFrames.load(std::memory_order_relaxed);
    s.heldWrites = m_heldWrites.load(std::memory_order_relaxed);
    s.sinkSpinHits = m_sinkSpinHits.load(std::memory_order_relaxed);
    s.incomingConnections = m_incoming.load();
    s.outgoingConnections = m_outgoing.load();
    return s;
}

Listener::Listener(Transport *t) : m_transport(t)
{
    // Qt stops accepting after an error such as "too many open files": accept again shortly, or
    // one moment without descriptors would close this process to every newcomer until restart.
    connect(this, &QTcpServer::acceptError, this, [this](QAbstractSocket::SocketError) {
        qCWarning(lcReceiver).noquote()
            << "cannot accept a connection:" << errorString() << "- accepting again in 100 ms";
        QTimer::singleShot(100, this, [this] { resumeAccepting(); });
    });
}

void Listener::incomingConnection(qintptr fd)
{
    m_transport->acceptDescriptor(fd);
}

} // namespace dialog::net
