// The web IS behind a token (--http-token-file) and over HTTPS (--tls-cert/--tls-key/--tls-ca):
// requests and WebSockets without the token are refused, with it they work; HTTPS with a test CA;
// the head time bound also closes a connection that never completes its TLS handshake.
#include "isweb.h"
#include "tlsfiles.h"

#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QSslConfiguration>
#include <QSslSocket>
#include <QTemporaryDir>
#include <QtTest>

using namespace dialog;
using namespace dialog::test;

namespace {
const QByteArray Token = "s3cret-token-for-the-web-is-0123456789";
}

class tst_IsWebAuth : public IsWebTest
{
    Q_OBJECT

private Q_SLOTS:
    void init() { setUpFixture(); }
    void cleanup() { tearDownFixture(); }
    void tokenGuardsHttp();
    void tokenGuardsWebSocket();
    void roomIsKeptForTokenHolders();
    void tokenFileMustBeUsable();
    void httpsWithTestCa();
    void unfinishedTlsHandshakeIsClosed();

private:
    QString tokenFile()
    {
        const QString path = m_tmp.filePath(QStringLiteral("token"));
        QFile f(path);
        if (f.open(QIODevice::WriteOnly))
            f.write(Token + "\n");
        return path;
    }
    /// Test TLS files into @p tls and the DAQ server with the web IS over HTTPS (m_http: 0 on failure).
    void startHttpsServer(TlsFiles *tls, const QStringList &extra)
    {
        QString error;
        QVERIFY2(makeTlsFiles(m_tmp.filePath(QStringLiteral("tls")), QStringLiteral("isserver"), tls, &error),
                 qPrintable(error));
        m_server = startWebServer(QStringLiteral("DAQ"), QStringList{QStringLiteral("--tls-cert"), tls->cert,
                                                                     QStringLiteral("--tls-key"), tls->key,
                                                                     QStringLiteral("--tls-ca"), tls->ca} +
                                                             extra);
    }
    QTemporaryDir m_tmp;
};

void tst_IsWebAuth::tokenGuardsHttp()
{
    m_server = startWebServer(QStringLiteral("DAQ"), {QStringLiteral("--http-token-file"), tokenFile()});
    QVERIFY(m_http != 0);
    HttpReply r = httpGet(m_http, "/is/DAQ?format=json");
    QCOMPARE(r.status, 401);
    QCOMPARE(r.header("www-authenticate"), QByteArray("Bearer realm=\"dialog-isserver\""));
    QVERIFY2(r.body.startsWith("401 Unauthorized: this web IS needs a token"), r.body.constData());
    QCOMPARE(
        httpGet(m_http, "/is/DAQ", "Authorization: Bearer wrong-token-of-the-same-size-0123456\r\n").status,
        401);
    QCOMPARE(httpGet(m_http, "/is/DAQ?token=" + Token).status, 401); // HTTP takes the header only
    QCOMPARE(httpGet(m_http, "/metrics").status, 401);
    // A request without the token is answered and its connection closed: it holds no place.
    HttpConnection tried;
    QVERIFY(tried.open(m_http));
    tried.send("GET", "/is/DAQ");
    QCOMPARE(tried.wait().status, 401);
    QTRY_COMPARE_WITH_TIMEOUT(tried.socket().state(), QAbstractSocket::UnconnectedState, 5000);
    // The list of servers and their object counts is data too (it was served without the token).
    QCOMPARE(httpGet(m_http, "/is").status, 401);
    QCOMPARE(httpGet(m_http, "/is/").status, 401);
    QCOMPARE(httpGet(m_http, "/is", "Authorization: Bearer " + Token + "\r\n").status, 200);
    r = httpGet(m_http, "/is/DAQ?format=json", "Authorization: Bearer " + Token + "\r\n");
    QCOMPARE(r.status, 200);
    QVERIFY(r.body.contains("\"server\""));
    QCOMPARE(httpGet(m_http, "/metrics", "authorization: bearer " + Token + "\r\n").status, 200);
    // The page itself (no data) loads without it, and then asks for the token.
    r = httpGet(m_http, "/");
    QCOMPARE(r.status, 200);
    QVERIFY(r.body.contains("id=\"login\""));
    QCOMPARE(httpGet(m_http, "/app.js").status, 200);
}

