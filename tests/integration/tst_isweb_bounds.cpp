// What one client of the web IS may cost: regular expressions budgeted per request and matched off
// the main thread, WebSocket criteria messages rate-limited and frames bounded, and every request
// head of a connection bounded (bodies refused before they are read, conflicting lengths, late or
// endless second heads). Attackers are raw sockets; real binaries on loopback.
#include "isweb.h"

#include "dialog/is/dictionary.h"

#include <QtEndian>
#include <QtTest>

using namespace dialog;
using namespace dialog::test;

class tst_IsWebBounds : public IsWebTest
{
    Q_OBJECT

private Q_SLOTS:
    void init() { setUpFixture(); }
    void cleanup() { tearDownFixture(); }
    void scanDoesNotStopWrites();
    void scanBudgetIsPerRequest();
    void webSubscriptionScansOffTheMainThread();
    void nestedQuantifiersRefused();
    void criteriaMessagesRateLimited();
    void webSocketFrameBoundedAtItsHeader();
    void bodyRefusedBeforeItIsRead_data();
    void bodyRefusedBeforeItIsRead();
    void secondRequestHeadBounded();
    void slowSecondRequestTimesOut();

private:
    /// Starts DAQ (web IS, @p extra options) holding @p count objects named "Scan<n>", 17 characters.
    void fillMany(int count, const QStringList &extra);
    /// A pattern that backtracks 2^(n+2) steps on a name of n characters without white space: on
    /// the 17 characters of fillMany()'s names about half of the default match limit per name.
    static QByteArray evilQuery() { return "regex=(%3F:.%7C.)%2B%5Cs"; }
};

void tst_IsWebBounds::fillMany(int count, const QStringList &extra)
{
    m_server = startWebServer(QStringLiteral("DAQ"), extra);
    QVERIFY(waitForServer(QStringLiteral("DAQ")));
    QVERIFY(m_http != 0);
    const is::Object value = is::Object::create(m_dict->types(), QStringLiteral("ProcessStats"));
    int done = 0, failed = 0;
    for (int i = 0; i < count; ++i)
        m_dict->insert(QStringLiteral("DAQ.Scan%1").arg(i, 13, 10, QLatin1Char('0')), value,
                       [&done, &failed](const is::Status &s) {
                           ++done;
                           failed += s.isOk() ? 0 : 1;
                       });
    QTRY_COMPARE_WITH_TIMEOUT(done, count, 60000);
    QCOMPARE(failed, 0);
}

// A list with a costly pattern used to hold the repository's read lock in the main thread for the
// whole scan (2,000 objects: 35 s without a write). Now it runs on a snapshot in a scan thread.
void tst_IsWebBounds::scanDoesNotStopWrites()
{
    fillMany(2000, {QStringLiteral("--scan-budget-ms"), QStringLiteral("0")});
    HttpConnection scan;
    QVERIFY(scan.open(m_http));
    scan.send("GET", "/is/DAQ?" + evilQuery());
    const is::Object value = is::Object::create(m_dict->types(), QStringLiteral("ProcessStats"));
    for (int i = 0; i < 10; ++i) {
        const is::Status s = m_dict->insertSync(QStringLiteral("DAQ.Write%1").arg(i), value);
        QVERIFY2(s.isOk(), qPrintable(s.toString()));
    }
    // Every write was acknowledged while the scan was still going.
    scan.socket().waitForReadyRead(10);
    QVERIFY2(!scan.hasReply(), "the scan ended before the writes: the test proves nothing");
    scan.socket().abort(); // the client leaves: its scan stops
    const HttpReply after = httpGet(m_http, "/is/DAQ?regex=Write.*&format=json");
    QCOMPARE(after.status, 200);
    QCOMPARE(QJsonDocument::fromJson(after.body).object().value(QLatin1String("objects")).toArray().size(),
             10);
}

