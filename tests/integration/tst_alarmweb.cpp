// dialog-alarmserver's web side (--http-port): the page, in headless Chromium, shows an alarm that an
// IS write raised and acknowledges it with the web token (dialogctl alarm ls --json sees the ack, the
// audit trail the web identity); an action without the token, or on a server without
// --http-token-file, is refused; /alarms and /metrics need the token; /metrics answers the counts by
// state and severity and the history's figures in the Prometheus text format. Saves alarmweb.png.
#include "chromium.h"
#include "isfixture.h"
#include "screenshot.h"

#include "dialog/audit.h"

#include <QJsonArray>
#include <QTemporaryDir>
#include <QtTest>

using namespace dialog;
using namespace dialog::test;

namespace {

const QByteArray Rules = R"({"alarms": [
  {"path": "Detector/ECAL/FE3/temperature", "severity": "major", "latch": true,
   "description": "FE3 is too hot", "guidance": "Call the front-end expert, manual page 2",
   "condition": {"is": "DAQ.FE3", "attribute": "temperature", "above": 40}},
  {"path": "Detector/ECAL/FE3/warm", "severity": "minor",
   "condition": {"is": "DAQ.FE3", "attribute": "temperature", "above": 35}},
  {"path": "DAQ/Processes/FE9", "severity": "invalid", "condition": {"process": "FE9", "when": "lost"}}
]}
)";

const QByteArray Token = "alarm-web-token-0123456789abcdef";

/// One HTTP request with a body; the answer, or status 0.
HttpReply httpPost(quint16 port, const QByteArray &path, const QByteArray &body, const QByteArray &headers = {})
{
    QTcpSocket s;
    s.connectToHost(QHostAddress::LocalHost, port);
    if (!s.waitForConnected(5000))
        return {};
    s.write("POST " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n" + headers +
            "Content-Length: " + QByteArray::number(body.size()) + "\r\n\r\n" + body);
    QByteArray buffer;
    HttpReply r;
    QElapsedTimer t;
    t.start();
    while (!takeReply(buffer, &r) && t.elapsed() < 10000) {
        s.waitForReadyRead(50);
        buffer += s.readAll();
    }
    return r;
}

} // namespace

class tst_AlarmWeb : public QObject, protected IsTestBase
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase() { tearDownIs(); }
    void actionsNeedTheToken();
    void readOnlyWithoutATokenFile();
    void metricsInPrometheusText();
    void pageShowsAndAcknowledgesInChromium();

private:
    QString write(const QString &name, const QByteArray &content)
    {
        const QString path = m_tmp.filePath(name);
        QFile f(path);
        if (!f.open(QIODevice::WriteOnly) || f.write(content) != content.size())
            qWarning() << "cannot write" << path;
        return path;
    }
    QHash<QString, QJsonObject> alarms()
    {
        QByteArray out;
        QHash<QString, QJsonObject> all;
        if (m_fx->run(QStringLiteral("dialogctl"),
                      {QStringLiteral("alarm"), QStringLiteral("ls"), QStringLiteral("--all"),
                       QStringLiteral("--json")},
                      &out) != 0)
            return all;
        for (const QJsonObject &o : jsonLines(out))
            all.insert(o.value(QStringLiteral("path")).toString(), o);
        return all;
    }
    QString stateOf(const QString &path) { return alarms().value(path).value(QStringLiteral("state")).toString(); }
    void setTemperature(float t)
    {
        is::Object o = is::Object::create(m_dict->types(), QStringLiteral("FrontEndStatus"));
        QVERIFY(o.set(QStringLiteral("temperature"), t).isOk());
        QVERIFY(m_dict->updateSync(QStringLiteral("DAQ.FE3"), o).isOk());
    }
    QByteArray bearer() const { return "Authorization: Bearer " + Token + "\r\n"; }

    QTemporaryDir m_tmp;
    QString m_audit;
    quint16 m_http = 0;
};

void tst_AlarmWeb::initTestCase()
{
    QVERIFY(setUpIs(QStringLiteral("alarmweb-test")));
    startServer(QStringLiteral("DAQ"));
    QVERIFY(waitForServer(QStringLiteral("DAQ")));
    m_audit = m_tmp.filePath(QStringLiteral("audit.jsonl"));
    QProcess *server = m_fx->start(
        QStringLiteral("dialog-alarmserver"),
        {QStringLiteral("--rules"), write(QStringLiteral("rules.json"), Rules), QStringLiteral("--data-dir"),
         m_tmp.filePath(QStringLiteral("data")), QStringLiteral("--audit-file"), m_audit,
         QStringLiteral("--http-port"), QStringLiteral("0"), QStringLiteral("--http-token-file"),
         write(QStringLiteral("token"), Token + '\n')});
    m_http = ProcessFixture::waitForListening(
        server, QRegularExpression(QStringLiteral("alarm page on http://127\\.0\\.0\\.1:(\\d+)/")), 20000);
    QVERIFY(m_http != 0);
    setTemperature(20);
    QVERIFY(waitUntil([&] { return alarms().value(QStringLiteral("Detector/ECAL/FE3/temperature"))
                                       .contains(QStringLiteral("value")); },
                      10000));
}

