// The IS monitor against a real Control Server and IS server on loopback, offscreen.
#include "statuscheck.h"
#include "guiprobe.h"
#include "histogramview.h"
#include "ismonitorwindow.h"
#include "processfixture.h"
#include "widgetscreenshot.h"

#include "dialog/is/dictionary.h"

#include <QBrush>
#include <QClipboard>
#include <QComboBox>
#include <QJsonDocument>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QPushButton>
#include <QRegularExpression>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QTreeView>
#include <QtTest>
#include <cmath>

using namespace dialog;
using namespace dialog::test;
using namespace dialog::ismonitor;

namespace {
// The age an Updated cell names ("12:00:00.000 · stale 3 s"), in seconds; -1 if it names none.
int staleAgeS(const QString &updated)
{
    const QRegularExpressionMatch m =
        QRegularExpression(QStringLiteral(" · stale (\\d+) (s|min)")).match(updated);
    if (!m.hasMatch())
        return -1;
    return m.captured(1).toInt() * (m.captured(2) == QLatin1String("min") ? 60 : 1);
}

// The digits of a shown number ("2,504,711" gives "2504711").
QString digits(const QString &shown)
{
    QString out;
    for (QChar c : shown)
        if (c.isDigit())
            out += c;
    return out;
}
} // namespace

class tst_IsMonitor : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void listsServersAndObjects();
    void filtersByRegexAndType();
    void showsAttributesWithMetaInformation();
    void reactsToCreateUpdateRemove();
    void removeAsksForConfirmation();
    void copiesNameAndValue();
    void omdCommandLine();
    void drawsTwoDimensionalHistograms();
    void showsWhyAHistogramIsNotDrawn();
    void plotsTheHistoryOfANumericAttribute();
    void greysStaleObjectsAndShowsTheirAge();
    void manyObjects();
    void staysResponsiveWith10000Objects();
    void screenshot();

private:
    /// A ReadoutStats value with a Gaussian-ish event-size histogram.
    is::Object readout(int index, quint64 events);
    void put(const QString &name, const is::Object &o);
    int shownRowOf(const QString &object) const;

    std::unique_ptr<ProcessFixture> m_fx;
    std::unique_ptr<Client> m_feeder;
    std::unique_ptr<is::Dictionary> m_dict;
    std::unique_ptr<IsMonitorWindow> m_window;
};

void tst_IsMonitor::initTestCase()
{
    m_fx = std::make_unique<ProcessFixture>();
    QVERIFY(m_fx->startControlServer());
    const QStringList common{QStringLiteral("--types"),
                             QStringLiteral(DIALOG_SOURCE_DIR "/resources/is-types"),
                             QStringLiteral("--heartbeat-ms"), QStringLiteral("200")};
    m_fx->start(QStringLiteral("dialog-isserver"),
                QStringList{QStringLiteral("--name"), QStringLiteral("DAQ")} + common);
    m_fx->start(QStringLiteral("dialog-isserver"),
                QStringList{QStringLiteral("--name"), QStringLiteral("RunParams")} + common);
    m_feeder = std::make_unique<Client>(m_fx->clientOptions(QStringLiteral("test.feeder")));
    m_feeder->start();
    m_dict = std::make_unique<is::Dictionary>(m_feeder.get());
    QStringList servers;
    QTRY_VERIFY_WITH_TIMEOUT(m_dict->serversSync(&servers).isOk() &&
                                 servers.contains(QStringLiteral("DAQ")) &&
                                 servers.contains(QStringLiteral("RunParams")),
                             10000);
    QVERIFY(m_dict->fetchTypesSync(QStringLiteral("DAQ")).isOk());
    for (int i = 1; i <= 3; ++i)
        put(QStringLiteral("DAQ.RO%1").arg(i), readout(i, 1000 * i));
    is::Object fe = is::Object::create(m_dict->types(), QStringLiteral("FrontEndStatus"));
    QVERIFY_OK(fe.set(QStringLiteral("temperature"), 41.5f));
    QVERIFY_OK(fe.set(QStringLiteral("host"), QStringLiteral("pccofe01")));
    put(QStringLiteral("DAQ.FE1"), fe);
    is::Object run = is::Object::create(m_dict->types(), QStringLiteral("RunInfo"));
    QVERIFY_OK(run.set(QStringLiteral("runNumber"), quint32(4242)));
    QVERIFY_OK(run.set(QStringLiteral("runType"), QStringLiteral("Physics")));
    put(QStringLiteral("DAQ.Run"), run);

    m_window =
        std::make_unique<IsMonitorWindow>(m_fx->clientOptions(QStringLiteral("DIALOG.ISMonitor.test")));
    m_window->show();
    QVERIFY(QTest::qWaitForWindowExposed(m_window.get()));
}