// Connections without the token (idle, or trying one request after another) filled every place
// and the operators with the token got 503. The last places are kept for them now, and a request
// without the token is answered 401 and closed.
void tst_IsWebAuth::roomIsKeptForTokenHolders()
{
    // 1 WebSocket + 4 x 1 request = 5 connections, the last one kept for token holders.
    m_server =
        startWebServer(QStringLiteral("DAQ"), {QStringLiteral("--http-token-file"), tokenFile(),
                                               QStringLiteral("--http-max-requests"), QStringLiteral("1"),
                                               QStringLiteral("--http-max-websockets"), QStringLiteral("1"),
                                               QStringLiteral("--http-head-s"), QStringLiteral("600"),
                                               QStringLiteral("--http-idle-s"), QStringLiteral("600")});
    QVERIFY(m_http != 0);
    std::vector<std::unique_ptr<HttpConnection>> idle;
    for (int i = 0; i < 4; ++i) {
        idle.push_back(std::make_unique<HttpConnection>());
        QVERIFY(idle.back()->open(m_http));
    }
    HttpConnection without;
    QVERIFY(without.open(m_http));
    without.send("GET", "/is/DAQ");
    const HttpReply refused = without.wait();
    QCOMPARE(refused.status, 503);
    QVERIFY2(refused.body.contains("kept for clients with the token"), refused.body.constData());
    // The refused one leaves; one with the token takes the kept place (once the server has seen the
    // refused one go: until then every place is taken). Asked until admitted, not once more after.
    QVERIFY(waitUntil(
        [this] {
            return httpGet(m_http, "/is/DAQ", "Authorization: Bearer " + Token + "\r\n").status == 200;
        },
        5000, 20));
}

void tst_IsWebAuth::tokenGuardsWebSocket()
{
    m_server = startWebServer(QStringLiteral("DAQ"), {QStringLiteral("--http-token-file"), tokenFile()});
    QVERIFY(m_http != 0);
    // Without the token: refused before the upgrade (401).
    HttpConnection raw;
    QVERIFY(raw.open(m_http));
    raw.send("GET", "/is/ws",
             "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
             "Sec-WebSocket-Version: 13\r\n");
    const HttpReply refused = raw.wait();
    QCOMPARE(refused.status, 401);
    QVERIFY(refused.body.contains("?token=<token>"));

    WsClient without;
    without.socket.open(QUrl(QStringLiteral("ws://127.0.0.1:%1/is/ws").arg(m_http)));
    QTRY_VERIFY_WITH_TIMEOUT(without.closed || without.socket.error() != QAbstractSocket::UnknownSocketError,
                             10000);
    QVERIFY(without.socket.state() != QAbstractSocket::ConnectedState);

    // With it, as a browser sends it (?token=) and as a header.
    WsClient byQuery;
    byQuery.socket.open(
        QUrl(QStringLiteral("ws://127.0.0.1:%1/is/ws?token=%2").arg(m_http).arg(QString::fromLatin1(Token))));
    QTRY_COMPARE_WITH_TIMEOUT(byQuery.socket.state(), QAbstractSocket::ConnectedState, 10000);
    byQuery.socket.sendTextMessage(QStringLiteral("{\"server\":\"DAQ\",\"regex\":\".*\"}"));
    QTRY_VERIFY_WITH_TIMEOUT(!byQuery.received.isEmpty(), 10000);
    WsClient byHeader;
    QNetworkRequest request(QUrl(QStringLiteral("ws://127.0.0.1:%1/is/ws").arg(m_http)));
    request.setRawHeader("Authorization", "Bearer " + Token);
    byHeader.socket.open(request);
    QTRY_COMPARE_WITH_TIMEOUT(byHeader.socket.state(), QAbstractSocket::ConnectedState, 10000);
}

