// The run-control GUI's alarm banner against a real IS server evaluating alarm rules, offscreen:
// raised alarms appear, cleared ones go, a screenshot of the banner.
#include "statuscheck.h"
#include "alarmbanner.h"
#include "isfixture.h"
#include "runcontrolwindow.h"
#include "widgetscreenshot.h"

#include <QTemporaryDir>
#include <QtTest>

using namespace dialog;
using namespace dialog::test;
using namespace dialog::runcontrol;

class tst_AlarmBanner : public QObject, protected IsTestBase
{
    Q_OBJECT

private Q_SLOTS:
    void init() { QVERIFY(setUpIs(QStringLiteral("alarmbanner-test"))); }
    void cleanup() { tearDownIs(); }
    void showsActiveAlarms();

private:
    void writeReadout(const QString &name, quint32 errors, double rate)
    {
        is::Object o = is::Object::create(m_dict->types(), QStringLiteral("ReadoutStats"));
        QVERIFY_OK(o.set(QStringLiteral("errors"), errors));
        QVERIFY_OK(o.set(QStringLiteral("rate"), rate));
        QVERIFY(m_dict->updateSync(name, o).isOk());
    }
};

void tst_AlarmBanner::showsActiveAlarms()
{
    QTemporaryDir dir;
    QFile rules(dir.filePath(QStringLiteral("alarms.rules")));
    QVERIFY(rules.open(QIODevice::WriteOnly));
    rules.write("DAQ.RO*.errors > 0 -> warning \"readout errors\"\n"
                "DAQ.RO*.rate < 10 -> error \"rate too low\"\n");
    rules.close();
    startServer(QStringLiteral("DAQ"), {QStringLiteral("--alarms"), rules.fileName()});
    QVERIFY(waitForServer(QStringLiteral("DAQ")));
    writeReadout(QStringLiteral("DAQ.RO1"), 3, 100); // raised before the GUI starts: in its snapshot

    RunControlWindow w(m_fx->clientOptions(QStringLiteral("RunControl.GUI.alarms")), QStringLiteral("Master"),
                       false);
    w.watchAlarms(QStringLiteral("DAQ"));
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    AlarmBanner *banner = w.alarmBanner();
    QVERIFY(banner);
    QTRY_COMPARE_WITH_TIMEOUT(
        banner->alarms(), QStringList{QStringLiteral("WARNING: readout errors — DAQ.RO1.errors = 3")}, 10000);
    QVERIFY(banner->isVisible());

    writeReadout(QStringLiteral("DAQ.RO2"), 0, 2.5);
    QTRY_COMPARE_WITH_TIMEOUT(banner->alarms().size(), 2, 5000);
    QVERIFY(banner->text().contains(QStringLiteral("2 active alarms")));
    QVERIFY(banner->text().contains(QStringLiteral("ERROR: rate too low — DAQ.RO2.rate = 2.5")));
    QVERIFY(banner->styleSheet().contains(QStringLiteral("#d03030"))); // the worst: error
    // The picture shows both alarms: the window's layout has made room for the banner's lines.
    QTRY_VERIFY_WITH_TIMEOUT(banner->height() >= banner->heightForWidth(banner->width()), 5000);
    QVERIFY(saveScreenshot(&w, QStringLiteral("runcontrol-alarms.png")));

    writeReadout(QStringLiteral("DAQ.RO1"), 0, 100);
    writeReadout(QStringLiteral("DAQ.RO2"), 0, 100);
    QTRY_VERIFY_WITH_TIMEOUT(banner->alarms().isEmpty(), 5000);
    QVERIFY(!banner->isVisible());
}

QTEST_MAIN(tst_AlarmBanner)
#include "tst_alarmbanner.moc"
