// dialog-presenter offscreen against a real Control Server, two IS servers (Monitor, DQM) and the
// real dialog-dqm: a page with a Good and a Bad check is drawn green and red with the checks'
// details, the reference overlaid; a histogram that recovers turns its check and its picture
// green live; a 2D page; bad pages files refused. Screenshots: presenter*.png.
#include "histogrampainter.h"
#include "isfixture.h"
#include "presenterwindow.h"
#include "statuscheck.h"
#include "widgetscreenshot.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QtTest>
#include <cmath>

using namespace dialog;
using namespace dialog::test;
using namespace dialog::presenter;

namespace {

constexpr int Channels = 32;

QList<double> gaussian(int bins, double mean, double sigma, double total)
{
    QList<double> c;
    for (int i = 0; i < bins; ++i)
        c << std::round(total / (sigma * 2.5066) *
                        std::exp(-(i + 0.5 - mean) * (i + 0.5 - mean) / (2 * sigma * sigma)));
    return c;
}

QList<double> occupancy(int deadChannel)
{
    QList<double> c;
    for (int i = 0; i < Channels; ++i)
        c << (i == deadChannel ? 0.0 : 1000.0 + (i * 37) % 60);
    return c;
}

} // namespace

class tst_Presenter : public QObject, protected IsTestBase
{
    Q_OBJECT

private Q_SLOTS:
    void init() { QVERIFY(setUpIs(QStringLiteral("presenter-test"))); }
    void cleanup() { tearDownIs(); }
    void checksColourThePictures();
    void examplePagesFileLoads();
    void badPagesFilesAreRefused_data();
    void badPagesFilesAreRefused();

private:
    void write1D(const QString &name, double high, const QList<double> &contents)
    {
        is::Object o = is::Object::create(m_dict->types(), QStringLiteral("Histogram1D"));
        double entries = 0;
        for (double v : contents)
            entries += v;
        QVERIFY_OK(o.set(QStringLiteral("title"), name.section(QLatin1Char('.'), 2)));
        QVERIFY_OK(o.set(QStringLiteral("xLow"), 0.0));
        QVERIFY_OK(o.set(QStringLiteral("xHigh"), high));
        QVERIFY_OK(o.set(QStringLiteral("bins"), quint32(contents.size())));
        QVERIFY_OK(o.set(QStringLiteral("contents"), contents));
        QVERIFY_OK(o.set(QStringLiteral("entries"), quint64(entries)));
        QVERIFY_OK(m_dict->updateSync(name, o));
    }
    void write2D(const QString &name, int xb, int yb)
    {
        is::Object o = is::Object::create(m_dict->types(), QStringLiteral("Histogram2D"));
        QList<double> c;
        for (int j = 0; j < yb; ++j)
            for (int i = 0; i < xb; ++i)
                c << std::round(1000 * std::exp(-((i - 20.0) * (i - 20.0) + (j - 8.0) * (j - 8.0)) / 40.0));
        QVERIFY_OK(o.set(QStringLiteral("title"), QStringLiteral("hit map")));
        QVERIFY_OK(o.set(QStringLiteral("xLow"), 0.0));
        QVERIFY_OK(o.set(QStringLiteral("xHigh"), double(xb)));
        QVERIFY_OK(o.set(QStringLiteral("xBins"), quint32(xb)));
        QVERIFY_OK(o.set(QStringLiteral("yLow"), 0.0));
        QVERIFY_OK(o.set(QStringLiteral("yHigh"), double(yb)));
        QVERIFY_OK(o.set(QStringLiteral("yBins"), quint32(yb)));
        QVERIFY_OK(o.set(QStringLiteral("contents"), c));
        QVERIFY_OK(o.set(QStringLiteral("entries"), quint64(50000)));
        QVERIFY_OK(m_dict->updateSync(name, o));
    }
    static void writeFile(const QString &path, const QJsonObject &json)
    {
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(QJsonDocument(json).toJson());
    }
};