void tst_IsMonitor::cleanupTestCase()
{
    m_window.reset();
    m_dict.reset();
    m_feeder.reset();
    m_fx.reset();
}

is::Object tst_IsMonitor::readout(int index, quint64 events)
{
    is::Object o = is::Object::create(m_dict->types(), QStringLiteral("ReadoutStats"));
    o.set(QStringLiteral("host"), QStringLiteral("pccorc%1").arg(index, 2, 10, QLatin1Char('0')));
    o.set(QStringLiteral("pid"), qint64(4000 + index));
    o.set(QStringLiteral("updateTime"), is::Time::currentTime());
    o.set(QStringLiteral("cpuLoad"), float(20 + 7 * index));
    o.set(QStringLiteral("memoryBytes"), quint64(512) << 20);
    o.set(QStringLiteral("events"), events);
    o.set(QStringLiteral("bytes"), events * 2048);
    o.set(QStringLiteral("rate"), 9000.0 + 500 * index);
    o.set(QStringLiteral("queueDepths"), QList<quint32>{1, 2, 3, 4});
    o.set(QStringLiteral("errorMessages"), QStringList{QStringLiteral("link 3: CRC error")});
    is::Object h = is::Object::create(m_dict->types(), QStringLiteral("Histogram1D"));
    h.set(QStringLiteral("title"), QStringLiteral("Event size"));
    h.set(QStringLiteral("xLow"), 0.0);
    h.set(QStringLiteral("xHigh"), 4096.0);
    h.set(QStringLiteral("bins"), quint32(40));
    QList<double> c;
    for (int i = 0; i < 40; ++i)
        c << std::round(1000 * std::exp(-0.5 * std::pow((i - 16 - index) / 5.0, 2)));
    h.set(QStringLiteral("contents"), c);
    h.set(QStringLiteral("entries"), events);
    o.set(QStringLiteral("eventSize"), h);
    return o;
}

void tst_IsMonitor::put(const QString &name, const is::Object &o)
{
    const is::Status s = m_dict->updateSync(name, o);
    QVERIFY2(s.isOk(), qPrintable(s.toString()));
}

int tst_IsMonitor::shownRowOf(const QString &object) const
{
    const QSortFilterProxyModel *p = m_window->objectProxy();
    for (int r = 0; r < p->rowCount(); ++r)
        if (p->index(r, ObjectModel::Name).data().toString() == object)
            return r;
    return -1;
}

void tst_IsMonitor::listsServersAndObjects()
{
    QTRY_VERIFY_WITH_TIMEOUT(m_window->servers().contains(QStringLiteral("DAQ")) &&
                                 m_window->servers().contains(QStringLiteral("RunParams")),
                             10000);
    m_window->selectServer(QStringLiteral("DAQ"));
    QTRY_VERIFY_WITH_TIMEOUT(m_window->isLoaded(), 10000);
    auto *model = m_window->objectModel();
    // Three readouts, a front end, the run and the server's own statistics.
    QCOMPARE(model->rowCount(), 6);
    const int ro1 = model->rowOf(QStringLiteral("RO1"));
    QVERIFY(ro1 >= 0);
    QCOMPARE(model->row(ro1).type, QStringLiteral("ReadoutStats"));
    QCOMPARE(model->row(model->rowOf(QStringLiteral("Statistics"))).type,
             QStringLiteral("ISServerStatistics"));
    QCOMPARE(shownRowOf(QStringLiteral("FE1")), 0); // sorted by name
    // Statistics is updated every second by the server: its row follows.
    const quint64 before = model->row(model->rowOf(QStringLiteral("Statistics"))).updates;
    QTRY_VERIFY_WITH_TIMEOUT(model->row(model->rowOf(QStringLiteral("Statistics"))).updates > before, 5000);
}

