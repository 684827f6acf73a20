// The run-control GUI against a real master and slaves on loopback, offscreen: a full run cycle
// driven by its buttons, the second control-mode GUI refused, screenshots.
#include "messagerates.h"
#include "processfixture.h"
#include "runcontrolwindow.h"
#include "widgetscreenshot.h"

#include <QComboBox>
#include <QJsonArray>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QRegularExpression>
#include <QStatusBar>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QtTest>

using namespace dialog;
using namespace dialog::test;
using namespace dialog::runcontrol;
using dialog::rc::Transition;

namespace {
// The slave table's columns: process, kind, state, rate, MB/s, events, details.
constexpr int ColumnDetails = 6;

// The upsets a control slave's details name ("32 regs loaded · trigger on · 3 upsets · 41.2 °C").
int upsets(const QString &details)
{
    const QRegularExpressionMatch m = QRegularExpression(QStringLiteral("(\\d+) upsets")).match(details);
    return m.hasMatch() ? m.captured(1).toInt() : -1;
}
} // namespace

class tst_RunControlGui : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void showsMasterAndSlaves();
    void onlyLegalTransitionsAreEnabled();
    void fullRunCycleByClicking();
    void secondControlGuiIsRefusedAndMonitors();
    void messagesAreFiltered();
    void errorIsShownWithTheCulprit();
    void messagePaneFetchesLoggerHistoryAndRates();

private:
    std::unique_ptr<RunControlWindow> window(const QString &name, bool control);
    QString state(RunControlWindow *w) const
    {
        return w->masterState() ? rc::stateName(w->masterState()->state) : QString();
    }
    QString slaveCell(RunControlWindow *w, const QString &name, int column) const;
    void click(RunControlWindow *w, Transition t, const QString &expected);
    void grab(QWidget *w, const QString &file);

    std::unique_ptr<ProcessFixture> m_fx;
    std::unique_ptr<QTemporaryDir> m_dir;
    std::unique_ptr<RunControlWindow> m_control;
    QProcess *m_fe2 = nullptr;
    int m_confirmations = 0;
};

std::unique_ptr<RunControlWindow> tst_RunControlGui::window(const QString &name, bool control)
{
    ClientOptions o = m_fx->clientOptions(name);
    o.heartbeatMs = 200;
    auto w = std::make_unique<RunControlWindow>(o, QStringLiteral("Master"), control);
    w->show();
    return w;
}

void tst_RunControlGui::initTestCase()
{
    m_fx = std::make_unique<ProcessFixture>();
    m_dir = std::make_unique<QTemporaryDir>();
    QVERIFY(m_fx->startControlServer({QStringLiteral("--heartbeat-ms"), QStringLiteral("200")}));
    const QJsonObject partition{
        {QStringLiteral("name"), QStringLiteral("guitest")},
        {QStringLiteral("control_server"),
         QJsonObject{{QStringLiteral("port"), m_fx->port()}, {QStringLiteral("start"), false}}},
        {QStringLiteral("master"),
         QJsonObject{{QStringLiteral("name"), QStringLiteral("Master")},
                     {QStringLiteral("run_number_file"), m_dir->filePath(QStringLiteral("runnumber"))}}},
        {QStringLiteral("slaves"),
         QJsonArray{QJsonObject{{QStringLiteral("name"), QStringLiteral("FE1")},
                                {QStringLiteral("kind"), QStringLiteral("control")}},
                    QJsonObject{{QStringLiteral("name"), QStringLiteral("FE2")},
                                {QStringLiteral("kind"), QStringLiteral("control")}},
                    QJsonObject{{QStringLiteral("name"), QStringLiteral("RO1")},
                                {QStringLiteral("kind"), QStringLiteral("readout")}},
                    QJsonObject{{QStringLiteral("name"), QStringLiteral("RO2")},
                                {QStringLiteral("kind"), QStringLiteral("readout")}}}}};
    QFile f(m_dir->filePath(QStringLiteral("guitest.json")));
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(QJsonDocument(partition).toJson());
    f.close();
    const QStringList common{QStringLiteral("--heartbeat-ms"), QStringLiteral("200"),
                             QStringLiteral("--no-is")};
    m_fx->start(QStringLiteral("dialog-master"),
                QStringList{QStringLiteral("--config"), f.fileName()} + common);
    m_fx->start(QStringLiteral("dialog-slave"),
                QStringList{QStringLiteral("--kind"), QStringLiteral("control"), QStringLiteral("--name"),
                            QStringLiteral("FE1")} +
                    common);
    m_fe2 = m_fx->start(QStringLiteral("dialog-slave"),
                        QStringList{QStringLiteral("--kind"), QStringLiteral("control"),
                                    QStringLiteral("--name"), QStringLiteral("FE2"),
                                    QStringLiteral("--upset-every-s"), QStringLiteral("1")} +
                            common);
    for (const QString &ro : {QStringLiteral("RO1"), QStringLiteral("RO2")})
        m_fx->start(QStringLiteral("dialog-slave"),
                    QStringList{QStringLiteral("--kind"), QStringLiteral("readout"), QStringLiteral("--name"),
                                ro, QStringLiteral("--threads"), QStringLiteral("2"),
                                QStringLiteral("--rate"), QStringLiteral("50000"), QStringLiteral("--off-s"),
                                QStringLiteral("0")} +
                        common);
    m_control = window(QStringLiteral("RunControl.GUI.test1"), true);
    m_control->setConfirmation([this](const QString &) {
        ++m_confirmations;
        return true;
    });
    QVERIFY(QTest::qWaitForWindowExposed(m_control.get()));
}

