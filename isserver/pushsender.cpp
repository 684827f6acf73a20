#include "pushsender.h"
#include "pushprotocol.h"

#include "dialog/is/codec.h"
#include "dialog/is/typeregistry.h"
#include "dialog/security.h"
#include "dialog/is/protocol.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLoggingCategory>
#include <QNetworkProxy>
#include <QSslSocket>
#include <QTimer>

Q_LOGGING_CATEGORY(lcPushSender, "dialog.is.push.sender")

namespace dialog::isd {

namespace {
const QString StatisticsObject = QStringLiteral("Statistics"); // each server has its own
constexpr qint64 MaxQueued = 8 << 20;
constexpr qsizetype MaxRecordsFrame = 256 << 10;
constexpr int MaxRetryMs = 2000;
constexpr int HandshakeMs = 10000;

quint8 recordKind(is::Change::Kind k)
{
    return k == is::Change::Kind::Created   ? is::protocol::Created
           : k == is::Change::Kind::Updated ? is::protocol::Updated
                                            : is::protocol::Removed;
}
} // namespace

PushSender::PushSender(const is::Repository &repository, const QString &host, quint16 port,
                       const is::Criteria &criteria, int pingMs, const push::Security &security,
                       QObject *parent)
    : QObject(parent), m_repository(repository), m_host(host), m_port(port), m_criteria(criteria),
      m_pingMs(qMax(100, pingMs)), m_security(security)
{
    m_clock.start();
}

PushSender::~PushSender() = default;

QString PushSender::target() const
{
    return QStringLiteral("%1:%2").arg(m_host).arg(m_port);
}

void PushSender::start()
{
    m_retryTimer = new QTimer(this);
    m_retryTimer->setSingleShot(true);
    connect(m_retryTimer, &QTimer::timeout, this, &PushSender::connectNow);
    m_pingTimer = new QTimer(this);
    connect(m_pingTimer, &QTimer::timeout, this, &PushSender::onPingTimer);
    m_pingTimer->start(m_pingMs);
    connectNow();
}

void PushSender::report(const QString &what)
{
    qCWarning(lcPushSender, "%s (pushing to %s): %s", qPrintable(m_repository.serverName()),
              qPrintable(target()), qPrintable(what));
}

void PushSender::connectNow()
{
    if (m_socket)
        m_socket->deleteLater();
    QSslSocket *tls = m_security.tls ? new QSslSocket(this) : nullptr;
    m_socket = tls ? tls : new QTcpSocket(this);
    m_socket->setProxy(QNetworkProxy::NoProxy); // the mirror is reached directly
    m_socket->setSocketOption(QAbstractSocket::LowDelayOption, 1);
    m_socket->setSocketOption(QAbstractSocket::KeepAliveOption, 1);
    if (tls) {
        tls->setSslConfiguration(*m_security.tls);
        connect(tls, &QSslSocket::encrypted, this, &PushSender::onConnected);
        // The mirror's certificate must be signed by the authority; the name in it is not compared.
        connect(tls, &QSslSocket::sslErrors, this, [this, tls](const QList<QSslError> &errors) {
            QStringList fatal;
            for (const QSslError &e : errors)
                if (e.error() != QSslError::HostNameMismatch)
                    fatal << e.errorString();
            if (fatal.isEmpty()) {
                tls->ignoreSslErrors(errors);
                return;
            }
            drop(QStringLiteral("authentication failed: TLS: %1").arg(fatal.join(QStringLiteral("; "))));
            m_retryTimer->start(MaxRetryMs);
        });
    } else {
        connect(m_socket, &QTcpSocket::connected, this, &PushSender::onConnected);
    }
    connect(m_socket, &QTcpSocket::readyRead, this, &PushSender::onReadyRead);
    connect(m_socket, &QTcpSocket::bytesWritten, this, &PushSender::onBytesWritten);
    connect(m_socket, &QTcpSocket::errorOccurred, this, [this](QAbstractSocket::SocketError) {
        // A refusal arrives just before the mirror closes: read it first, it says why.
        if (m_socket->bytesAvailable() > 0)
            onReadyRead();
        drop(m_socket->errorString());
    });
    m_state = State::Connecting;
    m_lastHeardMs = m_lastWrittenMs = m_clock.elapsed();
    if (tls)
        tls->connectToHostEncrypted(m_host, m_port);
    else
        m_socket->connectToHost(m_host, m_port);
}

void PushSender::onConnected()
{
    m_state = State::Handshake;
    m_lastHeardMs = m_clock.elapsed();
    QJsonObject hello{{QStringLiteral("server"), m_repository.serverName()},
                      {QStringLiteral("criteria"), m_criteria.isValid() ? m_criteria.regex() : QString()},
                      {QStringLiteral("ping_ms"), m_pingMs},
                      {QStringLiteral("types"), is::typesToJson(m_repository.registry())}};
    m_authenticated = m_security.secret.isEmpty();
    if (!m_authenticated) {
        m_nonce = security::newNonce();
        hello.insert(QStringLiteral("nonce"), QString::fromLatin1(m_nonce.toHex()));
    }
    m_hello = QJsonDocument(hello).toJson(QJsonDocument::Compact);
    m_socket->write(push::encode(push::Type::Hello, m_hello));
}

void PushSender::drop(const QString &why)
{
    if (m_state == State::Idle)
        return;
    const bool wasStreaming = m_state == State::Streaming;
    m_state = State::Idle;
    m_pending.clear();
    m_stale.clear();
    m_in.clear();
    if (m_socket) {
        m_socket->disconnect(this);
        m_socket->abort();
    }
    // One line per distinct failure, not one per retry.
    const QString line = wasStreaming ? QStringLiteral("connection lost (%1); reconnecting").arg(why)
                                      : QStringLiteral("cannot push (%1); retrying").arg(why);
    if (wasStreaming || line != m_lastReport)
        report(line);
    m_lastReport = line;
    m_retryTimer->start(m_retryMs);
    m_retryMs = qMin(MaxRetryMs, m_retryMs * 2);
}

void PushSender::onReadyRead()
{
    m_in.append(m_socket->readAll());
    m_lastHeardMs = m_clock.elapsed();
    for (;;) {
        push::Frame f;
        QString error;
        const push::Take t = push::take(m_in, &f, &error);
        if (t == push::Take::Incomplete)
            return;
        if (t == push::Take::Error) {
            drop(QStringLiteral("the mirror sent something else: %1").arg(error));
            return;
        }
        if (f.type == push::Type::Pong)
            continue;
        if (m_state == State::Handshake && f.type == push::Type::Refuse) {
            drop(QStringLiteral("refused by the mirror: %1").arg(QString::fromUtf8(f.payload)));
            m_retryTimer->start(MaxRetryMs); // it will not change its mind soon
            return;
        }
        if (m_state == State::Handshake && f.type == push::Type::Auth && !m_authenticated) {
            QString why;
            if (!authenticate(f.payload, &why)) {
                drop(QStringLiteral("authentication failed: %1").arg(why));
                m_retryTimer->start(MaxRetryMs);
                return;
            }
            continue;
        }
        if (m_state == State::Handshake && f.type == push::Type::Accept && !m_authenticated) {
            drop(QStringLiteral("authentication failed: the mirror accepted without proving the secret"));
            m_retryTimer->start(MaxRetryMs);
            return;
        }
        if (m_state == State::Handshake && f.type == push::Type::Accept) {
            const QString mirror =
                QJsonDocument::fromJson(f.payload).object().value(QStringLiteral("server")).toString();
            m_state = State::Streaming;
            m_retryMs = 250;
            m_lastReport.clear();
            sendSnapshot();
            report(QStringLiteral("mirror %1 accepted; snapshot sent, changes follow").arg(mirror));
            continue;
        }
        // A mirror never sends anything else: nothing on its side may write back.
        drop(QStringLiteral("unexpected %1 frame from the mirror").arg(push::typeName(f.type)));
        return;
    }
}

bool PushSender::authenticate(const QByteArray &payload, QString *error)
{
    if (payload.size() != 2 * security::NonceBytes) {
        *error = QStringLiteral("malformed Auth from the mirror");
        return false;
    }
    const QByteArray theirs = payload.left(security::NonceBytes);
    const QByteArray expected =
        security::proof(m_security.secret, security::Role::Acceptor, m_nonce, theirs, m_hello);
    if (!security::proofsEqual(expected, payload.mid(security::NonceBytes))) {
        *error = QStringLiteral("the mirror did not prove the secret (another secret?)");
        return false;
    }
    m_authenticated = true;
    m_socket->write(
        push::encode(push::Type::Auth, security::proof(m_security.secret, security::Role::Connector, m_nonce,
                                                       theirs, m_hello)));
    return true;
}

void PushSender::onBytesWritten()
{
    m_lastWrittenMs = m_clock.elapsed();
    if (m_state == State::Streaming && !m_stale.isEmpty() && m_socket->bytesToWrite() <= MaxQueued / 2)
        sendStale();
}

void PushSender::onPingTimer()
{
    const qint64 now = m_clock.elapsed();
    // A tick far later than due means this process was not running: the mirror's answers are still
    // unread, so the silence is ours. Start counting again.
    const bool late = now - m_lastTickMs > 2 * m_pingMs;
    m_lastTickMs = now;
    if (late) {
        m_lastHeardMs = m_lastWrittenMs = now;
        return;
    }
    if ((m_state == State::Connecting || m_state == State::Handshake) && now - m_lastHeardMs > HandshakeMs) {
        // A host that drops packets would otherwise hold the connection attempt for minutes.
        drop(m_state == State::Connecting
                 ? QStringLiteral("no connection within %1 s").arg(HandshakeMs / 1000)
                 : QStringLiteral("no answer to the hello within %1 s").arg(HandshakeMs / 1000));
        return;
    }
    if (m_state != State::Streaming)
        return;
    // Dead: nothing heard for 3 intervals, and nothing written either (a slow link that is still
    // taking a large snapshot is not dead).
    if (now - m_lastHeardMs > 3 * m_pingMs &&
        (m_socket->bytesToWrite() == 0 || now - m_lastWrittenMs > 3 * m_pingMs)) {
        drop(QStringLiteral("no answer for %1 ms").arg(now - m_lastHeardMs));
        return;
    }
    m_socket->write(push::encode(push::Type::Ping));
}

void PushSender::sendSnapshot()
{
    QByteArray chunk;
    const auto out = [&] {
        m_socket->write(push::encode(push::Type::Records, chunk));
        chunk.clear();
    };
    is::protocol::appendRecord(chunk, is::protocol::SnapshotBegin, {}, {},
                               is::Time::currentTime().microsecondsSinceEpoch(), {});
    qsizetype n = 0;
    for (const is::StoredObject &o : m_repository.objects(m_criteria)) {
        if (o.name == StatisticsObject)
            continue;
        is::protocol::appendRecord(chunk, is::protocol::Created, o.name.toUtf8(),
                                   o.object.typeName().toUtf8(), o.time.microsecondsSinceEpoch(),
                                   is::encode(o.object));
        ++n;
        if (chunk.size() >= MaxRecordsFrame)
            out();
    }
    is::protocol::appendRecord(chunk, is::protocol::SnapshotEnd, {}, {},
                               is::Time::currentTime().microsecondsSinceEpoch(), {});
    out();
    Q_EMIT snapshotSent(n);
}

void PushSender::change(const is::Change &c)
{
    if (m_state != State::Streaming || c.name == StatisticsObject ||
        !m_criteria.matches(c.name, c.typeName, m_repository.registry()))
        return;
    if (!m_stale.isEmpty() || m_socket->bytesToWrite() > MaxQueued) {
        if (m_stale.isEmpty())
            report(
                QStringLiteral("the mirror is slow (%1 MiB queued): only the newest values are sent until it "
                               "catches up")
                    .arg(m_socket->bytesToWrite() >> 20));
        m_stale.insert(c.name); // its newest value goes when the queue has drained
        return;
    }
    is::protocol::appendRecord(m_pending, recordKind(c.kind), c.name.toUtf8(), c.typeName.toUtf8(),
                               c.time.microsecondsSinceEpoch(),
                               c.kind == is::Change::Kind::Removed ? QByteArray() : is::encode(c.object));
    if (m_pending.size() >= MaxRecordsFrame) {
        flush();
        return;
    }
    if (!m_flushScheduled) {
        // After the writes of the current batch of requests: one frame for all of them.
        m_flushScheduled = true;
        QMetaObject::invokeMethod(this, &PushSender::flush, Qt::QueuedConnection);
    }
}

void PushSender::flush()
{
    m_flushScheduled = false;
    if (m_pending.isEmpty() || m_state != State::Streaming)
        return;
    m_socket->write(push::encode(push::Type::Records, m_pending));
    m_pending.clear();
}

void PushSender::sendStale()
{
    flush();
    QByteArray chunk;
    for (const QString &name : std::as_const(m_stale)) {
        is::Object obj;
        is::ObjectInfo info;
        if (m_repository.get(name, &obj, {}, &info).isOk()) {
            if (!m_criteria.matches(name, info.typeName, m_repository.registry()))
                continue;
            is::protocol::appendRecord(chunk, is::protocol::Updated, name.toUtf8(), info.typeName.toUtf8(),
                                       info.time.microsecondsSinceEpoch(), is::encode(obj));
        } else {
            is::protocol::appendRecord(chunk, is::protocol::Removed, name.toUtf8(), {},
                                       is::Time::currentTime().microsecondsSinceEpoch(), {});
        }
        if (chunk.size() >= MaxRecordsFrame)
            m_socket->write(push::encode(push::Type::Records, std::exchange(chunk, QByteArray())));
    }
    report(QStringLiteral("the mirror caught up: the newest values of %1 objects sent").arg(m_stale.size()));
    m_stale.clear();
    if (!chunk.isEmpty())
        m_socket->write(push::encode(push::Type::Records, chunk));
}

void PushSender::typesDeclared(const QList<is::TypeInfo> &types)
{
    if (m_state != State::Streaming || types.isEmpty())
        return;
    flush(); // changes made before the declaration go first
    QJsonArray a;
    for (const is::TypeInfo &t : types)
        a.append(is::typeToJson(t));
    m_socket->write(push::encode(push::Type::Types, QJsonDocument(a).toJson(QJsonDocument::Compact)));
}

} // namespace dialog::isd
