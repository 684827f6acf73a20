// The web IS page end to end: dialog-isserver serves it, headless Chromium loads it (driven over the
// DevTools protocol from this test), an object is clicked, and a value the test then changes
// through the IS API changes on the page. Saves the screenshot isweb.png (screenshot.h).
#include "statuscheck.h"
#include "chromium.h"
#include "isweb.h"
#include "screenshot.h"

#include "dialog/client.h"
#include "dialog/is/dictionary.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QWebSocket>
#include <QtTest>

using namespace dialog;
using namespace dialog::test;


class tst_IsWebPage : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void pageShowsLiveValues();
    void pageAsksForTheTokenOnce();
};

void tst_IsWebPage::pageShowsLiveValues()
{
    if (HeadlessChromium::executable().isEmpty())
        QSKIP("chromium is not installed (Debian package 'chromium'; ./run.sh installs it)");

    ProcessFixture fx;
    QVERIFY(fx.startControlServer());
    Client client(fx.clientOptions(QStringLiteral("isweb-page-test")));
    QVERIFY(client.start());
    is::Dictionary dict(&client);
    QVERIFY_OK(dict.types().loadDirectory(IsTypesDir));
    const quint16 http = ProcessFixture::waitForListening(
        fx.start(QStringLiteral("dialog-isserver"),
                 {QStringLiteral("--name"), QStringLiteral("RunParams"), QStringLiteral("--types"),
                  IsTypesDir, QStringLiteral("--http-port"), QStringLiteral("0")}),
        ProcessFixture::webIsListening());
    QVERIFY(http != 0);
    QTRY_VERIFY_WITH_TIMEOUT(
        [&] {
            is::Entry e;
            return dict.getSync(QStringLiteral("RunParams.Statistics"), &e).isOk();
        }(),
        10000);

    is::Object run = is::Object::create(dict.types(), QStringLiteral("RunInfo"));
    QVERIFY_OK(run.set<quint32>(QStringLiteral("runNumber"), 372541));
    QVERIFY_OK(run.set(QStringLiteral("runType"), QStringLiteral("Physics")));
    QVERIFY_OK(run.set(QStringLiteral("startTime"), is::Time::currentTime()));
    QVERIFY_OK(run.set(QStringLiteral("state"), QStringLiteral("Running")));
    QVERIFY_OK(run.set<quint32>(QStringLiteral("activeTime"), 22317));
    QVERIFY(dict.insertSync(QStringLiteral("RunParams.RunInfo"), run).isOk());
    for (int i = 1; i <= 3; ++i) {
        is::Object rs = is::Object::create(dict.types(), QStringLiteral("ReadoutStats"));
        QVERIFY(dict.insertSync(QStringLiteral("RunParams.Readout%1").arg(i), rs).isOk());
    }

    HeadlessChromium browser;
    QString error;
    const QUrl pageWs = browser.start(&error);
    QVERIFY2(!pageWs.isEmpty(), qPrintable(error));
    DevTools dt;
    QVERIFY(dt.connect(pageWs));
    QVERIFY(!dt.call(QStringLiteral("Page.enable")).isEmpty());
    QVERIFY(!dt.call(QStringLiteral("Runtime.enable")).isEmpty());
    QVERIFY(!dt.call(QStringLiteral("Log.enable")).isEmpty());
    dt.call(QStringLiteral("Emulation.setDeviceMetricsOverride"), {{QStringLiteral("width"), 1280},
                                                                   {QStringLiteral("height"), 860},
                                                                   {QStringLiteral("deviceScaleFactor"), 1},
                                                                   {QStringLiteral("mobile"), false}});
    QVERIFY(
        dt.call(QStringLiteral("Page.navigate"),
                {{QStringLiteral("url"), QStringLiteral("http://127.0.0.1:%1/#server=RunParams").arg(http)}})
            .contains(QLatin1String("result")));

    // The page lists the objects and is connected live.
    QTRY_VERIFY_WITH_TIMEOUT(
        dt.eval(QStringLiteral("document.querySelectorAll('#objects li').length")).toInt() == 5, 15000);
    QTRY_COMPARE_WITH_TIMEOUT(
        dt.eval(QStringLiteral("document.getElementById('status').textContent")).toString(),
        QStringLiteral("live"), 10000);
    QCOMPARE(dt.eval(QStringLiteral("document.getElementById('server').value")).toString(),
             QStringLiteral("RunParams"));

    // A real mouse click on the object in the list.
    const QJsonObject box =
        dt.eval(QStringLiteral(
                    "(() => { const r = "
                    "document.querySelector('li[data-name=\"RunParams.RunInfo\"]').getBoundingClientRect();"
                    " return {x: r.x + r.width / 2, y: r.y + r.height / 2}; })()"))
            .toObject();
    for (const char *type : {"mousePressed", "mouseReleased"})
        dt.call(QStringLiteral("Input.dispatchMouseEvent"),
                {{QStringLiteral("type"), QLatin1String(type)},
                 {QStringLiteral("x"), box.value(QLatin1String("x"))},
                 {QStringLiteral("y"), box.value(QLatin1String("y"))},
                 {QStringLiteral("button"), QStringLiteral("left")},
                 {QStringLiteral("clickCount"), 1}});
    const QString activeCell =
        QStringLiteral("document.querySelector('tr[data-attr=\"activeTime\"] .val').textContent");
    QTRY_COMPARE_WITH_TIMEOUT(dt.eval(activeCell).toString(), QStringLiteral("22317"), 10000);
    QCOMPARE(dt.eval(QStringLiteral("document.getElementById('objname').textContent")).toString(),
             QStringLiteral("RunParams.RunInfo"));
    QCOMPARE(dt.eval(QStringLiteral("document.querySelector('tr[data-attr=\"state\"] .val').textContent"))
                 .toString(),
             QStringLiteral("Running"));

    // Chart activeTime, then change it through the IS API: the page follows.
    dt.eval(QStringLiteral("document.querySelector('tr[data-attr=\"activeTime\"] input').click()"));
    QTRY_VERIFY_WITH_TIMEOUT(!dt.eval(QStringLiteral("document.getElementById('chartbox').hidden")).toBool(),
                             5000);
    // Before any change: the chart starts from the server's history (the value written at the start).
    QTRY_VERIFY_WITH_TIMEOUT(dt.eval(QStringLiteral("state.points.length")).toInt() >= 1, 5000);
    QCOMPARE(dt.eval(QStringLiteral("state.points[0].v")).toInt(), 22317);
    quint32 value = 22317;
    for (int i = 0; i < 40; ++i) {
        value += 3 + (i * 7) % 11;
        QVERIFY_OK(run.set<quint32>(QStringLiteral("activeTime"), value));
        QVERIFY(dict.updateSync(QStringLiteral("RunParams.RunInfo"), run).isOk());
        // One at a time, as a live chart gets them.
        QTRY_COMPARE_WITH_TIMEOUT(dt.eval(activeCell).toString(), QString::number(value), 10000);
    }
    QTRY_COMPARE_WITH_TIMEOUT(dt.eval(activeCell).toString(), QString::number(value), 10000);
    QVERIFY(dt.eval(QStringLiteral("state.points.length")).toInt() >= 2);
    QCOMPARE(dt.eval(QStringLiteral("document.getElementById('chartlast').textContent")).toString(),
             QStringLiteral("= %1").arg(value));

    QVERIFY2(dt.pageErrors().isEmpty(), qPrintable(dt.pageErrors().join(QLatin1Char('\n'))));

    // The screenshot shown in the README.
    // The change highlight faded (a CSS transition).
    QTRY_COMPARE_WITH_TIMEOUT(dt.eval(QStringLiteral("document.getAnimations().length")).toInt(), 0, 5000);
    const QJsonObject shot = dt.call(QStringLiteral("Page.captureScreenshot"),
                                     {{QStringLiteral("format"), QStringLiteral("png")}});
    const QByteArray png = QByteArray::fromBase64(
        shot.value(QLatin1String("result")).toObject().value(QLatin1String("data")).toString().toLatin1());
    QVERIFY(png.startsWith("\x89PNG"));
    QFile out(screenshotPath(QStringLiteral("isweb.png")));
    QVERIFY(out.open(QIODevice::WriteOnly));
    out.write(png);
    out.close();

    dt.call(QStringLiteral("Browser.close"), {}, 3000);
    dt.close();
    browser.process().waitForFinished(10000); // ~HeadlessChromium terminates and reaps it if not
}

