// The operational monitoring display against a real Control Server and IS server on loopback,
// offscreen.
#include "omdwindow.h"
#include "processfixture.h"
#include "screenshot.h"

#include "dialog/is/dictionary.h"

#include <QAction>
#include <QDateTimeAxis>
#include <QImage>
#include <QJsonArray>
#include <QJsonObject>
#include <QLineSeries>
#include <QTemporaryDir>
#include <QTimer>
#include <QValueAxis>
#include <QtTest>
#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

using namespace dialog;
using namespace dialog::test;
using namespace dialog::omd;

namespace {

/// Counts the paint events of one widget (a chart's viewport).
class PaintCount : public QObject
{
public:
    explicit PaintCount(QWidget *widget) { widget->installEventFilter(this); }
    int paints = 0;

protected:
    bool eventFilter(QObject *watched, QEvent *event) override
    {
        if (event->type() == QEvent::Paint)
            ++paints;
        return QObject::eventFilter(watched, event);
    }
};

} // namespace

class tst_Omd : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void cleanup();
    void plotsAFedSeries();
    void pauseFreezesTheDisplay();
    void opensFilledFromHistory();
    void timeWindowAndAutoscale();
    void barChartAcrossFiveObjects();
    void objectWithAllNumericAttributes();
    void layoutRoundTripsThroughItsFile();
    void layoutOnTheCommandLine();
    void exportsPngAndCsv();
    void marksStaleSeriesAndDrawsThresholds();
    void drawsTheThresholdsOfAlarmRules();
    void screenshot();

private:
    is::Object readout(double rate, quint64 events, float cpu);
    void put(const QString &name, const is::Object &o);

    std::unique_ptr<ProcessFixture> m_fx;
    std::unique_ptr<Client> m_feeder;
    std::unique_ptr<is::Dictionary> m_dict;
    std::unique_ptr<OmdWindow> m_window;
    QTemporaryDir m_tmp;
};

void tst_Omd::initTestCase()
{
    QVERIFY(m_tmp.isValid());
    m_fx = std::make_unique<ProcessFixture>();
    QVERIFY(m_fx->startControlServer());
    m_fx->start(QStringLiteral("dialog-isserver"),
                {QStringLiteral("--name"), QStringLiteral("DAQ"), QStringLiteral("--types"),
                 QStringLiteral(DIALOG_SOURCE_DIR "/resources/is-types"), QStringLiteral("--heartbeat-ms"),
                 QStringLiteral("200")});
    m_feeder = std::make_unique<Client>(m_fx->clientOptions(QStringLiteral("test.feeder")));
    m_feeder->start();
    m_dict = std::make_unique<is::Dictionary>(m_feeder.get());
    QStringList servers;
    QTRY_VERIFY_WITH_TIMEOUT(m_dict->serversSync(&servers).isOk() && servers.contains(QStringLiteral("DAQ")),
                             10000);
    QVERIFY(m_dict->fetchTypesSync(QStringLiteral("DAQ")).isOk());
    m_window = std::make_unique<OmdWindow>(m_fx->clientOptions(QStringLiteral("DIALOG.OMD.test")));
    m_window->show();
    QVERIFY(QTest::qWaitForWindowExposed(m_window.get()));
}

void tst_Omd::cleanupTestCase()
{
    m_window.reset();
    m_dict.reset();
    m_feeder.reset();
    m_fx.reset();
}

void tst_Omd::cleanup()
{
    if (QTest::currentTestFailed())
        return;
    m_window->applyLayout(Layout()); // every test starts with an empty window
    QCOMPARE(m_window->chartCount(), 0);
}

is::Object tst_Omd::readout(double rate, quint64 events, float cpu)
{
    is::Object o = is::Object::create(m_dict->types(), QStringLiteral("ReadoutStats"));
    o.set(QStringLiteral("rate"), rate);
    o.set(QStringLiteral("events"), events);
    o.set(QStringLiteral("cpuLoad"), cpu);
    o.set(QStringLiteral("updateTime"), is::Time::currentTime());
    return o;
}

void tst_Omd::put(const QString &name, const is::Object &o)
{
    const is::Status s = m_dict->updateSync(name, o);
    QVERIFY2(s.isOk(), qPrintable(s.toString()));
}

