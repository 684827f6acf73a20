// The reason phrases of the daemons' HTTP answers (the web IS and the logger's web log share them).
#include "dialog/httpstatus.h"

#include <QTest>

class tst_HttpStatus : public QObject
{
    Q_OBJECT
private slots:
    void reasonPhrase_data()
    {
        QTest::addColumn<int>("status");
        QTest::addColumn<QByteArray>("phrase");
        QTest::newRow("ok") << 200 << QByteArray("OK");
        QTest::newRow("not-modified") << 304 << QByteArray("Not Modified");
        QTest::newRow("bad-request") << 400 << QByteArray("Bad Request");
        QTest::newRow("unauthorized") << 401 << QByteArray("Unauthorized");
        QTest::newRow("not-found") << 404 << QByteArray("Not Found");
        QTest::newRow("method") << 405 << QByteArray("Method Not Allowed");
        QTest::newRow("timeout") << 408 << QByteArray("Request Timeout");
        QTest::newRow("too-large") << 413 << QByteArray("Payload Too Large");
        QTest::newRow("uri") << 414 << QByteArray("URI Too Long");
        QTest::newRow("head") << 431 << QByteArray("Request Header Fields Too Large");
        QTest::newRow("server-error") << 500 << QByteArray("Internal Server Error");
        QTest::newRow("not-implemented") << 501 << QByteArray("Not Implemented");
        QTest::newRow("bad-gateway") << 502 << QByteArray("Bad Gateway");
        QTest::newRow("unavailable") << 503 << QByteArray("Service Unavailable");
        QTest::newRow("gateway-timeout") << 504 << QByteArray("Gateway Timeout");
        QTest::newRow("other") << 418 << QByteArray("Status");
    }

    void reasonPhrase()
    {
        QFETCH(int, status);
        QFETCH(QByteArray, phrase);
        QCOMPARE(dialog::http::reasonPhrase(status), phrase);
    }
};

QTEST_GUILESS_MAIN(tst_HttpStatus)
#include "tst_httpstatus.moc"