void tst_Presenter::checksColourThePictures()
{
    QTemporaryDir dir;
    const QString refs = dir.filePath(QStringLiteral("references"));
    QVERIFY(QDir().mkpath(refs));
    // The reference of ro1.shape: the same shape as the histogram, a tenth of its entries.
    const QList<double> eventSize = gaussian(100, 40, 8, 10000);
    QJsonArray refContents;
    for (double v : eventSize)
        refContents.append(v / 10);
    writeFile(refs + QStringLiteral("/ro1.shape.json"),
              {{QStringLiteral("type"), QStringLiteral("Histogram1D")},
               {QStringLiteral("xLow"), 0},
               {QStringLiteral("xHigh"), 2000},
               {QStringLiteral("xBins"), 100},
               {QStringLiteral("yBins"), 1},
               {QStringLiteral("entries"), 1000},
               {QStringLiteral("contents"), refContents}});
    const auto check = [](const char *name, const char *histogram, const char *algorithm, QJsonObject extra) {
        extra.insert(QStringLiteral("name"), QLatin1String(name));
        extra.insert(QStringLiteral("histogram"), QLatin1String(histogram));
        extra.insert(QStringLiteral("algorithm"), QLatin1String(algorithm));
        return extra;
    };
    const QString checks = dir.filePath(QStringLiteral("checks.json"));
    writeFile(checks, {{QStringLiteral("checks"),
                        QJsonArray{check("ro1.shape", "Monitor.RO1.eventSize", "chi2",
                                         {{QStringLiteral("warning"), 5}, {QStringLiteral("bad"), 20}}),
                                   check("ro2.dead", "Monitor.RO2.occupancy", "dead_bins", {})}}});
    const QString pagesFile = dir.filePath(QStringLiteral("pages.json"));
    writeFile(pagesFile, QJsonDocument::fromJson(R"json({"pages": [
        {"name": "Readout", "subsystem": "DAQ", "columns": 2, "histograms": [
            {"histogram": "Monitor.RO1.eventSize", "check": "DQM.ro1.shape"},
            {"histogram": "Monitor.RO2.occupancy", "check": "DQM.ro2.dead", "log_y": true}]},
        {"name": "Maps", "subsystem": "DAQ", "histograms": [
            {"histogram": "Monitor.All.hitmap", "log_z": true, "title": "hit map (all readouts)"},
            {"histogram": "Monitor.Missing.h", "reference": "late.json"}]}]})json")
                             .object());

    startServer(QStringLiteral("Monitor"));
    startServer(QStringLiteral("DQM"));
    QVERIFY(waitForServer(QStringLiteral("Monitor")));
    QVERIFY(waitForServer(QStringLiteral("DQM")));
    write1D(QStringLiteral("Monitor.RO1.eventSize"), 2000, eventSize);
    write1D(QStringLiteral("Monitor.RO2.occupancy"), Channels, occupancy(17)); // channel 17 dead
    write2D(QStringLiteral("Monitor.All.hitmap"), 40, 16);
    QProcess *dqm = m_fx->start(QStringLiteral("dialog-dqm"),
                                {QStringLiteral("--checks"), checks, QStringLiteral("--references"), refs,
                                 QStringLiteral("--period-ms"), QStringLiteral("300")});

    PageSet pages;
    QCOMPARE(PageSet::load(pagesFile, refs, &pages), QString());
    PresenterWindow w(m_fx->clientOptions(QStringLiteral("Presenter.test")), pages);
    w.resize(1000, 480);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QCOMPARE(w.tabs()->count(), 2);
    QCOMPARE(w.tabs()->tabText(0), QStringLiteral("DAQ: Readout"));
    HistogramWidget *ro1 = w.widgetFor(QStringLiteral("Monitor.RO1.eventSize"));
    HistogramWidget *ro2 = w.widgetFor(QStringLiteral("Monitor.RO2.occupancy"));
    QVERIFY(ro1 && ro2);

    QTRY_VERIFY2_WITH_TIMEOUT(ro2->quality() == Quality::Bad || dqm->state() != QProcess::Running,
                              dqm->readAllStandardError().constData(), 15000);
    QCOMPARE(ro2->options().check.details, QStringLiteral("1 dead bin(s): 17"));
    QTRY_COMPARE_WITH_TIMEOUT(ro1->quality(), Quality::Good, 10000);
    QVERIFY(ro1->histogram().kind == Histogram::Kind::OneD);
    QCOMPARE(ro1->histogram().xBins, 100);
    QVERIFY(ro1->options().reference.isValid());  // dialog-dqm's reference of ro1.shape
    QVERIFY(!ro2->options().reference.isValid()); // dead_bins takes none
    QVERIFY(ro2->toolTip().contains(QStringLiteral("1 dead bin(s): 17")));
    QCOMPARE(w.pageQuality(0), Quality::Bad);

    // What is drawn: red frame and a reddish background for the Bad check, green for the Good one;
    // the reference's line over RO1.
    const QImage bad = ro2->grab().toImage(), good = ro1->grab().toImage();
    const HistogramPainter::Layout badLayout =
        HistogramPainter::layout(bad.size(), ro2->histogram(), ro2->options());
    QCOMPARE(bad.pixelColor(1, 1), HistogramPainter::qualityColor(Quality::Bad));
    QCOMPARE(bad.pixelColor(bad.width() / 2, badLayout.frameWidth),
             HistogramPainter::backgroundColor(Quality::Bad));
    QCOMPARE(good.pixelColor(1, 1), HistogramPainter::qualityColor(Quality::Good));
    QVERIFY(pixelsNear(good, HistogramPainter::referenceColor()) > 100);
    QVERIFY(pixelsNear(bad, HistogramPainter::referenceColor()) < 10);
    QVERIFY(pixelsNear(good, HistogramPainter::barColor()) > 500);
    // The widget draws exactly the picture dialog-render makes of the same input.
    QCOMPARE(
        bad,
        HistogramPainter::render(bad.size(), ro2->histogram(), ro2->options()).convertToFormat(bad.format()));
    QVERIFY(saveScreenshot(&w, QStringLiteral("presenter.png")));

    // The dead channel comes back: its check, then its picture, turn Good live.
    write1D(QStringLiteral("Monitor.RO2.occupancy"), Channels, occupancy(-1));
    QTRY_COMPARE_WITH_TIMEOUT(ro2->quality(), Quality::Good, 10000);
    QTRY_COMPARE_WITH_TIMEOUT(ro2->grab().toImage().pixelColor(1, 1),
                              HistogramPainter::qualityColor(Quality::Good), 5000);
    QCOMPARE(ro2->histogram().contents.at(17), 1000.0 + (17 * 37) % 60);
    QCOMPARE(w.pageQuality(0), Quality::Good);

    // The 2D page: a colour map with its scale, a histogram that is not in the IS said so.
    QVERIFY(w.showPage(QStringLiteral("Maps")));
    HistogramWidget *map = w.widgetFor(QStringLiteral("Monitor.All.hitmap"));
    QTRY_VERIFY_WITH_TIMEOUT(map->histogram().kind == Histogram::Kind::TwoD, 10000);
    QCOMPARE(map->histogram().xBins, 40);
    QCOMPARE(map->quality(), Quality::None);
    HistogramWidget *missing = w.widgetFor(QStringLiteral("Monitor.Missing.h"));
    QTRY_COMPARE_WITH_TIMEOUT(missing->options().message,
                              QStringLiteral("Monitor.Missing.h is not in the IS"), 10000);
    // A reference file that appears (or changes) is read again: it shows without a restart.
    QVERIFY(!missing->options().reference.isValid());
    writeFile(dir.filePath(QStringLiteral("late.json")),
              {{QStringLiteral("type"), QStringLiteral("Histogram1D")},
               {QStringLiteral("xLow"), 0},
               {QStringLiteral("xHigh"), 4},
               {QStringLiteral("xBins"), 4},
               {QStringLiteral("yBins"), 1},
               {QStringLiteral("entries"), 10},
               {QStringLiteral("contents"), QJsonArray{1, 2, 3, 4}}});
    QTRY_VERIFY_WITH_TIMEOUT(missing->options().reference.isValid(), 10000);
    QCOMPARE(missing->options().reference.contents, (QList<double>{1, 2, 3, 4}));
    const QImage mapImage = map->grab().toImage();
    QVERIFY(pixelsNear(mapImage, HistogramPainter::colourAt(1.0)) > 20); // the peak, and the scale's top
    QVERIFY(pixelsNear(mapImage, HistogramPainter::colourAt(0.0)) > 20);
    QVERIFY(saveScreenshot(&w, QStringLiteral("presenter-maps.png")));
}