void tst_AlarmWeb::actionsNeedTheToken()
{
    setTemperature(45);
    QVERIFY(waitUntil([&] { return stateOf(QStringLiteral("Detector/ECAL/FE3/warm")) == u"active"; }, 10000));
    const QByteArray ack = R"({"path": "Detector/ECAL/FE3/warm", "user": "alice"})";
    HttpReply r = httpPost(m_http, "/ack", ack);
    QCOMPARE(r.status, 401);
    QVERIFY2(r.body.contains("needs the web token"), r.body.constData());
    QCOMPARE(httpPost(m_http, "/ack", ack, "Authorization: Bearer wrong-token-of-the-same-length-00\r\n").status,
             401);
    QCOMPARE(stateOf(QStringLiteral("Detector/ECAL/FE3/warm")), QStringLiteral("active"));
    // The data need the token too; the page (no data) does not.
    QCOMPARE(httpGet(m_http, "/alarms").status, 401);
    QCOMPARE(httpGet(m_http, "/metrics").status, 401);
    QCOMPARE(httpGet(m_http, "/").status, 200);
    // Bad requests say why.
    r = httpPost(m_http, "/ack", R"({"path": "No/such"})", bearer());
    QCOMPARE(r.status, 404);
    QVERIFY2(r.body.contains("unknown alarm 'No/such'"), r.body.constData());
    QCOMPARE(httpPost(m_http, "/ack", "not json", bearer()).status, 400);
    r = httpPost(m_http, "/ack", R"({"path": "Detector/ECAL/FE3/warm", "user": "a b"})", bearer());
    QCOMPARE(r.status, 400);
    QVERIFY2(r.body.contains("invalid user 'a b'"), r.body.constData());
    QCOMPARE(httpGet(m_http, "/ack", bearer()).status, 405);
    // With the token: done, and the history names the web identity.
    r = httpPost(m_http, "/ack", ack, bearer());
    QCOMPARE(r.status, 200);
    QCOMPARE(QJsonDocument::fromJson(r.body).object().value(u"alarm").toObject().value(u"state").toString(),
             QStringLiteral("acknowledged"));
    QCOMPARE(alarms().value(QStringLiteral("Detector/ECAL/FE3/warm")).value(QStringLiteral("ack_by")).toString(),
             QStringLiteral("alice@127.0.0.1 (web)"));
    // Both the refusal and the ack are in the audit trail, with the web identity.
    QList<AuditRecord> records;
    QVERIFY(waitUntil(
        [&] {
            records.clear();
            for (const AuditRecord &a : AuditTrail::read(m_audit, 0))
                if (a.name == u"ALARM.Detector/ECAL/FE3/warm" || a.name == u"ALARM.No/such")
                    records << a;
            return records.size() >= 2;
        },
        5000));
    const AuditRecord &done = records.last();
    QVERIFY(done.allowed);
    QCOMPARE(done.operation, QStringLiteral("ack"));
    QCOMPARE(done.origin.process, QStringLiteral("web"));
    QCOMPARE(done.origin.user, QStringLiteral("alice"));
    QCOMPARE(done.origin.address, QStringLiteral("127.0.0.1"));
    QVERIFY(!records.first().allowed);
    // Shelve and unshelve from the web: a shelve needs a reason.
    r = httpPost(m_http, "/shelve", R"({"path": "Detector/ECAL/FE3/warm", "for_s": 3600})", bearer());
    QCOMPARE(r.status, 409);
    QVERIFY2(r.body.contains("needs a reason"), r.body.constData());
    r = httpPost(m_http, "/shelve", R"({"path": "Detector/ECAL/FE3/warm", "for_s": 3600, "reason": "noisy", "user": "alice"})",
                 bearer());
    QCOMPARE(r.status, 200);
    QVERIFY(alarms().value(QStringLiteral("Detector/ECAL/FE3/warm")).value(QStringLiteral("shelved")).toBool());
    QCOMPARE(httpPost(m_http, "/unshelve", R"({"path": "Detector/ECAL/FE3/warm"})", bearer()).status, 200);
    QVERIFY(!alarms().value(QStringLiteral("Detector/ECAL/FE3/warm")).value(QStringLiteral("shelved")).toBool());
    setTemperature(20);
    QVERIFY(waitUntil([&] { return stateOf(QStringLiteral("Detector/ECAL/FE3/temperature")) == u"latched"; },
                      10000));
}

