// The daemons' web front end alone (dialog::http::WebFrontend): listening and its refusal, the
// bearer token on the resources that need it, whole answers that close their connection, HEAD,
// and the 404 of a request the daemon leaves unanswered. Requests over loopback from this process.
#include "statuscheck.h"
#include "webfrontend.h"

#include <QHttpServerRequest>
#include <QPointer>
#include <QTcpServer>
#include <QTcpSocket>
#include <QtTest>
#include <functional>

using namespace dialog;

namespace {

/// A daemon's web side: /open for anyone, /data behind the token, /slow answered later, the rest
/// left unanswered (missingHandler()).
class Front : public http::WebFrontend
{
public:
    Front() : WebFrontend(QStringLiteral("this test page"), QStringLiteral("test's --token-file")) {}
    QPointer<QTcpSocket> later;

protected:
    bool handleRequest(const QHttpServerRequest &request, QTcpSocket *socket) override
    {
        const bool head = request.method() == QHttpServerRequest::Method::Head;
        const QString path = request.url().path();
        if (path == QLatin1String("/open")) {
            answer(socket, 200, "text/plain", "open\n", head);
        } else if (path == QLatin1String("/data")) {
            if (requireToken(request, socket))
                answerJson(socket, 200, QJsonObject{{QStringLiteral("value"), 42}}, head);
        } else if (path == QLatin1String("/slow")) {
            later = socket;
        } else {
            return false;
        }
        return true;
    }
};

struct Answer
{
    int status = 0;
    QByteArray head, body;
};

/// Sends @p request to 127.0.0.1:@p port, calls @p meanwhile, and reads until the server closes
/// the connection (status 0 if it does not within 10 s).
Answer ask(quint16 port, const QByteArray &request, const std::function<void()> &meanwhile = {})
{
    QTcpSocket s;
    s.connectToHost(QHostAddress::LocalHost, port);
    Answer a;
    if (!s.waitForConnected(5000))
        return a;
    s.write(request);
    if (meanwhile)
        meanwhile();
    // Every answer closes its connection: read until it does (bounded).
    QByteArray all;
    const bool closed = QTest::qWaitFor(
        [&] {
            all += s.readAll();
            return s.state() != QAbstractSocket::ConnectedState;
        },
        10000);
    all += s.readAll();
    if (!closed)
        return a;
    const qsizetype split = all.indexOf("\r\n\r\n");
    a.head = all.left(split);
    a.body = split < 0 ? QByteArray() : all.mid(split + 4);
    a.status = all.startsWith("HTTP/1.1 ") ? all.mid(9, 3).toInt() : 0;
    return a;
}

QByteArray get(const char *path, const QByteArray &extra = {})
{
    return QByteArray("GET ") + path + " HTTP/1.1\r\nHost: x\r\n" + extra + "\r\n";
}

} // namespace

class tst_WebFrontend : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void answersWholeAndCloses();
    void tokenOnlyWhereNeeded();
    void unansweredIsNotFound();
    void answerAfterTheRequestReturned();
    void portInUseIsListenFailed();
};

void tst_WebFrontend::answersWholeAndCloses()
{
    Front f;
    QVERIFY_OK(f.listen(QHostAddress::LocalHost, 0));
    QVERIFY(f.port() != 0);
    const Answer a = ask(f.port(), get("/open"));
    QCOMPARE(a.status, 200);
    QCOMPARE(a.body, QByteArray("open\n"));
    QVERIFY2(a.head.contains("Content-Length: 5"), a.head.constData());
    QVERIFY2(a.head.contains("Connection: close"), a.head.constData());
    const Answer head = ask(f.port(), "HEAD /open HTTP/1.1\r\nHost: x\r\n\r\n");
    QCOMPARE(head.status, 200);
    QVERIFY2(head.head.contains("Content-Length: 5"), head.head.constData());
    QCOMPARE(head.body, QByteArray());
}

void tst_WebFrontend::tokenOnlyWhereNeeded()
{
    Front f;
    QVERIFY_OK(f.listen(QHostAddress::LocalHost, 0));
    QVERIFY(!f.hasToken());
    QCOMPARE(ask(f.port(), get("/data")).status, 200); // no token set: open
    f.setToken("s3cret");
    QVERIFY(f.hasToken());
    const Answer refused = ask(f.port(), get("/data"));
    QCOMPARE(refused.status, 401);
    QVERIFY2(refused.body.contains("this test page needs a token") &&
                 refused.body.contains("the content of the test's --token-file"),
             refused.body.constData());
    QCOMPARE(ask(f.port(), get("/data", "Authorization: Bearer wrong\r\n")).status, 401);
    const Answer granted = ask(f.port(), get("/data", "authorization: bearer  s3cret \r\n"));
    QCOMPARE(granted.status, 200);
    QCOMPARE(granted.body, QByteArray("{\"value\":42}\n"));
    QCOMPARE(ask(f.port(), get("/open")).status, 200); // needs none
}

void tst_WebFrontend::unansweredIsNotFound()
{
    Front f;
    QVERIFY_OK(f.listen(QHostAddress::LocalHost, 0));
    const Answer a = ask(f.port(), get("/elsewhere"));
    QCOMPARE(a.status, 404);
    QCOMPARE(a.body, QByteArray("{\"error\":\"no such resource\"}\n"));
}

void tst_WebFrontend::answerAfterTheRequestReturned()
{
    Front f;
    QVERIFY_OK(f.listen(QHostAddress::LocalHost, 0));
    const Answer a = ask(f.port(), get("/slow"), [&] {
        QTRY_VERIFY_WITH_TIMEOUT(f.later, 5000);
        http::WebFrontend::answerError(f.later, 503, QStringLiteral("later"));
    });
    QCOMPARE(a.status, 503);
    QCOMPARE(a.body, QByteArray("{\"error\":\"later\"}\n"));
    // A client that left: nothing is written, nothing breaks.
    http::WebFrontend::answerError(nullptr, 500, QStringLiteral("nobody"));
}

void tst_WebFrontend::portInUseIsListenFailed()
{
    QTcpServer taken;
    QVERIFY(taken.listen(QHostAddress::LocalHost, 0));
    Front f;
    const Status st = f.listen(QHostAddress::LocalHost, taken.serverPort());
    QCOMPARE(st.code(), Status::Code::ListenFailed);
    QVERIFY2(
        st.message().startsWith(QStringLiteral("cannot listen on 127.0.0.1:%1: ").arg(taken.serverPort())),
        qPrintable(st.message()));
    QCOMPARE(f.port(), quint16(0));
}

QTEST_GUILESS_MAIN(tst_WebFrontend)
#include "tst_webfrontend.moc"
