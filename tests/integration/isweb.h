// Helpers of the web IS tests: a minimal HTTP/1.1 client on a raw socket (so a test controls
// exactly when requests are sent and how many connections are open) and server start-up.
#pragma once

#include "processfixture.h"

#include <QElapsedTimer>
#include <QTcpSocket>

namespace dialog::test {

struct HttpReply
{
    int status = 0; ///< 0: no complete answer
    QByteArray head;
    QByteArray body;
    QByteArray header(const QByteArray &name) const
    {
        for (const QByteArray &line : head.split('\n')) {
            const int colon = line.indexOf(':');
            if (colon > 0 && line.left(colon).trimmed().compare(name, Qt::CaseInsensitive) == 0)
                return line.mid(colon + 1).trimmed();
        }
        return {};
    }
};

/// Parses one complete answer from the front of @p buffer (removed); false if incomplete.
inline bool takeReply(QByteArray &buffer, HttpReply *out, bool head = false)
{
    const int end = buffer.indexOf("\r\n\r\n");
    if (end < 0)
        return false;
    HttpReply r;
    r.head = buffer.left(end);
    const QList<QByteArray> status = r.head.left(r.head.indexOf('\r')).split(' ');
    r.status = status.size() > 1 ? status.at(1).toInt() : -1;
    const qsizetype length = head ? 0 : r.header("content-length").toLongLong(); // HEAD: no body
    if (buffer.size() < end + 4 + length)
        return false;
    r.body = buffer.mid(end + 4, length);
    buffer.remove(0, end + 4 + length);
    *out = r;
    return true;
}

/// One connection; requests are sent with send() and answers awaited with wait().
class HttpConnection
{
public:
    bool open(quint16 port)
    {
        m_socket.connectToHost(QHostAddress::LocalHost, port);
        return m_socket.waitForConnected(5000);
    }
    void send(const QByteArray &method, const QByteArray &path, const QByteArray &extraHeaders = {})
    {
        m_head = method == "HEAD";
        m_socket.write(method + ' ' + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n" + extraHeaders + "\r\n");
        m_socket.flush();
    }
    /// The next answer, or status 0 after @p timeoutMs.
    HttpReply wait(int timeoutMs = 10000)
    {
        HttpReply r;
        QElapsedTimer t;
        t.start();
        while (!takeReply(m_buffer, &r, m_head) && t.elapsed() < timeoutMs) {
            m_socket.waitForReadyRead(20);
            m_buffer += m_socket.readAll();
        }
        return r;
    }
    bool hasReply()
    {
        m_buffer += m_socket.readAll();
        HttpReply r;
        QByteArray copy = m_buffer;
        return takeReply(copy, &r);
    }
    QTcpSocket &socket() { return m_socket; }

private:
    QTcpSocket m_socket;
    QByteArray m_buffer;
    bool m_head = false;
};

inline HttpReply httpGet(quint16 port, const QByteArray &path, const QByteArray &headers = {},
                         const QByteArray &method = "GET")
{
    HttpConnection c;
    if (!c.open(port))
        return {};
    c.send(method, path, headers);
    return c.wait();
}

} // namespace dialog::test