void tst_IsWebPage::pageAsksForTheTokenOnce()
{
    if (HeadlessChromium::executable().isEmpty())
        QSKIP("chromium is not installed (Debian package 'chromium'; ./run.sh installs it)");
    QTemporaryDir tmp;
    const QByteArray token = "page-token-0123456789abcdef";
    QFile tokenFile(tmp.filePath(QStringLiteral("token")));
    QVERIFY(tokenFile.open(QIODevice::WriteOnly));
    tokenFile.write(token);
    tokenFile.close();

    ProcessFixture fx;
    QVERIFY(fx.startControlServer());
    Client client(fx.clientOptions(QStringLiteral("isweb-token-test")));
    QVERIFY(client.start());
    is::Dictionary dict(&client);
    QVERIFY_OK(dict.types().loadDirectory(IsTypesDir));
    const quint16 http = ProcessFixture::waitForListening(
        fx.start(QStringLiteral("dialog-isserver"),
                 {QStringLiteral("--name"), QStringLiteral("RunParams"), QStringLiteral("--types"),
                  IsTypesDir, QStringLiteral("--http-port"), QStringLiteral("0"),
                  QStringLiteral("--http-token-file"), tokenFile.fileName()}),
        ProcessFixture::webIsListening());
    QVERIFY(http != 0);
    is::Object run = is::Object::create(dict.types(), QStringLiteral("RunInfo"));
    QVERIFY_OK(run.set<quint32>(QStringLiteral("activeTime"), 100));
    QTRY_VERIFY_WITH_TIMEOUT(
        [&] {
            is::Entry e;
            return dict.getSync(QStringLiteral("RunParams.Statistics"), &e).isOk();
        }(),
        10000);
    QVERIFY(dict.insertSync(QStringLiteral("RunParams.RunInfo"), run).isOk());

    HeadlessChromium browser;
    QString error;
    const QUrl pageWs = browser.start(&error);
    QVERIFY2(!pageWs.isEmpty(), qPrintable(error));
    DevTools dt;
    QVERIFY(dt.connect(pageWs));
    QVERIFY(!dt.call(QStringLiteral("Page.enable")).isEmpty());
    QVERIFY(!dt.call(QStringLiteral("Runtime.enable")).isEmpty());
    const QString url =
        QStringLiteral("http://127.0.0.1:%1/#server=RunParams&object=RunParams.RunInfo").arg(http);
    QVERIFY(dt.call(QStringLiteral("Page.navigate"), {{QStringLiteral("url"), url}})
                .contains(QLatin1String("result")));

    // Asked for the token (the data requests were answered 401), nothing shown meanwhile.
    const QString loginShown = QStringLiteral("!document.getElementById('login').hidden");
    QTRY_VERIFY_WITH_TIMEOUT(dt.eval(loginShown).toBool(), 15000);
    QCOMPARE(dt.eval(QStringLiteral("document.querySelectorAll('#objects li').length")).toInt(), 0);
    // A wrong token is asked again.
    dt.eval(QStringLiteral("document.getElementById('token').value = 'wrong'; "
                           "document.getElementById('tokenok').click()"));
    QTRY_COMPARE_WITH_TIMEOUT(
        dt.eval(QStringLiteral("document.getElementById('tokenwhy').textContent")).toString(),
        QStringLiteral("The token was not accepted; enter it again."), 10000);
    QVERIFY(dt.eval(loginShown).toBool());
    dt.eval(QStringLiteral("document.getElementById('token').value = '%1'; "
                           "document.getElementById('tokenok').click()")
                .arg(QString::fromLatin1(token)));
    QTRY_VERIFY_WITH_TIMEOUT(
        dt.eval(QStringLiteral("document.querySelectorAll('#objects li').length")).toInt() >= 2, 15000);
    QVERIFY(!dt.eval(loginShown).toBool());
    QTRY_COMPARE_WITH_TIMEOUT(
        dt.eval(QStringLiteral("document.getElementById('status').textContent")).toString(),
        QStringLiteral("live"), 10000);
    // Live update over the WebSocket (which carries the token as ?token=).
    const QString activeCell =
        QStringLiteral("document.querySelector('tr[data-attr=\"activeTime\"] .val').textContent");
    QTRY_COMPARE_WITH_TIMEOUT(dt.eval(activeCell).toString(), QStringLiteral("100"), 10000);
    QVERIFY_OK(run.set<quint32>(QStringLiteral("activeTime"), 4242));
    QVERIFY(dict.updateSync(QStringLiteral("RunParams.RunInfo"), run).isOk());
    QTRY_COMPARE_WITH_TIMEOUT(dt.eval(activeCell).toString(), QStringLiteral("4242"), 10000);

    // Asked once: a reload in the same tab does not ask again.
    dt.call(QStringLiteral("Page.reload"));
    QTRY_VERIFY_WITH_TIMEOUT(
        dt.eval(QStringLiteral("document.querySelectorAll('#objects li').length")).toInt() >= 2, 15000);
    QVERIFY(!dt.eval(loginShown).toBool());

    dt.call(QStringLiteral("Browser.close"), {}, 3000);
    dt.close();
    browser.process().waitForFinished(10000);
}

QTEST_GUILESS_MAIN(tst_IsWebPage)
#include "tst_isweb_page.moc"