void tst_IsMonitor::filtersByRegexAndType()
{
    auto *model = m_window->objectModel();
    m_window->setFilter(QStringLiteral("RO.*"));
    QTRY_VERIFY_WITH_TIMEOUT(m_window->isLoaded(), 5000);
    QCOMPARE(model->rowCount(), 3);
    m_window->setFilter(QStringLiteral("RO"));
    QTRY_VERIFY_WITH_TIMEOUT(m_window->isLoaded(), 5000);
    QCOMPARE(model->rowCount(), 0); // the expression matches whole names
    m_window->setFilter({}, QStringLiteral("ProcessStats"), true);
    QTRY_VERIFY_WITH_TIMEOUT(m_window->isLoaded(), 5000);
    QCOMPARE(model->rowCount(), 4); // ReadoutStats and FrontEndStatus derive from ProcessStats
    QVERIFY(model->rowOf(QStringLiteral("FE1")) >= 0);
    m_window->setFilter({}, QStringLiteral("ProcessStats"), false);
    QTRY_VERIFY_WITH_TIMEOUT(m_window->isLoaded(), 5000);
    QCOMPARE(model->rowCount(), 0);
    m_window->setFilter(QStringLiteral("RO[12]"), QStringLiteral("ReadoutStats"), false);
    QTRY_VERIFY_WITH_TIMEOUT(m_window->isLoaded(), 5000);
    QCOMPARE(model->rowCount(), 2);
    // The type list comes from the server's meta-information.
    auto *types = m_window->findChild<QComboBox *>(QStringLiteral("type"));
    QVERIFY(types->findText(QStringLiteral("Histogram1D")) > 0);
    QVERIFY(types->findText(QStringLiteral("ISServerStatistics")) > 0);
    // A bad expression is refused locally, the table stays empty.
    m_window->setFilter(QStringLiteral("RO("));
    QVERIFY(!m_window->isLoaded());
    QCOMPARE(model->rowCount(), 0);
    QVERIFY(!m_window->findChild<QLineEdit *>(QStringLiteral("regex"))->styleSheet().isEmpty());
    m_window->setFilter({});
    QTRY_VERIFY_WITH_TIMEOUT(m_window->isLoaded(), 5000);
    QCOMPARE(model->rowCount(), 6);
}

void tst_IsMonitor::showsAttributesWithMetaInformation()
{
    m_window->selectObject(QStringLiteral("RO2"));
    auto *attrs = m_window->attributeModel();
    QTRY_VERIFY_WITH_TIMEOUT(attrs->find(QStringLiteral("events")).isValid(), 5000);
    const QModelIndex events = attrs->find(QStringLiteral("events"));
    QCOMPARE(events.siblingAtColumn(AttributeModel::Type).data().toString(), QStringLiteral("u64"));
    QCOMPARE(events.siblingAtColumn(AttributeModel::Value).data().toString(), QStringLiteral("2000"));
    QCOMPARE(events.siblingAtColumn(AttributeModel::Description).data().toString(),
             QStringLiteral("Events read out since start of run"));
    // Inherited attributes first, with their own descriptions.
    QCOMPARE(attrs->index(0, AttributeModel::Name).data().toString(), QStringLiteral("host"));
    QCOMPARE(attrs->find(QStringLiteral("host")).siblingAtColumn(AttributeModel::Value).data().toString(),
             QStringLiteral("pccorc02"));
    const QModelIndex queues = attrs->find(QStringLiteral("queueDepths"));
    QCOMPARE(queues.siblingAtColumn(AttributeModel::Type).data().toString(), QStringLiteral("u32[]"));
    QCOMPARE(queues.siblingAtColumn(AttributeModel::Value).data().toString(),
             QStringLiteral("[4] 1, 2, 3, 4"));
    QCOMPARE(attrs->rowCount(queues), 0); // vectors of numbers are compact, not expanded
    // The nested histogram is expandable and drawn.
    const QModelIndex hist = attrs->find(QStringLiteral("eventSize"));
    QCOMPARE(hist.siblingAtColumn(AttributeModel::Type).data().toString(), QStringLiteral("Histogram1D"));
    QCOMPARE(attrs->rowCount(hist), 6);
    QCOMPARE(attrs->find(QStringLiteral("eventSize.bins"))
                 .siblingAtColumn(AttributeModel::Value)
                 .data()
                 .toString(),
             QStringLiteral("40"));
    QVERIFY(m_window->attributeView()->isExpanded(hist));
    QVERIFY(m_window->histogramView()->isVisible());
    QCOMPARE(m_window->histogramView()->pointCount(), 40);
    QCOMPARE(m_window->histogramView()->options().label, QStringLiteral("eventSize"));
    QCOMPARE(m_window->histogramView()->histogram().title, QStringLiteral("Event size"));
    QVERIFY(m_window->findChild<QLabel *>(QStringLiteral("objectTitle"))
                ->text()
                .contains(QStringLiteral("Readout statistics of one readout process")));
    {
        HistogramView *view = m_window->histogramView();
        const QImage linear = view->grab().toImage();
        QVERIFY(pixelsNear(linear, presenter::HistogramPainter::barColor()) > 500);
        QVERIFY(saveScreenshot(view, QStringLiteral("ismonitor-histogram.png")));
        view->setLogScale(true);
        QVERIFY(view->options().logY);
        QVERIFY(view->grab().toImage() != linear);
        view->setLogScale(false);
        QCOMPARE(view->grab().toImage(), linear);
    }
    // An object without histogram hides the chart.
    m_window->selectObject(QStringLiteral("Run"));
    QTRY_VERIFY_WITH_TIMEOUT(attrs->find(QStringLiteral("runNumber")).isValid(), 5000);
    QCOMPARE(
        attrs->find(QStringLiteral("runNumber")).siblingAtColumn(AttributeModel::Value).data().toString(),
        QStringLiteral("4242"));
    QVERIFY(!m_window->histogramView()->isVisible());
}

