// The data-quality chain end to end, with the real binaries on loopback: two readout slaves (the
// simulated front-ends, sampling their events), dialog-monitor turning the samples into IS
// histograms on an IS server with the web IS, dialog-dqm checking them, dialog-presenter's window
// offscreen and the web IS's PNG. A dead channel injected into one front-end turns its check Bad,
// its picture red in the presenter and its PNG red on the web, while the other front-end stays
// green. Screenshots: dqchain-presenter.png, dqchain-web.png.
#include "histogrampainter.h"
#include "isweb.h"
#include "presenterwindow.h"
#include "readouts.h"
#include "widgetscreenshot.h"

#include <QJsonArray>
#include <QTemporaryDir>
#include <QtTest>

using namespace dialog;
using namespace dialog::test;
using namespace dialog::presenter;

class tst_DqChain : public QObject, protected IsTestBase
{
    Q_OBJECT

private Q_SLOTS:
    void init() { QVERIFY(setUpIs(QStringLiteral("dqchain-test"))); }
    void cleanup() { tearDownIs(); }
    void deadChannelShowsRedInPresenterAndOnTheWeb();

private:
    /// The web IS's picture of @p readout's occupancy framed by its check (a null image on failure).
    QImage webPicture(const QString &readout, QByteArray *png = nullptr);
    quint16 m_http = 0;
};

QImage tst_DqChain::webPicture(const QString &readout, QByteArray *png)
{
    const QByteArray path = "/is/Monitor/Monitor." + readout.toLatin1() +
                            ".occupancy.png?width=400&height=260&check=DQM." + readout.toLower().toLatin1() +
                            ".dead";
    const HttpReply r = httpGet(m_http, path);
    if (r.status != 200) {
        qWarning() << path << r.status << r.body.left(300);
        return {};
    }
    if (png)
        *png = r.body;
    return QImage::fromData(r.body, "PNG").convertToFormat(QImage::Format_ARGB32);
}

