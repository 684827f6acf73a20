#include "webtcpserver.h"

#include <QLoggingCategory>
#include <QSslSocket>
#include <QTcpSocket>
#include <QTimer>
#include <QUrl>
#include <QUrlQuery>
#include <QWebSocketServer>
#include <memory>

Q_DECLARE_LOGGING_CATEGORY(lcWeb)

namespace dialog::isd {

WebTcpServer::WebTcpServer(QWebSocketServer *webSockets, const Limits &limits,
                           std::function<bool(QTcpSocket *)> busy)
    : m_webSockets(webSockets), m_limits(limits), m_busy(std::move(busy))
{
}

void WebTcpServer::setTls(const QSslConfiguration &configuration)
{
    m_tls = true;
    m_tlsConfiguration = configuration;
}

void WebTcpServer::incomingConnection(qintptr descriptor)
{
    QTcpSocket *socket = nullptr;
    if (m_tls) {
        auto *ssl = new QSslSocket(this);
        ssl->setSslConfiguration(m_tlsConfiguration);
        socket = ssl;
    } else {
        socket = new QTcpSocket(this);
    }
    if (!socket->setSocketDescriptor(descriptor)) {
        delete socket;
        return;
    }
    if (auto *ssl = qobject_cast<QSslSocket *>(socket)) {
        // A failed handshake (plain HTTP on the HTTPS port, a client that rejects the certificate)
        // closes the connection: no answer can reach such a client. A connection over the bounds
        // of admit() is closed without a 503 (nothing readable can be said before the handshake).
        connect(ssl, &QSslSocket::errorOccurred, ssl, [ssl](QAbstractSocket::SocketError e) {
            if (e == QAbstractSocket::SslHandshakeFailedError) {
                qCInfo(lcWeb).noquote() << "TLS handshake with" << ssl->peerAddress().toString()
                                        << "failed:" << ssl->errorString();
                ssl->abort();
            }
        });
        ssl->startServerEncryption();
    }
    if (!admit(socket))
        return;
    sniff(socket, watchIdle(socket));
    addPendingConnection(socket);
}

bool WebTcpServer::admit(QTcpSocket *socket)
{
    const QHostAddress from = socket->peerAddress();
    QByteArray why;
    if (m_open >= m_limits.maxConnections)
        why = QByteArray::number(m_limits.maxConnections) +
              " connections are open, the most this server accepts";
    else if (m_openFrom.value(from) >= m_limits.maxPerAddress)
        why = QByteArray::number(m_limits.maxPerAddress) + " connections from " + from.toString().toUtf8() +
              " are open, the most one address may hold";
    if (!why.isEmpty()) {
        refuse(socket, "503 Service Unavailable", "503 Service Unavailable: " + why + "; try again later\n");
        connect(socket, &QTcpSocket::disconnected, socket, &QObject::deleteLater);
        return false;
    }
    ++m_open;
    ++m_openFrom[from];
    connect(socket, &QObject::destroyed, this, [this, from] {
        --m_open;
        if (--m_openFrom[from] <= 0)
            m_openFrom.remove(from);
    });
    return true;
}

QTimer *WebTcpServer::watchIdle(QTcpSocket *socket)
{
    // Idle connections are closed: each one costs a socket and memory, and a client may open
    // many and send nothing (the request bound only counts requests).
    auto *idle = new QTimer(socket);
    idle->setSingleShot(true);
    idle->setInterval(m_limits.idleMs);
    connect(idle, &QTimer::timeout, socket, [this, socket, idle] {
        if (m_busy(socket))
            idle->start();
        else
            socket->disconnectFromHost();
    });
    connect(socket, &QTcpSocket::readyRead, idle, qOverload<>(&QTimer::start));
    connect(socket, &QTcpSocket::bytesWritten, idle, qOverload<>(&QTimer::start));
    idle->start();
    return idle;
}

void WebTcpServer::sniff(QTcpSocket *socket, QTimer *idle)
{
    // Connected before the HTTP server's own readyRead handler, so called first. The HTTP server
    // reads inside a transaction: what it has read of a partial request is not available here
    // any more, so the header block is gathered from what each call finds new.
    auto first = std::make_shared<QMetaObject::Connection>();
    auto head = std::make_shared<QByteArray>();
    // The head must be complete in time however it trickles in (a slow loris resets the idle
    // timer with every byte and would hold its slot for ever).
    auto deadline = new QTimer(socket);
    deadline->setSingleShot(true);
    connect(deadline, &QTimer::timeout, socket, [this, socket, first] {
        QObject::disconnect(*first);
        QObject::disconnect(socket, &QTcpSocket::readyRead, nullptr, nullptr);
        refuse(socket, "408 Request Timeout",
               "408 Request Timeout: the request head was not complete within " +
                   QByteArray::number(m_limits.headMs) + " ms\n");
    });
    deadline->start(m_limits.headMs);
    *first = connect(socket, &QTcpSocket::readyRead, socket, [this, socket, first, head, idle, deadline] {
        *head += socket->peek(qMin<qint64>(socket->bytesAvailable(), MaxHeaderBytes + 1 - head->size()));
        // Not HTTP at all (e.g. another protocol on the wrong port): said at once, not after a time-out.
        const int lineEnd = head->indexOf('\n');
        if (lineEnd >= 0 && !isRequestLine(head->left(lineEnd))) {
            QObject::disconnect(socket, &QTcpSocket::readyRead, nullptr, nullptr);
            refuse(socket, "400 Bad Request",
                   "400 Bad Request: not an HTTP/1.x request line (expected 'GET /path HTTP/1.1')\n");
            return;
        }
        const int end = head->indexOf("\r\n\r\n");
        if (end < 0) {
            if (head->size() <= MaxHeaderBytes)
                return; // wait for the whole header block
            QObject::disconnect(socket, &QTcpSocket::readyRead, nullptr, nullptr);
            refuse(socket, "431 Request Header Fields Too Large",
                   "431 Request Header Fields Too Large: the request head is longer than " +
                       QByteArray::number(MaxHeaderBytes) + " bytes\n");
            return;
        }
        QObject::disconnect(*first);
        delete deadline;
        if (isUpgradeToWebSocket(head->left(end))) {
            if (!m_token.isEmpty() && !headCarriesToken(head->left(end), m_token)) {
                QObject::disconnect(socket, &QTcpSocket::readyRead, nullptr, nullptr);
                qCInfo(lcWeb).noquote()
                    << "WebSocket from" << socket->peerAddress().toString() << "refused: no valid token";
                refuse(socket, "401 Unauthorized",
                       "401 Unauthorized: this web IS needs a token; a WebSocket sends it as ?token=<token> "
                       "or 'Authorization: Bearer <token>'\n");
                return;
            }
            upgrade(socket, idle);
        }
        // else HTTP: left to QAbstractHttpServer
    });
}

void WebTcpServer::upgrade(QTcpSocket *socket, QTimer *idle)
{
    QObject::disconnect(socket, &QTcpSocket::readyRead, nullptr, nullptr);
    delete idle; // a WebSocket stays as long as its client wants
    if (socket->isTransactionStarted())
        socket->rollbackTransaction(); // the handshake from its first byte
    m_webSockets->handleConnection(socket);
    QTimer::singleShot(0, socket, [socket] { Q_EMIT socket->readyRead(); });
}

bool WebTcpServer::isUpgradeToWebSocket(const QByteArray &head)
{
    bool upgrade = false;
    for (const QByteArray &line : head.split('\n')) {
        const int colon = line.indexOf(':');
        if (colon > 0 && line.left(colon).trimmed().compare("upgrade", Qt::CaseInsensitive) == 0)
            upgrade = line.mid(colon + 1).trimmed().compare("websocket", Qt::CaseInsensitive) == 0;
    }
    return upgrade;
}

bool WebTcpServer::constantTimeEquals(const QByteArray &a, const QByteArray &b)
{
    // Every byte of the longer one is looked at whatever the content: the time tells the length
    // at most, not how much of the token was right.
    const qsizetype n = qMax(a.size(), b.size());
    unsigned char diff = a.size() == b.size() ? 0 : 1;
    for (qsizetype i = 0; i < n; ++i)
        diff |= (i < a.size() ? uchar(a[i]) : 0) ^ (i < b.size() ? uchar(b[i]) : 0);
    return diff == 0;
}

bool WebTcpServer::bearerMatches(const QByteArray &authorization, const QByteArray &token)
{
    const QByteArray v = authorization.trimmed();
    const int space = v.indexOf(' ');
    if (space < 0 || v.left(space).compare("bearer", Qt::CaseInsensitive) != 0)
        return false;
    return constantTimeEquals(v.mid(space + 1).trimmed(), token);
}

bool WebTcpServer::headCarriesToken(const QByteArray &head, const QByteArray &token)
{
    const QList<QByteArray> lines = head.split('\n');
    if (lines.isEmpty())
        return false;
    for (qsizetype i = 1; i < lines.size(); ++i) {
        const QByteArray &line = lines.at(i);
        const int colon = line.indexOf(':');
        if (colon > 0 && line.left(colon).trimmed().compare("authorization", Qt::CaseInsensitive) == 0 &&
            bearerMatches(line.mid(colon + 1), token))
            return true;
    }
    const QList<QByteArray> parts = lines.first().trimmed().split(' ');
    if (parts.size() != 3)
        return false;
    const QUrlQuery query(QUrl::fromEncoded(parts.at(1)));
    return query.hasQueryItem(QStringLiteral("token")) &&
           constantTimeEquals(query.queryItemValue(QStringLiteral("token"), QUrl::FullyDecoded).toUtf8(),
                              token);
}

bool WebTcpServer::isRequestLine(QByteArray line)
{
    if (line.endsWith('\r'))
        line.chop(1);
    const QList<QByteArray> parts = line.split(' ');
    if (parts.size() != 3 || parts[0].isEmpty() || parts[1].isEmpty() || !parts[2].startsWith("HTTP/1."))
        return false;
    for (char c : parts[0])
        if (c < 'A' || c > 'Z')
            return false;
    return true;
}

void WebTcpServer::refuse(QTcpSocket *socket, const QByteArray &status, const QByteArray &body)
{
    // A TLS handshake that never completed (a slow loris on the HTTPS port): nothing can be said,
    // and a graceful close would wait for the handshake.
    if (auto *ssl = qobject_cast<QSslSocket *>(socket); ssl && !ssl->isEncrypted()) {
        ssl->abort();
        return;
    }
    socket->write("HTTP/1.1 " + status + "\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: " +
                  QByteArray::number(body.size()) + "\r\nConnection: close\r\n\r\n" + body);
    socket->disconnectFromHost();
}

} // namespace dialog::isd