void tst_IsMonitor::reactsToCreateUpdateRemove()
{
    auto *model = m_window->objectModel();
    m_window->selectObject(QStringLiteral("RO1"));
    auto *attrs = m_window->attributeModel();
    QTRY_VERIFY_WITH_TIMEOUT(attrs->find(QStringLiteral("events")).isValid(), 5000);
    const quint64 updates = model->row(model->rowOf(QStringLiteral("RO1"))).updates;
    m_window->attributeView()->expand(attrs->find(QStringLiteral("eventSize")));

    // Created
    put(QStringLiteral("DAQ.RO4"), readout(4, 7));
    QTRY_VERIFY_WITH_TIMEOUT(model->rowOf(QStringLiteral("RO4")) >= 0, 5000);
    QCOMPARE(model->row(model->rowOf(QStringLiteral("RO4"))).type, QStringLiteral("ReadoutStats"));
    // Updated: the row and the value shown follow, in place.
    put(QStringLiteral("DAQ.RO1"), readout(1, 123456));
    QTRY_COMPARE_WITH_TIMEOUT(
        attrs->find(QStringLiteral("events")).siblingAtColumn(AttributeModel::Value).data().toString(),
        QStringLiteral("123456"), 5000);
    QTRY_VERIFY_WITH_TIMEOUT(model->row(model->rowOf(QStringLiteral("RO1"))).updates > updates, 5000);
    QVERIFY(m_window->attributeView()->isExpanded(attrs->find(QStringLiteral("eventSize"))));
    // Removed by someone else
    QCOMPARE(m_fx->run(QStringLiteral("dialogctl"),
                       {QStringLiteral("is"), QStringLiteral("rm"), QStringLiteral("DAQ.RO4")}),
             0);
    QTRY_COMPARE_WITH_TIMEOUT(model->rowOf(QStringLiteral("RO4")), -1, 5000);
    QCOMPARE(shownRowOf(QStringLiteral("RO4")), -1);
}

void tst_IsMonitor::removeAsksForConfirmation()
{
    put(QStringLiteral("DAQ.Obsolete"), readout(9, 1));
    auto *model = m_window->objectModel();
    QTRY_VERIFY_WITH_TIMEOUT(model->rowOf(QStringLiteral("Obsolete")) >= 0, 5000);
    m_window->selectObject(QStringLiteral("Obsolete"));
    QCOMPARE(m_window->selectedObject(), QStringLiteral("DAQ.Obsolete"));
    QSignalSpy finished(m_window.get(), &IsMonitorWindow::removeFinished);
    // Answer "No" first: nothing happens.
    auto answer = [](QMessageBox::StandardButton b) {
        QTimer::singleShot(200, [b] {
            auto *box = qobject_cast<QMessageBox *>(QApplication::activeModalWidget());
            QVERIFY(box);
            QVERIFY(box->text().contains(QStringLiteral("DAQ.Obsolete")));
            box->button(b)->click();
        });
    };
    answer(QMessageBox::No);
    m_window->findChild<QPushButton *>(QStringLiteral("remove"))->click();
    QVERIFY(expectNothingFor(
        300, [&] { return finished.size() > 0 || model->rowOf(QStringLiteral("Obsolete")) < 0; },
        "a removal after the operator said no"));
    answer(QMessageBox::Yes);
    m_window->findChild<QPushButton *>(QStringLiteral("remove"))->click();
    QTRY_COMPARE_WITH_TIMEOUT(finished.size(), 1, 5000);
    QCOMPARE(finished.at(0).at(1).toBool(), true);
    QTRY_COMPARE_WITH_TIMEOUT(model->rowOf(QStringLiteral("Obsolete")), -1, 5000);
    is::Entry e;
    QCOMPARE(m_dict->getSync(QStringLiteral("DAQ.Obsolete"), &e).code(), is::Status::Code::NotFound);
}

