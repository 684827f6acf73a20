// The live side of the web IS: WebSocket subscriptions (criteria, current values, created /
// updated / removed), bad input, the client limit, a client that does not read, a clean stop.
// Real binaries on loopback.
#include "statuscheck.h"
#include "isweb.h"

#include "dialog/client.h"
#include "dialog/is/dictionary.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QWebSocket>
#include <QtTest>
#include <algorithm>
#include <csignal>

using namespace dialog;
using namespace dialog::test;

class tst_IsWebSocket : public IsWebTest
{
    Q_OBJECT

private Q_SLOTS:
    void init() { setUpFixture(); }
    void cleanup() { tearDownFixture(); }
    void webSocketSubscribeCreateUpdateRemove();
    void webSocketBadInputAndLimits();
    void slowWebSocketClientIsCoalesced();
    void stopsCleanlyWithClientsAndRequestsInProgress();
};

void tst_IsWebSocket::webSocketSubscribeCreateUpdateRemove()
{
    fill();
    WsClient ws;
    ws.socket.open(QUrl(QStringLiteral("ws://127.0.0.1:%1/is/ws").arg(m_http)));
    QTRY_COMPARE_WITH_TIMEOUT(ws.socket.state(), QAbstractSocket::ConnectedState, 5000);
    ws.socket.sendTextMessage(QStringLiteral("{\"server\": \"DAQ\", \"regex\": \"R.*|New.*\"}"));
    QTRY_VERIFY_WITH_TIMEOUT(ws.indexOf(QStringLiteral("synced")) >= 0, 5000);
    QCOMPARE(ws.received.first().value(QLatin1String("event")).toString(), QStringLiteral("subscribed"));
    QCOMPARE(ws.received.first().value(QLatin1String("objects")).toInt(), 2);
    const QList<QJsonObject> current = ws.events(QStringLiteral("value"));
    QCOMPARE(current.size(), 2);
    QCOMPARE(current.at(0).value(QLatin1String("name")).toString(), QStringLiteral("DAQ.Readout1"));
    QCOMPARE(current.at(1).value(QLatin1String("name")).toString(), QStringLiteral("DAQ.RunInfo"));
    QCOMPARE(
        current.at(1).value(QLatin1String("value")).toObject().value(QLatin1String("activeTime")).toInt(),
        22317);

    // create, update, remove; and a change that does not match is not sent.
    is::Object run = is::Object::create(m_dict->types(), QStringLiteral("RunInfo"));
    QVERIFY_OK(run.set<quint32>(QStringLiteral("runNumber"), 1));
    QVERIFY(m_dict->insertSync(QStringLiteral("DAQ.NewRun"), run).isOk());
    QVERIFY(m_dict->insertSync(QStringLiteral("DAQ.Other"), run).isOk());
    QVERIFY_OK(run.set<quint32>(QStringLiteral("runNumber"), 2));
    QVERIFY(m_dict->updateSync(QStringLiteral("DAQ.NewRun"), run).isOk());
    QVERIFY(m_dict->removeSync(QStringLiteral("DAQ.NewRun")).isOk());
    QTRY_VERIFY_WITH_TIMEOUT(ws.indexOf(QStringLiteral("removed")) >= 0, 5000);
    const int created = ws.indexOf(QStringLiteral("created"), QStringLiteral("DAQ.NewRun"));
    const int updated = ws.indexOf(QStringLiteral("updated"), QStringLiteral("DAQ.NewRun"));
    const int removed = ws.indexOf(QStringLiteral("removed"), QStringLiteral("DAQ.NewRun"));
    QVERIFY(created > 0 && created < updated && updated < removed);
    QCOMPARE(ws.received.at(created).value(QLatin1String("type")).toString(), QStringLiteral("RunInfo"));
    QCOMPARE(ws.received.at(created)
                 .value(QLatin1String("value"))
                 .toObject()
                 .value(QLatin1String("runNumber"))
                 .toInt(),
             1);
    QCOMPARE(ws.received.at(updated)
                 .value(QLatin1String("value"))
                 .toObject()
                 .value(QLatin1String("runNumber"))
                 .toInt(),
             2);
    QVERIFY(!ws.received.at(removed).contains(QLatin1String("value")));
    QCOMPARE(ws.indexOf(QStringLiteral("created"), QStringLiteral("DAQ.Other")), -1);

    // A new criteria message replaces the subscription: by type, with subtypes.
    ws.received.clear();
    ws.socket.sendTextMessage(QStringLiteral("{\"type\": \"ProcessStats\", \"subtypes\": true}"));
    QTRY_VERIFY_WITH_TIMEOUT(ws.indexOf(QStringLiteral("synced")) >= 0, 5000);
    QCOMPARE(ws.events(QStringLiteral("value")).size(), 2);
    QVERIFY(m_dict->updateSync(QStringLiteral("DAQ.RunInfo"), run).isOk()); // no longer matching
    is::Object rs = is::Object::create(m_dict->types(), QStringLiteral("ReadoutStats"));
    QVERIFY(m_dict->updateSync(QStringLiteral("DAQ.Readout1"), rs).isOk());
    QTRY_VERIFY_WITH_TIMEOUT(ws.indexOf(QStringLiteral("updated"), QStringLiteral("DAQ.Readout1")) >= 0,
                             5000);
    QCOMPARE(ws.indexOf(QStringLiteral("updated"), QStringLiteral("DAQ.RunInfo")), -1);

    // Another server, through its own subscription stream.
    startServer(QStringLiteral("RunParams"));
    QVERIFY(waitForServer(QStringLiteral("RunParams")));
    QVERIFY(m_dict->insertSync(QStringLiteral("RunParams.RunInfo"), run).isOk());
    ws.received.clear();
    ws.socket.sendTextMessage(QStringLiteral("{\"server\": \"RunParams\", \"regex\": \"Run.*\"}"));
    QTRY_VERIFY_WITH_TIMEOUT(ws.indexOf(QStringLiteral("synced")) >= 0, 10000);
    QVERIFY(ws.indexOf(QStringLiteral("created"), QStringLiteral("RunParams.RunInfo")) >= 0); // the snapshot
    QVERIFY_OK(run.set<quint32>(QStringLiteral("runNumber"), 3));
    QVERIFY(m_dict->updateSync(QStringLiteral("RunParams.RunInfo"), run).isOk());
    QTRY_VERIFY_WITH_TIMEOUT(ws.indexOf(QStringLiteral("updated"), QStringLiteral("RunParams.RunInfo")) >= 0,
                             5000);
    QCOMPARE(ws.received.at(ws.indexOf(QStringLiteral("updated"), QStringLiteral("RunParams.RunInfo")))
                 .value(QLatin1String("value"))
                 .toObject()
                 .value(QLatin1String("runNumber"))
                 .toInt(),
             3);
}

