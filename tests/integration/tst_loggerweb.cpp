// dialog-logger's web side (--http-port): GET /log answers JSON with the filters of `dialogctl log
// search`, bad parameters get a 400 that says why, and the search page, loaded in headless Chromium,
// lists the messages, filters them, and follows a new one. Saves the screenshot logweb.png.
#include "chromium.h"
#include "processfixture.h"
#include "screenshot.h"

#include <QTemporaryDir>
#include <QUrlQuery>

using namespace dialog::test;

class tst_LoggerWeb : public QObject
{
    Q_OBJECT

private:
    std::unique_ptr<ProcessFixture> m_fx;
    QTemporaryDir m_dir;
    quint16 m_http = 0;

    void report(const QString &name, const QString &severity, const QString &text,
                const QStringList &extra = {})
    {
        QCOMPARE(
            m_fx->run(QStringLiteral("dialogctl"),
                      QStringList{QStringLiteral("log"), QStringLiteral("report"), QStringLiteral("--name"),
                                  name, QStringLiteral("--severity"), severity} +
                          extra + QStringList{text}),
            0);
    }

    QJsonObject get(const QByteArray &path, int *status = nullptr)
    {
        const HttpReply r = httpGet(m_http, path);
        if (status)
            *status = r.status;
        return QJsonDocument::fromJson(r.body).object();
    }

    static QStringList texts(const QJsonObject &page)
    {
        QStringList t;
        for (const QJsonValue &v : page.value(QStringLiteral("records")).toArray())
            t << v.toObject().value(QStringLiteral("text")).toString();
        return t;
    }

private Q_SLOTS:
    void initTestCase()
    {
        m_fx = std::make_unique<ProcessFixture>();
        QVERIFY(m_fx->startControlServer());
        QProcess *logger = m_fx->start(
            QStringLiteral("dialog-logger"),
            {QStringLiteral("--data-dir"), m_dir.path(), QStringLiteral("--http-port"), QStringLiteral("0")});
        m_http = ProcessFixture::waitForListening(
            logger, QRegularExpression(QStringLiteral("web log on http://127\\.0\\.0\\.1:(\\d+)/")));
        QVERIFY(m_http != 0);
        QVERIFY(waitUntil([&] { return get("/stats").contains(QStringLiteral("stored")); }, 15000, 50));
        report(QStringLiteral("RO1"), QStringLiteral("info"), QStringLiteral("run 42 started"),
               {QStringLiteral("--run"), QStringLiteral("42")});
        report(QStringLiteral("RO1"), QStringLiteral("warning"), QStringLiteral("link 3: TIMEOUT, retrying"));
        report(QStringLiteral("RO2"), QStringLiteral("error"),
               QStringLiteral("buffer overflow, 12 events lost"));
        report(QStringLiteral("FE2"), QStringLiteral("warning"),
               QStringLiteral("register 17 upset, rewritten"));
        report(QStringLiteral("FE2"), QStringLiteral("debug"), QStringLiteral("register scan done"));
        report(QStringLiteral("Master"), QStringLiteral("fatal"),
               QStringLiteral("configuration database lost"));
    }

    void cleanupTestCase() { m_fx.reset(); }

