// dialog-alarms offscreen against the real Control Server, IS server and alarm server: a GUI that
// starts late has the whole table, the tree's worst severities and counts, a node filters the
// table, acknowledge / shelve / unshelve through the GUI's dialog, a refusal shown with the alarm
// server's reason, guidance and links, the history with a time range, the line when the history
// database fails, the run-control GUI's alarm line and its button, and an alarm storm (the longest
// stall of the event loop printed, not asserted). Screenshots: alarms.png, alarms-history.png,
// alarms-dbfail.png, runcontrol-alarmserver.png.
#include "actiondialog.h"
#include "alarmbanner.h"
#include "alarmsummary.h"
#include "alarmswindow.h"
#include "alarmtablemodel.h"
#include "alarmtreemodel.h"
#include "guiprobe.h"
#include "historyview.h"
#include "isfixture.h"
#include "runcontrolwindow.h"
#include "statuscheck.h"
#include "widgetscreenshot.h"

#include "dialog/directory.h"
#include "dialog/subscription.h"

#include <QAction>
#include <QFileInfo>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QPushButton>
#include <QScopeGuard>
#include <QStandardItemModel>
#include <QTabWidget>
#include <QTableView>
#include <QTemporaryDir>
#include <QTextBrowser>
#include <QtTest>
#include <csignal>

using namespace dialog;
using namespace dialog::test;
using namespace dialog::alarms;

namespace {

const QByteArray Rules = R"({"alarms": [
  {"path": "Detector/ECAL/FE3/temperature", "severity": "major", "latch": true,
   "description": "FE3 is too hot", "guidance": "Check the cooling water, then call the front-end expert (manual page 2).",
   "links": ["https://daq.example/ecal/fe3", "docs/fe3.html"],
   "condition": {"is": "DAQ.FE3", "type": "FrontEndStatus", "attribute": "temperature", "above": 40}},
  {"path": "Detector/ECAL/FE3/warm", "severity": "minor", "description": "FE3 is warm",
   "condition": {"is": "DAQ.FE3", "type": "FrontEndStatus", "attribute": "temperature", "above": 35}},
  {"path": "Detector/ECAL/FE4/temperature", "severity": "major", "ack_comment_required": true,
   "description": "FE4 is too hot",
   "condition": {"is": "DAQ.FE4", "type": "FrontEndStatus", "attribute": "temperature", "above": 40}},
  {"path": "Detector/HCAL/FE1/temperature", "severity": "major", "description": "HCAL FE1 is too hot",
   "condition": {"is": "DAQ.HFE1", "type": "FrontEndStatus", "attribute": "temperature", "above": 40}},
  {"path": "DAQ/Readout/RO1/errors", "severity": "invalid", "description": "RO1 reads out garbage",
   "guidance": "Stop the run and reset RO1.",
   "condition": {"is": "DAQ.RO1", "type": "ReadoutStats", "attribute": "errors", "above": 0}}
]}
)";

constexpr int StormSize = 1000;

QByteArray stormRules()
{
    QByteArray r = "{\"alarms\": [\n";
    for (int k = 0; k < StormSize; ++k)
        // guiload's objects (DAQ.Load00000 …) are ProcessStats with pid 0: each holds when it appears.
        r += QStringLiteral("%1{\"path\": \"Storm/Crate%2/S%3\", \"severity\": \"%4\", "
                            "\"condition\": {\"is\": \"DAQ.Load%3\", \"type\": \"ProcessStats\", "
                            "\"attribute\": \"pid\", \"equals\": 0}}\n")
                 .arg(k ? QStringLiteral(",") : QString())
                 .arg(k / 100)
                 .arg(k, 5, 10, QLatin1Char('0'))
                 .arg(k % 10 == 0 ? QStringLiteral("major") : QStringLiteral("minor"))
                 .toUtf8();
    return r + "]}\n";
}

} // namespace