// The regular expression's cost is bounded per request, not per name: 2,000 names each within the
// match limit add up to the scan budget and no more.
void tst_IsWebBounds::scanBudgetIsPerRequest()
{
    fillMany(2000, {QStringLiteral("--scan-budget-ms"), QStringLiteral("300")});
    const HttpReply r = httpGet(m_http, "/is/DAQ?" + evilQuery());
    QCOMPARE(r.status, 400);
    QVERIFY2(r.body.contains("pattern too expensive") && r.body.contains("budget of 300 ms"), r.body);
    // The same through the IS API (dialogctl is ls).
    QList<is::Entry> entries;
    is::Status status;
    bool answered = false;
    m_dict->list(
        QStringLiteral("DAQ"), is::Criteria(QStringLiteral("(?:.|.)+\\s")),
        [&](const is::Status &s, const QList<is::Entry> &e) {
            status = s;
            entries = e;
            answered = true;
        },
        false);
    QTRY_VERIFY_WITH_TIMEOUT(answered, 15000);
    QVERIFY2(!status.isOk() && status.message().contains(QLatin1String("pattern too expensive")),
             qPrintable(status.toString()));
    // One name that runs out of the match limit stops the scan at once, whatever the budget.
    QVERIFY(m_dict
                ->insertSync(QStringLiteral("DAQ.X") + QString(40, QLatin1Char('x')),
                             is::Object::create(m_dict->types(), QStringLiteral("ProcessStats")))
                .isOk());
    const HttpReply limit = httpGet(m_http, "/is/DAQ?regex=X(%3F:.%7C.)%2B%5Cs");
    QCOMPARE(limit.status, 400);
    QVERIFY2(limit.body.contains("match limit"), limit.body);
    QCOMPARE(httpGet(m_http, "/is/DAQ?regex=Scan000000000000[0-4]").status, 200);
}

// One WebSocket subscription with a costly pattern used to stop the server's main thread (writes
// fell from 2,400/s to 0-35/s). Its first values are matched in a scan thread now: the server
// answers meanwhile, and the subscription is refused at the budget.
void tst_IsWebBounds::webSubscriptionScansOffTheMainThread()
{
    fillMany(2000, {QStringLiteral("--scan-budget-ms"), QStringLiteral("8000")});
    WsClient ws;
    ws.socket.open(QUrl(QStringLiteral("ws://127.0.0.1:%1/is/ws").arg(m_http)));
    QTRY_COMPARE_WITH_TIMEOUT(ws.socket.state(), QAbstractSocket::ConnectedState, 5000);
    ws.socket.sendTextMessage(QStringLiteral("{\"regex\": \"(?:.|.)+\\\\s\"}"));
    // Answered by the main thread while the subscription's scan goes on.
    QCOMPARE(httpGet(m_http, "/is/DAQ/DAQ.Scan0000000000000").status, 200);
    const is::Status s = m_dict->insertSync(
        QStringLiteral("DAQ.During"), is::Object::create(m_dict->types(), QStringLiteral("ProcessStats")));
    QVERIFY2(s.isOk(), qPrintable(s.toString()));
    QVERIFY2(ws.received.isEmpty(), "the scan ended before the server was asked: the test proves nothing");
    QTRY_VERIFY_WITH_TIMEOUT(ws.indexOf(QStringLiteral("error")) >= 0, 30000);
    QVERIFY(ws.events(QStringLiteral("error"))
                .first()
                .value(QLatin1String("error"))
                .toString()
                .contains(QLatin1String("pattern too expensive")));
    QCOMPARE(ws.indexOf(QStringLiteral("subscribed")), -1);
}

// A group repeating an unbounded quantifier backtracks exponentially: refused before any matching.
void tst_IsWebBounds::nestedQuantifiersRefused()
{
    fill();
    const HttpReply r = httpGet(m_http, "/is/DAQ?regex=(%3F:(%3F:.%7C.)%2B)%2B%5Cs");
    QCOMPARE(r.status, 400);
    QVERIFY2(r.body.contains("pattern too expensive"), r.body);
    WsClient ws;
    ws.socket.open(QUrl(QStringLiteral("ws://127.0.0.1:%1/is/ws").arg(m_http)));
    QTRY_COMPARE_WITH_TIMEOUT(ws.socket.state(), QAbstractSocket::ConnectedState, 5000);
    ws.socket.sendTextMessage(QStringLiteral("{\"regex\": \"(a+)+b\"}"));
    QTRY_VERIFY_WITH_TIMEOUT(ws.indexOf(QStringLiteral("error")) >= 0, 5000);
    QVERIFY(ws.events(QStringLiteral("error"))
                .first()
                .value(QLatin1String("error"))
                .toString()
                .contains(QLatin1String("pattern too expensive")));
}