void tst_DqChain::deadChannelShowsRedInPresenterAndOnTheWeb()
{
    QTemporaryDir dir;
    const auto writeJson = [&](const QString &file, const QByteArray &json) {
        QFile f(dir.filePath(file));
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(json);
    };
    writeJson(QStringLiteral("checks.json"), R"({"checks": [
        {"name": "ro1.dead", "histogram": "Monitor.RO1.occupancy", "algorithm": "dead_bins", "min_entries": 20000},
        {"name": "ro2.dead", "histogram": "Monitor.RO2.occupancy", "algorithm": "dead_bins", "min_entries": 20000}]})");
    writeJson(QStringLiteral("pages.json"),
              R"({"pages": [{"name": "Front-ends", "subsystem": "DAQ", "columns": 2,
        "histograms": [{"histogram": "Monitor.RO1.occupancy", "check": "DQM.ro1.dead"},
                       {"histogram": "Monitor.RO2.occupancy", "check": "DQM.ro2.dead"}]}]})");
    QProcess *monitorServer =
        startServer(QStringLiteral("Monitor"), {QStringLiteral("--http-port"), QStringLiteral("0")});
    m_http = httpPortOf(monitorServer);
    QVERIFY(m_http != 0);
    startServer(QStringLiteral("DQM"));
    QVERIFY(waitForServer(QStringLiteral("Monitor")));
    QVERIFY(waitForServer(QStringLiteral("DQM")));
    m_fx->start(QStringLiteral("dialog-monitor"),
                {QStringLiteral("--readout"), QStringLiteral("RO1,RO2"), QStringLiteral("--criteria"),
                 QStringLiteral("every=2"), QStringLiteral("--publish-ms"), QStringLiteral("200")})
        ->setProcessChannelMode(QProcess::ForwardedErrorChannel);
    m_fx->start(QStringLiteral("dialog-dqm"),
                {QStringLiteral("--checks"), dir.filePath(QStringLiteral("checks.json")),
                 QStringLiteral("--references"), dir.path(), QStringLiteral("--period-ms"),
                 QStringLiteral("300")})
        ->setProcessChannelMode(QProcess::ForwardedErrorChannel);
    QVERIFY(startReadout(*m_fx, *m_client, QStringLiteral("RO1")));
    QVERIFY(startReadout(*m_fx, *m_client, QStringLiteral("RO2")));

    PageSet pages;
    QCOMPARE(PageSet::load(dir.filePath(QStringLiteral("pages.json")), dir.path(), &pages), QString());
    PresenterWindow w(m_fx->clientOptions(QStringLiteral("Presenter.chain")), pages);
    w.resize(900, 360);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    HistogramWidget *ro1 = w.widgetFor(QStringLiteral("Monitor.RO1.occupancy"));
    HistogramWidget *ro2 = w.widgetFor(QStringLiteral("Monitor.RO2.occupancy"));
    QVERIFY(ro1 && ro2);
    const QColor green = HistogramPainter::qualityColor(Quality::Good);
    const QColor red = HistogramPainter::qualityColor(Quality::Bad);

    // Healthy front-ends: both checks Good, both pictures green, here and on the web.
    QTRY_COMPARE_WITH_TIMEOUT(ro1->quality(), Quality::Good, 30000);
    QTRY_COMPARE_WITH_TIMEOUT(ro2->quality(), Quality::Good, 30000);
    QTRY_COMPARE_WITH_TIMEOUT(ro2->grab().toImage().pixelColor(1, 1), green, 5000);
    QTRY_COMPARE_WITH_TIMEOUT(webPicture(QStringLiteral("RO2")).pixelColor(1, 1), green, 10000);

    // Channel 17 of RO2's front-end dies (its next run is configured with it dead).
    QVERIFY(rcTransition(*m_client, QStringLiteral("RO2"), "stop").isOk());
    QVERIFY(rcTransition(*m_client, QStringLiteral("RO2"), "unconfigure").isOk());
    QVERIFY(rcTransition(*m_client, QStringLiteral("RO2"),
                         R"({"transition":"configure","parameters":{"dead_channels":"17"}})")
                .isOk());
    QVERIFY(rcTransition(*m_client, QStringLiteral("RO2"), "start").isOk());

    // dialog-dqm judges it Bad; the presenter frames it red with the reason.
    QTRY_COMPARE_WITH_TIMEOUT(ro2->quality(), Quality::Bad, 30000);
    QCOMPARE(ro2->options().check.details, QStringLiteral("1 dead bin(s): 17"));
    // The histogram the check judged reaches the presenter too (its update may come after the
    // result): channel 17 has stopped counting, it is below a tenth of the mean channel.
    const auto deadIn = [](const Histogram &h) {
        return h.contents.size() > 17 && h.contents.at(17) * 10 * h.contents.size() <= h.sum();
    };
    QTRY_VERIFY_WITH_TIMEOUT(deadIn(ro2->histogram()), 5000);
    QVERIFY(!deadIn(ro1->histogram()));
    QTRY_COMPARE_WITH_TIMEOUT(ro2->grab().toImage().pixelColor(1, 1), red, 5000);
    const QImage shown = ro2->grab().toImage();
    const HistogramPainter::Layout layout =
        HistogramPainter::layout(shown.size(), ro2->histogram(), ro2->options());
    QCOMPARE(shown.pixelColor(shown.width() / 2, layout.frameWidth),
             HistogramPainter::backgroundColor(Quality::Bad));
    QCOMPARE(ro1->quality(), Quality::Good);
    QCOMPARE(ro1->grab().toImage().pixelColor(1, 1), green);
    QCOMPARE(w.pageQuality(0), Quality::Bad);
    QVERIFY(saveScreenshot(&w, QStringLiteral("dqchain-presenter.png")));

    // The web IS draws the same verdict: RO2's PNG framed red, RO1's green.
    QByteArray png;
    QTRY_COMPARE_WITH_TIMEOUT(webPicture(QStringLiteral("RO2"), &png).pixelColor(1, 1), red, 10000);
    const QImage web = webPicture(QStringLiteral("RO2"), &png);
    QCOMPARE(web.pixelColor(web.width() - 2, web.height() / 2), red);
    QCOMPARE(webPicture(QStringLiteral("RO1")).pixelColor(1, 1), green);
    QFile out(screenshotPath(QStringLiteral("dqchain-web.png")));
    QVERIFY(out.open(QIODevice::WriteOnly));
    out.write(png);
}

QTEST_MAIN(tst_DqChain)
#include "tst_dqchain.moc"