void tst_Omd::plotsAFedSeries()
{
    put(QStringLiteral("DAQ.RO1"), readout(100, 0, 10));
    ChartSpec spec;
    spec.title = QStringLiteral("Event rate");
    spec.series << SeriesSpec{QStringLiteral("DAQ.RO1"), QStringLiteral("rate"), QStringLiteral("RO1")}
                << SeriesSpec{QStringLiteral("DAQ.RO1"), QStringLiteral("events"), {}};
    const int c = m_window->addChart(spec);
    TimeSeriesChart *chart = m_window->timeSeries(c);
    QVERIFY(chart);
    QCOMPARE(chart->seriesCount(), 2);
    QCOMPARE(chart->lineSeries(0)->name(), QStringLiteral("RO1"));
    QCOMPARE(chart->lineSeries(1)->name(), QStringLiteral("RO1.events")); // the default label
    // The current value first, then every update.
    QTRY_COMPARE_WITH_TIMEOUT(chart->points(0).size(), 1, 5000);
    QCOMPARE(chart->points(0).first().y(), 100.0);
    for (int i = 1; i <= 10; ++i) {
        put(QStringLiteral("DAQ.RO1"), readout(100 + 10 * i, 1000 * i, 10));
        QTRY_COMPARE_WITH_TIMEOUT(chart->points(0).size(), 1 + i, 5000);
    }
    // A test publisher in another process feeds it too.
    QCOMPARE(m_fx->run(QStringLiteral("dialogctl"),
                       {QStringLiteral("is"), QStringLiteral("put"), QStringLiteral("DAQ.RO1"),
                        QStringLiteral("--type"), QStringLiteral("ReadoutStats"),
                        QStringLiteral("rate=333.5"), QStringLiteral("events=12345")}),
             0);
    QTRY_COMPARE_WITH_TIMEOUT(chart->points(0).size(), 12, 5000);
    QCOMPARE(chart->points(0).last().y(), 333.5);
    QCOMPARE(chart->points(1).last().y(), 12345.0);
    for (int i = 1; i < 11; ++i) {
        QCOMPARE(chart->points(0).at(i).y(), 100.0 + 10 * i);
        QVERIFY(chart->points(0).at(i).x() >= chart->points(0).at(i - 1).x()); // in time order
    }
    // Drawn within a refresh period, with the axis following the values.
    QTRY_COMPARE_WITH_TIMEOUT(chart->drawnCount(0), 12, 2000);
    auto *y = qobject_cast<QValueAxis *>(chart->chart()->axes(Qt::Vertical).first());
    QVERIFY(y->min() <= 100 && y->max() >= 12345);
    const QString tip = chart->tooltipAt(0, chart->points(0).last() + QPointF(-1, 0));
    QVERIFY2(tip.startsWith(QStringLiteral("RO1\n")) && tip.endsWith(QStringLiteral("\n333.5")),
             qPrintable(tip));
    QVERIFY(chart->chart()->legend()->isVisible());
}

void tst_Omd::pauseFreezesTheDisplay()
{
    put(QStringLiteral("DAQ.Pause1"), readout(50, 1, 10));
    ChartSpec spec;
    spec.title = QStringLiteral("paused");
    spec.series << SeriesSpec{QStringLiteral("DAQ.Pause1"), QStringLiteral("rate"), {}};
    TimeSeriesChart *chart = m_window->timeSeries(m_window->addChart(spec));
    QTRY_COMPARE_WITH_TIMEOUT(chart->drawnCount(0), 1, 5000);
    m_window->findChild<QAction *>(QStringLiteral("pause"))->trigger();
    QVERIFY(m_window->isPaused());
    QCOMPARE(m_window->findChild<QAction *>(QStringLiteral("pause"))->text(), QStringLiteral("Resume"));
    put(QStringLiteral("DAQ.Pause1"), readout(60, 2, 10));
    QTRY_COMPARE_WITH_TIMEOUT(chart->points(0).size(), 2, 5000); // still recorded
    QVERIFY(expectNothingFor(
        400, [chart] { return chart->drawnCount(0) != 1; }, // two refresh periods
        "a paused chart drawn"));
    m_window->findChild<QAction *>(QStringLiteral("pause"))->trigger();
    QVERIFY(!m_window->isPaused());
    QCOMPARE(chart->drawnCount(0), 2);
}

void tst_Omd::opensFilledFromHistory()
{
    // Values written before the chart exists: it opens with them (the IS server's history).
    for (int i = 0; i < 40; ++i)
        put(QStringLiteral("DAQ.Hist1"), readout(1000 + i, quint64(i), 5));
    ChartSpec spec;
    spec.series << SeriesSpec{QStringLiteral("DAQ.Hist1"), QStringLiteral("rate"), {}};
    const int c = m_window->addChart(spec);
    TimeSeriesChart *chart = m_window->timeSeries(c);
    QVERIFY(chart);
    QTRY_COMPARE_WITH_TIMEOUT(chart->points(0).size(), 40, 5000);
    for (int i = 0; i < 40; ++i)
        QCOMPARE(chart->points(0).at(i).y(), 1000.0 + i);
    // Then it goes on with the live values.
    put(QStringLiteral("DAQ.Hist1"), readout(2000, 40, 5));
    QTRY_COMPARE_WITH_TIMEOUT(chart->points(0).size(), 41, 5000);
    QCOMPARE(chart->points(0).last().y(), 2000.0);
    QTRY_COMPARE_WITH_TIMEOUT(chart->drawnCount(0), 41, 2000);
}