void tst_RunControlGui::cleanupTestCase()
{
    m_control.reset();
    m_fx.reset();
}

QString tst_RunControlGui::slaveCell(RunControlWindow *w, const QString &name, int column) const
{
    QTableWidget *t = w->slaveTable();
    for (int r = 0; r < t->rowCount(); ++r)
        if (t->item(r, 0)->text() == name)
            return t->item(r, column)->text();
    return {};
}

void tst_RunControlGui::click(RunControlWindow *w, Transition t, const QString &expected)
{
    QPushButton *b = w->button(t);
    QTRY_VERIFY2_WITH_TIMEOUT(b->isEnabled(), qPrintable(b->text()), 10000);
    QTest::mouseClick(b, Qt::LeftButton);
    QTRY_COMPARE_WITH_TIMEOUT(state(w), expected, 15000);
    QTRY_COMPARE_WITH_TIMEOUT(w->stateLabel()->text(), expected.toUpper(), 5000);
}

void tst_RunControlGui::grab(QWidget *w, const QString &file)
{
    QVERIFY(saveScreenshot(w, file));
}

void tst_RunControlGui::showsMasterAndSlaves()
{
    QTRY_COMPARE_WITH_TIMEOUT(m_control->mode(), RunControlWindow::Mode::Control, 10000);
    QTRY_COMPARE_WITH_TIMEOUT(m_control->slaveTable()->rowCount(), 4, 10000);
    for (const QString &s :
         {QStringLiteral("FE1"), QStringLiteral("FE2"), QStringLiteral("RO1"), QStringLiteral("RO2")})
        QTRY_COMPARE_WITH_TIMEOUT(slaveCell(m_control.get(), s, 2), QStringLiteral("Initial"), 10000);
    QCOMPARE(m_control->stateLabel()->text(), QStringLiteral("INITIAL"));
    QCOMPARE(slaveCell(m_control.get(), QStringLiteral("RO2"), 1), QStringLiteral("readout"));
}

void tst_RunControlGui::onlyLegalTransitionsAreEnabled()
{
    QTRY_VERIFY_WITH_TIMEOUT(m_control->button(Transition::Configure)->isEnabled(), 10000);
    for (Transition t : {Transition::Start, Transition::Pause, Transition::Resume, Transition::Stop,
                         Transition::Unconfigure, Transition::Reset})
        QVERIFY2(!m_control->button(t)->isEnabled(), qPrintable(m_control->button(t)->text()));
    // Nothing happens when an illegal transition is forced through the window's API either: the
    // master refuses, the state stays.
}

