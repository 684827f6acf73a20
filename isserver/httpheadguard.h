// Web IS: the bounds on every request head of a connection, decided on bytes alone.
#pragma once

#include <QByteArray>
#include <QList>
#include <QPair>

namespace dialog::isd {

/// Follows the request heads of one HTTP connection as its bytes arrive and decides, before the
/// HTTP parser buffers anything, whether each request is served. Every head (the first and each
/// one after it on a kept-alive connection) is bounded by maxHeadBytes() and must be an HTTP/1.x
/// GET or HEAD without a body: another method is answered 405 and a body (Content-Length above 0,
/// Transfer-Encoding) 413, both before the body is read; conflicting or malformed Content-Length
/// headers are answered 400. The first request of a connection may ask for a WebSocket upgrade.
/// A codec: it never touches a socket (unit-tested and fuzzed on bytes).
class HttpHeadGuard
{
public:
    /// What the bytes fed so far call for.
    enum class Verdict
    {
        More,      ///< serve what came, wait for more
        WebSocket, ///< the first head asks for a WebSocket upgrade (head() holds it)
        Refuse,    ///< answer status()/body() and close the connection
    };

    /// Longest request head (request line and headers).
    static constexpr int maxHeadBytes() { return 64 * 1024; }

    /// Takes the bytes that arrived after those fed before. After Refuse or WebSocket, feed no more.
    Verdict feed(const QByteArray &bytes);
    /// True while a head has begun (at least one byte) and is not complete.
    bool inHead() const { return !m_head.isEmpty(); }
    /// Complete heads accepted so far.
    int requests() const { return m_requests; }
    /// The head of the WebSocket upgrade (without its blank line), after Verdict::WebSocket.
    const QByteArray &head() const { return m_upgrade; }
    /// The connection's first accepted head (without its blank line), once requests() > 0.
    const QByteArray &firstHead() const { return m_first; }
    /// The refusal's status line text ("413 Content Too Large"), after Verdict::Refuse.
    const QByteArray &status() const { return m_status; }
    /// The refusal's plain-text body, after Verdict::Refuse.
    const QByteArray &body() const { return m_body; }
    /// Extra headers of the refusal (Allow for a 405).
    const QList<QPair<QByteArray, QByteArray>> &headers() const { return m_headers; }

    /// True for an HTTP/1.x request line ("GET /path HTTP/1.1", a trailing CR allowed).
    static bool isRequestLine(QByteArray line);
    /// True when the request head @p head (without the blank line) asks for a WebSocket upgrade.
    static bool isUpgradeToWebSocket(const QByteArray &head);

private:
    Verdict refuse(const QByteArray &status, const QByteArray &message);
    /// Decides a complete head (without its blank line).
    Verdict decide(const QByteArray &head);

    QByteArray m_head; // the head being received
    bool m_lineChecked = false;
    int m_requests = 0;
    QByteArray m_upgrade, m_first, m_status, m_body;
    QList<QPair<QByteArray, QByteArray>> m_headers;
};

} // namespace dialog::isd
