#include "pushreceiver.h"
#include "pushcopy.h"
#include "pushprotocol.h"

#include "dialog/security.h"

#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLoggingCategory>
#include <QSslSocket>
#include <QTcpSocket>
#include <QTimer>
#include <functional>

Q_LOGGING_CATEGORY(lcPushReceiver, "dialog.is.push.receiver")

namespace dialog::isd {

namespace {
constexpr int HandshakeMs = 10000; // from the connection on (TLS included), however it trickles
constexpr int MaxPending = 16;     // connections still in their handshake; past it the oldest goes
constexpr int TickMs = 100;        // silence and handshake checks
/// Bytes a connection may send before its hello is accepted: the hello carries the master's type
/// declarations, nothing else comes before it.
constexpr qsizetype MaxPreAcceptBytes = 1024 * 1024;
// Per connection, kept as socket properties: the inbound buffer and the times.
const char *BufferProperty = "pushBuffer";
const char *HeardProperty = "pushHeardMs";
const char *PingProperty = "pushPingMs";
const char *AcceptedProperty = "pushAccepted";
const char *OpenedProperty = "pushOpenedMs";
// With a secret: the hello waiting for the master's proof, and both nonces.
const char *HelloProperty = "pushHello";
const char *NoncesProperty = "pushNonces";
QElapsedTimer &clock()
{
    static QElapsedTimer c = [] {
        QElapsedTimer t;
        t.start();
        return t;
    }();
    return c;
}
QString peerName(const QTcpSocket *s)
{
    return QStringLiteral("%1:%2").arg(s->peerAddress().toString()).arg(s->peerPort());
}
} // namespace

/// Hands every accepted connection over at once, with TLS as a QSslSocket whose server handshake
/// has started. Not QSslServer: in Qt 6.4 each failed handshake stays counted as pending, and after
/// 30 of them it accepts nothing more until restart. Here a connection in its TLS handshake is one
/// in its push handshake like any other: capped, timed from its start, closed on failure.
class PushListener : public QTcpServer
{
public:
    PushListener(std::shared_ptr<const QSslConfiguration> tls, std::function<void(QTcpSocket *)> accepted)
        : m_tls(std::move(tls)), m_accepted(std::move(accepted))
    {
    }

protected:
    void incomingConnection(qintptr fd) override
    {
        QTcpSocket *s = m_tls ? new QSslSocket : new QTcpSocket;
        if (!s->setSocketDescriptor(fd)) {
            delete s;
            return;
        }
        if (auto *ssl = qobject_cast<QSslSocket *>(s)) {
            ssl->setSslConfiguration(*m_tls);
            ssl->startServerEncryption();
        }
        m_accepted(s);
    }

private:
    std::shared_ptr<const QSslConfiguration> m_tls;
    std::function<void(QTcpSocket *)> m_accepted;
};

PushReceiver::PushReceiver(is::Repository &repository, is::TypeRegistry &types, const QString &master,
                           const push::Security &security, QObject *parent)
    : QObject(parent), m_repository(repository), m_types(types), m_master(master), m_security(security)
{
    m_copy = new PushCopy(
        m_repository, m_types, [this](const QString &what) { report(what); }, this);
    connect(m_copy, &PushCopy::typesAdded, this, &PushReceiver::typesAdded);
    connect(m_copy, &PushCopy::synchronised, this, &PushReceiver::synchronised);
    m_server = std::make_unique<PushListener>(m_security.tls, [this](QTcpSocket *s) { onNewConnection(s); });
}

PushReceiver::~PushReceiver() = default;

void PushReceiver::report(const QString &what)
{
    qCWarning(lcPushReceiver, "%s (push mirror of %s): %s", qPrintable(m_repository.serverName()),
              qPrintable(m_master), qPrintable(what));
}

bool PushReceiver::listen(const QHostAddress &address, quint16 port, QString *error)
{
    if (!address.isLoopback() && m_security.secret.isEmpty() && !m_security.insecure) {
        *error =
            QStringLiteral("refusing to listen for the master on %1 without a shared secret: whoever "
                           "reaches the port and says the name %2 would be taken for the master; give the "
                           "partition's --secret-file (dialogctl secret generate makes one), or --insecure "
                           "to accept that")
                .arg(address.toString(), m_master);
        return false;
    }
    if (!m_server->listen(address, port)) {
        *error = QStringLiteral("cannot listen for the master on %1:%2: %3")
                     .arg(address.toString())
                     .arg(port)
                     .arg(m_server->errorString());
        return false;
    }
    m_timer = new QTimer(this);
    connect(m_timer, &QTimer::timeout, this, &PushReceiver::onTimer);
    m_timer->start(TickMs);
    report(
        QStringLiteral("push mirror listening on %1:%2").arg(address.toString()).arg(m_server->serverPort()));
    if (!address.isLoopback() && m_security.secret.isEmpty())
        report(QStringLiteral("warning: the push port takes no credentials (no --secret-file); whoever can "
                              "connect to it and says the name %1 is taken for the master: let only the "
                              "master's host through")
                   .arg(m_master));
    return true;
}

void PushReceiver::onNewConnection(QTcpSocket *s)
{
    // Past the cap the oldest connection still in its handshake makes room: held or trickling
    // connections cannot keep the master out for longer than its own handshake takes.
    QTcpSocket *oldest = nullptr;
    int pending = 0;
    for (QTcpSocket *o : findChildren<QTcpSocket *>(Qt::FindDirectChildrenOnly)) {
        if (o->property(AcceptedProperty).toBool() || o->state() != QAbstractSocket::ConnectedState)
            continue;
        ++pending;
        if (!oldest ||
            o->property(OpenedProperty).toLongLong() < oldest->property(OpenedProperty).toLongLong())
            oldest = o;
    }
    if (pending >= MaxPending && oldest)
        close(oldest,
              QStringLiteral("still in its handshake when a newer connection needed its place (%1 at most)")
                  .arg(MaxPending));
    s->setParent(this);
    s->setProperty(HeardProperty, clock().elapsed());
    s->setProperty(OpenedProperty, clock().elapsed());
    if (auto *ssl = qobject_cast<QSslSocket *>(s)) {
        connect(ssl, &QSslSocket::sslErrors, this, [this, ssl](const QList<QSslError> &errors) {
            QStringList why;
            for (const QSslError &e : errors)
                why.append(e.errorString());
            close(ssl, QStringLiteral("authentication failed: TLS: %1").arg(why.join(QStringLiteral("; "))));
        });
        connect(ssl, &QSslSocket::errorOccurred, this, [this, ssl](QAbstractSocket::SocketError e) {
            if (e == QAbstractSocket::SslHandshakeFailedError)
                close(ssl, QStringLiteral("authentication failed: TLS: %1").arg(ssl->errorString()));
        });
    }
    connect(s, &QTcpSocket::readyRead, this, [this, s] { onReadyRead(s); });
    connect(s, &QTcpSocket::disconnected, this, [this, s] {
        if (s == m_active) {
            m_copy->interrupt();
            report(QStringLiteral(
                       "the master %1 disconnected; the copy is kept and resynchronised when it is back")
                       .arg(peerName(s)));
        }
        s->deleteLater();
    });
}

void PushReceiver::close(QTcpSocket *s, const QString &why, bool graceful)
{
    report(QStringLiteral("closed the connection from %1: %2").arg(peerName(s), why));
    if (s == m_active) {
        m_copy->interrupt();
        m_active = nullptr;
    }
    s->disconnect(this);
    if (graceful) {
        // What was written (a refusal) still goes out; the socket goes once it is closed.
        connect(s, &QTcpSocket::disconnected, s, &QObject::deleteLater);
        s->disconnectFromHost();
        return;
    }
    s->abort();
    s->deleteLater();
}

void PushReceiver::onTimer()
{
    const qint64 now = clock().elapsed();
    // A tick far later than due means this process was not running (stopped, swapped out): what the
    // peer sent meanwhile is still unread, so the silence is ours. Start counting again.
    const bool late = now - m_lastTickMs > 5 * TickMs;
    m_lastTickMs = now;
    if (late) {
        for (QTcpSocket *s : findChildren<QTcpSocket *>(Qt::FindDirectChildrenOnly))
            s->setProperty(HeardProperty, now);
        return;
    }
    for (QTcpSocket *s : findChildren<QTcpSocket *>(Qt::FindDirectChildrenOnly)) {
        if (s->state() != QAbstractSocket::ConnectedState)
            continue;
        const qint64 heard = now - s->property(HeardProperty).toLongLong();
        const qint64 age = now - s->property(OpenedProperty).toLongLong();
        const qint64 ping = s->property(PingProperty).toLongLong();
        if (!s->property(AcceptedProperty).toBool() && age > HandshakeMs)
            close(
                s,
                QStringLiteral("handshake not completed within %1 s of connecting").arg(HandshakeMs / 1000));
        else if (ping > 0 && heard > 3 * ping)
            close(s, QStringLiteral("the master has been silent for %1 ms").arg(heard));
    }
}

void PushReceiver::onReadyRead(QTcpSocket *s)
{
    QByteArray buffer = s->property(BufferProperty).toByteArray();
    const bool accepted = s->property(AcceptedProperty).toBool();
    // Before the hello is accepted at most MaxPreAcceptBytes are taken: one more shows it sent too
    // much, and nothing announced beyond it is waited for.
    buffer.append(accepted ? s->readAll() : s->read(MaxPreAcceptBytes + 1 - buffer.size()));
    s->setProperty(HeardProperty, clock().elapsed());
    for (;;) {
        push::Frame f;
        QString error;
        const push::Take t = push::take(buffer, &f, &error);
        const bool early = !s->property(AcceptedProperty).toBool();
        if (t == push::Take::Incomplete && early &&
            (buffer.size() > MaxPreAcceptBytes || push::announcedSize(buffer) > MaxPreAcceptBytes)) {
            close(s, QStringLiteral("a frame of %1 bytes before the hello was accepted (at most %2)")
                         .arg(push::announcedSize(buffer))
                         .arg(MaxPreAcceptBytes));
            return;
        }
        if (t == push::Take::Incomplete)
            break;
        if (t == push::Take::Error || !onFrame(s, int(f.type), f.payload, &error)) {
            // A refused hello is told to the peer (a master with a wrong name wants to know why).
            if (t == push::Take::Frame && (f.type == push::Type::Hello || f.type == push::Type::Auth) &&
                !s->property(AcceptedProperty).toBool()) {
                s->write(push::encode(push::Type::Refuse, error.toUtf8()));
                close(s, error, true);
                return;
            }
            close(s, error);
            return;
        }
    }
    s->setProperty(BufferProperty, buffer);
}

bool PushReceiver::onFrame(QTcpSocket *s, int type, const QByteArray &payload, QString *error)
{
    const bool accepted = s->property(AcceptedProperty).toBool();
    switch (push::Type(type)) {
    case push::Type::Hello:
        if (accepted || s->property(HelloProperty).isValid()) {
            *error = QStringLiteral("a second hello");
            return false;
        }
        return hello(s, payload, error);
    case push::Type::Auth:
        if (!accepted && s->property(HelloProperty).isValid())
            return authenticated(s, payload, error);
        break;
    case push::Type::Ping:
        if (accepted)
            s->write(push::encode(push::Type::Pong));
        return accepted || (*error = QStringLiteral("ping before the hello"), false);
    case push::Type::Types:
    case push::Type::Records:
        if (!accepted || s != m_active) {
            *error = QStringLiteral("%1 before the hello").arg(push::typeName(push::Type(type)));
            return false;
        }
        if (push::Type(type) == push::Type::Records)
            return m_copy->records(payload, error);
        {
            const QJsonDocument doc = QJsonDocument::fromJson(payload);
            if (!doc.isArray()) {
                *error = QStringLiteral("types that are not a JSON array");
                return false;
            }
            return m_copy->takeTypes(doc.array(), error);
        }
    case push::Type::Accept:
    case push::Type::Refuse:
    case push::Type::Pong:
        break;
    }
    *error = QStringLiteral("unexpected %1 frame").arg(push::typeName(push::Type(type)));
    return false;
}

bool PushReceiver::hello(QTcpSocket *s, const QByteArray &payload, QString *error)
{
    QJsonParseError pe;
    const QJsonDocument doc = QJsonDocument::fromJson(payload, &pe);
    if (!doc.isObject()) {
        *error = QStringLiteral("malformed hello: %1").arg(pe.errorString());
        return false;
    }
    const QJsonObject o = doc.object();
    const QByteArray nonce = QByteArray::fromHex(o.value(QStringLiteral("nonce")).toString().toLatin1())
                                 .left(security::NonceBytes);
    if (m_security.secret.isEmpty()) {
        if (o.contains(QStringLiteral("nonce"))) {
            *error = QStringLiteral("authentication failed: this mirror has no shared secret");
            return false;
        }
        return accept(s, o, error);
    }
    if (nonce.size() != security::NonceBytes) {
        *error = QStringLiteral("authentication failed: no proof of the secret offered (no --secret-file?)");
        return false;
    }
    // The challenge; the hello is accepted once the master proved the secret in turn.
    const QByteArray mine = security::newNonce();
    s->setProperty(HelloProperty, payload);
    s->setProperty(NoncesProperty, nonce + mine);
    s->write(
        push::encode(push::Type::Auth, mine + security::proof(m_security.secret, security::Role::Acceptor,
                                                              nonce, mine, payload)));
    return true;
}

bool PushReceiver::authenticated(QTcpSocket *s, const QByteArray &payload, QString *error)
{
    const QByteArray hello = s->property(HelloProperty).toByteArray();
    const QByteArray nonces = s->property(NoncesProperty).toByteArray();
    const QByteArray expected =
        security::proof(m_security.secret, security::Role::Connector, nonces.left(security::NonceBytes),
                        nonces.mid(security::NonceBytes), hello);
    if (!security::proofsEqual(expected, payload)) {
        *error = QStringLiteral("authentication failed: wrong proof of the secret (another secret?)");
        return false;
    }
    return accept(s, QJsonDocument::fromJson(hello).object(), error);
}

bool PushReceiver::accept(QTcpSocket *s, const QJsonObject &o, QString *error)
{
    const QString server = o.value(QStringLiteral("server")).toString();
    if (server != m_master) {
        *error = QStringLiteral("this mirror copies the IS server %1, not %2").arg(m_master, server);
        return false;
    }
    const qint64 ping = o.value(QStringLiteral("ping_ms")).toInteger();
    if (ping < 100 || ping > 600000) {
        *error = QStringLiteral("ping_ms %1 out of range (100..600000)").arg(ping);
        return false;
    }
    if (!m_copy->takeTypes(o.value(QStringLiteral("types")).toArray(), error))
        return false;
    if (m_active)
        close(m_active, QStringLiteral("replaced by a new connection from the master (%1)").arg(peerName(s)));
    s->setProperty(AcceptedProperty, true);
    s->setProperty(PingProperty, ping);
    m_active = s;
    m_copy->interrupt();
    s->write(push::encode(push::Type::Accept,
                          QJsonDocument(QJsonObject{{QStringLiteral("server"), m_repository.serverName()}})
                              .toJson(QJsonDocument::Compact)));
    report(QStringLiteral("the master connected from %1").arg(peerName(s)));
    return true;
}

} // namespace dialog::isd