void tst_Omd::timeWindowAndAutoscale()
{
    ChartSpec spec;
    spec.title = QStringLiteral("window");
    spec.series << SeriesSpec{QStringLiteral("DAQ.RO1"), QStringLiteral("rate"), {}};
    TimeSeriesChart *chart = m_window->timeSeries(m_window->addChart(spec));
    auto *x = qobject_cast<QDateTimeAxis *>(chart->chart()->axes(Qt::Horizontal).first());
    for (int seconds : {60, 600, 3600}) {
        m_window->setWindowSeconds(seconds);
        QCOMPARE(chart->windowSeconds(), seconds);
        QVERIFY(qAbs(x->min().secsTo(x->max()) - seconds) <= 1);
    }
    // An old point is kept for the longer windows, not drawn in the short one.
    const qint64 now = QDateTime::currentMSecsSinceEpoch();
    chart->addPoint(0, now - 5 * 60 * 1000, 1e6);
    m_window->setWindowSeconds(600);
    QCOMPARE(chart->drawnCount(0), chart->points(0).size());
    m_window->setWindowSeconds(60);
    auto *y = qobject_cast<QValueAxis *>(chart->chart()->axes(Qt::Vertical).first());
    QVERIFY(y->max() >= 1e6); // the point just before the window is drawn so the line enters from the left
    // Without autoscale the range stays where it is.
    m_window->setAutoscale(false);
    y->setRange(0, 10);
    chart->addPoint(0, now, 5e6);
    m_window->refresh();
    QCOMPARE(y->max(), 10.0);
    m_window->setAutoscale(true);
    QVERIFY(y->max() >= 5e6);
    m_window->setWindowSeconds(600);
}

void tst_Omd::barChartAcrossFiveObjects()
{
    for (int i = 1; i <= 5; ++i)
        put(QStringLiteral("DAQ.Slave%1").arg(i), readout(1000.0 * i, 0, 5));
    is::Object fe = is::Object::create(m_dict->types(), QStringLiteral("FrontEndStatus"));
    put(QStringLiteral("DAQ.SlaveFE"), fe); // matches the regex, not the type
    ChartSpec spec;
    spec.kind = ChartSpec::Kind::Bar;
    spec.title = QStringLiteral("Event rate per slave");
    spec.server = QStringLiteral("DAQ");
    spec.regex = QStringLiteral("Slave.*");
    spec.type = QStringLiteral("ReadoutStats");
    spec.attribute = QStringLiteral("rate");
    BarChart *bar = m_window->barChart(m_window->addChart(spec));
    QVERIFY(bar);
    const QStringList five{QStringLiteral("Slave1"), QStringLiteral("Slave2"), QStringLiteral("Slave3"),
                           QStringLiteral("Slave4"), QStringLiteral("Slave5")};
    QTRY_COMPARE_WITH_TIMEOUT(bar->categories(), five, 5000);
    QCOMPARE(bar->barValues(), (QList<double>{1000, 2000, 3000, 4000, 5000}));
    // Live: an update, a removal, a creation.
    put(QStringLiteral("DAQ.Slave3"), readout(3500, 0, 5));
    QTRY_COMPARE_WITH_TIMEOUT(bar->barValues().value(2), 3500.0, 5000);
    QVERIFY(m_dict->removeSync(QStringLiteral("DAQ.Slave5")).isOk());
    QTRY_COMPARE_WITH_TIMEOUT(bar->categories().size(), 4, 5000);
    put(QStringLiteral("DAQ.Slave6"), readout(600, 0, 5));
    QTRY_COMPARE_WITH_TIMEOUT(bar->categories().last(), QStringLiteral("Slave6"), 5000);
    QCOMPARE(bar->barValues().last(), 600.0);
    QVERIFY(!bar->categories().contains(QStringLiteral("SlaveFE")));
}

