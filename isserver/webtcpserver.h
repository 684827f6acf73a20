// Connection admission of the web IS: every TCP connection is counted, watched for idleness and
// every request head on it checked (HttpHeadGuard) before the HTTP server sees it; a WebSocket
// upgrade request is handed to the WebSocket server, anything else stays HTTP, and what the guard
// refuses (not HTTP/1.x, a body, an endless or late head) is answered at once and closed.
// With a token, a WebSocket upgrade without it is answered 401 before the upgrade; with TLS, every
// connection is HTTPS (the head time bound includes the handshake).
#pragma once

#include <QHash>
#include <QHostAddress>
#include <QSslConfiguration>
#include <QTcpServer>
#include <functional>

class QTcpSocket;
class QTimer;
class QWebSocketServer;

namespace dialog::isd {

class WebTcpServer : public QTcpServer
{
    Q_OBJECT
public:
    /// What a connection's socket buffers at most between two reads.
    static constexpr qint64 ReadBufferBytes = 256 * 1024;

    /// Admission and time bounds of the connections.
    struct Limits
    {
        int idleMs = 30000;       ///< connections idle this long are closed (WebSockets excepted)
        int maxConnections = 128; ///< open connections (HTTP and WebSocket); more are answered 503
        int maxPerAddress = 32;   ///< open connections from one client address; more are answered 503
        int headMs = 5000;        ///< a request head must be complete this long after its start, or 408
        /// With a token: the last this many of maxConnections are kept for clients that send it
        /// (their first request carries it); others get 503 there, so open connections without the
        /// token never lock out the ones with it.
        int reservedForToken = 8;
    };

    /// @p busy tells whether a connection has an answer pending (then it is not idle).
    WebTcpServer(QWebSocketServer *webSockets, const Limits &limits, std::function<bool(QTcpSocket *)> busy);

    /// WebSocket upgrades must carry @p token (see headCarriesToken); empty: no token needed.
    void setToken(const QByteArray &token) { m_token = token; }
    /// Every connection is TLS with @p configuration (HTTPS, WSS). Call before listen().
    void setTls(const QSslConfiguration &configuration);

    // The decisions on request heads are HttpHeadGuard's (unit-tested and fuzzed without a socket).
    /// True when the request head @p head (without the blank line) carries @p token, as
    /// `Authorization: Bearer <token>` or as the query item `token=` of the request target (what a
    /// browser's WebSocket can send). Compared in constant time.
    static bool headCarriesToken(const QByteArray &head, const QByteArray &token);

protected:
    void incomingConnection(qintptr descriptor) override;

private:
    /// Counts @p socket as open; false (and a 503 answer) when the bound is reached.
    bool admit(QTcpSocket *socket);
    /// True when a connection opened now must show the token in its first request (the room left
    /// is the room reserved for token holders).
    bool onlyTokenHolders() const;
    QTimer *watchIdle(QTcpSocket *socket);
    /// Reads every request head as it arrives and decides: HTTP, WebSocket, or refused.
    void sniff(QTcpSocket *socket, QTimer *idle, bool needsToken);
    void upgrade(QTcpSocket *socket, QTimer *idle);
    static void stopReading(QTcpSocket *socket);
    static void refuse(QTcpSocket *socket, const QByteArray &status, const QByteArray &body,
                       const QList<QPair<QByteArray, QByteArray>> &headers = {});

    QWebSocketServer *m_webSockets;
    Limits m_limits;
    int m_open = 0;
    QHash<QHostAddress, int> m_openFrom;
    std::function<bool(QTcpSocket *)> m_busy;
    QByteArray m_token;
    bool m_tls = false;
    QSslConfiguration m_tlsConfiguration;
};

} // namespace dialog::isd