class tst_AlarmsGui : public QObject, protected IsTestBase
{
    Q_OBJECT

private Q_SLOTS:
    void init();
    void cleanup()
    {
        tearDownIs();
        m_tmp.reset();
    }
    void lateGuiHasTableTreeAndActs();
    void historyDatabaseFailureIsShown();
    void runControlShowsTheAlarmServer();
    void alarmStormLeavesGuiResponsive();

private:
    QString write(const QString &name, const QByteArray &content)
    {
        const QString path = m_dir.filePath(name);
        QFile f(path);
        if (!f.open(QIODevice::WriteOnly) || f.write(content) != content.size())
            qWarning() << "cannot write" << path;
        return path;
    }
    QProcess *startAlarmServer(const QByteArray &rules, const QStringList &extra = {})
    {
        write(QStringLiteral("rules.json"), rules);
        return m_fx->start(QStringLiteral("dialog-alarmserver"),
                           QStringList{QStringLiteral("--rules"), m_dir.filePath(QStringLiteral("rules.json")),
                                       QStringLiteral("--types"), isTypesDir(), QStringLiteral("--data-dir"),
                                       m_dir.filePath(QStringLiteral("data"))} +
                               extra);
    }
    void setTemperature(const QString &object, float t)
    {
        is::Object o = is::Object::create(m_dict->types(), QStringLiteral("FrontEndStatus"));
        QVERIFY_OK(o.set(QStringLiteral("temperature"), t));
        QVERIFY_OK(m_dict->updateSync(object, o));
    }
    void setErrors(const QString &object, quint32 errors)
    {
        is::Object o = is::Object::create(m_dict->types(), QStringLiteral("ReadoutStats"));
        QVERIFY_OK(o.set(QStringLiteral("errors"), errors));
        QVERIFY_OK(m_dict->updateSync(object, o));
    }
    static QString stateOf(AlarmsWindow &w, const QString &path)
    {
        return w.tableModel()->alarm(path).value(QStringLiteral("state")).toString();
    }

    std::unique_ptr<QTemporaryDir> m_tmp;
    QDir m_dir;
};

void tst_AlarmsGui::init()
{
    m_tmp = std::make_unique<QTemporaryDir>();
    QVERIFY(m_tmp->isValid());
    m_dir = QDir(m_tmp->path());
    QVERIFY(m_dir.mkpath(QStringLiteral("data")));
    QVERIFY(setUpIs(QStringLiteral("alarmsgui-test")));
    startServer(QStringLiteral("DAQ"));
    QVERIFY(waitForServer(QStringLiteral("DAQ")));
}