void tst_IsWebSocket::webSocketBadInputAndLimits()
{
    startWebServer(QStringLiteral("DAQ"), {QStringLiteral("--http-max-websockets"), QStringLiteral("2")});
    QVERIFY(waitForServer(QStringLiteral("DAQ")));
    QVERIFY(m_http != 0);
    const QUrl url(QStringLiteral("ws://127.0.0.1:%1/is/ws").arg(m_http));
    WsClient a, b, c;
    a.socket.open(url);
    QTRY_COMPARE_WITH_TIMEOUT(a.socket.state(), QAbstractSocket::ConnectedState, 5000);

    // Bad input: an error event each, the connection stays.
    const QStringList bad{QStringLiteral("{not json"),
                          QStringLiteral("[1,2]"),
                          QStringLiteral("{\"regex\": \"(\"}"),
                          QStringLiteral("{\"type\": \"Nope\"}"),
                          QStringLiteral("{\"regex\": 5}"),
                          QStringLiteral("{\"bogus\": 1}"),
                          QStringLiteral("{\"server\": \"a.b\"}")};
    for (const QString &m : bad)
        a.socket.sendTextMessage(m);
    a.socket.sendBinaryMessage(QByteArray("\x00\x01", 2));
    QTRY_COMPARE_WITH_TIMEOUT(a.events(QStringLiteral("error")).size(), bad.size() + 1, 5000);
    const QList<QJsonObject> errors = a.events(QStringLiteral("error"));
    QVERIFY(errors.at(0).value(QLatin1String("error")).toString().contains(QLatin1String("bad JSON")));
    QVERIFY(errors.at(2)
                .value(QLatin1String("error"))
                .toString()
                .contains(QLatin1String("bad regular expression")));
    QVERIFY(errors.at(3).value(QLatin1String("error")).toString().contains(QLatin1String("unknown type")));
    QVERIFY(!a.closed);
    // A message over 64 KB closes the connection (Qt WebSockets: "too much data").
    WsClient big;
    big.socket.open(url);
    QTRY_COMPARE_WITH_TIMEOUT(big.socket.state(), QAbstractSocket::ConnectedState, 5000);
    big.socket.sendTextMessage(QString(100000, QLatin1Char('x')));
    QTRY_VERIFY_WITH_TIMEOUT(big.closed, 5000);
    QCOMPARE(big.socket.closeCode(), QWebSocketProtocol::CloseCodeTooMuchData);

    // Two clients at most: the third is closed with a reason.
    b.socket.open(url);
    QTRY_COMPARE_WITH_TIMEOUT(b.socket.state(), QAbstractSocket::ConnectedState, 5000);
    c.socket.open(url);
    QTRY_VERIFY_WITH_TIMEOUT(c.closed, 5000);
    QCOMPARE(int(c.socket.closeCode()), 4503);
    QVERIFY2(c.socket.closeReason().contains(QLatin1String("too many WebSocket clients (limit 2)")),
             qPrintable(c.socket.closeReason()));
    QVERIFY(!a.closed && !b.closed);
    // A slot is free again when a client leaves.
    b.socket.close();
    QTRY_VERIFY_WITH_TIMEOUT(b.closed, 5000);
    WsClient d;
    d.socket.open(url);
    QTRY_COMPARE_WITH_TIMEOUT(d.socket.state(), QAbstractSocket::ConnectedState, 5000);
    d.socket.sendTextMessage(QStringLiteral("{}"));
    QTRY_VERIFY_WITH_TIMEOUT(d.indexOf(QStringLiteral("synced")) >= 0, 5000);
    QVERIFY(!d.closed);

    // Another path is refused with a reason.
    WsClient e;
    e.socket.open(QUrl(QStringLiteral("ws://127.0.0.1:%1/elsewhere").arg(m_http)));
    QTRY_VERIFY_WITH_TIMEOUT(e.closed, 5000);
    QVERIFY2(e.socket.closeReason().contains(QLatin1String("/is/ws")), qPrintable(e.socket.closeReason()));
}

