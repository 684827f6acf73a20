// The DIALOG inspector against real daemons on loopback, offscreen.
#include "inspectorwindow.h"
#include "processfixture.h"

#include <QLineEdit>
#include <QPushButton>
#include <QTableView>
#include <QtTest>
#include <csignal>

using namespace dialog;
using namespace dialog::test;
using namespace dialog::inspector;

class tst_Inspector : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void showsProcessesThatStart();
    void filterNarrowsTheTable();
    void listeningShowsPublishedMessages();
    void sendingACommandReachesTheRegistrant();
    void listeningToACommandShowsIt();
    void killedProcessIsMarkedLost();
    void screenshot();

private:
    QProcess *m_readout2 = nullptr;
    QProcess *m_master = nullptr;
    std::unique_ptr<ProcessFixture> m_fx;
    std::unique_ptr<InspectorWindow> m_window;
};

void tst_Inspector::initTestCase()
{
    m_fx = std::make_unique<ProcessFixture>();
    QVERIFY(m_fx->startControlServer());
    ClientOptions o = m_fx->clientOptions(QStringLiteral("DIALOG.Inspector.test"));
    o.heartbeatMs = 200;
    m_window = std::make_unique<InspectorWindow>(o);
    m_window->show();
    QVERIFY(QTest::qWaitForWindowExposed(m_window.get()));
}

void tst_Inspector::cleanupTestCase()
{
    m_window.reset();
    m_fx.reset();
}

void tst_Inspector::showsProcessesThatStart()
{
    const auto hb = QStringList{QStringLiteral("--heartbeat-ms"), QStringLiteral("200")};
    m_fx->start(QStringLiteral("dialog"), QStringList{QStringLiteral("publish"), QStringLiteral("Readout1.EventRate"),
                                                      QStringLiteral("--name"), QStringLiteral("Readout1"),
                                                      QStringLiteral("--rate"), QStringLiteral("20")} + hb);
    m_readout2 = m_fx->start(QStringLiteral("dialog"),
                             QStringList{QStringLiteral("publish"), QStringLiteral("Readout2.EventRate"), QStringLiteral("--name"),
                                         QStringLiteral("Readout2"), QStringLiteral("--rate"), QStringLiteral("2")} + hb);
    m_master = m_fx->start(QStringLiteral("dialog"),
                           QStringList{QStringLiteral("echo"), QStringLiteral("--name"), QStringLiteral("Master"),
                                       QStringLiteral("--command"), QStringLiteral("Run.Start"), QStringLiteral("--command"),
                                       QStringLiteral("Run.Stop")} + hb);
    m_fx->start(QStringLiteral("dialog"), QStringList{QStringLiteral("get"), QStringLiteral("Readout1.EventRate"),
                                                      QStringLiteral("--name"), QStringLiteral("Monitor")} + hb);
    auto *model = m_window->processModel();
    QTRY_VERIFY_WITH_TIMEOUT(model->rowOf(QStringLiteral("Readout1")) >= 0 && model->rowOf(QStringLiteral("Readout2")) >= 0
                                 && model->rowOf(QStringLiteral("Master")) >= 0 && model->rowOf(QStringLiteral("Monitor")) >= 0
                                 && !model->row(model->rowOf(QStringLiteral("Monitor"))).subscriptions.isEmpty()
                                 && model->row(model->rowOf(QStringLiteral("Master"))).commands.size() == 2,
                             10000);
    const ProcessRow &r = model->row(model->rowOf(QStringLiteral("Readout1")));
    QCOMPARE(r.services, QStringList{QStringLiteral("Readout1.EventRate")});
    QCOMPARE(r.host, QStringLiteral("127.0.0.1"));
    QVERIFY(r.port > 0 && r.pid > 0);
    QVERIFY(!r.lost);
}

void tst_Inspector::filterNarrowsTheTable()
{
    auto *filter = m_window->processFilter();
    const int all = filter->rowCount();
    QVERIFY(all >= 5); // four test processes and the inspector itself
    m_window->findChild<QLineEdit *>(QStringLiteral("filterProvided"))->setText(QStringLiteral("readout1"));
    m_window->findChild<QPushButton *>(QStringLiteral("search"))->click();
    QCOMPARE(filter->rowCount(), 1);
    QCOMPARE(filter->index(0, ProcessModel::Name).data().toString(), QStringLiteral("Readout1"));
    m_window->findChild<QPushButton *>(QStringLiteral("reset"))->click();
    QCOMPARE(filter->rowCount(), all);
    m_window->findChild<QLineEdit *>(QStringLiteral("filterCommand"))->setText(QStringLiteral("Run.Stop"));
    m_window->findChild<QLineEdit *>(QStringLiteral("filterName"))->setText(QStringLiteral("mast"));
    m_window->search();
    QCOMPARE(filter->rowCount(), 1);
    m_window->findChild<QLineEdit *>(QStringLiteral("filterName"))->setText(QStringLiteral("Readout"));
    m_window->search();
    QCOMPARE(filter->rowCount(), 0); // both fields must match
    m_window->reset();
    m_window->findChild<QLineEdit *>(QStringLiteral("filterText"))->setText(QStringLiteral("EventRate"));
    m_window->search();
    QCOMPARE(filter->rowCount(), 3); // two providers and the subscriber
    m_window->reset();
}

