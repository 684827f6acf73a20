// Helpers of the web IS tests: a minimal HTTP/1.1 client on a raw socket (so a test controls
// exactly when requests are sent and how many connections are open) and server start-up.
#pragma once

#include "statuscheck.h"
#include "isfixture.h"

#include "dialog/client.h"
#include "dialog/is/dictionary.h"

#include <QElapsedTimer>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTcpSocket>
#include <QWebSocket>
#include <memory>

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
    /// Connects from @p from when given (any 127.x.y.z address reaches the loopback server).
    bool open(quint16 port, const QHostAddress &from = QHostAddress())
    {
        if (!from.isNull() && !m_socket.bind(from))
            return false;
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

inline const QString IsTypesDir = isTypesDir();

/// Base of the web IS test classes: the IS fixture (isfixture.h) and IS servers with a web IS on the
/// port they bind (m_http). The test classes call setUpFixture() / tearDownFixture() from init() /
/// cleanup().
class IsWebTest : public QObject, protected IsTestBase
{
protected:
    void setUpFixture()
    {
        QVERIFY(setUpIs(QStringLiteral("isweb-test")));
        m_http = 0;
    }

    void tearDownFixture() { tearDownIs(); }

    /// startServer() with the web IS on port 0; m_http becomes the port it reports (0: none).
    QProcess *startWebServer(const QString &name, const QStringList &extra = {})
    {
        QProcess *p =
            startServer(name, QStringList{QStringLiteral("--http-port"), QStringLiteral("0")} + extra);
        m_http = httpPortOf(p);
        return p;
    }

    // DAQ with the web IS on m_http: a RunInfo, two ProcessStats-family objects.
    void fill()
    {
        m_server = startWebServer(QStringLiteral("DAQ"));
        QVERIFY(waitForServer(QStringLiteral("DAQ")));
        QVERIFY(m_http != 0);
        is::Object run = is::Object::create(m_dict->types(), QStringLiteral("RunInfo"));
        QVERIFY_OK(run.set<quint32>(QStringLiteral("activeTime"), 22317));
        QVERIFY_OK(run.set<quint32>(QStringLiteral("runNumber"), 42));
        QVERIFY_OK(run.set(QStringLiteral("state"), QStringLiteral("Running")));
        QVERIFY(m_dict->insertSync(QStringLiteral("DAQ.RunInfo"), run).isOk());
        QVERIFY(m_dict
                    ->insertSync(QStringLiteral("DAQ.Readout1"),
                                 is::Object::create(m_dict->types(), QStringLiteral("ReadoutStats")))
                    .isOk());
        QVERIFY(m_dict
                    ->insertSync(QStringLiteral("DAQ.Control1"),
                                 is::Object::create(m_dict->types(), QStringLiteral("ProcessStats")))
                    .isOk());
    }

    quint16 m_http = 0;
    QProcess *m_server = nullptr;
};

/// A WebSocket client of the web IS that records every message.
struct WsClient
{
    QWebSocket socket;
    QList<QJsonObject> received;
    bool closed = false;
    WsClient()
    {
        QObject::connect(&socket, &QWebSocket::textMessageReceived, &socket, [this](const QString &t) {
            received.append(QJsonDocument::fromJson(t.toUtf8()).object());
        });
        QObject::connect(&socket, &QWebSocket::disconnected, &socket, [this] { closed = true; });
    }
    QList<QJsonObject> events(const QString &event) const
    {
        QList<QJsonObject> out;
        for (const QJsonObject &o : received)
            if (o.value(QLatin1String("event")).toString() == event)
                out.append(o);
        return out;
    }
    int indexOf(const QString &event, const QString &name = {}) const
    {
        for (int i = 0; i < received.size(); ++i)
            if (received.at(i).value(QLatin1String("event")).toString() == event &&
                (name.isEmpty() || received.at(i).value(QLatin1String("name")).toString() == name))
                return i;
        return -1;
    }
};

} // namespace dialog::test