void tst_Omd::objectWithAllNumericAttributes()
{
    // What "open in OMD" of the IS monitor does: every numeric attribute of the object.
    m_window->addObject(QStringLiteral("DAQ.Statistics"));
    QCOMPARE(m_window->chartCount(), 1);
    TimeSeriesChart *chart = m_window->timeSeries(0);
    QTRY_VERIFY_WITH_TIMEOUT(chart->seriesCount() >= 5, 5000);
    int changes = -1;
    for (int i = 0; i < chart->seriesCount(); ++i)
        if (chart->spec().series.at(i).attribute == QLatin1String("changesPerSecond"))
            changes = i;
    QVERIFY(changes >= 0);
    for (const SeriesSpec &s : chart->spec().series)
        QVERIFY2(s.attribute != QLatin1String("lastCheckpoint") &&
                     s.attribute != QLatin1String("subscriberNames"),
                 qPrintable(s.attribute)); // no times, no vectors
    // The server publishes its statistics every second.
    QTRY_VERIFY_WITH_TIMEOUT(chart->points(changes).size() >= 2, 5000);
    // One attribute alone, nested paths included.
    m_window->addObject(QStringLiteral("DAQ.Statistics"), QStringLiteral("objects"));
    QCOMPARE(m_window->timeSeries(1)->seriesCount(), 1);
    QTRY_VERIFY_WITH_TIMEOUT(!m_window->timeSeries(1)->points(0).isEmpty(), 5000);
    is::Object h = is::Object::create(m_dict->types(), QStringLiteral("Histogram1D"));
    h.set(QStringLiteral("entries"), quint64(77));
    is::Object ro = readout(1, 2, 3);
    ro.set(QStringLiteral("eventSize"), h);
    double v = 0;
    QVERIFY(OmdWindow::numericValue(ro, QStringLiteral("eventSize.entries"), &v));
    QCOMPARE(v, 77.0);
    QVERIFY(!OmdWindow::numericValue(ro, QStringLiteral("host"), &v));
    QVERIFY(!OmdWindow::numericValue(ro, QStringLiteral("nosuch.entries"), &v));
}

void tst_Omd::layoutRoundTripsThroughItsFile()
{
    Layout l;
    l.title = QStringLiteral("Shift display");
    l.windowSeconds = 60;
    l.columns = 3;
    l.autoscale = false;
    ChartSpec ts;
    ts.title = QStringLiteral("Rates");
    ts.series << SeriesSpec{QStringLiteral("DAQ.RO1"), QStringLiteral("rate"), QStringLiteral("RO1")}
              << SeriesSpec{QStringLiteral("DAQ.RO2"), QStringLiteral("rate"), {}};
    ts.thresholds << Threshold{10, QStringLiteral("rate too low"), QStringLiteral("error")}
                  << Threshold{90000, {}, QStringLiteral("info")};
    ChartSpec bar;
    bar.kind = ChartSpec::Kind::Bar;
    bar.title = QStringLiteral("CPU");
    bar.server = QStringLiteral("DAQ");
    bar.regex = QStringLiteral("RO.*");
    bar.type = QStringLiteral("ProcessStats");
    bar.subtypes = true;
    bar.attribute = QStringLiteral("cpuLoad");
    l.charts << ts << bar;
    const QString path = m_tmp.filePath(QStringLiteral("layout.json"));
    QString error;
    QVERIFY2(l.save(path, &error), qPrintable(error));
    Layout back;
    QVERIFY2(Layout::load(path, &back, &error), qPrintable(error));
    QVERIFY(back == l);
    // Through the window: what it shows is what it saves.
    QVERIFY2(m_window->loadLayout(path, &error), qPrintable(error));
    QCOMPARE(m_window->chartCount(), 2);
    QCOMPARE(m_window->windowSeconds(), 60);
    QVERIFY(m_window->currentLayout() == l);
    const QString again = m_tmp.filePath(QStringLiteral("again.json"));
    QVERIFY(m_window->saveLayout(again, &error));
    QFile a(path), b(again);
    QVERIFY(a.open(QIODevice::ReadOnly) && b.open(QIODevice::ReadOnly));
    QCOMPARE(b.readAll(), a.readAll());
    // The demo layout is valid; broken ones say why.
    Layout demo;
    QVERIFY2(Layout::load(QStringLiteral(DIALOG_SOURCE_DIR "/resources/omd/demo.json"), &demo, &error),
             qPrintable(error));
    QVERIFY(demo.charts.size() >= 4);
    QVERIFY(!Layout::fromJson(
        QJsonObject{{QStringLiteral("charts"),
                     QJsonArray{QJsonObject{{QStringLiteral("kind"), QStringLiteral("pie")}}}}},
        &demo, &error));
    QVERIFY(error.contains(QStringLiteral("pie")));
    QVERIFY(!Layout::fromJson(QJsonObject{{QStringLiteral("window_s"), 5}}, &demo, &error));
    const auto withThreshold = [](const QJsonObject &t) {
        return QJsonObject{{QStringLiteral("charts"),
                            QJsonArray{QJsonObject{{QStringLiteral("kind"), QStringLiteral("timeseries")},
                                                   {QStringLiteral("thresholds"), QJsonArray{t}}}}}};
    };
    QVERIFY(!Layout::fromJson(
        withThreshold({{QStringLiteral("value"), 1}, {QStringLiteral("severity"), QStringLiteral("bad")}}),
        &demo, &error));
    QVERIFY2(error.contains(QStringLiteral("unknown threshold severity 'bad'")), qPrintable(error));
    QVERIFY(
        !Layout::fromJson(withThreshold({{QStringLiteral("value"), QStringLiteral("ten")}}), &demo, &error));
    QVERIFY2(error.contains(QStringLiteral("a threshold needs a numeric \"value\"")), qPrintable(error));
    m_window->setAutoscale(true);
}

