#include "webtcpserver.h"

#include "httpheadguard.h"

#include "dialog/httpauth.h"

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
    // What one read may buffer: a request head, or a few WebSocket frames (bounded in size by the hub).
    socket->setReadBufferSize(ReadBufferBytes);
    const bool needsToken = onlyTokenHolders();
    if (!admit(socket))
        return;
    sniff(socket, watchIdle(socket), needsToken);
    addPendingConnection(socket);
}

bool WebTcpServer::onlyTokenHolders() const
{
    return !m_token.isEmpty() && m_open >= m_limits.maxConnections - m_limits.reservedForToken;
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

void WebTcpServer::sniff(QTcpSocket *socket, QTimer *idle, bool needsToken)
{
    // Connected before the HTTP server's own readyRead handler, so called first; the HTTP server
    // then reads everything available, so each call finds only new bytes. Every request head goes
    // through the guard before the HTTP parser buffers it or a body after it.
    auto guard = std::make_shared<HttpHeadGuard>();
    auto watch = std::make_shared<QMetaObject::Connection>();
    // Each head must be complete in time however it trickles in (a slow loris resets the idle
    // timer with every byte and would hold its slot for ever): the first one counted from the
    // connection, a later one from its first byte.
    auto deadline = new QTimer(socket);
    deadline->setSingleShot(true);
    deadline->setInterval(m_limits.headMs);
    connect(deadline, &QTimer::timeout, socket, [this, socket, guard] {
        stopReading(socket);
        refuse(socket, "408 Request Timeout",
               "408 Request Timeout: the request head was not complete within " +
                   QByteArray::number(m_limits.headMs) + " ms\n");
        qCInfo(lcWeb).noquote() << "request" << guard->requests() + 1 << "from"
                                << socket->peerAddress().toString() << "timed out in its head";
    });
    deadline->start();
    *watch = connect(socket, &QTcpSocket::readyRead, socket, [=] {
        const int served = guard->requests();
        const HttpHeadGuard::Verdict verdict = guard->feed(socket->peek(socket->bytesAvailable()));
        if (needsToken && served == 0 && guard->requests() > 0 &&
            !headCarriesToken(guard->firstHead(), m_token)) {
            delete deadline;
            stopReading(socket);
            refuse(socket, "503 Service Unavailable",
                   "503 Service Unavailable: " + QByteArray::number(m_open) +
                       " connections are open; the last " + QByteArray::number(m_limits.reservedForToken) +
                       " are kept for clients with the token\n");
            return;
        }
        if (verdict == HttpHeadGuard::Verdict::Refuse) {
            delete deadline;
            stopReading(socket);
            refuse(socket, guard->status(), guard->body(), guard->headers());
            return;
        }
        if (verdict == HttpHeadGuard::Verdict::WebSocket) {
            QObject::disconnect(*watch);
            delete deadline;
            if (!m_token.isEmpty() && !headCarriesToken(guard->head(), m_token)) {
                stopReading(socket);
                qCInfo(lcWeb).noquote()
                    << "WebSocket from" << socket->peerAddress().toString() << "refused: no valid token";
                refuse(socket, "401 Unauthorized",
                       "401 Unauthorized: this web IS needs a token; a WebSocket sends it as ?token=<token> "
                       "or 'Authorization: Bearer <token>'\n");
                return;
            }
            upgrade(socket, idle);
            return;
        }
        if (guard->requests() != served || !deadline->isActive()) {
            if (guard->inHead())
                deadline->start();
            else
                deadline->stop();
        }
    });
}

void WebTcpServer::stopReading(QTcpSocket *socket)
{
    // Nobody reads this connection any more (the HTTP server's handler included), and the socket
    // takes no more bytes from the network: a refused body is never read into memory.
    QObject::disconnect(socket, &QTcpSocket::readyRead, nullptr, nullptr);
    socket->setReadBufferSize(1);
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

bool WebTcpServer::headCarriesToken(const QByteArray &head, const QByteArray &token)
{
    const QList<QByteArray> lines = head.split('\n');
    if (lines.isEmpty())
        return false;
    for (qsizetype i = 1; i < lines.size(); ++i) {
        const QByteArray &line = lines.at(i);
        const int colon = line.indexOf(':');
        if (colon > 0 && line.left(colon).trimmed().compare("authorization", Qt::CaseInsensitive) == 0 &&
            http::bearerMatches(line.mid(colon + 1), token))
            return true;
    }
    const QList<QByteArray> parts = lines.first().trimmed().split(' ');
    if (parts.size() != 3)
        return false;
    const QUrlQuery query(QUrl::fromEncoded(parts.at(1)));
    return query.hasQueryItem(QStringLiteral("token")) &&
           http::constantTimeEquals(
               query.queryItemValue(QStringLiteral("token"), QUrl::FullyDecoded).toUtf8(), token);
}

void WebTcpServer::refuse(QTcpSocket *socket, const QByteArray &status, const QByteArray &body,
                          const QList<QPair<QByteArray, QByteArray>> &headers)
{
    // A TLS handshake that never completed (a slow loris on the HTTPS port): nothing can be said,
    // and a graceful close would wait for the handshake.
    if (auto *ssl = qobject_cast<QSslSocket *>(socket); ssl && !ssl->isEncrypted()) {
        ssl->abort();
        return;
    }
    QByteArray extra;
    for (const auto &h : headers)
        extra += h.first + ": " + h.second + "\r\n";
    socket->write("HTTP/1.1 " + status + "\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: " +
                  QByteArray::number(body.size()) + "\r\n" + extra + "Connection: close\r\n\r\n" + body);
    socket->disconnectFromHost();
}

} // namespace dialog::isd