void tst_IsWebAuth::tokenFileMustBeUsable()
{
    const QString shortToken = m_tmp.filePath(QStringLiteral("short"));
    QFile f(shortToken);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("abc\n");
    f.close();
    for (const QStringList &args :
         {QStringList{QStringLiteral("--http-token-file"), shortToken},
          QStringList{QStringLiteral("--http-token-file"), m_tmp.filePath(QStringLiteral("missing"))}}) {
        QProcess *p = startServer(QStringLiteral("DAQ"),
                                  QStringList{QStringLiteral("--http-port"), QStringLiteral("0")} + args);
        QVERIFY(p->waitForFinished(10000));
        QCOMPARE(p->exitCode(), 1);
        QVERIFY2(p->readAllStandardError().contains("dialog-isserver: --http-token-file: "),
                 qPrintable(args.join(' ')));
    }
}

void tst_IsWebAuth::httpsWithTestCa()
{
    TlsFiles tls;
    startHttpsServer(&tls, {QStringLiteral("--http-token-file"), tokenFile()});
    QVERIFY(m_http != 0);

    QSslConfiguration ssl = QSslConfiguration::defaultConfiguration();
    ssl.setCaCertificates(QSslCertificate::fromPath(tls.ca));
    QNetworkAccessManager nam;
    auto get = [&](const QString &path, bool token, int *status, QByteArray *body) {
        QNetworkRequest req(QUrl(QStringLiteral("https://127.0.0.1:%1%2").arg(m_http).arg(path)));
        req.setSslConfiguration(ssl);
        if (token)
            req.setRawHeader("Authorization", "Bearer " + Token);
        QNetworkReply *reply = nam.get(req);
        QTRY_VERIFY_WITH_TIMEOUT(reply->isFinished(), 10000);
        *status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
        *body = reply->readAll();
        if (reply->error() != QNetworkReply::NoError && *status == 0)
            qWarning() << reply->errorString();
        reply->deleteLater();
    };
    int status = 0;
    QByteArray body;
    get(QStringLiteral("/is/DAQ?format=json"), true, &status, &body);
    QCOMPARE(status, 200);
    QVERIFY(body.contains("\"server\""));
    get(QStringLiteral("/is/DAQ"), false, &status, &body);
    QCOMPARE(status, 401);

    // Secure WebSocket, the token as a browser sends it.
    WsClient wss;
    QNetworkRequest wsRequest(QUrl(
        QStringLiteral("wss://127.0.0.1:%1/is/ws?token=%2").arg(m_http).arg(QString::fromLatin1(Token))));
    wss.socket.setSslConfiguration(ssl);
    wss.socket.open(wsRequest);
    QTRY_COMPARE_WITH_TIMEOUT(wss.socket.state(), QAbstractSocket::ConnectedState, 10000);

    // Plain HTTP on the HTTPS port: no answer, the connection is closed.
    HttpConnection plain;
    QVERIFY(plain.open(m_http));
    plain.send("GET", "/is");
    QTRY_VERIFY_WITH_TIMEOUT(plain.socket().state() == QAbstractSocket::UnconnectedState, 10000);
    QVERIFY(!plain.socket().readAll().startsWith("HTTP/1.1 200"));
}

void tst_IsWebAuth::unfinishedTlsHandshakeIsClosed()
{
    TlsFiles tls;
    startHttpsServer(&tls, {QStringLiteral("--http-head-s"), QStringLiteral("1")});
    QVERIFY(m_http != 0);
    // A slow loris: connects and never sends its ClientHello. The head bound closes it.
    QTcpSocket loris;
    loris.connectToHost(QHostAddress::LocalHost, m_http);
    QVERIFY(loris.waitForConnected(5000));
    QTRY_VERIFY_WITH_TIMEOUT(loris.state() == QAbstractSocket::UnconnectedState, 10000);
}

QTEST_GUILESS_MAIN(tst_IsWebAuth)
#include "tst_isweb_auth.moc"