void tst_Omd::layoutOnTheCommandLine()
{
    QByteArray err;
    QCOMPARE(m_fx->run(QStringLiteral("dialog-omd"),
                       {QStringLiteral("--layout"), m_tmp.filePath(QStringLiteral("none.json"))}, nullptr,
                       &err),
             1);
    const QByteArray reason = err.trimmed().split('\n').last(); // after any Qt start-up warning
    QVERIFY2(reason.startsWith("dialog-omd: ") && reason.contains("none.json"), err.constData());
    // A good layout opens and runs until it is told to stop.
    QProcess *omd = m_fx->start(
        QStringLiteral("dialog-omd"),
        {QStringLiteral("--layout"), QStringLiteral(DIALOG_SOURCE_DIR "/resources/omd/demo.json")});
    const QString name = QStringLiteral("DIALOG.OMD.%1").arg(omd->processId());
    QTRY_VERIFY_WITH_TIMEOUT(omd->state() != QProcess::Running || !m_fx->processEntry(name).isEmpty(), 10000);
    QCOMPARE(omd->state(), QProcess::Running);
    omd->terminate();
    QVERIFY(omd->waitForFinished(5000));
    QCOMPARE(omd->exitCode(), 0);
}

void tst_Omd::exportsPngAndCsv()
{
    put(QStringLiteral("DAQ.RO1"), readout(42.5, 7, 10));
    ChartSpec spec;
    spec.title = QStringLiteral("export");
    spec.series << SeriesSpec{QStringLiteral("DAQ.RO1"), QStringLiteral("rate"), QStringLiteral("rate, Hz")};
    TimeSeriesChart *chart = m_window->timeSeries(m_window->addChart(spec));
    QTRY_VERIFY_WITH_TIMEOUT(!chart->points(0).isEmpty(), 5000);
    QString error;
    const QString csv = m_tmp.filePath(QStringLiteral("chart.csv"));
    QVERIFY2(chart->exportCsv(csv, &error), qPrintable(error));
    QFile f(csv);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QList<QByteArray> lines = f.readAll().trimmed().split('\n');
    QCOMPARE(lines.first(), QByteArray("series,object,attribute,time,time_ms,value"));
    QCOMPARE(lines.size(), chart->points(0).size() + 1);
    QVERIFY2(lines.last().startsWith("\"rate, Hz\",DAQ.RO1,rate,") && lines.last().endsWith(",42.5"),
             lines.last().constData());
    const QString png = m_tmp.filePath(QStringLiteral("chart.png"));
    QVERIFY(chart->exportPng(png));
    QImage image(png);
    QVERIFY(!image.isNull());
    QCOMPARE(image.size(), chart->size() * chart->devicePixelRatio());
    // Bar chart data.
    ChartSpec bar;
    bar.kind = ChartSpec::Kind::Bar;
    bar.server = QStringLiteral("DAQ");
    bar.regex = QStringLiteral("RO1");
    bar.attribute = QStringLiteral("rate");
    BarChart *b = m_window->barChart(m_window->addChart(bar));
    QTRY_COMPARE_WITH_TIMEOUT(b->values().size(), 1, 5000);
    QVERIFY(b->exportCsv(csv, &error));
    QFile g(csv);
    QVERIFY(g.open(QIODevice::ReadOnly));
    QCOMPARE(g.readAll(), QByteArray("object,rate\nRO1,42.5\n"));
}