    void logAnswersJson()
    {
        int status = 0;
        const QJsonObject warnings = get("/log?since=1h&severity=warning&process=RO*", &status);
        QCOMPARE(status, 200);
        QCOMPARE(texts(warnings), (QStringList{QStringLiteral("buffer overflow, 12 events lost"),
                                               QStringLiteral("link 3: TIMEOUT, retrying")}));
        QCOMPARE(warnings.value(QStringLiteral("more")).toBool(), false);
        const QJsonObject first = warnings.value(QStringLiteral("records")).toArray().first().toObject();
        QCOMPARE(first.value(QStringLiteral("severity")).toString(), QStringLiteral("error"));
        QCOMPARE(first.value(QStringLiteral("process")).toString(), QStringLiteral("RO2"));
        QVERIFY(first.value(QStringLiteral("time")).toInteger() > 0);

        QCOMPARE(texts(get("/log?run=42")), QStringList{QStringLiteral("run 42 started")});
        QCOMPARE(texts(get("/log?text=timeout")), QStringList{QStringLiteral("link 3: TIMEOUT, retrying")});
        QVERIFY(texts(get("/log?until=2h")).isEmpty());
        // Paging: one at a time, then the one before it.
        const QJsonObject newest = get("/log?category=default&limit=1");
        QCOMPARE(texts(newest), QStringList{QStringLiteral("configuration database lost")});
        QVERIFY(newest.value(QStringLiteral("more")).toBool());
        const qint64 id = newest.value(QStringLiteral("records"))
                              .toArray()
                              .first()
                              .toObject()
                              .value(QStringLiteral("id"))
                              .toInteger();
        QCOMPARE(texts(get("/log?category=default&limit=1&before=" + QByteArray::number(id))),
                 QStringList{QStringLiteral("register scan done")});
    }

    void badRequestsSayWhy_data()
    {
        QTest::addColumn<QByteArray>("path");
        QTest::addColumn<int>("status");
        QTest::addColumn<QString>("message");
        QTest::newRow("severity") << QByteArray("/log?severity=loud") << 400
                                  << QStringLiteral("invalid severity 'loud'");
        QTest::newRow("since") << QByteArray("/log?since=yesterday") << 400
                               << QStringLiteral("invalid since 'yesterday'");
        QTest::newRow("limit") << QByteArray("/log?limit=0") << 400
                               << QStringLiteral("invalid limit '0' (1..10000)");
        QTest::newRow("parameter") << QByteArray("/log?sevrity=info") << 400
                                   << QStringLiteral("unknown parameter 'sevrity'");
        QTest::newRow("path") << QByteArray("/nothing") << 404 << QStringLiteral("no such resource");
    }

    void badRequestsSayWhy()
    {
        QFETCH(QByteArray, path);
        QFETCH(int, status);
        QFETCH(QString, message);
        int got = 0;
        const QJsonObject o = get(path, &got);
        QCOMPARE(got, status);
        QVERIFY2(o.value(QStringLiteral("error")).toString().contains(message),
                 qPrintable(QJsonDocument(o).toJson()));
        HttpConnection c;
        QVERIFY(c.open(m_http));
        c.send("POST", "/log");
        QCOMPARE(c.wait().status, 405);
    }

    // The web log had no token option: anyone who reached the port read every message.
    void tokenGuardsTheLog()
    {
        QTemporaryDir dir;
        const QString tokenFile = dir.filePath(QStringLiteral("token"));
        QFile f(tokenFile);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("a-token-for-the-web-log-0123456789\n");
        f.close();
        QProcess *logger =
            m_fx->start(QStringLiteral("dialog-logger"),
                        {QStringLiteral("--name"), QStringLiteral("TokenLogger"),
                         QStringLiteral("--data-dir"), dir.path(), QStringLiteral("--http-port"),
                         QStringLiteral("0"), QStringLiteral("--http-token-file"), tokenFile});
        const quint16 port = ProcessFixture::waitForListening(
            logger, QRegularExpression(QStringLiteral("web log on http://127\\.0\\.0\\.1:(\\d+)/")));
        QVERIFY(port != 0);
        HttpReply r = httpGet(port, "/log");
        QCOMPARE(r.status, 401);
        QVERIFY2(r.body.contains("needs a token"), r.body.constData());
        QCOMPARE(httpGet(port, "/stats").status, 401);
        QCOMPARE(httpGet(port, "/log", "Authorization: Bearer wrong-token-of-the-same-length-0\r\n").status,
                 401);
        const HttpReply granted =
            httpGet(port, "/log", "Authorization: Bearer a-token-for-the-web-log-0123456789\r\n");
        QVERIFY2(granted.status == 200, granted.body.constData());
        QCOMPARE(httpGet(port, "/").status, 200); // the page holds no data; it asks for the token
    }