void tst_Inspector::listeningShowsPublishedMessages()
{
    m_window->listenToService(QStringLiteral("Readout1.EventRate"));
    auto *listen = m_window->listenModel();
    QTRY_VERIFY_WITH_TIMEOUT(listen->rowCount() >= 5, 5000);
    const inspector::Heard &h = listen->at(listen->rowCount() - 1);
    QCOMPARE(h.source, QStringLiteral("Readout1.EventRate"));
    QVERIFY(h.detail.startsWith(QLatin1Char('#')));
    QVERIFY(h.data.startsWith("Readout1.EventRate #"));
    QVERIFY(listen->rate() > 0);
}

void tst_Inspector::sendingACommandReachesTheRegistrant()
{
    m_master->readAllStandardOutput();
    m_window->findChild<QLineEdit *>(QStringLiteral("commandName"))->setText(QStringLiteral("Run.Start"));
    m_window->findChild<QLineEdit *>(QStringLiteral("commandPayload"))->setText(QStringLiteral("run 7"));
    m_window->findChild<QPushButton *>(QStringLiteral("send"))->click();
    QTRY_VERIFY_WITH_TIMEOUT(m_master->bytesAvailable() > 0, 5000);
    QCOMPARE(m_master->readAllStandardOutput().trimmed(), QByteArray("Run.Start from DIALOG.Inspector.test: run 7"));
    QVERIFY(!m_window->sendCommand(QStringLiteral("Run.Start"), QStringLiteral("zz"), true)); // not hex
    QVERIFY(m_window->sendCommand(QStringLiteral("Run.Start"), QStringLiteral("00 ff"), true));
    QTRY_VERIFY_WITH_TIMEOUT(m_master->bytesAvailable() > 0, 5000);
    QCOMPARE(m_master->readAllStandardOutput().trimmed(), QByteArray("Run.Start from DIALOG.Inspector.test: hex:00ff"));
}

void tst_Inspector::listeningToACommandShowsIt()
{
    m_window->listenToCommand(QStringLiteral("Run.Stop"));
    // The registration must have reached the Control Server before the command is sent.
    auto *model = m_window->processModel();
    QTRY_VERIFY_WITH_TIMEOUT(model->rowOf(QStringLiteral("DIALOG.Inspector.test")) >= 0
                                 && model->row(model->rowOf(QStringLiteral("DIALOG.Inspector.test")))
                                        .commands.contains(QStringLiteral("Run.Stop")),
                             5000);
    QCOMPARE(m_fx->run(QStringLiteral("dialog"), {QStringLiteral("send"), QStringLiteral("Run.Stop"), QStringLiteral("end of run")}), 0);
    auto *listen = m_window->listenModel();
    QTRY_VERIFY_WITH_TIMEOUT(listen->rowCount() == 1, 5000);
    QCOMPARE(listen->at(0).source, QStringLiteral("Run.Stop"));
    QVERIFY(listen->at(0).detail.startsWith(QStringLiteral("from dialog-send-")));
    QCOMPARE(listen->at(0).data, QByteArray("end of run"));
    m_window->stopListening();
}

void tst_Inspector::killedProcessIsMarkedLost()
{
    ::kill(pid_t(m_readout2->processId()), SIGKILL);
    auto *model = m_window->processModel();
    QTRY_VERIFY_WITH_TIMEOUT(model->rowOf(QStringLiteral("Readout2")) >= 0
                                 && model->row(model->rowOf(QStringLiteral("Readout2"))).lost,
                             5000);
    const int row = model->rowOf(QStringLiteral("Readout2"));
    QCOMPARE(model->index(row, ProcessModel::State).data().toString(), QStringLiteral("LOST"));
    QVERIFY(!model->row(row).lostReason.isEmpty());
    QVERIFY(!model->row(model->rowOf(QStringLiteral("Readout1"))).lost);
}

void tst_Inspector::screenshot()
{
    m_window->listenToService(QStringLiteral("Readout1.EventRate"));
    m_window->selectProcess(QStringLiteral("Readout1"));
    QTRY_VERIFY_WITH_TIMEOUT(m_window->listenModel()->rowCount() >= 8, 5000);
    m_window->refresh();
    const QString path = QStringLiteral(DIALOG_SOURCE_DIR "/docs/inspector.png");
    QVERIFY(m_window->grab().save(path));
    QVERIFY(QFileInfo(path).size() > 10000);
}

QTEST_MAIN(tst_Inspector)
#include "tst_inspector.moc"