void tst_Omd::marksStaleSeriesAndDrawsThresholds()
{
    // A type expected every second, declared at run time; Pulse2 keeps being written, Pulse1 stops.
    is::TypeInfo pulse(QStringLiteral("Pulse"), QStringLiteral("A value written every 200 ms"));
    pulse.addAttribute(
        is::AttributeInfo(QStringLiteral("load"), is::BasicType::Double, QStringLiteral("Load")));
    pulse.setExpectedIntervalS(1);
    QVERIFY(m_dict->declareTypesSync(QStringLiteral("DAQ"), {pulse}).isOk());
    int step = 0;
    bool firstWrites = true;
    const auto write = [&](const QString &name, double v) {
        is::Object o = is::Object::create(m_dict->types(), QStringLiteral("Pulse"));
        o.set(QStringLiteral("load"), v);
        m_dict->update(name, o);
    };
    QTimer writer;
    connect(&writer, &QTimer::timeout, this, [&] {
        ++step;
        if (firstWrites)
            write(QStringLiteral("DAQ.Pulse1"), 1.2 + 0.3 * std::sin(step / 3.0));
        write(QStringLiteral("DAQ.Pulse2"), 0.8 + 0.2 * std::cos(step / 4.0));
    });
    write(QStringLiteral("DAQ.Pulse1"), 1.2);
    write(QStringLiteral("DAQ.Pulse2"), 0.8);
    writer.start(200);

    ChartSpec ts;
    ts.title = QStringLiteral("Load");
    ts.series << SeriesSpec{QStringLiteral("DAQ.Pulse1"), QStringLiteral("load"), QStringLiteral("Pulse1")}
              << SeriesSpec{QStringLiteral("DAQ.Pulse2"), QStringLiteral("load"), QStringLiteral("Pulse2")};
    ts.thresholds << Threshold{2.0, QStringLiteral("load too high"), QStringLiteral("error")}
                  << Threshold{0.5, {}, QStringLiteral("warning")};
    ChartSpec bar;
    bar.kind = ChartSpec::Kind::Bar;
    bar.title = QStringLiteral("Load per pulse");
    bar.server = QStringLiteral("DAQ");
    bar.regex = QStringLiteral("Pulse.*");
    bar.type = QStringLiteral("Pulse");
    bar.attribute = QStringLiteral("load");
    bar.thresholds << Threshold{2.0, QStringLiteral("load too high"), QStringLiteral("error")};
    Layout l;
    l.windowSeconds = 60;
    l.charts << ts << bar;
    m_window->applyLayout(l);
    TimeSeriesChart *chart = m_window->timeSeries(0);
    BarChart *bars = m_window->barChart(1);
    QVERIFY(chart && bars);

    // The threshold lines: dashed, in their severity's colour, named, across the plot.
    QCOMPARE(chart->thresholdLines().size(), 2);
    QLineSeries *high = chart->thresholdLines().first();
    QCOMPARE(high->name(), QStringLiteral("load too high"));
    QCOMPARE(high->pen().style(), Qt::DashLine);
    QCOMPARE(high->pen().color(), QColor(210, 30, 30));
    QCOMPARE(high->count(), 2);
    QCOMPARE(high->at(0).y(), 2.0);
    QCOMPARE(high->at(1).y(), 2.0);
    QCOMPARE(chart->thresholdLines().at(1)->name(), QStringLiteral("warning 0.5"));
    QCOMPARE(bars->thresholdLines().size(), 1);
    QTRY_VERIFY_WITH_TIMEOUT(chart->points(0).size() > 3 && chart->points(1).size() > 3, 5000);
    m_window->refresh();
    const auto *y = qobject_cast<QValueAxis *>(chart->chart()->axes(Qt::Vertical).first());
    QVERIFY(y->min() <= 0.5 && y->max() >= 2.0); // autoscale keeps the lines in view
    QVERIFY(!chart->isStale(0) && !chart->isStale(1));

    // Pulse1 is no longer written: after its second, its series is grey and dashed with its age.
    // A history to look at in the picture: ten more writes of each shown.
    const qsizetype shown = chart->points(0).size();
    QTRY_VERIFY_WITH_TIMEOUT(chart->points(0).size() >= shown + 10 && chart->points(1).size() >= shown + 10,
                             10000);
    firstWrites = false;
    QTRY_VERIFY_WITH_TIMEOUT(chart->isStale(0), 10000);
    QVERIFY(!chart->isStale(1));
    QVERIFY2(chart->lineSeries(0)->name().startsWith(QStringLiteral("Pulse1 — stale ")),
             qPrintable(chart->lineSeries(0)->name()));
    QCOMPARE(chart->lineSeries(0)->pen().style(), Qt::DashLine);
    QCOMPARE(chart->lineSeries(1)->name(), QStringLiteral("Pulse2"));
    QCOMPARE(chart->lineSeries(1)->pen().style(), Qt::SolidLine);
    QVERIFY(chart->chart()->title().contains(QLatin1String("stale: Pulse1")));
    QTRY_VERIFY_WITH_TIMEOUT(bars->isStale(QStringLiteral("Pulse1")), 5000);
    QVERIFY(!bars->isStale(QStringLiteral("Pulse2")));
    // The stale part grows in the picture: Pulse2 goes on for seven more writes.
    const qsizetype goneOn = chart->points(1).size();
    QTRY_VERIFY_WITH_TIMEOUT(chart->points(1).size() >= goneOn + 7, 10000);
    QVERIFY(chart->isStale(0));
    m_window->refresh();
    QVERIFY(m_window->grab().save(screenshotPath(QStringLiteral("omd-stale.png"))));

    // Written again: fresh, in its own colour again.
    firstWrites = true;
    QTRY_VERIFY_WITH_TIMEOUT(!chart->isStale(0), 5000);
    QCOMPARE(chart->lineSeries(0)->name(), QStringLiteral("Pulse1"));
    QCOMPARE(chart->lineSeries(0)->pen().style(), Qt::SolidLine);
    QTRY_VERIFY_WITH_TIMEOUT(!bars->isStale(QStringLiteral("Pulse1")), 5000);
    writer.stop();
    m_dict->removeSync(QStringLiteral("DAQ.Pulse1"));
    m_dict->removeSync(QStringLiteral("DAQ.Pulse2"));
}