    void searchPageInChromium()
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
        QVERIFY(!dt.call(QStringLiteral("Log.enable")).isEmpty());
        dt.call(QStringLiteral("Emulation.setDeviceMetricsOverride"),
                {{QStringLiteral("width"), 1100},
                 {QStringLiteral("height"), 420},
                 {QStringLiteral("deviceScaleFactor"), 1},
                 {QStringLiteral("mobile"), false}});
        QVERIFY(dt.call(QStringLiteral("Page.navigate"),
                        {{QStringLiteral("url"), QStringLiteral("http://127.0.0.1:%1/").arg(m_http)}})
                    .contains(QLatin1String("result")));
        const QString rowTexts = QStringLiteral(
            "Array.from(document.querySelectorAll('#rows tr td.text')).map(td => td.textContent)");
        const QString categoryDefault =
            QStringLiteral("document.querySelector('input[name=category]').value = 'default'; "
                           "document.querySelector('#filters button').click(); 1");
        // The logger's own messages are in other categories: the page shows the test's six.
        QTRY_VERIFY_WITH_TIMEOUT(dt.eval(rowTexts).toArray().size() > 0, 15000);
        dt.eval(categoryDefault);
        QTRY_COMPARE_WITH_TIMEOUT(dt.eval(rowTexts).toArray().size(), 6, 10000);
        QCOMPARE(dt.eval(QStringLiteral("document.querySelector('#rows tr').className")).toString(),
                 QStringLiteral("fatal"));

        // Severity ≥ warning.
        dt.eval(QStringLiteral("document.querySelector('select[name=severity]').value = 'warning'; "
                               "document.querySelector('#filters button').click(); 1"));
        QTRY_COMPARE_WITH_TIMEOUT(dt.eval(rowTexts).toArray().size(), 4, 10000);
        // Following: a new warning appears at the top without a new search.
        report(QStringLiteral("RO3"), QStringLiteral("warning"), QStringLiteral("disk 80% full"));
        QTRY_COMPARE_WITH_TIMEOUT(dt.eval(rowTexts).toArray().first().toString(),
                                  QStringLiteral("disk 80% full"), 10000);
        QCOMPARE(dt.eval(QStringLiteral("document.getElementById('status').textContent")).toString(),
                 QStringLiteral("live"));
        QVERIFY2(dt.pageErrors().isEmpty(), qPrintable(dt.pageErrors().join(QLatin1Char('\n'))));
        // A bad filter is shown, not thrown (Chromium logs the 400 as an error of its own).
        dt.eval(QStringLiteral("document.querySelector('input[name=since]').value = 'soon'; "
                               "document.querySelector('#filters button').click(); 1"));
        QTRY_VERIFY_WITH_TIMEOUT(dt.eval(QStringLiteral("document.getElementById('error').textContent"))
                                     .toString()
                                     .contains(QLatin1String("invalid since 'soon'")),
                                 10000);
        dt.eval(QStringLiteral("document.querySelector('input[name=since]').value = '1h'; "
                               "document.querySelector('select[name=severity]').value = 'debug'; "
                               "document.querySelector('#filters button').click(); 1"));
        QTRY_COMPARE_WITH_TIMEOUT(dt.eval(rowTexts).toArray().size(), 7, 10000);
        QCOMPARE(dt.eval(QStringLiteral("document.getElementById('error').textContent")).toString(),
                 QString());

        const QJsonObject shot = dt.call(QStringLiteral("Page.captureScreenshot"),
                                         {{QStringLiteral("format"), QStringLiteral("png")}});
        const QByteArray png = QByteArray::fromBase64(shot.value(QLatin1String("result"))
                                                          .toObject()
                                                          .value(QLatin1String("data"))
                                                          .toString()
                                                          .toLatin1());
        QVERIFY(png.startsWith("\x89PNG"));
        QFile out(screenshotPath(QStringLiteral("logweb.png")));
        QVERIFY(out.open(QIODevice::WriteOnly));
        out.write(png);
        out.close();
        dt.call(QStringLiteral("Browser.close"), {}, 3000);
        dt.close();
        browser.process().waitForFinished(10000);
    }
};

QTEST_GUILESS_MAIN(tst_LoggerWeb)
#include "tst_loggerweb.moc"