// Each criteria message re-lists and re-sends every matching object: 10,000 of them cost minutes of
// the main thread. A client may send 10 at once and one a second after that.
void tst_IsWebBounds::criteriaMessagesRateLimited()
{
    fill();
    WsClient ws;
    ws.socket.open(QUrl(QStringLiteral("ws://127.0.0.1:%1/is/ws").arg(m_http)));
    QTRY_COMPARE_WITH_TIMEOUT(ws.socket.state(), QAbstractSocket::ConnectedState, 5000);
    for (int i = 0; i < 50; ++i)
        ws.socket.sendTextMessage(QStringLiteral("{}"));
    QTRY_VERIFY_WITH_TIMEOUT(ws.closed, 10000);
    QCOMPARE(int(ws.socket.closeCode()), 4429);
    QVERIFY2(ws.socket.closeReason().contains(QLatin1String("too many criteria messages")),
             qPrintable(ws.socket.closeReason()));
    QVERIFY(ws.events(QStringLiteral("subscribed")).size() <= 11);
    // Others are served.
    WsClient other;
    other.socket.open(QUrl(QStringLiteral("ws://127.0.0.1:%1/is/ws").arg(m_http)));
    QTRY_COMPARE_WITH_TIMEOUT(other.socket.state(), QAbstractSocket::ConnectedState, 5000);
    other.socket.sendTextMessage(QStringLiteral("{}"));
    QTRY_VERIFY_WITH_TIMEOUT(other.indexOf(QStringLiteral("synced")) >= 0, 5000);
}

// A frame announcing 1 GiB used to be buffered up to its length (8 of them: 3 GB). Now its header is
// enough to close the connection (1009, message too big).
void tst_IsWebBounds::webSocketFrameBoundedAtItsHeader()
{
    fill();
    QTcpSocket raw;
    raw.connectToHost(QHostAddress::LocalHost, m_http);
    QVERIFY(raw.waitForConnected(5000));
    raw.write("GET /is/ws HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
              "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n");
    QByteArray in;
    QTRY_VERIFY_WITH_TIMEOUT((in += raw.readAll()).contains("\r\n\r\n"), 5000);
    QVERIFY2(in.startsWith("HTTP/1.1 101"), in.constData());
    in.remove(0, in.indexOf("\r\n\r\n") + 4);
    QByteArray frame("\x81\xff", 2); // final text frame, masked, 64-bit length
    frame.resize(2 + 8);
    qToBigEndian<quint64>(quint64(1) << 30, frame.data() + 2);
    frame += QByteArray("\x01\x02\x03\x04", 4) + QByteArray(4096, 'a');
    raw.write(frame);
    raw.flush();
    QTRY_VERIFY_WITH_TIMEOUT(
        (in += raw.readAll()).size() >= 4 || raw.state() == QAbstractSocket::UnconnectedState, 10000);
    QVERIFY2(in.size() >= 4 && uchar(in.at(0)) == 0x88, in.toHex().constData()); // a close frame
    QCOMPARE(qFromBigEndian<quint16>(in.constData() + 2), quint16(1009));
    QTRY_COMPARE_WITH_TIMEOUT(raw.state(), QAbstractSocket::UnconnectedState, 10000);
    QCOMPARE(httpGet(m_http, "/is/DAQ/DAQ.RunInfo").status, 200);
}