void tst_Omd::drawsTheThresholdsOfAlarmRules()
{
    QList<is::AlarmRule> rules;
    Status st;
    QVERIFY2(
        (st = is::AlarmRule::parse(QStringLiteral("# the IS server's rules\n"
                                                  "DAQ.RO*.rate < 1000 for 5s -> error \"rate too low\"\n"
                                                  "DAQ.RO*.errors > 0 -> warning \"readout errors\"\n"
                                                  "Other.RO*.rate > 5 -> info \"not this server\"\n"),
                                   &rules))
            .isOk(),
        qPrintable(st.message()));
    m_window->setAlarmRules(rules);
    ChartSpec ts;
    ts.title = QStringLiteral("Rates");
    ts.series << SeriesSpec{QStringLiteral("DAQ.RO1"), QStringLiteral("rate"), {}}
              << SeriesSpec{QStringLiteral("DAQ.RO2"), QStringLiteral("rate"), {}};
    ChartSpec cpu;
    cpu.title = QStringLiteral("CPU");
    cpu.series << SeriesSpec{QStringLiteral("DAQ.RO1"), QStringLiteral("cpuLoad"), {}};
    ChartSpec bar;
    bar.kind = ChartSpec::Kind::Bar;
    bar.title = QStringLiteral("Errors");
    bar.server = QStringLiteral("DAQ");
    bar.regex = QStringLiteral("RO.*");
    bar.attribute = QStringLiteral("errors");
    Layout l;
    l.charts << ts << cpu << bar;
    m_window->applyLayout(l);
    // One line per rule however many series it is about, named by its text and condition.
    QCOMPARE(m_window->chart(0)->ruleThresholdLines().size(), 1);
    QLineSeries *low = m_window->chart(0)->ruleThresholdLines().first();
    QCOMPARE(low->name(), QStringLiteral("rate too low (< 1000)"));
    QCOMPARE(low->at(0).y(), 1000.0);
    QCOMPARE(low->pen().color(), QColor(210, 30, 30));
    QVERIFY(m_window->chart(1)->ruleThresholdLines().isEmpty()); // no rule about cpuLoad
    QCOMPARE(m_window->chart(2)->ruleThresholdLines().size(), 1);
    QCOMPARE(m_window->chart(2)->ruleThresholdLines().first()->name(),
             QStringLiteral("readout errors (> 0)"));
    // A series added later brings its rule's line.
    m_window->addSeries(1, SeriesSpec{QStringLiteral("DAQ.RO3"), QStringLiteral("errors"), {}});
    QCOMPARE(m_window->chart(1)->ruleThresholdLines().size(), 1);
    // They are not part of the layout: saving it does not copy the rules into it.
    l.charts[1].series << SeriesSpec{QStringLiteral("DAQ.RO3"), QStringLiteral("errors"), {}};
    QVERIFY(m_window->currentLayout() == l);
    m_window->setAlarmRules({});
    QVERIFY(m_window->chart(0)->ruleThresholdLines().isEmpty());

    // On the command line: a file that does not parse is refused with its line.
    const QString bad = m_tmp.filePath(QStringLiteral("bad.rules"));
    QFile f(bad);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("DAQ.RO*.rate < 1000 -> error \"ok\"\nDAQ.RO*.rate <> 3 -> error \"bad\"\n");
    f.close();
    QByteArray err;
    QCOMPARE(m_fx->run(QStringLiteral("dialog-omd"), {QStringLiteral("--alarms"), bad}, nullptr, &err), 1);
    const QByteArray reason = err.trimmed().split('\n').last();
    QVERIFY2(reason.startsWith("dialog-omd: --alarms ") && reason.contains("bad.rules:2: not a rule"), err);
}