void tst_Presenter::examplePagesFileLoads()
{
    PageSet pages;
    QCOMPARE(PageSet::load(QStringLiteral(DIALOG_SOURCE_DIR "/resources/presenter/example.json"),
                           QStringLiteral("/var/lib/dialog/dqm"), &pages),
             QString());
    QCOMPARE(pages.pages.size(), 2);
    QCOMPARE(pages.pages.at(0).entries.at(0).referenceFile,
             QStringLiteral("/var/lib/dialog/dqm/ro1.shape.json"));
    QVERIFY(pages.pages.at(1).entries.at(0).logZ);
}

void tst_Presenter::badPagesFilesAreRefused_data()
{
    QTest::addColumn<QByteArray>("json");
    QTest::addColumn<QString>("error");
    QTest::newRow("not JSON") << QByteArray("{\"pages\": [") << QStringLiteral("not JSON");
    QTest::newRow("no pages") << QByteArray(R"({"pages": []})") << QStringLiteral("no pages");
    QTest::newRow("no name") << QByteArray(R"({"pages": [{"histograms": [{"histogram": "A.b"}]}]})")
                             << QStringLiteral("page 1: a page is an object with a \"name\"");
    QTest::newRow("no histograms") << QByteArray(R"({"pages": [{"name": "P"}]})")
                                   << QStringLiteral("page \"P\": no \"histograms\"");
    QTest::newRow("histogram not Server.Object")
        << QByteArray(R"({"pages": [{"name": "P", "histograms": [{"histogram": "nodot"}]}]})")
        << QStringLiteral("page \"P\", histogram 1: \"histogram\" must name an IS object as Server.Object");
    QTest::newRow("unknown key")
        << QByteArray(R"({"pages": [{"name": "P", "histograms": [{"histogram": "A.b", "logy": true}]}]})")
        << QStringLiteral("unknown key \"logy\"");
    QTest::newRow("flag not a bool")
        << QByteArray(R"({"pages": [{"name": "P", "histograms": [{"histogram": "A.b", "log_y": 1}]}]})")
        << QStringLiteral("\"log_y\" must be true or false");
    QTest::newRow("columns out of range")
        << QByteArray(R"({"pages": [{"name": "P", "columns": 0, "histograms": [{"histogram": "A.b"}]}]})")
        << QStringLiteral("\"columns\" must be an integer in [1, 8]");
    QTest::newRow("page twice") << QByteArray(
                                       R"({"pages": [{"name": "P", "histograms": [{"histogram": "A.b"}]},
                                                            {"name": "P", "histograms": [{"histogram": "A.c"}]}]})")
                                << QStringLiteral("a second page \"P\"");
    QTest::newRow("reference_check without --references")
        << QByteArray(
               R"({"pages": [{"name": "P", "histograms": [{"histogram": "A.b", "reference_check": "c"}]}]})")
        << QStringLiteral("needs --references");
}

void tst_Presenter::badPagesFilesAreRefused()
{
    QFETCH(QByteArray, json);
    QFETCH(QString, error);
    PageSet pages;
    const QString got = PageSet::parse(json, QStringLiteral("/tmp"), {}, &pages);
    QVERIFY2(got.contains(error), qPrintable(got));
    QVERIFY(pages.pages.isEmpty());
    // The program says so and exits 1.
    QTemporaryDir dir;
    const QString file = dir.filePath(QStringLiteral("pages.json"));
    QFile f(file);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(json);
    f.close();
    QProcess p;
    p.start(bin(QStringLiteral("dialog-presenter")), {QStringLiteral("--pages"), file});
    QVERIFY(p.waitForFinished(20000));
    QCOMPARE(p.exitCode(), 1);
    const QString stderrText = QString::fromUtf8(p.readAllStandardError());
    QVERIFY2(stderrText.contains(error), qPrintable(stderrText));
}

QTEST_MAIN(tst_Presenter)
#include "tst_presenter.moc"
