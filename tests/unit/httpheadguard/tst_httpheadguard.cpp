// The web IS's bounds on request heads, on bytes alone: every head of a connection, bodies,
// lengths, upgrades; fed whole and one byte at a time.
#include "httpheadguard.h"

#include <QtTest>

using dialog::isd::HttpHeadGuard;
using Verdict = HttpHeadGuard::Verdict;

class tst_HttpHeadGuard : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void decisions_data();
    void decisions();
    void decisionsByteByByte_data() { decisions_data(); }
    void decisionsByteByByte();
    void headsCountedAcrossRequests();
};

void tst_HttpHeadGuard::decisions_data()
{
    QTest::addColumn<QByteArray>("bytes");
    QTest::addColumn<int>("verdict");
    QTest::addColumn<QByteArray>("status");
    const QByteArray get = "GET /is HTTP/1.1\r\nHost: x\r\n\r\n";
    QTest::newRow("one GET") << get << int(Verdict::More) << QByteArray();
    QTest::newRow("two GETs and half a third")
        << get + get + "GET /is HTTP/1.1\r\nHo" << int(Verdict::More) << QByteArray();
    QTest::newRow("blank lines between") << get + "\r\n\r\n" + get << int(Verdict::More) << QByteArray();
    QTest::newRow("HEAD") << QByteArray("HEAD / HTTP/1.0\r\n\r\n") << int(Verdict::More) << QByteArray();
    QTest::newRow("zero length") << QByteArray("GET / HTTP/1.1\r\nContent-Length: 0\r\n\r\n")
                                 << int(Verdict::More) << QByteArray();
    QTest::newRow("POST") << QByteArray("POST / HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello")
                          << int(Verdict::Refuse) << QByteArray("405 Method Not Allowed");
    QTest::newRow("POST after a GET") << get + "POST / HTTP/1.1\r\n\r\n"
                                      << int(Verdict::Refuse) << QByteArray("405 Method Not Allowed");
    QTest::newRow("GET with a body") << QByteArray("GET / HTTP/1.1\r\nContent-Length: 10\r\n\r\n")
                                     << int(Verdict::Refuse) << QByteArray("413 Content Too Large");
    QTest::newRow("chunked") << QByteArray("GET / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n")
                             << int(Verdict::Refuse) << QByteArray("413 Content Too Large");
    QTest::newRow("conflicting lengths")
        << QByteArray("GET / HTTP/1.1\r\nContent-Length: 0\r\ncontent-length: 7\r\n\r\n")
        << int(Verdict::Refuse) << QByteArray("400 Bad Request");
    QTest::newRow("same length twice")
        << QByteArray("GET / HTTP/1.1\r\nContent-Length: 0\r\nContent-Length: 0\r\n\r\n")
        << int(Verdict::More) << QByteArray();
    QTest::newRow("signed length") << QByteArray("GET / HTTP/1.1\r\nContent-Length: +0\r\n\r\n")
                                   << int(Verdict::Refuse) << QByteArray("400 Bad Request");
    QTest::newRow("not HTTP") << QByteArray("HELLO\r\n") << int(Verdict::Refuse)
                              << QByteArray("400 Bad Request");
    QTest::newRow("garbage second") << get + "\x16\x03\x01\x02\r\n"
                                    << int(Verdict::Refuse) << QByteArray("400 Bad Request");
    QTest::newRow("endless first") << "GET / HTTP/1.1\r\nX: " + QByteArray(70000, 'a') << int(Verdict::Refuse)
                                   << QByteArray("431 Request Header Fields Too Large");
    QTest::newRow("endless second") << get + "GET / HTTP/1.1\r\nX: " + QByteArray(70000, 'a')
                                    << int(Verdict::Refuse)
                                    << QByteArray("431 Request Header Fields Too Large");
    QTest::newRow("upgrade") << QByteArray("GET /is/ws HTTP/1.1\r\nUpgrade: websocket\r\n\r\n")
                             << int(Verdict::WebSocket) << QByteArray();
    QTest::newRow("upgrade second") << get + "GET /is/ws HTTP/1.1\r\nUpgrade: websocket\r\n\r\n"
                                    << int(Verdict::Refuse) << QByteArray("400 Bad Request");
}

void tst_HttpHeadGuard::decisions()
{
    QFETCH(QByteArray, bytes);
    QFETCH(int, verdict);
    QFETCH(QByteArray, status);
    HttpHeadGuard g;
    QCOMPARE(int(g.feed(bytes)), verdict);
    QCOMPARE(g.status(), status);
    if (!status.isEmpty())
        QVERIFY(g.body().startsWith(status + ": "));
    if (status.startsWith("405"))
        QCOMPARE(g.headers().value(0).second, QByteArray("GET, HEAD"));
}

void tst_HttpHeadGuard::decisionsByteByByte()
{
    QFETCH(QByteArray, bytes);
    QFETCH(int, verdict);
    QFETCH(QByteArray, status);
    HttpHeadGuard g;
    Verdict v = Verdict::More;
    for (qsizetype i = 0; i < bytes.size() && v == Verdict::More; ++i)
        v = g.feed(bytes.mid(i, 1));
    QCOMPARE(int(v), verdict);
    QCOMPARE(g.status(), status);
}

void tst_HttpHeadGuard::headsCountedAcrossRequests()
{
    HttpHeadGuard g;
    QCOMPARE(g.feed("GET /a HTTP/1.1\r\n\r\nGET /b HT"), Verdict::More);
    QCOMPARE(g.requests(), 1);
    QVERIFY(g.inHead()); // the second one has begun: its deadline runs
    QCOMPARE(g.feed("TP/1.1\r\n\r\n"), Verdict::More);
    QCOMPARE(g.requests(), 2);
    QVERIFY(!g.inHead());
    QCOMPARE(g.feed("\r\n"), Verdict::More);
    QVERIFY(!g.inHead()); // blank lines between requests are no head
}

QTEST_GUILESS_MAIN(tst_HttpHeadGuard)
#include "tst_httpheadguard.moc"