void tst_IsMonitor::copiesNameAndValue()
{
    m_window->selectObject(QStringLiteral("RO3"));
    QTRY_VERIFY_WITH_TIMEOUT(m_window->attributeModel()->find(QStringLiteral("events")).isValid(), 5000);
    m_window->findChild<QPushButton *>(QStringLiteral("copyName"))->click();
    QCOMPARE(QApplication::clipboard()->text(), QStringLiteral("DAQ.RO3"));
    m_window->findChild<QPushButton *>(QStringLiteral("copyValue"))->click();
    const QJsonObject v = QJsonDocument::fromJson(QApplication::clipboard()->text().toUtf8()).object();
    QCOMPARE(v.value(QStringLiteral("events")).toInteger(), 3000);
    QCOMPARE(v.value(QStringLiteral("eventSize")).toObject().value(QStringLiteral("bins")).toInt(), 40);
}

void tst_IsMonitor::omdCommandLine()
{
    QCOMPARE(
        m_window->omdArguments(QStringLiteral("DAQ.RO1"), QStringLiteral("rate")),
        (QStringList{QStringLiteral("--object"), QStringLiteral("DAQ.RO1"), QStringLiteral("--attribute"),
                     QStringLiteral("rate"), QStringLiteral("--control-server"), m_fx->controlServer()}));
    QCOMPARE(m_window->omdArguments(QStringLiteral("DAQ.RO1"), {}).mid(0, 3),
             (QStringList{QStringLiteral("--object"), QStringLiteral("DAQ.RO1"),
                          QStringLiteral("--control-server")}));
}

void tst_IsMonitor::drawsTwoDimensionalHistograms()
{
    is::Object h = is::Object::create(m_dict->types(), QStringLiteral("Histogram2D"));
    h.set(QStringLiteral("title"), QStringLiteral("Hit map"));
    h.set(QStringLiteral("xLow"), 0.0);
    h.set(QStringLiteral("xHigh"), 8.0);
    h.set(QStringLiteral("xBins"), quint32(8));
    h.set(QStringLiteral("yLow"), 0.0);
    h.set(QStringLiteral("yHigh"), 4.0);
    h.set(QStringLiteral("yBins"), quint32(4));
    QList<double> c(32, 0.0);
    for (int i = 0; i < 20; ++i)
        c[i] = i + 1; // 20 non-empty cells
    h.set(QStringLiteral("contents"), c);
    put(QStringLiteral("DAQ.HitMap"), h);
    m_window->selectObject(QStringLiteral("HitMap"));
    QTRY_VERIFY_WITH_TIMEOUT(m_window->histogramView()->isVisible(), 5000);
    HistogramView *view = m_window->histogramView();
    QCOMPARE(view->pointCount(), 20);
    QCOMPARE(view->histogram().title, QStringLiteral("Hit map"));
    QCOMPARE(view->histogram().kind, Histogram::Kind::TwoD);
    // The colour map of the one painter: the fullest cell (and the scale's top) and the emptiest.
    const QImage picture = view->grab().toImage();
    QVERIFY(pixelsNear(picture, presenter::HistogramPainter::colourAt(1.0)) > 20);
    QVERIFY(pixelsNear(picture, presenter::HistogramPainter::colourAt(0.0)) > 20);
    // Exactly the picture dialog-presenter and the web IS's dialog-render make of the same value.
    QCOMPARE(picture, presenter::HistogramPainter::render(view->size(), view->histogram(), view->options())
                          .convertToFormat(picture.format()));
    QVERIFY(saveScreenshot(view, QStringLiteral("ismonitor-histogram2d.png")));
    QVERIFY(m_dict->removeSync(QStringLiteral("DAQ.HitMap")).isOk());
    QTRY_COMPARE_WITH_TIMEOUT(m_window->objectModel()->rowOf(QStringLiteral("HitMap")), -1, 5000);
}