void tst_AlarmsGui::lateGuiHasTableTreeAndActs()
{
    const qint64 testStartMs = QDateTime::currentMSecsSinceEpoch();
    // The detector's alarms may not be shelved from here (the access list).
    startAlarmServer(Rules, {QStringLiteral("--access"),
                             write(QStringLiteral("access.json"),
                                   R"({"rules": [{"deny": "command", "name": "ALARM.shelve.Detector/*"}]})")});
    // Raised before the GUI starts: its first message of ALARM.Table has them.
    setTemperature(QStringLiteral("DAQ.FE3"), 45);
    setTemperature(QStringLiteral("DAQ.FE4"), 44);
    setTemperature(QStringLiteral("DAQ.HFE1"), 20);
    setErrors(QStringLiteral("DAQ.RO1"), 7);

    AlarmsWindow w(m_fx->clientOptions(QStringLiteral("Alarms.GUI.test")));
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    AlarmTableModel *model = w.tableModel();
    QTRY_COMPARE_WITH_TIMEOUT(model->rowCount(), 4, 20000);
    QCOMPARE(stateOf(w, QStringLiteral("Detector/ECAL/FE3/temperature")), QStringLiteral("active"));
    QCOMPARE(stateOf(w, QStringLiteral("DAQ/Readout/RO1/errors")), QStringLiteral("active"));
    QVERIFY(model->rowOf(QStringLiteral("Detector/HCAL/FE1/temperature")) < 0); // normal: not listed
    QVERIFY2(w.countsText().contains(QStringLiteral("worst INVALID · 4 active, 4 unacknowledged")),
             qPrintable(w.countsText()));
    QVERIFY(w.historyProblemText().isEmpty());

    // Colour by severity; an unacknowledged row blinks (one step of the timer, then back).
    const int fe3 = model->rowOf(QStringLiteral("Detector/ECAL/FE3/temperature"));
    const QModelIndex fe3Index = model->index(fe3, AlarmTableModel::Path);
    QVERIFY(fe3Index.data(AlarmTableModel::UnacknowledgedRole).toBool());
    const bool phase = fe3Index.data(AlarmTableModel::BlinkRole).toBool();
    const QColor before = fe3Index.data(Qt::BackgroundRole).value<QColor>();
    model->toggleBlink();
    QCOMPARE(fe3Index.data(AlarmTableModel::BlinkRole).toBool(), !phase);
    QVERIFY(fe3Index.data(Qt::BackgroundRole).value<QColor>() != before);
    model->toggleBlink();
    QCOMPARE(fe3Index.data(Qt::BackgroundRole).value<QColor>(), before);
    QCOMPARE(fe3Index.siblingAtColumn(AlarmTableModel::Severity).data().toString(), QStringLiteral("major"));
    QVERIFY(severityColor(QStringLiteral("invalid")) != severityColor(QStringLiteral("major")));

    // Sortable: by severity, the invalid alarm comes first in descending order.
    w.tableView()->sortByColumn(AlarmTableModel::Severity, Qt::DescendingOrder);
    QCOMPARE(w.filterModel()->index(0, AlarmTableModel::Path).data().toString(),
             QStringLiteral("DAQ/Readout/RO1/errors"));

    // The tree: the worst annunciated severity below each node, and its counts.
    AlarmTreeModel *tree = w.treeModel();
    QTRY_VERIFY_WITH_TIMEOUT(tree->hasStructure(), 10000);
    QCOMPARE(tree->worst(QString()), QStringLiteral("invalid"));
    QCOMPARE(tree->worst(QStringLiteral("Detector")), QStringLiteral("major"));
    QCOMPARE(tree->worst(QStringLiteral("Detector/HCAL")), QStringLiteral("ok"));
    QCOMPARE(tree->count(QStringLiteral("Detector"), AlarmTreeModel::Active), 3);
    QCOMPARE(tree->count(QStringLiteral("Detector"), AlarmTreeModel::Alarms), 4);
    QCOMPARE(tree->count(QString(), AlarmTreeModel::Alarms), 5);
    // Selecting a node filters the table.
    w.selectNode(QStringLiteral("Detector/ECAL/FE3"));
    QCOMPARE(w.filterModel()->rowCount(), 2);
    w.selectNode(QStringLiteral("Detector/ECAL"));
    QCOMPARE(w.filterModel()->rowCount(), 3);

    // The details of the selected alarm: guidance and links.
    QVERIFY(w.selectAlarm(QStringLiteral("Detector/ECAL/FE3/temperature")));
    const QString details = w.detailsPane()->toHtml();
    QVERIFY2(details.contains(QStringLiteral("Check the cooling water")), qPrintable(details));
    QVERIFY(details.contains(QStringLiteral("href=\"https://daq.example/ecal/fe3\"")));

    // Acknowledge through the GUI's action and its dialog.
    QSignalSpy finished(&w, &AlarmsWindow::actionFinished);
    auto *ackAction = w.findChild<QAction *>(QStringLiteral("ackAction"));
    QVERIFY(ackAction && ackAction->isEnabled());
    ackAction->trigger();
    ActionDialog *d = w.actionDialog();
    QVERIFY(d);
    QVERIFY(d->isVisible());
    QCOMPARE(d->paths(), QStringList{QStringLiteral("Detector/ECAL/FE3/temperature")});
    d->commentEdit()->setText(QStringLiteral("fan restarted"));
    d->accept();
    QTRY_COMPARE_WITH_TIMEOUT(finished.size(), 1, 10000);
    QCOMPARE(finished.at(0).at(1).toStringList(), QStringList());
    QTRY_COMPARE_WITH_TIMEOUT(stateOf(w, QStringLiteral("Detector/ECAL/FE3/temperature")),
                              QStringLiteral("acknowledged"), 10000);
    const QModelIndex acked = model->index(model->rowOf(QStringLiteral("Detector/ECAL/FE3/temperature")), 0);
    QVERIFY(!acked.data(AlarmTableModel::UnacknowledgedRole).toBool());
    QTRY_VERIFY_WITH_TIMEOUT(!ackAction->isEnabled(), 5000); // nothing left to acknowledge in the selection
    const QColor ackedColor = acked.data(Qt::BackgroundRole).value<QColor>();
    model->toggleBlink();
    QVERIFY(!acked.data(AlarmTableModel::BlinkRole).toBool()); // no longer blinks
    QCOMPARE(acked.data(Qt::BackgroundRole).value<QColor>(), ackedColor);
    QTRY_VERIFY_WITH_TIMEOUT(w.countsText().contains(QStringLiteral("3 unacknowledged")), 5000);
    QVERIFY(w.detailsPane()->toPlainText().contains(QStringLiteral("fan restarted")));

    // A refusal: this alarm needs a comment; the alarm server's reason is shown, not swallowed.
    QVERIFY(w.selectAlarm(QStringLiteral("Detector/ECAL/FE4/temperature")));
    d = w.startAction(QStringLiteral("ack"));
    QVERIFY(d);
    d->accept();
    QTRY_COMPARE_WITH_TIMEOUT(finished.size(), 2, 10000);
    QCOMPARE(finished.at(1).at(1).toStringList().size(), 1);
    QVERIFY2(w.lastRefusal().contains(QStringLiteral("comment")), qPrintable(w.lastRefusal()));
    QVERIFY(w.findChild<QLabel *>(QStringLiteral("refusal"))->isVisible());
    auto *box = w.findChild<QMessageBox *>(QStringLiteral("refusalBox"));
    QVERIFY(box);
    QTRY_VERIFY_WITH_TIMEOUT(box->isVisible(), 5000);
    QVERIFY(box->text().contains(w.lastRefusal()));
    box->accept();
    QCOMPARE(stateOf(w, QStringLiteral("Detector/ECAL/FE4/temperature")), QStringLiteral("active"));
    // Refused by the access list.
    d = w.startAction(QStringLiteral("shelve"));
    QVERIFY(d);
    d->commentEdit()->setText(QStringLiteral("noisy"));
    d->accept();
    QTRY_COMPARE_WITH_TIMEOUT(finished.size(), 3, 10000);
    QVERIFY2(w.lastRefusal().contains(QStringLiteral("permission denied")), qPrintable(w.lastRefusal()));
    QTRY_VERIFY_WITH_TIMEOUT(w.findChild<QMessageBox *>(QStringLiteral("refusalBox")), 5000);
    w.findChild<QMessageBox *>(QStringLiteral("refusalBox"))->accept();
    QVERIFY(!w.tableModel()->alarm(QStringLiteral("Detector/ECAL/FE4/temperature")).value(QStringLiteral("shelved")).toBool());

    // Shelve for an hour with a reason, then unshelve.
    QVERIFY(w.selectAlarm(QStringLiteral("DAQ/Readout/RO1/errors")) == false); // filtered out by the node
    w.selectNode(QString());
    QVERIFY(w.selectAlarm(QStringLiteral("DAQ/Readout/RO1/errors")));
    d = w.startAction(QStringLiteral("shelve"));
    QVERIFY(d && d->durationEdit());
    d->durationEdit()->setText(QStringLiteral("soon"));
    d->accept(); // a bad duration: the dialog says so and stays open
    QVERIFY(d->isVisible());
    QVERIFY(d->problem().contains(QStringLiteral("invalid duration")));
    d->durationEdit()->setText(QStringLiteral("1h"));
    d->commentEdit()->setText(QStringLiteral("card swap tomorrow"));
    d->accept();
    QTRY_COMPARE_WITH_TIMEOUT(finished.size(), 4, 10000);
    QCOMPARE(finished.at(3).at(1).toStringList(), QStringList());
    QTRY_VERIFY_WITH_TIMEOUT(
        w.tableModel()->alarm(QStringLiteral("DAQ/Readout/RO1/errors")).value(QStringLiteral("shelved")).toBool(),
        10000);
    QTRY_VERIFY_WITH_TIMEOUT(w.countsText().contains(QStringLiteral("1 shelved")), 5000);
    // A shelved alarm is not annunciated: the root's worst is major now.
    QTRY_COMPARE_WITH_TIMEOUT(tree->worst(QString()), QStringLiteral("major"), 5000);
    // The picture: acknowledged, active, shelved rows, the refusal above them, FE3's guidance.
    w.selectNode(QStringLiteral("Detector"));
    w.selectNode(QString());
    QVERIFY(w.selectAlarm(QStringLiteral("Detector/ECAL/FE3/temperature")));
    QVERIFY(saveScreenshot(&w, QStringLiteral("alarms.png")));
    QVERIFY(w.selectAlarm(QStringLiteral("DAQ/Readout/RO1/errors")));
    d = w.startAction(QStringLiteral("unshelve"));
    QVERIFY(d);
    d->accept();
    QTRY_COMPARE_WITH_TIMEOUT(finished.size(), 5, 10000);
    QTRY_VERIFY_WITH_TIMEOUT(
        !w.tableModel()->alarm(QStringLiteral("DAQ/Readout/RO1/errors")).value(QStringLiteral("shelved")).toBool(),
        10000);

    // The history of the node, newest first, within a time range.
    HistoryView *h = w.historyView();
    w.tabs()->setCurrentWidget(h);
    h->setPath(QStringLiteral("Detector/ECAL/FE3/temperature"));
    h->sinceEdit()->setText(QString::number(testStartMs));
    h->untilEdit()->clear();
    QSignalSpy loaded(h, &HistoryView::loaded);
    h->query();
    QTRY_COMPARE_WITH_TIMEOUT(loaded.size(), 1, 10000);
    QStandardItemModel *rows = h->model();
    QVERIFY2(rows->rowCount() >= 2, qPrintable(h->statusText()));
    QCOMPARE(rows->item(0, HistoryView::Event)->text(), QStringLiteral("acknowledged"));
    QCOMPARE(rows->item(0, HistoryView::Comment)->text(), QStringLiteral("fan restarted"));
    QCOMPARE(rows->item(rows->rowCount() - 1, HistoryView::Event)->text(), QStringLiteral("raised"));
    h->setPath(QStringLiteral("DAQ"));
    h->query();
    QTRY_COMPARE_WITH_TIMEOUT(loaded.size(), 2, 10000);
    QCOMPARE(rows->item(0, HistoryView::Event)->text(), QStringLiteral("unshelved"));
    QCOMPARE(rows->item(1, HistoryView::Event)->text(), QStringLiteral("shelved"));
    QVERIFY2(rows->item(1, HistoryView::Comment)->text().startsWith(QStringLiteral("card swap tomorrow (until ")),
             qPrintable(rows->item(1, HistoryView::Comment)->text()));
    h->setPath(QString()); // every alarm
    h->query();
    QTRY_COMPARE_WITH_TIMEOUT(loaded.size(), 3, 10000);
    QVERIFY(rows->rowCount() >= 7); // 4 raised, acknowledged, shelved, unshelved
    QVERIFY(saveScreenshot(&w, QStringLiteral("alarms-history.png")));
    // A range that ends before the alarms were raised has none of their changes.
    h->sinceEdit()->clear();
    h->untilEdit()->setText(QString::number(testStartMs - 1));
    h->query();
    QTRY_COMPARE_WITH_TIMEOUT(loaded.size(), 4, 10000);
    QCOMPARE(rows->rowCount(), 0);
    h->sinceEdit()->setText(QStringLiteral("yesterday-ish"));
    h->query();
    QTRY_COMPARE_WITH_TIMEOUT(loaded.size(), 5, 10000);
    QVERIFY(h->statusText().contains(QStringLiteral("invalid since")));

    // Cleared: the latched alarm stays until acknowledged, the other one goes.
    setTemperature(QStringLiteral("DAQ.FE4"), 20);
    QTRY_VERIFY_WITH_TIMEOUT(model->rowOf(QStringLiteral("Detector/ECAL/FE4/temperature")) < 0, 10000);
}

void tst_AlarmsGui::historyDatabaseFailureIsShown()
{
    const QString data = m_dir.filePath(QStringLiteral("data"));
    if (!ProcessFixture::mountTmpfs(data, QStringLiteral("1m")))
        QSKIP("cannot mount a tmpfs here (not root, or no capability)");
    auto unmount = qScopeGuard([&] {
        m_fx->stopAll();
        QProcess::execute(QStringLiteral("umount"), {data});
    });
    startAlarmServer(Rules);
    AlarmsWindow w(m_fx->clientOptions(QStringLiteral("Alarms.GUI.dbfail")));
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QTRY_VERIFY_WITH_TIMEOUT(w.countsText().contains(QStringLiteral("5 rules")), 20000);
    QVERIFY(w.historyProblemText().isEmpty());
    QFile filler(data + QStringLiteral("/filler"));
    QVERIFY(filler.open(QIODevice::WriteOnly));
    const QByteArray block(4096, 'x');
    while (filler.write(block) == block.size() && filler.flush()) {
    }
    filler.close();
    setTemperature(QStringLiteral("DAQ.FE3"), 45);
    QTRY_VERIFY_WITH_TIMEOUT(!w.historyProblemText().isEmpty(), 15000);
    QVERIFY2(w.historyProblemText().contains(QStringLiteral("database fails")), qPrintable(w.historyProblemText()));
    QVERIFY(w.tableModel()->rowOf(QStringLiteral("Detector/ECAL/FE3/temperature")) >= 0); // alarms go on
    QVERIFY(saveScreenshot(&w, QStringLiteral("alarms-dbfail.png")));
    QVERIFY(QFile::remove(data + QStringLiteral("/filler")));
    QTRY_VERIFY_WITH_TIMEOUT(w.historyProblemText().isEmpty(), 15000);
}

void tst_AlarmsGui::runControlShowsTheAlarmServer()
{
    // An IS server evaluating its own alarm rules (dialog-isserver --alarms): the banner stays.
    QFile legacy(m_dir.filePath(QStringLiteral("legacy.rules")));
    QVERIFY(legacy.open(QIODevice::WriteOnly));
    legacy.write("Legacy.RO*.errors > 0 -> warning \"readout errors\"\n");
    legacy.close();
    startServer(QStringLiteral("Legacy"), {QStringLiteral("--alarms"), legacy.fileName()});
    QVERIFY(waitForServer(QStringLiteral("Legacy")));
    setErrors(QStringLiteral("Legacy.RO2"), 3);
    runcontrol::RunControlWindow rc(m_fx->clientOptions(QStringLiteral("RunControl.GUI.alarmserver")),
                                    QStringLiteral("Master"), false);
    rc.watchAlarms(QStringLiteral("Legacy"));
    rc.show();
    QVERIFY(QTest::qWaitForWindowExposed(&rc));
    runcontrol::AlarmSummary *summary = rc.alarmSummary();
    QVERIFY(summary);
    QVERIFY(summary->isHidden()); // no alarm server yet
    startAlarmServer(Rules);
    setTemperature(QStringLiteral("DAQ.FE3"), 38);
    QTRY_VERIFY_WITH_TIMEOUT(summary->isVisible(), 20000);
    QTRY_COMPARE_WITH_TIMEOUT(summary->worst(), QStringLiteral("minor"), 10000);
    setErrors(QStringLiteral("DAQ.RO1"), 2);
    setTemperature(QStringLiteral("DAQ.FE3"), 45);
    QTRY_COMPARE_WITH_TIMEOUT(summary->worst(), QStringLiteral("invalid"), 10000);
    QCOMPARE(summary->worstAlarm(), QStringLiteral("DAQ/Readout/RO1/errors"));
    QTRY_VERIFY_WITH_TIMEOUT(summary->text().startsWith(QStringLiteral("Alarms: 3 active, 3 unacknowledged")),
                             10000);
    QVERIFY(summary->text().contains(QStringLiteral("INVALID DAQ/Readout/RO1/errors")));
    QTRY_COMPARE_WITH_TIMEOUT(rc.alarmBanner()->alarms(),
                              QStringList{QStringLiteral("WARNING: readout errors — Legacy.RO2.errors = 3")}, 10000);
    QVERIFY(rc.alarmBanner()->isVisible());
    QVERIFY(saveScreenshot(&rc, QStringLiteral("runcontrol-alarmserver.png")));

    // The button opens dialog-alarms (this test's sibling in the build's bin directory): it joins
    // the partition under its own name.
    qint64 pid = 0;
    QVERIFY(summary->openAlarms(&pid));
    QVERIFY(pid > 0);
    auto reap = qScopeGuard([pid] {
        ::kill(pid_t(pid), SIGTERM);
        waitUntil([pid] { return !QFileInfo::exists(QStringLiteral("/proc/%1").arg(pid)); }, 5000, 20);
        ::kill(pid_t(pid), SIGKILL);
    });
    const QString name = QStringLiteral("Alarms.GUI.%1").arg(pid);
    bool joined = false;
    Subscription *directory = m_client->subscribe(
        directoryServiceName(), this, [&, pages = std::make_shared<DirectoryAssembler>()](const Message &m) {
            std::optional<DirectorySnapshot> d; // a large directory comes in pages
            pages->add(m.data(), &d);
            joined = joined || (d && d->process(name));
        });
    auto unsubscribe = qScopeGuard([&] { m_client->unsubscribe(directory); });
    QTRY_VERIFY2_WITH_TIMEOUT(joined, qPrintable(name + QStringLiteral(" is not in the directory")), 20000);
}

void tst_AlarmsGui::alarmStormLeavesGuiResponsive()
{
    startAlarmServer(stormRules());
    AlarmsWindow w(m_fx->clientOptions(QStringLiteral("Alarms.GUI.storm")));
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QTRY_VERIFY_WITH_TIMEOUT(w.treeModel()->hasStructure(), 20000);
    QCOMPARE(w.treeModel()->count(QStringLiteral("Storm"), AlarmTreeModel::Alarms), StormSize);
    GuiProbe probe;
    probe.watchModel(w.tableModel());
    // 1,000 alarms raised at once, by another process (the GUI's thread does nothing but the GUI).
    QProcess *load = m_fx->start(QStringLiteral("guiload"), {QStringLiteral("objects"), QStringLiteral("DAQ"),
                                                             QString::number(StormSize), QStringLiteral("1")});
    probe.start(); // after the fork: starting a child is the test's work, not the GUI's
    QElapsedTimer clock;
    clock.start();
    QTRY_COMPARE_WITH_TIMEOUT(w.tableModel()->rowCount(), StormSize, 30000);
    const qint64 tableMs = clock.elapsed();
    probe.stop();
    QTRY_VERIFY_WITH_TIMEOUT(load->canReadLine() || load->state() != QProcess::Running, 30000);
    QCOMPARE(load->readLine().trimmed(), QByteArray("ready 0 failed"));
    QCOMPARE(w.treeModel()->count(QStringLiteral("Storm"), AlarmTreeModel::Active), StormSize);
    QCOMPARE(w.treeModel()->count(QStringLiteral("Storm"), AlarmTreeModel::Unacknowledged), StormSize);
    QCOMPARE(w.treeModel()->worst(QStringLiteral("Storm/Crate3")), QStringLiteral("major"));
    QVERIFY(w.countsText().contains(QStringLiteral("1000 active")));
    QVERIFY(probe.ticks() > 0);
    qInfo("alarm storm of %d: all in the GUI's table %lld ms after guiload started; the longest stall of the "
          "event loop %lld ms, %d ticks of the 10 ms probe in %.2f s, %d model changes",
          StormSize, tableMs, probe.maxStallMs(), probe.ticks(), probe.seconds(), probe.modelChanges());
    // All gone at once (the objects removed): the rows go.
    load->terminate();
    QVERIFY(load->waitForFinished(10000));
    int removed = 0;
    for (int k = 0; k < StormSize; ++k)
        m_dict->remove(QStringLiteral("DAQ.Load%1").arg(k, 5, 10, QLatin1Char('0')),
                       [&removed](const Status &) { ++removed; });
    QTRY_COMPARE_WITH_TIMEOUT(removed, StormSize, 30000); // no callback left to come after the test
    QTRY_COMPARE_WITH_TIMEOUT(w.tableModel()->rowCount(), 0, 30000);
    QCOMPARE(w.treeModel()->worst(QStringLiteral("Storm")), QStringLiteral("ok"));
}

QTEST_MAIN(tst_AlarmsGui)
#include "tst_alarmsgui.moc"