void tst_AlarmWeb::readOnlyWithoutATokenFile()
{
    // A second partition: its own Control Server and alarm server, no token.
    ProcessFixture fx;
    QVERIFY(fx.startControlServer());
    QTemporaryDir dir;
    QProcess *server =
        fx.start(QStringLiteral("dialog-alarmserver"),
                 {QStringLiteral("--rules"), m_tmp.filePath(QStringLiteral("rules.json")), QStringLiteral("--data-dir"),
                  dir.path(), QStringLiteral("--http-port"), QStringLiteral("0")});
    const quint16 port = ProcessFixture::waitForListening(
        server, QRegularExpression(QStringLiteral("alarm page on http://127\\.0\\.0\\.1:(\\d+)/")), 20000);
    QVERIFY(port != 0);
    const HttpReply table = httpGet(port, "/alarms");
    QCOMPARE(table.status, 200);
    QCOMPARE(QJsonDocument::fromJson(table.body).object().value(u"actions").toBool(true), false);
    const HttpReply r = httpPost(port, "/ack", R"({"path": "DAQ/Processes/FE9"})", bearer());
    QCOMPARE(r.status, 403);
    QVERIFY2(r.body.contains("read-only"), r.body.constData());
    // The alarm server with --http-token-file and no --http-port is refused at start.
    QByteArray out, err;
    QCOMPARE(fx.run(QStringLiteral("dialog-alarmserver"),
                    {QStringLiteral("--rules"), m_tmp.filePath(QStringLiteral("rules.json")),
                     QStringLiteral("--http-token-file"), m_tmp.filePath(QStringLiteral("token"))},
                    &out, &err),
             1);
    QVERIFY2(err.contains("--http-token-file needs --http-port"), err);
}

void tst_AlarmWeb::metricsInPrometheusText()
{
    const HttpReply r = httpGet(m_http, "/metrics", bearer());
    QCOMPARE(r.status, 200);
    QVERIFY2(r.header("content-type").startsWith("text/plain"), r.head.constData());
    QHash<QByteArray, double> samples;
    for (const QByteArray &line : r.body.split('\n')) {
        if (line.isEmpty() || line.startsWith('#'))
            continue;
        const int space = line.lastIndexOf(' ');
        QVERIFY2(space > 0, line.constData());
        bool ok = false;
        samples.insert(line.left(space), line.mid(space + 1).toDouble(&ok));
        QVERIFY2(ok, line.constData());
    }
    QCOMPARE(samples.value("dialog_alarm_rules"), 3.0);
    // Where actionsNeedTheToken left them: temperature latched (major), warm normal, FE9 never
    // started: active (invalid).
    QCOMPARE(samples.value("dialog_alarm_alarms{state=\"latched\",severity=\"major\"}", -1), 1.0);
    QCOMPARE(samples.value("dialog_alarm_alarms{state=\"normal\",severity=\"minor\"}", -1), 1.0);
    QCOMPARE(samples.value("dialog_alarm_alarms{state=\"active\",severity=\"invalid\"}", -1), 1.0);
    QCOMPARE(samples.value("dialog_alarm_alarms{state=\"active\",severity=\"major\"}", -1), 0.0);
    QCOMPARE(samples.value("dialog_alarm_worst_severity", -1), 3.0);
    QVERIFY(samples.contains("dialog_alarm_history_pending"));
    QCOMPARE(samples.value("dialog_alarm_history_failures_total", -1), 0.0);
    QVERIFY(samples.value("dialog_alarm_history_written_total") > 0);
    QVERIFY(samples.value("dialog_alarm_actions_refused_total") >= 1); // the unknown alarm
    QCOMPARE(samples.value("dialog_alarm_hooks_dropped_total{kind=\"run\"}", -1), 0.0);
}