void tst_IsMonitor::showsWhyAHistogramIsNotDrawn()
{
    is::Object h = is::Object::create(m_dict->types(), QStringLiteral("Histogram1D"));
    QVERIFY_OK(h.set(QStringLiteral("xHigh"), 8.0));
    QVERIFY_OK(h.set(QStringLiteral("bins"), quint32(4)));
    QVERIFY_OK(h.set(QStringLiteral("contents"), QList<double>{1, 2, 3}));
    put(QStringLiteral("DAQ.Broken"), h);
    m_window->selectObject(QStringLiteral("Broken"));
    HistogramView *view = m_window->histogramView();
    QTRY_VERIFY_WITH_TIMEOUT(view->isVisible() && !view->message().isEmpty(), 5000);
    QVERIFY2(view->message().contains(QLatin1String("3 contents for 4 bins")), qPrintable(view->message()));
    QVERIFY(!view->histogram().isValid());
    QCOMPARE(view->pointCount(), 0);
    QVERIFY(saveScreenshot(view, QStringLiteral("ismonitor-histogram-refused.png")));
    QVERIFY(m_dict->removeSync(QStringLiteral("DAQ.Broken")).isOk());
    QTRY_COMPARE_WITH_TIMEOUT(m_window->objectModel()->rowOf(QStringLiteral("Broken")), -1, 5000);
}

void tst_IsMonitor::plotsTheHistoryOfANumericAttribute()
{
    // Values written before the object is looked at: the plot starts from the server's history.
    for (int i = 0; i < 30; ++i) {
        is::Object o = is::Object::create(m_dict->types(), QStringLiteral("ReadoutStats"));
        o.set<double>(QStringLiteral("rate"), 1000 + 200 * std::sin(i / 4.0));
        put(QStringLiteral("DAQ.Plotted"), o);
    }
    m_window->selectObject(QStringLiteral("Plotted"));
    auto *attrs = m_window->attributeModel();
    QTRY_VERIFY_WITH_TIMEOUT(attrs->find(QStringLiteral("rate")).isValid(), 5000);
    QVERIFY(!m_window->historyPlot()->isVisible());
    m_window->attributeView()->setCurrentIndex(attrs->find(QStringLiteral("rate")));
    QVERIFY(m_window->historyPlot()->isVisible());
    QTRY_COMPARE_WITH_TIMEOUT(m_window->historyPlot()->pointCount(), 30, 5000);
    // Then the live values.
    is::Object o = is::Object::create(m_dict->types(), QStringLiteral("ReadoutStats"));
    o.set<double>(QStringLiteral("rate"), 1500.0);
    put(QStringLiteral("DAQ.Plotted"), o);
    QTRY_COMPARE_WITH_TIMEOUT(m_window->historyPlot()->pointCount(), 31, 5000);
    const QString path = screenshotPath(QStringLiteral("ismonitor-history.png"));
    QVERIFY(m_window->grab().save(path));
    // A string attribute has no plot.
    m_window->attributeView()->setCurrentIndex(attrs->find(QStringLiteral("host")));
    QVERIFY(!m_window->historyPlot()->isVisible());
    QVERIFY(m_dict->removeSync(QStringLiteral("DAQ.Plotted")).isOk());
}