namespace {

/// Text messages of the server-to-client (unmasked) WebSocket frames at the front of @p buffer.
QList<QByteArray> takeMessages(QByteArray &buffer, QByteArray &partial)
{
    QList<QByteArray> out;
    for (;;) {
        if (buffer.size() < 2)
            return out;
        const quint8 b0 = quint8(buffer[0]), b1 = quint8(buffer[1]);
        qint64 length = b1 & 0x7f;
        int header = 2;
        if (length == 126) {
            if (buffer.size() < 4)
                return out;
            length = (quint8(buffer[2]) << 8) | quint8(buffer[3]);
            header = 4;
        } else if (length == 127) {
            if (buffer.size() < 10)
                return out;
            length = 0;
            for (int i = 2; i < 10; ++i)
                length = (length << 8) | quint8(buffer[i]);
            header = 10;
        }
        if (buffer.size() < header + length)
            return out;
        partial += buffer.mid(header, length);
        buffer.remove(0, header + length);
        if (b0 & 0x80) { // FIN
            if ((b0 & 0x0f) == 0x1 || (b0 & 0x0f) == 0x0)
                out.append(partial);
            partial.clear();
        }
    }
}
} // namespace

// A client that does not read: the server keeps at most one message per object for it (coalesced),
// stays responsive, its memory does not grow with the changes, and the client ends with the newest value.
void tst_IsWebSocket::slowWebSocketClientIsCoalesced()
{
    fill();
    QTcpSocket raw;
    raw.setReadBufferSize(4096); // Qt stops reading from the kernel: the connection fills up
    raw.connectToHost(QHostAddress::LocalHost, m_http);
    QVERIFY(raw.waitForConnected(5000));
    raw.write("GET /is/ws HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
              "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n");
    QByteArray in;
    QElapsedTimer t;
    t.start();
    while (!in.contains("\r\n\r\n") && t.elapsed() < 5000) {
        raw.waitForReadyRead(50);
        in += raw.read(4096);
    }
    QVERIFY2(in.startsWith("HTTP/1.1 101"), in);
    in.remove(0, in.indexOf("\r\n\r\n") + 4);
    // A masked text frame with the criteria.
    const QByteArray criteria = "{\"regex\": \"RunInfo\"}";
    const char mask[4] = {0x11, 0x22, 0x33, 0x44};
    QByteArray frame;
    frame.append(char(0x81)).append(char(0x80 | criteria.size())).append(mask, 4);
    for (int i = 0; i < criteria.size(); ++i)
        frame.append(char(criteria[i] ^ mask[i % 4]));
    raw.write(frame);
    QVERIFY(raw.waitForBytesWritten(5000));
    // The subscription is in place once the server has sent the current content and "synced".
    QTRY_VERIFY_WITH_TIMEOUT((in += raw.read(4096)).contains("\"synced\""), 5000);

    const qint64 rssBefore = rssKb(m_server->processId());
    is::Object run = is::Object::create(m_dict->types(), QStringLiteral("RunInfo"));
    const int updates = 3000;
    const QString filler(16 * 1024, QLatin1Char('x')); // 3000 x 16 KB = 48 MB of notifications
    for (int i = 1; i <= updates; ++i) {
        QVERIFY_OK(run.set<quint32>(QStringLiteral("runNumber"), quint32(i)));
        QVERIFY_OK(run.set(QStringLiteral("runType"), filler));
        QVERIFY(m_dict->updateSync(QStringLiteral("DAQ.RunInfo"), run).isOk());
    }
    QCOMPARE(httpGet(m_http, "/is/DAQ/DAQ.Control1").status, 200); // the server is not stuck
    const qint64 growthKb = rssKb(m_server->processId()) - rssBefore;
    QVERIFY2(growthKb < rssGrowthBoundKb(20 * 1024), qPrintable(QStringLiteral("server RSS grew by %1 KB").arg(growthKb)));

    // Now read everything: the newest value arrives, after fewer messages than changes, in order.
    raw.setReadBufferSize(0);
    QByteArray partial;
    QList<quint32> seen;
    t.restart();
    while ((seen.isEmpty() || seen.last() != quint32(updates)) && t.elapsed() < 30000) {
        raw.waitForReadyRead(50);
        in += raw.readAll();
        for (const QByteArray &m : takeMessages(in, partial)) {
            const QJsonObject o = QJsonDocument::fromJson(m).object();
            if (o.value(QLatin1String("event")).toString() == QLatin1String("updated"))
                seen << quint32(
                    o.value(QLatin1String("value")).toObject().value(QLatin1String("runNumber")).toInt());
        }
    }
    QVERIFY(!seen.isEmpty());
    QCOMPARE(seen.last(), quint32(updates));
    QVERIFY2(seen.size() < updates,
             qPrintable(QStringLiteral("%1 messages for %2 changes").arg(seen.size()).arg(updates)));
    QVERIFY(std::is_sorted(seen.begin(), seen.end()));
    qInfo() << "slow client: received" << seen.size() << "of" << updates << "changes; server RSS grew"
            << growthKb << "KB";
}