void tst_Omd::screenshot()
{
    // A short run of a demo-like system: three readouts and four front ends publishing.
    QString error;
    Layout l;
    QVERIFY(Layout::load(QStringLiteral(DIALOG_SOURCE_DIR "/resources/omd/demo.json"), &l, &error));
    l.windowSeconds = 60;
    for (ChartSpec &c : l.charts)
        if (c.kind == ChartSpec::Kind::TimeSeries && c.series.first().object == QLatin1String("DAQ.RO1") &&
            c.series.size() == 2 && c.series.first().attribute == QLatin1String("rate"))
            c.series << SeriesSpec{QStringLiteral("DAQ.RO3"), QStringLiteral("rate"), QStringLiteral("RO3")};
    for (const QString &n :
         {QStringLiteral("DAQ.Slave1"), QStringLiteral("DAQ.Slave2"), QStringLiteral("DAQ.Slave3"),
          QStringLiteral("DAQ.Slave4"), QStringLiteral("DAQ.Slave6"), QStringLiteral("DAQ.SlaveFE"),
          QStringLiteral("DAQ.Hist1"), QStringLiteral("DAQ.Pause1")})
        m_dict->removeSync(n);
    quint64 events[4] = {};
    for (int step = 0; step < 191; ++step) { // 19 s, ends in a spill
        const double t = step * 0.1;
        for (int r = 1; r <= 3; ++r) {
            const double rate =
                step % 25 < 18 ? 95000 + 4000 * r + 3000 * std::sin(t + r) : 800 * r; // spills
            events[r] += quint64(rate * 0.1);
            is::Object o = readout(rate, events[r], float(30 + 10 * r + 5 * std::sin(t * 0.7 + r)));
            o.set(QStringLiteral("errors"), quint32(step / (30 + 15 * r)));
            m_dict->update(QStringLiteral("DAQ.RO%1").arg(r), o);
        }
        for (int f = 1; f <= 4; ++f) {
            is::Object fe = is::Object::create(m_dict->types(), QStringLiteral("FrontEndStatus"));
            fe.set(QStringLiteral("temperature"),
                   float(38 + 2.5 * f + 0.8 * std::sin(t * 0.5 + f) + 0.02 * step));
            fe.set(QStringLiteral("cpuLoad"), float(3 + f));
            m_dict->update(QStringLiteral("DAQ.FE%1").arg(f), fe);
        }
        letTimePass(100, "the charts' time axis: the steps are 0.1 s apart");
    }
    // Opened after the run: every time series starts from the IS server's history.
    m_window->applyLayout(l);
    QTRY_COMPARE_WITH_TIMEOUT(m_window->barChart(1)->categories().size(), 3, 5000);
    for (int c = 0; c < m_window->chartCount(); ++c)
        if (TimeSeriesChart *ts = m_window->timeSeries(c);
            ts && ts->spec().series.first().object != QLatin1String("DAQ.Statistics")) // updated at 1 Hz
            QTRY_VERIFY_WITH_TIMEOUT(ts->points(0).size() >= 150, 5000);
    // The last updates painted: every chart's next paint after the refresh (a picture, not a check).
    std::vector<std::unique_ptr<PaintCount>> painted;
    for (int c = 0; c < m_window->chartCount(); ++c)
        painted.push_back(std::make_unique<PaintCount>(m_window->chart(c)->viewport()));
    m_window->refresh();
    for (int c = 0; c < m_window->chartCount(); ++c)
        m_window->chart(c)->viewport()->update();
    QTRY_VERIFY_WITH_TIMEOUT(
        std::all_of(painted.begin(), painted.end(), [](const auto &p) { return p->paints > 0; }), 5000);
    const QString path = screenshotPath(QStringLiteral("omd.png"));
    QVERIFY(m_window->grab().save(path));
    QVERIFY(QFileInfo(path).size() > 10000);
}

QTEST_MAIN(tst_Omd)
#include "tst_omd.moc"
