#include "httpheadguard.h"

namespace dialog::isd {

HttpHeadGuard::Verdict HttpHeadGuard::feed(const QByteArray &bytes)
{
    qsizetype at = 0;
    while (at < bytes.size()) {
        // Blank lines between requests are tolerated (RFC 9112, 2.2), not counted as a head.
        if (m_head.isEmpty() && (bytes.at(at) == '\r' || bytes.at(at) == '\n')) {
            ++at;
            continue;
        }
        const qsizetype before = m_head.size();
        m_head += bytes.mid(at, maxHeadBytes() + 4 - before);
        if (!m_lineChecked) {
            const qsizetype lineEnd = m_head.indexOf('\n', before);
            if (lineEnd >= 0) {
                if (!isRequestLine(m_head.left(lineEnd)))
                    return refuse("400 Bad Request",
                                  "not an HTTP/1.x request line (expected 'GET /path HTTP/1.1')");
                m_lineChecked = true;
            }
        }
        const qsizetype end = m_head.indexOf("\r\n\r\n", qMax<qsizetype>(0, before - 3));
        if (end < 0 || end > maxHeadBytes()) {
            if (m_head.size() > maxHeadBytes())
                return refuse("431 Request Header Fields Too Large", "the request head is longer than " +
                                                                         QByteArray::number(maxHeadBytes()) +
                                                                         " bytes");
            return Verdict::More; // everything was taken: wait for the rest of the head
        }
        // The bytes after this head begin the next one (no request has a body).
        at += end + 4 - before;
        const QByteArray head = m_head.left(end);
        m_head.clear();
        m_lineChecked = false;
        const Verdict v = decide(head);
        if (v != Verdict::More)
            return v;
    }
    return Verdict::More;
}

HttpHeadGuard::Verdict HttpHeadGuard::decide(const QByteArray &head)
{
    const qsizetype lineEnd = head.indexOf('\n');
    const QByteArray method = head.left(head.indexOf(' '));
    if (method != "GET" && method != "HEAD") {
        m_headers = {qMakePair(QByteArray("Allow"), QByteArray("GET, HEAD"))};
        return refuse("405 Method Not Allowed",
                      "the web IS is read-only (GET and HEAD only); a request body is never read");
    }
    QByteArray length;
    bool upgrade = false;
    const QList<QByteArray> lines = head.mid(lineEnd + 1).split('\n');
    for (const QByteArray &line : lines) {
        const qsizetype colon = line.indexOf(':');
        if (colon <= 0)
            continue;
        const QByteArray name = line.left(colon).trimmed().toLower();
        const QByteArray value = line.mid(colon + 1).trimmed();
        if (name == "content-length") {
            bool ok = false;
            value.toULongLong(&ok);
            if (!ok || value.startsWith('+'))
                return refuse("400 Bad Request", "invalid Content-Length '" + value.left(40) + "'");
            if (!length.isNull() && length != value)
                return refuse("400 Bad Request", "conflicting Content-Length headers");
            length = value;
        } else if (name == "transfer-encoding") {
            return refuse(
                "413 Content Too Large",
                "a request body is not accepted (Transfer-Encoding); the web IS takes GET and HEAD");
        } else if (name == "upgrade") {
            upgrade = value.compare("websocket", Qt::CaseInsensitive) == 0;
        }
    }
    if (!length.isNull() && length.toULongLong() > 0)
        return refuse("413 Content Too Large", "a request body is not accepted (Content-Length " + length +
                                                   "); the web IS takes GET and HEAD");
    ++m_requests;
    if (m_requests == 1)
        m_first = head;
    if (upgrade) {
        if (m_requests > 1)
            return refuse("400 Bad Request",
                          "a WebSocket upgrade must be the first request of its connection");
        m_upgrade = head;
        return Verdict::WebSocket;
    }
    return Verdict::More;
}

HttpHeadGuard::Verdict HttpHeadGuard::refuse(const QByteArray &status, const QByteArray &message)
{
    m_status = status;
    m_body = status + ": " + message + '\n';
    return Verdict::Refuse;
}

bool HttpHeadGuard::isRequestLine(QByteArray line)
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

bool HttpHeadGuard::isUpgradeToWebSocket(const QByteArray &head)
{
    bool upgrade = false;
    for (const QByteArray &line : head.split('\n')) {
        const int colon = line.indexOf(':');
        if (colon > 0 && line.left(colon).trimmed().compare("upgrade", Qt::CaseInsensitive) == 0)
            upgrade = line.mid(colon + 1).trimmed().compare("websocket", Qt::CaseInsensitive) == 0;
    }
    return upgrade;
}

} // namespace dialog::isd