void tst_AlarmWeb::pageShowsAndAcknowledgesInChromium()
{
    if (HeadlessChromium::executable().isEmpty())
        QSKIP("chromium is not installed (Debian package 'chromium'; ./run.sh installs it)");
    HeadlessChromium browser;
    QString error;
    const QUrl pageWs = browser.start(&error);
    QVERIFY2(!pageWs.isEmpty(), qPrintable(error));
    DevTools dt;
    QVERIFY(dt.connect(pageWs));
    QVERIFY(!dt.call(QStringLiteral("Page.enable")).isEmpty());
    QVERIFY(!dt.call(QStringLiteral("Runtime.enable")).isEmpty());
    dt.call(QStringLiteral("Emulation.setDeviceMetricsOverride"),
            {{QStringLiteral("width"), 1100},
             {QStringLiteral("height"), 360},
             {QStringLiteral("deviceScaleFactor"), 1},
             {QStringLiteral("mobile"), false}});
    QVERIFY(dt.call(QStringLiteral("Page.navigate"),
                    {{QStringLiteral("url"), QStringLiteral("http://127.0.0.1:%1/").arg(m_http)}})
                .contains(QLatin1String("result")));
    // The data were answered 401: the page asks for the token.
    QTRY_VERIFY_WITH_TIMEOUT(!dt.eval(QStringLiteral("document.getElementById('tokenform').hidden")).toBool(),
                             15000);
    QCOMPARE(dt.eval(QStringLiteral("document.querySelectorAll('#rows tr').length")).toInt(), 0);
    dt.eval(QStringLiteral("document.getElementById('token').value = '%1'; "
                           "document.getElementById('tokenok').click(); 1")
                .arg(QString::fromLatin1(Token)));
    const QString stateOfRow = QStringLiteral(
        "(() => { const tr = document.querySelector('#rows tr[data-path=\"%1\"]'); "
        "return tr ? tr.querySelector('td.state').textContent : ''; })()");
    // The latched alarm that an IS write raised, with its Ack button.
    QTRY_COMPARE_WITH_TIMEOUT(
        dt.eval(stateOfRow.arg(QStringLiteral("Detector/ECAL/FE3/temperature"))).toString(),
        QStringLiteral("latched"), 10000);
    // A new raise shows up without a reload.
    setTemperature(46);
    QTRY_COMPARE_WITH_TIMEOUT(
        dt.eval(stateOfRow.arg(QStringLiteral("Detector/ECAL/FE3/temperature"))).toString(),
        QStringLiteral("active"), 10000);
    QCOMPARE(dt.eval(QStringLiteral("document.getElementById('status').textContent")).toString(),
             QStringLiteral("live"));
    QTRY_VERIFY_WITH_TIMEOUT(dt.eval(QStringLiteral("document.querySelector('#rows tr[data-path=\"Detector/"
                                                    "ECAL/FE3/temperature\"] td.value').textContent"))
                                 .toString()
                                 .contains(QStringLiteral("= 46")),
                             10000);
    const QJsonObject shot = dt.call(QStringLiteral("Page.captureScreenshot"),
                                     {{QStringLiteral("format"), QStringLiteral("png")}});
    const QByteArray png = QByteArray::fromBase64(
        shot.value(QLatin1String("result")).toObject().value(QLatin1String("data")).toString().toLatin1());
    QVERIFY(png.startsWith("\x89PNG"));
    QFile out(screenshotPath(QStringLiteral("alarmweb.png")));
    QVERIFY(out.open(QIODevice::WriteOnly));
    out.write(png);
    out.close();
    // Ack from the page, with a name and a comment.
    dt.eval(QStringLiteral("document.getElementById('user').value = 'bob'; "
                           "document.getElementById('comment').value = 'fan restarted'; "
                           "document.querySelector('#rows tr[data-path=\"Detector/ECAL/FE3/temperature\"] "
                           "button.ack').click(); 1"));
    QVERIFY(waitUntil([&] { return stateOf(QStringLiteral("Detector/ECAL/FE3/temperature")) == u"acknowledged"; },
                      10000));
    const QJsonObject a = alarms().value(QStringLiteral("Detector/ECAL/FE3/temperature"));
    QCOMPARE(a.value(QStringLiteral("ack_by")).toString(), QStringLiteral("bob@127.0.0.1 (web)"));
    QCOMPARE(a.value(QStringLiteral("ack_comment")).toString(), QStringLiteral("fan restarted"));
    QTRY_VERIFY_WITH_TIMEOUT(dt.eval(stateOfRow.arg(QStringLiteral("Detector/ECAL/FE3/temperature")))
                                 .toString()
                                 .startsWith(QStringLiteral("acknowledged — ack bob@127.0.0.1 (web)")),
                             10000);
    QCOMPARE(dt.eval(QStringLiteral("document.getElementById('error').textContent")).toString(), QString());
    QVERIFY2(dt.pageErrors().isEmpty(), qPrintable(dt.pageErrors().join(QLatin1Char('\n'))));
    dt.call(QStringLiteral("Browser.close"), {}, 3000);
    dt.close();
    browser.process().waitForFinished(10000);
}

QTEST_GUILESS_MAIN(tst_AlarmWeb)
#include "tst_alarmweb.moc"
