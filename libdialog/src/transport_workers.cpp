#include "transport_workers_p.h"

#include "control_p.h"
#include "dialog/handoff.h"
#include "dialog/security.h"
#include "dialog/version.h"
#include "inbounddecoder_p.h"

#include <QAbstractEventDispatcher>
#include <QNetworkProxy>
#include <QSslSocket>
#include <QSysInfo>
#include <QTcpSocket>
#include <QTimer>

#include <fcntl.h>
#include <pwd.h>
#include <unistd.h>

namespace dialog::net {

namespace {
/// The name of the user this process runs as (claimed in HELLO for access lists and the audit).
QString processUser()
{
    static const QString user = [] {
        struct passwd pw;
        struct passwd *found = nullptr;
        char buffer[4096];
        if (::getpwuid_r(::geteuid(), &pw, buffer, sizeof buffer, &found) == 0 && found)
            return QString::fromLocal8Bit(found->pw_name);
        return QString::number(::geteuid());
    }();
    return user;
}
} // namespace

using namespace wire_format;

// ---------------------------------------------------------------- SenderWorker

SenderWorker::SenderWorker(Transport *transport) : m_transport(transport), m_timer(new QTimer(this))
{
    m_clock.start();
    // One periodic timer for idle and connect time-outs instead of one timer per socket.
    const int idle = m_transport->options().idleTimeoutMs;
    m_timer->setInterval(qBound(20, qMin(idle, m_transport->options().connectTimeoutMs) / 4, 1000));
    connect(m_timer, &QTimer::timeout, this, &SenderWorker::checkTimeouts);
    QMetaObject::invokeMethod(m_timer, qOverload<>(&QTimer::start), Qt::QueuedConnection);
}

SenderWorker::~SenderWorker()
{
    // abort() emits signals synchronously: detach our handlers before touching the sockets.
    const auto conns = std::exchange(m_conns, {});
    for (Connection *c : conns) {
        c->box->unshareDescriptor();
        c->socket->disconnect(this);
        c->socket->abort();
        delete c->socket;
        delete c;
    }
}

void SenderWorker::enableDirect(Connection *c)
{
    // Not with TLS: a QSslSocket encrypts what it is given, in this thread.
    if (!m_transport->options().directWrites || qobject_cast<QSslSocket *>(c->socket) || !c->connected ||
        !c->authenticated)
        return;
    // A duplicate, closed by us under the outbox's lock: Qt may close its own descriptor at any
    // moment (an error seen in this thread), and a number it freed could name another file by then.
    const int fd = ::fcntl(int(c->socket->socketDescriptor()), F_DUPFD_CLOEXEC, 0);
    if (fd < 0)
        return;
    c->box->shareDescriptor(fd, c->generation);
}

SenderWorker::Connection *SenderWorker::open(const OutboxPtr &box)
{
    auto *c = new Connection;
    c->box = box;
    Outbox *key = box.get();
    c->socket = newSocket(key);
    c->lastActivity = c->openedAt = m_clock.elapsed();
    c->generation = box->connectionOpened();
    QTcpSocket *s = c->socket;
    // With TLS the connection is up once encrypted: a stalled TLS handshake is a connect time-out.
    const bool tls = qobject_cast<QSslSocket *>(s);
    connect(s, &QTcpSocket::connected, this, [this, key, tls] {
        if (Connection *c = m_conns.value(key)) {
            c->connected = !tls;
            c->socket->setSocketOption(QAbstractSocket::LowDelayOption, 1);
            enableDirect(c);
        }
    });
    if (tls)
        connect(static_cast<QSslSocket *>(s), &QSslSocket::encrypted, this, [this, key] {
            if (Connection *c = m_conns.value(key))
                c->connected = true;
        });
    connect(s, &QTcpSocket::bytesWritten, this, [this, key](qint64 n) {
        Connection *c = m_conns.value(key);
        if (!c)
            return;
        c->lastActivity = m_clock.elapsed();
        c->wrote(n);
        c->box->bytesSent.fetch_add(quint64(n), std::memory_order_relaxed);
        const std::vector<std::function<void()>> ready = c->box->written(n, c->generation);
        for (const auto &fn : ready) // outside the outbox's lock: they queue frames on it
            fn();
    });
    connect(s, &QTcpSocket::errorOccurred, this,
            [this, key, s](QAbstractSocket::SocketError) { fail(key, s->errorString()); });
    connect(s, &QTcpSocket::readyRead, this, [this, key] { readAnswers(key); });
    m_conns.insert(key, c);
    m_transport->m_outgoing.fetch_add(1);
    box->reconnects.fetch_add(1, std::memory_order_relaxed);
    if (auto *tls = qobject_cast<QSslSocket *>(s))
        tls->connectToHostEncrypted(box->endpoint.host, box->endpoint.port);
    else
        s->connectToHost(box->endpoint.host, box->endpoint.port);
    // A connect can fail at once (no route to the host: "Network unreachable", e.g. a cable
    // pulled): errorOccurred has then already run fail(), which deleted the connection.
    if (!m_conns.contains(key))
        return nullptr;

    const PeerInfo me = m_transport->identity();
    wire::Hello hello;
    hello.set_name(ss(me.name));
    hello.set_host(ss(me.endpoint.host));
    hello.set_port(me.endpoint.port);
    hello.set_pid(me.pid);
    hello.set_incarnation(me.incarnation);
    hello.set_user(ss(processUser()));
    hello.set_host_name(ss(QSysInfo::machineHostName()));
    hello.set_version(dialog::version());
    if (!m_transport->options().secret.isEmpty()) {
        c->authenticated = false;
        c->nonce = security::newNonce();
        hello.set_nonce(c->nonce.constData(), size_t(c->nonce.size()));
    }
    const QByteArray frame = controlFrame(Type::Hello, hello);
    if (!c->authenticated)
        c->hello = frame.mid(HeaderSize);
    box->handed(frame.size(), c->generation);
    s->write(frame);
    c->hand(frame.size(), 0);
    qCDebug(lcSender) << "connecting to" << box->endpoint.toString();
    return c;
}

QTcpSocket *SenderWorker::newSocket(Outbox *key)
{
    const auto &tls = m_transport->options().tls;
    if (!tls) {
        auto *plain = new QTcpSocket(this);
        // Processes reach each other directly: no system proxy is looked up (libproxy) per connection.
        plain->setProxy(QNetworkProxy::NoProxy);
        return plain;
    }
    auto *s = new QSslSocket(this);
    s->setProxy(QNetworkProxy::NoProxy);
    s->setSslConfiguration(*tls);
    // The peer's certificate must be signed by the partition's authority; the host name or address
    // it names is not compared (processes are reached at the addresses they advertise).
    connect(s, &QSslSocket::sslErrors, this, [this, key, s](const QList<QSslError> &errors) {
        QStringList fatal;
        for (const QSslError &e : errors)
            if (e.error() != QSslError::HostNameMismatch)
                fatal.append(e.errorString());
        if (fatal.isEmpty()) {
            s->ignoreSslErrors(errors);
            return;
        }
        const QString why = QStringLiteral("TLS: %1").arg(fatal.join(QStringLiteral("; ")));
        if (Connection *c = m_conns.value(key))
            refused(c, why);
        fail(key, why);
    });
    return s;
}

void SenderWorker::Connection::hand(qint64 bytes, qint64 frames)
{
    handed += bytes;
    if (frames > 0)
        unwritten.emplace_back(handed, frames);
}

void SenderWorker::Connection::wrote(qint64 bytes)
{
    written += bytes;
    while (!unwritten.empty() && unwritten.front().first <= written)
        unwritten.pop_front();
}

void SenderWorker::flush(const OutboxPtr &box)
{
    QList<Outbox::Chunk> chunks = box->takeForSender();
    if (chunks.isEmpty())
        return;
    Connection *c = m_conns.value(box.get());
    if (!c && !(c = open(box))) {
        // The connection failed as it was opened: fail() discarded what was still queued, and
        // these frames, already taken from the queue, are discarded and counted with them.
        qint64 frames = 0;
        for (const Outbox::Chunk &chunk : std::as_const(chunks))
            frames += chunk.frames;
        box->framesDropped.fetch_add(quint64(frames), std::memory_order_relaxed);
        return;
    }
    if (!c->authenticated) {
        c->held.append(std::move(chunks));
        return;
    }
    for (const Outbox::Chunk &chunk : std::as_const(chunks)) {
        c->socket->write(handoff::forSocket(chunk.bytes));
        c->hand(chunk.bytes.size(), chunk.frames);
    }
    c->lastActivity = m_clock.elapsed();
}

void SenderWorker::readAnswers(Outbox *key)
{
    Connection *c = m_conns.value(key);
    if (!c)
        return;
    if (!c->answers)
        c->answers = std::make_unique<InboundDecoder>(64 * 1024);
    QString bad;
    const Endpoint dest = c->box->endpoint;
    QList<QByteArray> refusals;
    QByteArray auth;
    bool sawAuth = false;
    while (bad.isEmpty() && c->socket->bytesAvailable() > 0) {
        const InboundDecoder::Buffer b = c->answers->buffer();
        const qint64 n = c->socket->read(b.data, b.size);
        if (n <= 0)
            break;
        const bool ok = c->answers->decode(n, [&](Type type, quint8, QByteArrayView payload, QByteArray *) {
            if (type == Type::Auth && !c->authenticated && !sawAuth && refusals.isEmpty()) {
                sawAuth = true;
                auth = payload.toByteArray();
                return true;
            }
            if (type != Type::Refused || refusals.size() >= 16)
                return false;
            refusals.append(payload.toByteArray());
            return true;
        });
        if (!ok)
            bad = QStringLiteral("unexpected data written back by %1").arg(dest.toString());
    }
    QString authError;
    if (sawAuth && !authenticate(c, auth, &authError)) {
        refused(c, authError);
        fail(key, authError);
        return;
    }
    for (const QByteArray &r : std::as_const(refusals))
        Q_EMIT m_transport->answered(dest.host, dest.port, r);
    if (!refusals.isEmpty() && !c->authenticated) {
        // Refused while authenticating: the destination closes the connection; say why now.
        wire::Refused r;
        r.ParseFromArray(refusals.constFirst().constData(), int(refusals.constFirst().size()));
        bad = QStringLiteral("refused by %1: %2").arg(dest.toString(), qs(r.reason()));
    }
    if (!bad.isEmpty())
        fail(key, bad);
}

void SenderWorker::refused(Connection *c, const QString &reason)
{
    const Endpoint dest = c->box->endpoint;
    m_transport->authFailed(c->socket->peerAddress(), dest.toString(), reason);
    // Reported as a refusal, as one the destination would have written: the user is told why and
    // the connection to the Control Server backs off.
    wire::Refused r;
    r.set_what("auth");
    r.set_reason(ss(QStringLiteral("authentication failed: %1").arg(reason)));
    Q_EMIT m_transport->answered(dest.host, dest.port, controlFrame(Type::Refused, r).mid(HeaderSize));
}

bool SenderWorker::authenticate(Connection *c, const QByteArray &payload, QString *error)
{
    const QByteArray &secret = m_transport->options().secret;
    wire::Auth a;
    if (!a.ParseFromArray(payload.constData(), int(payload.size())) ||
        a.nonce().size() != size_t(security::NonceBytes)) {
        *error = QStringLiteral("malformed AUTH from %1").arg(c->box->endpoint.toString());
        return false;
    }
    const QByteArray theirNonce(a.nonce().data(), qsizetype(a.nonce().size()));
    const QByteArray expected =
        security::proof(secret, security::Role::Acceptor, c->nonce, theirNonce, c->hello);
    if (!security::proofsEqual(expected, QByteArray(a.proof().data(), qsizetype(a.proof().size())))) {
        *error = QStringLiteral("%1 did not prove the partition's secret (another secret?)")
                     .arg(c->box->endpoint.toString());
        return false;
    }
    wire::Auth mine;
    const QByteArray p = security::proof(secret, security::Role::Connector, c->nonce, theirNonce, c->hello);
    mine.set_proof(p.constData(), size_t(p.size()));
    if (const QByteArray &key = m_transport->options().identityKey; !key.isEmpty()) {
        // Our name proven with our process key (looked at by a Control Server with the identity secret).
        const QByteArray id = security::identityProof(key, c->nonce, theirNonce, c->hello);
        mine.set_identity(id.constData(), size_t(id.size()));
    }
    const QByteArray frame = controlFrame(Type::Auth, mine);
    c->authenticated = true;
    c->nonce.clear();
    c->hello.clear();
    c->box->handed(frame.size(), c->generation);
    c->socket->write(frame);
    c->hand(frame.size(), 0);
    for (const Outbox::Chunk &chunk : std::as_const(c->held)) {
        c->socket->write(handoff::forSocket(chunk.bytes));
        c->hand(chunk.bytes.size(), chunk.frames);
    }
    c->held.clear();
    c->lastActivity = m_clock.elapsed();
    enableDirect(c);
    return true;
}

void SenderWorker::fail(Outbox *key, const QString &reason)
{
    Connection *c = m_conns.take(key);
    if (!c)
        return;
    m_transport->m_outgoing.fetch_sub(1);
    const Endpoint dest = c->box->endpoint;
    // Every frame not completely written is discarded: those the socket still held and those
    // still queued. Small frames packed into one chunk count as written once the whole chunk is.
    qint64 lostFrames = 0;
    for (const auto &[end, frames] : c->unwritten)
        lostFrames += frames;
    for (const Outbox::Chunk &chunk : std::as_const(c->held))
        lostFrames += chunk.frames;
    const auto [lost, queuedFrames] = key->discard();
    lostFrames += queuedFrames;
    key->framesDropped.fetch_add(quint64(lostFrames), std::memory_order_relaxed);
    if (lost > 0)
        qCInfo(lcSender).noquote()
            << "connection to" << dest.toString() << "failed:" << reason
            << QStringLiteral("(%1 frames, %2 queued bytes discarded)").arg(lostFrames).arg(lost);
    else
        qCDebug(lcSender).noquote() << "connection to" << dest.toString() << "closed:" << reason;
    c->socket->disconnect(this);
    c->socket->abort();
    c->socket->deleteLater();
    delete c;
    Q_EMIT m_transport->destinationFailed(dest.host, dest.port, reason);
}

void SenderWorker::close(Outbox *key)
{
    Connection *c = m_conns.take(key);
    if (!c)
        return;
    m_transport->m_outgoing.fetch_sub(1);
    qCDebug(lcSender) << "closing idle connection to" << c->box->endpoint.toString();
    c->socket->disconnect(this);
    c->socket->disconnectFromHost();
    connect(c->socket, &QTcpSocket::disconnected, c->socket, &QObject::deleteLater);
    if (c->socket->state() == QAbstractSocket::UnconnectedState)
        c->socket->deleteLater();
    delete c;
}

void SenderWorker::checkTimeouts()
{
    const qint64 now = m_clock.elapsed();
    const auto &o = m_transport->options();
    QList<Outbox *> idle, stuck;
    for (auto it = m_conns.cbegin(); it != m_conns.cend(); ++it) {
        Connection *c = it.value();
        if (!c->connected || !c->authenticated) {
            if (now - c->openedAt > o.connectTimeoutMs)
                stuck.append(it.key());
            continue;
        }
        if (o.idleTimeoutMs > 0 && now - c->lastActivity > o.idleTimeoutMs &&
            c->socket->bytesToWrite() == 0) {
            // Written to from the calling threads meanwhile, or frames queued: not idle.
            if (it.key()->closeIfIdle())
                idle.append(it.key());
            else
                c->lastActivity = now;
        }
    }
    for (Outbox *k : std::as_const(stuck)) {
        const Connection *c = m_conns.value(k);
        if (c->connected)
            fail(k, QStringLiteral("%1 did not authenticate within %2 ms")
                        .arg(c->box->endpoint.toString())
                        .arg(o.connectTimeoutMs));
        else
            fail(k, QStringLiteral("connection timed out"));
    }
    for (Outbox *k : std::as_const(idle))
        close(k);
}

// ---------------------------------------------------------------- ReaderWorker

struct ReaderWorker::Connection
{
    QTcpSocket *socket = nullptr;
    InboundDecoder decoder;
    PeerPtr peer;
    QString label;
    QHostAddress from;
    quint64 id = 0;           ///< this connection in the transport's ConnectionLimits
    bool handshaking = false; ///< counted by ConnectionLimits::admitHandshake until its HELLO or close
    bool counted = false;     ///< counted by ConnectionLimits::admitConnection until closed
    // With a shared secret: who the HELLO claims to be, until its AUTH proves the secret.
    PeerPtr claimed;
    QByteArray nonce, peerNonce, hello; // both nonces and the HELLO payload, for the proofs
    QList<QByteArray> names;
    qint64 maxPayload = 0; ///< the decoder's bound once the peer is authenticated
    QByteArray intern(QByteArrayView name);
    /// Until the peer is accepted the decoder takes frames of MaxPreAuthPayload at most: a larger
    /// announced length closes the connection before any of its body is read or allocated.
    explicit Connection(qint64 max) : decoder(qMin(max, MaxPreAuthPayload)), maxPayload(max) {}
    /// The HELLO (and AUTH) accepted: frames up to the configured size from now on.
    void authenticated() { decoder.setMaxPayload(maxPayload); }
};

ReaderWorker::ReaderWorker(Transport *transport) : m_transport(transport) {}

ReaderWorker::~ReaderWorker()
{
    // abort() emits signals synchronously: detach our handlers before touching the sockets.
    const auto conns = std::exchange(m_conns, {});
    for (Connection *c : conns) {
        c->socket->disconnect(this);
        c->socket->abort();
        delete c->socket;
        delete c;
    }
}

void ReaderWorker::answer(const void *connection, const QByteArray &frame)
{
    // The key is compared, never dereferenced: the connection may be gone.
    for (Connection *c : std::as_const(m_conns)) {
        if (c == connection) {
            c->socket->write(frame);
            return;
        }
    }
}

void ReaderWorker::spinBeforeSleep()
{
    const qint64 spinNs = qint64(m_transport->options().receiveSpinUs) * 1000;
    if (spinNs <= 0 || m_lastFrameNs == 0 || m_paused)
        return;
    const qint64 until = m_lastFrameNs + spinNs;
    if (steadyNowNs() >= until)
        return;
    if (m_pollFdsStale) {
        m_pollFds.clear();
        for (auto it = m_conns.cbegin(); it != m_conns.cend(); ++it)
            m_pollFds.push_back(pollfd{int(it.key()->socketDescriptor()), POLLIN, 0});
        m_pollFdsStale = false;
    }
    if (m_pollFds.empty())
        return;
    m_transport->m_receiveSpins.fetch_add(1, std::memory_order_relaxed);
    // Readable (or closed, or failed): the event loop takes it now, without sleeping.
    if (spinUntil(until, [this] { return ::poll(m_pollFds.data(), nfds_t(m_pollFds.size()), 0) != 0; }))
        m_transport->m_receiveSpinHits.fetch_add(1, std::memory_order_relaxed);
}

void ReaderWorker::addDescriptor(qintptr fd)
{
    if (m_transport->options().receiveSpinUs > 0 && !m_spinHooked) {
        // In this reader's thread: its event dispatcher says when the thread is about to sleep.
        m_spinHooked = true;
        connect(QAbstractEventDispatcher::instance(), &QAbstractEventDispatcher::aboutToBlock, this,
                &ReaderWorker::spinBeforeSleep, Qt::DirectConnection);
    }
    const auto &tls = m_transport->options().tls;
    QTcpSocket *s = tls ? new QSslSocket(this) : new QTcpSocket(this);
    if (tls)
        static_cast<QSslSocket *>(s)->setSslConfiguration(*tls);
    if (!s->setSocketDescriptor(fd)) {
        qCWarning(lcReceiver) << "cannot adopt accepted socket:" << s->errorString();
        delete s;
        return;
    }
    // Bounded socket buffer: when the sinks fall behind we stop reading and TCP pushes back. What
    // Qt holds for a paused connection counts per connection (200 senders x 4 MiB was 800 MB), so it
    // is small: a read of 256 KiB is still thousands of small messages, and it shrinks as
    // connections are added (resizeReadBuffers() below).
    const qint64 rcv = m_transport->options().receiveBufferBytes;
    if (rcv > 0) {
        s->setReadBufferSize(qMin<qint64>(rcv, 4 * 1024 * 1024));
        s->setSocketOption(QAbstractSocket::ReceiveBufferSizeSocketOption, int(qMin<qint64>(rcv, INT_MAX)));
    }
    auto *c = new Connection(m_transport->options().maxMessageSize + NameOverhead);
    c->socket = s;
    c->from = s->peerAddress();
    c->id = m_transport->m_nextConnectionId.fetch_add(1);
    c->handshaking = true;
    // Never refused for a cap: the oldest connection still in its handshake makes room instead.
    const ConnectionLimits::Victim victim = m_transport->m_limits.admitHandshake(c->from, this, c->id);
    if (victim.reader) {
        ReaderWorker *r = victim.reader;
        const quint64 id = victim.id;
        if (r == this)
            giveUp(id);
        else
            QMetaObject::invokeMethod(r, handoff::handOff([r, id] { r->giveUp(id); }), Qt::QueuedConnection);
    }
    c->label = s->peerAddress().toString() + QLatin1Char(':') + QString::number(s->peerPort());
    m_conns.insert(s, c);
    m_pollFdsStale = true;
    m_transport->m_incoming.fetch_add(1);
    if (rcv <= 0) {
        s->setReadBufferSize(m_readBufferBytes ? m_readBufferBytes : DefaultReadBufferBytes);
        resizeReadBuffers();
    }
    // A connection that never says who it is is closed after the handshake time-out.
    auto *handshake = new QTimer(s);
    handshake->setSingleShot(true);
    connect(handshake, &QTimer::timeout, this, [this, s] {
        Connection *c = m_conns.value(s);
        const int ms = m_transport->options().handshakeTimeoutMs;
        if (c && c->claimed)
            refuse(c, QStringLiteral("no AUTH within %1 ms").arg(ms));
        else if (c && !c->peer)
            closeWithError(c, QStringLiteral("no HELLO within %1 ms").arg(ms));
    });
    handshake->start(m_transport->options().handshakeTimeoutMs);
    if (tls) {
        auto *ssl = static_cast<QSslSocket *>(s);
        connect(ssl, &QSslSocket::sslErrors, this, [this, s](const QList<QSslError> &errors) {
            QStringList why;
            for (const QSslError &e : errors)
                why.append(e.errorString());
            if (Connection *c = m_conns.value(s))
                refuse(c, QStringLiteral("TLS: %1").arg(why.join(QStringLiteral("; "))), false);
        });
        connect(ssl, &QSslSocket::errorOccurred, this, [this, s](QAbstractSocket::SocketError e) {
            Connection *c = m_conns.value(s);
            if (c && e == QAbstractSocket::SslHandshakeFailedError)
                refuse(c, QStringLiteral("TLS: %1").arg(s->errorString()), false);
        });
        ssl->startServerEncryption();
    }
    connect(s, &QTcpSocket::readyRead, this, [this, s] {
        if (Connection *c = m_conns.value(s))
            readFrom(c);
    });
    connect(s, &QTcpSocket::disconnected, this, [this, s] {
        if (Connection *c = m_conns.value(s)) {
            readFrom(c);
            if (m_conns.contains(s)) {
                if (c->peer)
                    Q_EMIT m_transport->peerClosed(c->peer->name, c->peer->incarnation);
                drop(c);
            }
        }
    });
    if (s->bytesAvailable() > 0)
        readFrom(c);
}

bool ReaderWorker::shouldPause()
{
    if (!m_transport->deliveryBlocked())
        return false;
    m_transport->m_readersPaused.store(true);
    if (!m_transport->deliveryBlocked())
        return false; // drained meanwhile; the flag only costs a spurious resume
    m_paused = true;
    return true;
}

void ReaderWorker::resume()
{
    if (!m_paused)
        return;
    m_paused = false;
    // Start at a different connection each time: otherwise the first ones refill the budget on
    // every resume and the others starve.
    const QList<Connection *> all = m_conns.values();
    const qsizetype n = all.size();
    const qsizetype start = n ? qsizetype(m_resumeCount++ % quint64(n)) : 0;
    for (qsizetype i = 0; i < n; ++i) {
        Connection *c = all.at((start + i) % n);
        if (m_conns.contains(c->socket) && c->socket->bytesAvailable() > 0)
            readFrom(c);
    }
}

void ReaderWorker::resizeReadBuffers()
{
    if (m_transport->options().receiveBufferBytes > 0)
        return; // the configured size, whatever the number of connections
    const qint64 size =
        readBufferBytesFor(m_transport->m_incoming.load(), m_transport->options().maxPendingDelivery);
    if (size == m_readBufferBytes)
        return;
    m_readBufferBytes = size;
    for (Connection *c : std::as_const(m_conns))
        c->socket->setReadBufferSize(size);
}

void ReaderWorker::giveUp(quint64 id)
{
    for (Connection *c : std::as_const(m_conns)) {
        if (c->id == id && c->handshaking) {
            c->handshaking = false; // no longer counted: its place went to a newer connection
            m_transport->capReached(m_transport->m_handshakesGivenUp,
                                    QStringLiteral("closing connection from %1 - still in its handshake "
                                                   "when a newer connection needed its place")
                                        .arg(c->label));
            drop(c);
            return;
        }
    }
}

void ReaderWorker::uncount(Connection *c)
{
    if (c->handshaking)
        m_transport->m_limits.handshakeDone(c->id);
    c->handshaking = false;
    if (c->counted)
        m_transport->m_limits.connectionDone(c->from);
    c->counted = false;
}

void ReaderWorker::drop(Connection *c)
{
    uncount(c);
    m_conns.remove(c->socket);
    m_pollFdsStale = true;
    m_transport->m_incoming.fetch_sub(1);
    resizeReadBuffers();
    // Detach first: abort() emits disconnected() synchronously.
    c->socket->disconnect(this);
    c->socket->abort();
    c->socket->deleteLater();
    delete c;
}

void ReaderWorker::closeWithError(Connection *c, const QString &reason)
{
    const QString who = c->peer ? QStringLiteral("%1 (%2)").arg(c->peer->name, c->label) : c->label;
    qCWarning(lcReceiver).noquote() << "closing connection from" << who << "-" << reason;
    m_transport->m_protocolErrors.fetch_add(1);
    Q_EMIT m_transport->protocolError(who, reason, c->peer ? c->peer->name : QString(),
                                      c->peer ? c->peer->incarnation : 0,
                                      c->peer ? c->peer->connectionId : 0);
    drop(c);
}

QByteArray ReaderWorker::Connection::intern(QByteArrayView name)
{
    // Messages of one connection mostly carry the same few names: reuse them, no allocation.
    for (const QByteArray &n : std::as_const(names))
        if (QByteArrayView(n) == name)
            return n;
    if (names.size() >= 32)
        names.removeFirst();
    names.append(name.toByteArray());
    return names.last();
}

void ReaderWorker::refuse(Connection *c, const QString &reason, bool tell)
{
    const QString name = c->claimed ? c->claimed->name : QString();
    const QString who = name.isEmpty() ? c->label : QStringLiteral("%1 (%2)").arg(name, c->label);
    m_transport->authFailed(c->from, who, reason);
    QTcpSocket *s = c->socket;
    uncount(c);
    m_conns.remove(s);
    m_pollFdsStale = true;
    m_transport->m_incoming.fetch_sub(1);
    resizeReadBuffers();
    delete c;
    s->disconnect(this);
    if (!tell || s->state() != QAbstractSocket::ConnectedState) {
        s->abort();
        s->deleteLater();
        return;
    }
    // Told once, then closed once the refusal is written (or after a second at most).
    wire::Refused r;
    r.set_what("auth");
    r.set_name(ss(name));
    r.set_reason(ss(QStringLiteral("authentication failed: %1").arg(reason)));
    s->write(controlFrame(Type::Refused, r));
    connect(s, &QTcpSocket::disconnected, s, &QObject::deleteLater);
    QTimer::singleShot(1000, s, [s] {
        s->abort();
        s->deleteLater();
    });
    s->disconnectFromHost();
}

bool ReaderWorker::acceptHello(Connection *c, Type type, QByteArrayView payload, Received &r)
{
    QString &error = r.error;
    wire::Hello h;
    if (type != Type::Hello || !h.ParseFromArray(payload.data(), int(payload.size()))) {
        error = QStringLiteral("first frame is %1, not a valid HELLO").arg(QLatin1String(typeName(type)));
        return false;
    }
    auto p = std::make_shared<PeerInfo>();
    p->name = qs(h.name());
    p->endpoint = Endpoint{qs(h.host()), quint16(h.port())};
    p->pid = h.pid();
    p->incarnation = h.incarnation();
    p->user = qs(h.user());
    p->hostName = qs(h.host_name());
    p->version = qs(h.version());
    p->source = c->socket->peerAddress();
    p->reader = this;
    p->connection = c;
    static std::atomic<quint64> connections{0};
    p->connectionId = ++connections;
    const QByteArray &secret = m_transport->options().secret;
    if (secret.isEmpty() && !h.nonce().empty()) {
        error = QStringLiteral("this process has no shared secret (it runs without --secret-file)");
        r.authFailed = true;
        return false;
    }
    if (!secret.isEmpty()) {
        if (h.nonce().size() != size_t(security::NonceBytes)) {
            error = QStringLiteral("no proof of the partition's secret offered (no --secret-file?)");
            r.authFailed = true;
            return false;
        }
        // The challenge: our nonce and our proof; the peer proves the secret in turn.
        c->claimed = std::move(p);
        c->nonce = security::newNonce();
        c->hello = payload.toByteArray();
        c->peerNonce = QByteArray(h.nonce().data(), qsizetype(h.nonce().size()));
        const QByteArray mine =
            security::proof(secret, security::Role::Acceptor, c->peerNonce, c->nonce, c->hello);
        wire::Auth a;
        a.set_nonce(c->nonce.constData(), size_t(c->nonce.size()));
        a.set_proof(mine.constData(), size_t(mine.size()));
        c->socket->write(controlFrame(Type::Auth, a));
        return true;
    }
    c->peer = std::move(p);
    return admitted(c, r.error);
}

bool ReaderWorker::acceptProof(Connection *c, Type type, QByteArrayView payload, QString &error)
{
    wire::Auth a;
    if (type != Type::Auth || !a.ParseFromArray(payload.data(), int(payload.size()))) {
        error = QStringLiteral("%1 instead of the AUTH answering the challenge")
                    .arg(QLatin1String(typeName(type)));
        return false;
    }
    const QByteArray expected = security::proof(m_transport->options().secret, security::Role::Connector,
                                                c->peerNonce, c->nonce, c->hello);
    if (!security::proofsEqual(expected, QByteArray(a.proof().data(), qsizetype(a.proof().size())))) {
        error = QStringLiteral("wrong proof of the partition's secret (another secret?)");
        return false;
    }
    if (const QByteArray &identity = m_transport->options().identitySecret;
        !identity.isEmpty() && !a.identity().empty()) {
        // A proof of the name claimed: right, or refused (the key of another name, or none of ours).
        const QByteArray key = security::processKey(identity, c->claimed->name);
        if (!security::proofsEqual(security::identityProof(key, c->peerNonce, c->nonce, c->hello),
                                   QByteArray(a.identity().data(), qsizetype(a.identity().size())))) {
            error = QStringLiteral("wrong proof of the name %1: not its process key (the key of another "
                                   "process, or of another partition)")
                        .arg(c->claimed->name);
            return false;
        }
        auto proven = std::make_shared<PeerInfo>(*c->claimed);
        proven->proven = true;
        c->claimed = std::move(proven);
    }
    c->peer = std::move(c->claimed);
    c->nonce.clear();
    c->peerNonce.clear();
    c->hello.clear();
    return admitted(c, error);
}

bool ReaderWorker::admitted(Connection *c, QString &error)
{
    m_transport->m_limits.handshakeDone(c->id);
    c->handshaking = false;
    QString why;
    if (!m_transport->m_limits.admitConnection(c->from, &why)) {
        error = QStringLiteral("refused: %1").arg(why);
        return false;
    }
    c->counted = true;
    c->authenticated();
    return true;
}

bool ReaderWorker::takeFrame(Connection *c, Type type, quint8 flags, QByteArrayView payload,
                             QByteArray *owned, Received &r)
{
    if (c->claimed) {
        r.authFailed = !acceptProof(c, type, payload, r.error);
        return !r.authFailed;
    }
    if (!c->peer)
        return acceptHello(c, type, payload, r);
    ++r.frames;
    Inbound in;
    in.type = type;
    in.incarnation = c->peer->incarnation;
    if (!isDataType(type)) {
        in.peer = c->peer;
        in.data = owned ? std::move(*owned) : payload.toByteArray();
        if (type == Type::Hello || !validControlPayload(type, in.data)) {
            r.error = QStringLiteral("malformed %1 payload").arg(QLatin1String(typeName(type)));
            return false;
        }
        r.controlBytes += in.data.size() + InboundOverhead;
        r.control.append(std::move(in));
        return true;
    }
    // Commands for a router stay as they came (compressed or not): it relays them unchanged.
    const auto &route = m_transport->m_directRoute;
    const bool raw = m_transport->m_routeRawCommands;
    const bool keep = type == Type::CommandMessage && route && raw;
    // Service data read with many other frames stays in the receive buffer, shared (Inbound::chunk):
    // one buffer for them all instead of an allocation each in this thread, freed in another.
    const bool share =
        type == Type::ServiceMessage && !owned && c->decoder.batchFill() >= InboundDecoder::BatchSize / 4;
    DataParts parts;
    if (!decodeData(type, flags, payload, owned, m_transport->options().maxMessageSize, keep, parts, &r.error,
                    !share))
        return false;
    in.sequence = parts.sequence;
    in.status = parts.status;
    if (type == Type::ServiceMessage) {
        // The hot path: no peer pointer (no shared refcount across threads), name interned.
        in.name = c->intern(parts.name);
        in.connection = c->peer->connectionId;
    } else {
        in.peer = c->peer;
        in.name = parts.name.toByteArray();
        in.origin = parts.origin.toByteArray();
    }
    const QByteArray &batch = c->decoder.batchBuffer();
    if (share && parts.view.data() >= batch.constData() && // (null when decompressed)
        parts.view.data() + parts.view.size() <= batch.constData() + batch.size()) {
        in.chunk = batch;
        in.dataOffset = parts.view.data() - in.chunk.constData();
        in.dataLength = parts.view.size();
        if (r.lastChunk != batch.constData()) {
            // The buffer counts towards the bound on undelivered data, once, as well as the
            // copies its messages become.
            r.lastChunk = batch.constData();
            r.dataBytes += batch.size();
        }
    } else {
        in.data =
            parts.data.isNull() && !parts.view.isNull() ? parts.view.toByteArray() : std::move(parts.data);
    }
    if (keep)
        in.flags = flags;
    if ((keep || (route && !raw)) && route(in))
        return true;
    r.dataBytes += in.dataSize() + InboundOverhead;
    r.data.append(std::move(in));
    return true;
}

void ReaderWorker::readFrom(Connection *c)
{
    // A connection still waiting for its HELLO is read even while delivery is paused: otherwise new
    // senders time out (or hit the handshake cap) while the old ones are pushed back.
    if (c->peer && shouldPause())
        return;
    Received r;
    r.data = m_transport->takeBatch(); // a batch of small messages holds hundreds of them
    const auto onFrame = [&](Type type, quint8 flags, QByteArrayView payload, QByteArray *owned) {
        return takeFrame(c, type, flags, payload, owned, r);
    };
    bool ok = true;
    while (ok && c->socket->bytesAvailable() > 0) {
        const InboundDecoder::Buffer b = c->decoder.buffer();
        const qint64 n = c->socket->read(b.data, b.size);
        if (n <= 0)
            break;
        m_transport->m_bytesIn.fetch_add(quint64(n), std::memory_order_relaxed);
        ok = c->decoder.decode(n, onFrame);
        if (!ok && r.error.isEmpty())
            r.error = c->peer ? c->decoder.errorString()
                              : QStringLiteral("before authentication: %1").arg(c->decoder.errorString());
        if (shouldPause())
            break;
    }
    m_transport->m_framesIn.fetch_add(r.frames, std::memory_order_relaxed);
    if (r.frames > 0 && m_transport->options().receiveSpinUs > 0)
        m_lastFrameNs = steadyNowNs();
    // Frames decoded before an error are still delivered: they were valid.
    m_transport->deliver(m_transport->m_control, r.control, r.controlBytes);
    m_transport->deliver(m_transport->m_data, r.data, r.dataBytes);
    if (r.data.isEmpty()) // nothing for the data queue (or moved there): keep its room
        m_transport->recycleBatch(std::move(r.data));
    if (!ok && r.authFailed) {
        refuse(c, r.error);
    } else if (!ok && c->peer && !c->counted) { // at a connection cap: logged a few times, not each
        m_transport->capReached(
            m_transport->m_connectionsRefused,
            QStringLiteral("closing connection from %1 (%2) - %3").arg(c->peer->name, c->label, r.error));
        drop(c);
    } else if (!ok) {
        closeWithError(c, r.error);
    }
}

} // namespace dialog::net
