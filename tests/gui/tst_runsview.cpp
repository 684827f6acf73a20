// The run-control GUI's Runs tab against a real dialog-configdb: the runs recorded, newest first,
// how each ended; the database gone, the tab says so. Screenshot: runs.png.
#include "processfixture.h"
#include "runcontrolwindow.h"
#include "runsview.h"
#include "screenshot.h"

#include "dialog/config.h"

#include <QLabel>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTableWidget>
#include <QTemporaryDir>

using namespace dialog::test;

class tst_RunsView : public QObject
{
    Q_OBJECT

private slots:
    void runsOfTheRegistryNewestFirst()
    {
        ProcessFixture fx;
        QTemporaryDir dir;
        QVERIFY(fx.startControlServer());
        QProcess *configdb = fx.start(QStringLiteral("dialog-configdb"),
                                      {QStringLiteral("--data-dir"), dir.filePath(QStringLiteral("db"))});
        dialog::Client client(fx.clientOptions(QStringLiteral("tst_runsview")));
        QVERIFY(client.start());
        dialog::config::ConfigClient config(&client);
        auto call = [&](const QJsonObject &request) {
            std::optional<dialog::Status> st;
            config.call(request, [&](const dialog::Status &s, const QJsonObject &) { st = s; });
            return waitUntil([&] { return st.has_value(); }, 20000) && st->isOk();
        };
        auto start = [&](const QString &partition, const QString &tag) {
            return call({{QStringLiteral("op"), QStringLiteral("run-start")},
                         {QStringLiteral("run"),
                          QJsonObject{{QStringLiteral("partition"), partition},
                                      {QStringLiteral("run_type"), QStringLiteral("Physics")},
                                      {QStringLiteral("config_version"), 7},
                                      {QStringLiteral("config_tag"), tag},
                                      {QStringLiteral("operator"), QStringLiteral("shifter@cr-03")},
                                      {QStringLiteral("master"), QStringLiteral("Master")}}}});
        };
        auto end = [&](int number, const QString &reason, const QString &message) {
            return call({{QStringLiteral("op"), QStringLiteral("run-end")},
                         {QStringLiteral("number"), number},
                         {QStringLiteral("reason"), reason},
                         {QStringLiteral("message"), message},
                         {QStringLiteral("events"), 1000 * number}});
        };
        // The registry answers once the daemon is up: the first start waits for it.
        QVERIFY(waitUntil([&] { return start(QStringLiteral("demo"), QStringLiteral("physics-2026")); },
                          20000, 100));
        QVERIFY(end(1, QStringLiteral("normal"), QString()));
        QVERIFY(start(QStringLiteral("demo"), QStringLiteral("physics-2026")));
        QVERIFY(end(2, QStringLiteral("error"), QStringLiteral("RO1 failed: queue overflow")));
        QVERIFY(start(QStringLiteral("demo"), QString()));

        dialog::runcontrol::RunControlWindow w(fx.clientOptions(QStringLiteral("RunControl.GUI")),
                                               QStringLiteral("Master"), false);
        w.showRuns(QStringLiteral("configdb"));
        w.resize(1100, 420);
        w.show();
        auto *tabs = qobject_cast<QTabWidget *>(w.centralWidget());
        QVERIFY(tabs);
        QCOMPARE(tabs->count(), 2);
        tabs->setCurrentWidget(w.runsView());
        QTableWidget *t = w.runsView()->table();
        QVERIFY(waitUntil([&] { return t->rowCount() == 3; }, 20000));
        QCOMPARE(t->item(0, 0)->text(), QStringLiteral("3"));
        QCOMPARE(t->item(0, 8)->text(), QStringLiteral("running"));
        QCOMPARE(t->item(1, 8)->text(), QStringLiteral("error: RO1 failed: queue overflow"));
        QCOMPARE(t->item(2, 8)->text(), QStringLiteral("normal"));
        QCOMPARE(t->item(2, 3)->text(), QStringLiteral("version 7 (physics-2026)"));
        QCOMPARE(t->item(1, 7)->text(), QStringLiteral("2000"));
        QVERIFY2(w.runsView()->status()->text().startsWith(QLatin1String("3 runs")),
                 qPrintable(w.runsView()->status()->text()));
        QVERIFY(w.grab().save(screenshotPath(QStringLiteral("runs.png"))));

        // The database gone: the next read says why, the rows read before stay.
        configdb->kill();
        QVERIFY(configdb->waitForFinished(5000));
        QSignalSpy refreshed(w.runsView(), &dialog::runcontrol::RunsView::refreshed);
        w.runsView()->refresh();
        QVERIFY(refreshed.wait(20000));
        QVERIFY2(w.runsView()->status()->text().startsWith(QLatin1String("runs not read:")),
                 qPrintable(w.runsView()->status()->text()));
        QCOMPARE(t->rowCount(), 3);
    }
};

QTEST_MAIN(tst_RunsView)
#include "tst_runsview.moc"