void tst_RunControlGui::fullRunCycleByClicking()
{
    click(m_control.get(), Transition::Configure, QStringLiteral("Configured"));
    QVERIFY(!m_control->button(Transition::Configure)->isEnabled());
    QVERIFY(m_control->button(Transition::Start)->isEnabled() &&
            m_control->button(Transition::Unconfigure)->isEnabled());
    click(m_control.get(), Transition::Start, QStringLiteral("Running"));
    QVERIFY(m_control->runLabel()->text().startsWith(QLatin1String("1")));
    for (const QString &s :
         {QStringLiteral("FE1"), QStringLiteral("FE2"), QStringLiteral("RO1"), QStringLiteral("RO2")})
        QTRY_COMPARE_WITH_TIMEOUT(slaveCell(m_control.get(), s, 2), QStringLiteral("Running"), 5000);
    // Event rates appear for the readout slaves.
    QTRY_VERIFY_WITH_TIMEOUT(
        slaveCell(m_control.get(), QStringLiteral("RO1"), 3).remove(QLatin1Char(',')).toLongLong() > 10000,
        10000);
    QTRY_VERIFY_WITH_TIMEOUT(
        slaveCell(m_control.get(), QStringLiteral("RO2"), 3).remove(QLatin1Char(',')).toLongLong() > 10000,
        10000);
    QTRY_VERIFY_WITH_TIMEOUT(m_control->messageTable()->rowCount() > 5, 5000);
    // The picture shows a moment of data taking: a duration, FE2's upsets and their messages.
    QTRY_VERIFY_WITH_TIMEOUT(m_control->durationLabel()->text().contains(
                                 QRegularExpression(QStringLiteral("^\\d\\d:\\d\\d:\\d\\d$"))) &&
                                 m_control->durationLabel()->text() != QLatin1String("00:00:00"),
                             10000);
    QTRY_VERIFY_WITH_TIMEOUT(upsets(slaveCell(m_control.get(), QStringLiteral("FE2"), ColumnDetails)) > 0,
                             10000);
    QTRY_VERIFY_WITH_TIMEOUT(
        !m_control->messageTable()->findItems(QStringLiteral("rewritten"), Qt::MatchContains).isEmpty(),
        10000);
    grab(m_control.get(), QStringLiteral("runcontrol.png"));

    click(m_control.get(), Transition::Pause, QStringLiteral("Paused"));
    click(m_control.get(), Transition::Resume, QStringLiteral("Running"));
    const int before = m_confirmations;
    click(m_control.get(), Transition::Stop, QStringLiteral("Configured"));
    QCOMPARE(m_confirmations, before + 1); // stopping a run asks first

    // A refused confirmation leaves the run alone.
    click(m_control.get(), Transition::Start, QStringLiteral("Running"));
    m_control->setConfirmation([](const QString &) { return false; });
    QTest::mouseClick(m_control->button(Transition::Stop), Qt::LeftButton);
    QVERIFY(expectNothingFor(
        500, [this] { return state(m_control.get()) != QLatin1String("Running"); },
        "a transition after the operator refused to confirm it"));
    m_control->setConfirmation([this](const QString &) {
        ++m_confirmations;
        return true;
    });
    click(m_control.get(), Transition::Stop, QStringLiteral("Configured"));
    QVERIFY(m_control->masterState());
    QCOMPARE(m_control->masterState()->runNumber, 2u);
}

void tst_RunControlGui::secondControlGuiIsRefusedAndMonitors()
{
    auto second = window(QStringLiteral("RunControl.GUI.test2"), true);
    QSignalSpy modes(second.get(), &RunControlWindow::modeChanged);
    QTRY_VERIFY_WITH_TIMEOUT(second->statusBar()->currentMessage().contains(
                                 QLatin1String("another run-control GUI is in control")),
                             10000);
    QCOMPARE(second->mode(), RunControlWindow::Mode::Monitoring);
    QTRY_COMPARE_WITH_TIMEOUT(state(second.get()), QStringLiteral("Configured"), 10000);
    QTRY_COMPARE_WITH_TIMEOUT(second->slaveTable()->rowCount(), 4, 10000);
    for (QPushButton *b : second->findChildren<QPushButton *>())
        if (b->objectName() != QLatin1String("") && rc::transitionFromName(b->objectName()))
            QVERIFY2(!b->isEnabled(), qPrintable(b->text()));
    QVERIFY(!second->requestTransition(Transition::Start));
    QCOMPARE(m_control->mode(), RunControlWindow::Mode::Control); // the first keeps control
    grab(second.get(), QStringLiteral("runcontrol-monitoring.png"));

    // When the controlling GUI goes away, the other can take control.
    m_control.reset();
    // Once the Control Server has seen it leave.
    QTRY_VERIFY_WITH_TIMEOUT(m_fx->processEntry(QStringLiteral("RunControl.GUI.test1")).isEmpty(), 10000);
    second->takeControl();
    QTRY_COMPARE_WITH_TIMEOUT(second->mode(), RunControlWindow::Mode::Control, 10000);
    QTRY_VERIFY_WITH_TIMEOUT(second->button(Transition::Start)->isEnabled(), 10000);
    second.reset();
    m_control = window(QStringLiteral("RunControl.GUI.test1"), true);
    m_control->setConfirmation([](const QString &) { return true; });
    QTRY_COMPARE_WITH_TIMEOUT(m_control->mode(), RunControlWindow::Mode::Control, 10000);
}