// SIGTERM while a WebSocket client is subscribed, a request waits for a stopped server and a
// connection is idle: the server exits normally (exit code 0), the clients see the connections close.
void tst_IsWebSocket::stopsCleanlyWithClientsAndRequestsInProgress()
{
    fill();
    QProcess *slow = startServer(QStringLiteral("Slow"));
    QVERIFY(waitForServer(QStringLiteral("Slow")));
    QCOMPARE(httpGet(m_http, "/is/Slow/Slow.Statistics").status, 200);
    WsClient ws;
    ws.socket.open(QUrl(QStringLiteral("ws://127.0.0.1:%1/is/ws").arg(m_http)));
    QTRY_COMPARE_WITH_TIMEOUT(ws.socket.state(), QAbstractSocket::ConnectedState, 5000);
    ws.socket.sendTextMessage(QStringLiteral("{}"));
    QTRY_VERIFY_WITH_TIMEOUT(ws.indexOf(QStringLiteral("synced")) >= 0, 5000);
    WsClient remote; // a subscription to the other server
    remote.socket.open(QUrl(QStringLiteral("ws://127.0.0.1:%1/is/ws").arg(m_http)));
    QTRY_COMPARE_WITH_TIMEOUT(remote.socket.state(), QAbstractSocket::ConnectedState, 5000);
    remote.socket.sendTextMessage(QStringLiteral("{\"server\": \"Slow\"}"));
    QTRY_VERIFY_WITH_TIMEOUT(remote.indexOf(QStringLiteral("synced")) >= 0, 5000);
    QCOMPARE(::kill(pid_t(slow->processId()), SIGSTOP), 0);
    auto resume = qScopeGuard([slow] { ::kill(pid_t(slow->processId()), SIGCONT); });
    HttpConnection held, idle;
    QVERIFY(held.open(m_http));
    QVERIFY(idle.open(m_http));
    held.send("GET", "/is/Slow/Slow.Statistics");
    // The request reaches the server, which shows nothing of it but must not answer.
    QVERIFY(expectNothingFor(
        200, [&held] { return held.hasReply(); }, "an answer while its server is stopped"));

    m_server->terminate();
    QVERIFY(m_server->waitForFinished(10000));
    QCOMPARE(m_server->exitStatus(), QProcess::NormalExit);
    QVERIFY2(m_server->exitCode() == 0, m_server->readAllStandardError().right(4000).constData());
    QTRY_VERIFY_WITH_TIMEOUT(ws.closed && remote.closed, 5000);
    QCOMPARE(ws.socket.closeCode(), QWebSocketProtocol::CloseCodeGoingAway);
    QTRY_COMPARE_WITH_TIMEOUT(held.socket().state(), QAbstractSocket::UnconnectedState, 5000);
}

QTEST_GUILESS_MAIN(tst_IsWebSocket)
#include "tst_isweb_ws.moc"