void tst_IsMonitor::greysStaleObjectsAndShowsTheirAge()
{
    // A type expected every second, declared at run time on the server.
    is::TypeInfo beat(QStringLiteral("Heartbeat"), QStringLiteral("A process's sign of life"));
    beat.addAttribute(
        is::AttributeInfo(QStringLiteral("beats"), is::BasicType::U64, QStringLiteral("Beats sent")));
    beat.addAttribute(
        is::AttributeInfo(QStringLiteral("load"), is::BasicType::Double, QStringLiteral("Load")));
    beat.setExpectedIntervalS(1);
    QVERIFY(m_dict->declareTypesSync(QStringLiteral("DAQ"), {beat}).isOk());
    const auto write = [this](quint64 n) {
        is::Object o = is::Object::create(m_dict->types(), QStringLiteral("Heartbeat"));
        o.set(QStringLiteral("beats"), n);
        o.set(QStringLiteral("load"), 0.25 * double(n));
        put(QStringLiteral("DAQ.Beat"), o);
    };
    write(1);
    m_window->setFilter({});
    QTRY_VERIFY_WITH_TIMEOUT(m_window->isLoaded(), 5000);
    m_window->selectObject(QStringLiteral("Beat"));
    auto *attrs = m_window->attributeModel();
    QTRY_VERIFY_WITH_TIMEOUT(attrs->find(QStringLiteral("beats")).isValid(), 5000);
    ObjectModel *model = m_window->objectModel();
    const auto staleShown = [&] {
        const int r = model->rowOf(QStringLiteral("Beat"));
        return r >= 0 && model->index(r, ObjectModel::Name).data(ObjectModel::StaleRole).toBool();
    };
    // Not written for more than its second: greyed, its age shown, the values greyed and explained.
    QTRY_VERIFY_WITH_TIMEOUT(staleShown(), 10000);
    const int r = model->rowOf(QStringLiteral("Beat"));
    QCOMPARE(model->index(r, ObjectModel::Name).data(Qt::ForegroundRole).value<QBrush>().color(),
             QColor(Qt::gray));
    QVERIFY2(model->index(r, ObjectModel::Updated).data().toString().contains(QStringLiteral(" · stale ")),
             qPrintable(model->index(r, ObjectModel::Updated).data().toString()));
    QVERIFY(model->index(r, ObjectModel::Updated)
                .data(Qt::ToolTipRole)
                .toString()
                .contains(QLatin1String("not updated for")));
    QTRY_VERIFY_WITH_TIMEOUT(m_window->staleLabel()->isVisible(), 5000);
    QVERIFY2(m_window->staleLabel()->text().contains(QLatin1String("not updated for")),
             qPrintable(m_window->staleLabel()->text()));
    QVERIFY(attrs->isStale());
    QCOMPARE(attrs->find(QStringLiteral("beats"))
                 .siblingAtColumn(AttributeModel::Value)
                 .data(Qt::ForegroundRole)
                 .value<QBrush>()
                 .color(),
             QColor(Qt::gray));
    // Other objects of the same server without an interval stay as they are.
    const int run = model->rowOf(QStringLiteral("Run"));
    QVERIFY(run >= 0);
    QVERIFY(!model->index(run, ObjectModel::Name).data(ObjectModel::StaleRole).toBool());
    QVERIFY(QRegularExpression(QStringLiteral("^\\d\\d:\\d\\d:\\d\\d\\.\\d{3}$"))
                .match(model->index(run, ObjectModel::Updated).data().toString())
                .hasMatch());
    // The picture shows an age that has grown past the object's interval.
    QTRY_VERIFY_WITH_TIMEOUT(
        staleAgeS(
            model->index(model->rowOf(QStringLiteral("Beat")), ObjectModel::Updated).data().toString()) >= 2,
        5000);
    QVERIFY(saveScreenshot(m_window.get(), QStringLiteral("ismonitor-stale.png")));

    // Written again: fresh at once (the update itself says so), values normal.
    write(2);
    QTRY_VERIFY_WITH_TIMEOUT(!staleShown(), 5000);
    QTRY_VERIFY_WITH_TIMEOUT(!m_window->staleLabel()->isVisible(), 5000);
    QVERIFY(!attrs->isStale());
    QVERIFY(m_dict->removeSync(QStringLiteral("DAQ.Beat")).isOk());
    QTRY_COMPARE_WITH_TIMEOUT(model->rowOf(QStringLiteral("Beat")), -1, 5000);
}

void tst_IsMonitor::manyObjects()
{
    // Thousands of objects created in a burst reach the table through a few model resets.
#if defined(__SANITIZE_THREAD__)
    QSKIP("a load figure: under ThreadSanitizer (5-15 times slower) the burst's writes time out");
#endif
    constexpr int N = 10000; // the figure
    int answered = 0, failed = 0;
    is::Object o = is::Object::create(m_dict->types(), QStringLiteral("ProcessStats"));
    for (int i = 0; i < N; ++i)
        m_dict->update(QStringLiteral("RunParams.Node%1").arg(i, 5, 10, QLatin1Char('0')), o,
                       is::Dictionary::UpdateMode::CreateIfMissing, [&](const is::Status &s) {
                           ++answered;
                           failed += s.isOk() ? 0 : 1;
                       });
    m_window->selectServer(QStringLiteral("RunParams"));
    QTRY_VERIFY_WITH_TIMEOUT(answered == N, 60000);
    QCOMPARE(failed, 0);
    QTRY_COMPARE_WITH_TIMEOUT(m_window->objectModel()->rowCount(), N + 1, 10000); // and Statistics
    QCOMPARE(shownRowOf(QStringLiteral("Node00000")), 0);
    m_window->selectServer(QStringLiteral("DAQ"));
    QTRY_VERIFY_WITH_TIMEOUT(m_window->isLoaded(), 5000);
}