void tst_IsWebBounds::bodyRefusedBeforeItIsRead_data()
{
    QTest::addColumn<QByteArray>("head");
    QTest::addColumn<int>("status");
    QTest::addColumn<QByteArray>("says");
    QTest::newRow("POST of 1 GiB") << QByteArray(
                                          "POST /is HTTP/1.1\r\nHost: x\r\nContent-Length: 1073741824\r\n")
                                   << 405 << QByteArray("read-only");
    QTest::newRow("GET with a body") << QByteArray(
                                            "GET /is HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000\r\n")
                                     << 413 << QByteArray("not accepted");
    QTest::newRow("chunked GET") << QByteArray(
                                        "GET /is HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n")
                                 << 413 << QByteArray("Transfer-Encoding");
    QTest::newRow("conflicting lengths")
        << QByteArray("GET /is HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nContent-Length: 5\r\n") << 400
        << QByteArray("conflicting Content-Length");
    QTest::newRow("bad length") << QByteArray("GET /is HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n") << 400
                                << QByteArray("invalid Content-Length");
}

// The HTTP server read a whole body before answering 405 (a 1 GB POST cost 2 GB). Now the head is
// enough: answered and closed while the body is still coming.
void tst_IsWebBounds::bodyRefusedBeforeItIsRead()
{
    QFETCH(QByteArray, head);
    QFETCH(int, status);
    QFETCH(QByteArray, says);
    fill();
    HttpConnection c;
    QVERIFY(c.open(m_http));
    c.socket().write(head + "\r\n" + QByteArray(64 * 1024, 'b'));
    const HttpReply r = c.wait();
    QCOMPARE(r.status, status);
    QVERIFY2(r.body.contains(says), r.body.constData());
    QTRY_COMPARE_WITH_TIMEOUT(c.socket().state(), QAbstractSocket::UnconnectedState, 5000);
    QCOMPARE(httpGet(m_http, "/is/DAQ/DAQ.RunInfo").status, 200);
}

// Only the first head of a connection was bounded: a second one of 200 MB was buffered whole.
void tst_IsWebBounds::secondRequestHeadBounded()
{
    fill();
    HttpConnection c;
    QVERIFY(c.open(m_http));
    // Two requests in one write are both served, in order.
    c.socket().write(
        "GET /is/DAQ/DAQ.RunInfo HTTP/1.1\r\nHost: x\r\n\r\nGET /is/DAQ HTTP/1.1\r\nHost: x\r\n\r\n");
    const HttpReply first = c.wait(), second = c.wait();
    QCOMPARE(first.status, 200);
    QVERIFY(first.body.contains("DAQ.RunInfo"));
    QCOMPARE(second.status, 200);
    c.send("GET", "/is", "X-Big: " + QByteArray(100 * 1024, 'a') + "\r\n");
    const HttpReply big = c.wait();
    QCOMPARE(big.status, 431);
    QVERIFY2(big.body.contains("longer than 65536 bytes"), big.body.constData());
    QTRY_COMPARE_WITH_TIMEOUT(c.socket().state(), QAbstractSocket::UnconnectedState, 5000);
}

// A second request trickling in used to keep its connection for as long as it trickled (the idle
// time-out restarts with every byte). Each head now has the --http-head-s deadline.
void tst_IsWebBounds::slowSecondRequestTimesOut()
{
    m_server =
        startWebServer(QStringLiteral("DAQ"), {QStringLiteral("--http-head-s"), QStringLiteral("1"),
                                               QStringLiteral("--http-idle-s"), QStringLiteral("600")});
    QVERIFY(waitForServer(QStringLiteral("DAQ")));
    HttpConnection c;
    QVERIFY(c.open(m_http));
    c.send("GET", "/is/DAQ/DAQ.Statistics");
    QCOMPARE(c.wait().status, 200);
    c.socket().write("GET /is/DAQ HTTP/1.1\r\nHost: 127.0.0.1\r\n");
    c.socket().flush();
    const HttpReply r = c.wait(15000);
    QCOMPARE(r.status, 408);
    QVERIFY2(r.body.contains("not complete within 1000 ms"), r.body.constData());
    QTRY_COMPARE_WITH_TIMEOUT(c.socket().state(), QAbstractSocket::UnconnectedState, 5000);
}

QTEST_GUILESS_MAIN(tst_IsWebBounds)
#include "tst_isweb_bounds.moc"