void tst_RunControlGui::messagesAreFiltered()
{
    QTableWidget *t = m_control->messageTable();
    QTRY_VERIFY_WITH_TIMEOUT(t->rowCount() > 0, 10000);
    auto visible = [t](int column, const QString &text) {
        int n = 0;
        for (int r = 0; r < t->rowCount(); ++r)
            if (!t->isRowHidden(r))
                n += t->item(r, column)->text().contains(text) ? 1 : 0;
        return n;
    };
    // FE2 flips a register bit every second while configured: warnings appear.
    QTRY_VERIFY_WITH_TIMEOUT(visible(2, QStringLiteral("warning")) > 0, 10000);
    m_control->messageFilter()->setText(QStringLiteral("FE2"));
    for (int r = 0; r < t->rowCount(); ++r)
        if (!t->isRowHidden(r))
            QVERIFY(t->item(r, 1)->text().contains(QLatin1String("FE2")) ||
                    t->item(r, 3)->text().contains(QLatin1String("FE2")));
    m_control->messageFilter()->clear();
    m_control->severityFilter()->setCurrentIndex(2); // errors only
    QCOMPARE(visible(2, QStringLiteral("info")) + visible(2, QStringLiteral("warning")), 0);
    m_control->severityFilter()->setCurrentIndex(0);
    QVERIFY(visible(2, QStringLiteral("info")) > 0);
}

void tst_RunControlGui::errorIsShownWithTheCulprit()
{
    click(m_control.get(), Transition::Start, QStringLiteral("Running"));
    m_fe2->kill();
    QTRY_COMPARE_WITH_TIMEOUT(state(m_control.get()), QStringLiteral("Error"), 10000);
    QTRY_COMPARE_WITH_TIMEOUT(slaveCell(m_control.get(), QStringLiteral("FE2"), 2), QStringLiteral("LOST"),
                              5000);
    QVERIFY(m_control->button(Transition::Reset)->isEnabled());
    QVERIFY(!m_control->button(Transition::Stop)->isEnabled());
    grab(m_control.get(), QStringLiteral("runcontrol-error.png"));
    click(m_control.get(), Transition::Reset, QStringLiteral("Initial"));
}

void tst_RunControlGui::messagePaneFetchesLoggerHistoryAndRates()
{
    // With a logger running, a newly opened GUI shows the last hour's messages before any live one,
    // and the rate of stored messages per severity.
    m_fx->start(QStringLiteral("dialog-logger"),
                {QStringLiteral("--data-dir"), m_dir->filePath(QStringLiteral("logger"))});
    QTRY_VERIFY_WITH_TIMEOUT(
        m_fx->run(QStringLiteral("dialogctl"), {QStringLiteral("log"), QStringLiteral("stats")}) == 0, 15000);
    QCOMPARE(m_fx->run(QStringLiteral("dialogctl"),
                       {QStringLiteral("log"), QStringLiteral("report"), QStringLiteral("--name"),
                        QStringLiteral("Disk"), QStringLiteral("--severity"), QStringLiteral("warning"),
                        QStringLiteral("history: disk 80% full")}),
             0);
    auto w = window(QStringLiteral("RunControl.GUI.history"), false);
    QTableWidget *t = w->messageTable();
    auto rowOf = [t](const QString &text) {
        for (int r = 0; r < t->rowCount(); ++r)
            if (t->item(r, 3)->text() == text)
                return r;
        return -1;
    };
    QTRY_VERIFY_WITH_TIMEOUT(rowOf(QStringLiteral("history: disk 80% full")) >= 0, 10000);
    QCOMPARE(t->item(rowOf(QStringLiteral("history: disk 80% full")), 1)->text(), QStringLiteral("Disk"));
    QCOMPARE(m_fx->run(QStringLiteral("dialogctl"),
                       {QStringLiteral("log"), QStringLiteral("report"), QStringLiteral("--name"),
                        QStringLiteral("Disk"), QStringLiteral("--severity"), QStringLiteral("error"),
                        QStringLiteral("--count"), QStringLiteral("3"), QStringLiteral("--numbered"),
                        QStringLiteral("--collapse-ms"), QStringLiteral("0"), QStringLiteral("disk full")}),
             0);
    QTRY_VERIFY_WITH_TIMEOUT(w->messageRates()->rate(Severity::Error) >= 0.3, 10000);
    QTRY_VERIFY_WITH_TIMEOUT(w->messageRates()->text().startsWith(QLatin1String("messages/s: info ")) &&
                                 w->messageRates()->text().contains(QLatin1String(">error 0.")),
                             5000);
}

QTEST_MAIN(tst_RunControlGui)
#include "tst_runcontrol.moc"