void tst_IsMonitor::staysResponsiveWith10000Objects()
{
    // Another process creates 10,000 objects in a burst, then updates them 2,000 times a second; the
    // monitor lists them live and shows one. It handles the load in batches: its event loop keeps
    // turning and the object table repaints at most ~10 times a second. The longest stall is printed
    // for the README, not asserted.
#if defined(__SANITIZE_THREAD__)
    QSKIP("a load figure: under ThreadSanitizer (5-15 times slower) neither side keeps the pace");
#endif
    m_window->selectServer(QStringLiteral("RunParams"));
    QTRY_VERIFY_WITH_TIMEOUT(m_window->isLoaded(), 10000);
    const int before = m_window->objectModel()->rowCount();
    GuiProbe probe;
    probe.watchPaints(m_window->objectView()->viewport());
    probe.watchModel(m_window->objectModel());
    QProcess *load = m_fx->start(QStringLiteral("guiload"), {QStringLiteral("objects"), QStringLiteral("RunParams"),
                                                             QStringLiteral("10000"), QStringLiteral("2000")});
    probe.start(); // after the fork: starting a child is the test's work, not the GUI's
    QTRY_VERIFY_WITH_TIMEOUT(load->canReadLine() || load->state() != QProcess::Running, 60000);
    QCOMPARE(load->readLine().trimmed(), QByteArray("ready 0 failed"));
    QTRY_COMPARE_WITH_TIMEOUT(m_window->objectModel()->rowCount(), before + 10000, 10000);
    m_window->selectObject(QStringLiteral("Load00000"));
    const quint64 updates = m_window->objectModel()->row(m_window->objectModel()->rowOf(QStringLiteral("Load09999"))).updates;
    // Updates keep coming (every object about once in five seconds) and reach the table.
    QTRY_VERIFY_WITH_TIMEOUT(
        m_window->objectModel()->row(m_window->objectModel()->rowOf(QStringLiteral("Load09999"))).updates >
                updates &&
            m_window->objectModel()
                    ->row(m_window->objectModel()->rowOf(QStringLiteral("Load00001")))
                    .updates > 1,
        60000);
    probe.stop();
    qInfo("10,000 objects: longest GUI stall %lld ms; object table %.1f repaints/s, %.1f model signals/s over %.1f s",
          probe.maxStallMs(), probe.paintsPerSecond(), probe.modelChangesPerSecond(), probe.seconds());
    QVERIFY2(probe.ticks() >= 10, qPrintable(QString::number(probe.ticks()))); // the loop kept turning
    QVERIFY2(probe.paints() <= probe.seconds() * 10 + 5, qPrintable(QString::number(probe.paints())));
    QVERIFY(probe.paints() > 0);
    load->terminate();
    QVERIFY(load->waitForFinished(5000));
    m_window->selectServer(QStringLiteral("DAQ"));
    QTRY_VERIFY_WITH_TIMEOUT(m_window->isLoaded(), 5000);
}

void tst_IsMonitor::screenshot()
{
    m_window->setFilter({});
    QTRY_VERIFY_WITH_TIMEOUT(m_window->isLoaded(), 5000);
    for (int i = 1; i <= 3; ++i)
        put(QStringLiteral("DAQ.RO%1").arg(i), readout(i, 1250000 * i + 4711));
    for (int i = 2; i <= 4; ++i) {
        is::Object fe = is::Object::create(m_dict->types(), QStringLiteral("FrontEndStatus"));
        fe.set(QStringLiteral("temperature"), float(38 + 1.7 * i));
        fe.set(QStringLiteral("configured"), true);
        fe.set(QStringLiteral("registers"), quint32(32 * (i % 2 + 1)));
        put(QStringLiteral("DAQ.FE%1").arg(i), fe);
    }
    m_window->selectObject(QStringLiteral("RO2"));
    QTRY_VERIFY_WITH_TIMEOUT(m_window->histogramView()->isVisible(), 5000);
    // The picture shows RO2's statistics as just written and a status bar that counts the new
    // front ends (a tick after they arrived).
    QTRY_COMPARE_WITH_TIMEOUT(digits(m_window->attributeModel()
                                         ->find(QStringLiteral("events"))
                                         .siblingAtColumn(AttributeModel::Value)
                                         .data()
                                         .toString()),
                              QStringLiteral("2504711"), 5000);
    QTRY_VERIFY_WITH_TIMEOUT(m_window->objectModel()->rowOf(QStringLiteral("FE4")) >= 0, 5000);
    QTRY_VERIFY_WITH_TIMEOUT(m_window->countsLabel()->text().startsWith(
                                 QStringLiteral("%1 objects").arg(m_window->objectModel()->rowCount())) &&
                                 m_window->countsLabel()->text().endsWith(QLatin1String(" connected")),
                             5000);
    m_window->refresh();
    const QString path = screenshotPath(QStringLiteral("ismonitor.png"));
    QVERIFY(saveScreenshot(m_window.get(), QStringLiteral("ismonitor.png")));
    QVERIFY(QFileInfo(path).size() > 10000);
}

QTEST_MAIN(tst_IsMonitor)
#include "tst_ismonitor.moc"
