// The run-control GUI's line of a node's last crash, against a real Control Server, master and
// host agent on loopback, offscreen: the readout RO1 started through the agent, killed by SIGSEGV;
// the agent's crash report (backtrace by gdb) reaches the window as a line with the time, the
// signal and the crashing function, and as RO1's tooltip. Screenshot runcontrol-crash.png.
#include "lastcrash.h"
#include "rcfixture.h"
#include "runcontrolwindow.h"
#include "widgetscreenshot.h"

#include <QJsonArray>
#include <QTableWidget>
#include <QtTest>

using namespace dialog;
using namespace dialog::runcontrol;
using namespace dialog::test;

class tst_LastCrash : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void crashingFunctionOfABacktrace();
    void crashOfANodeShownInTheWindow();
    void cleanupTestCase();

private:
    RcBed m_bed;
    std::unique_ptr<RunControlWindow> m_window;
};

void tst_LastCrash::crashingFunctionOfABacktrace()
{
    // The crashing thread's innermost frame, with its source line when there is one.
    const QString bt = QStringLiteral(
        "#0  0x000055d1c0a3b2f4 in Readout::fill (this=0x55d1c1e0, n=3) at /src/slaves/readout.cpp:120\n"
        "#1  0x000055d1c0a3a000 in main (argc=1, argv=0x7ffd) at /src/slaves/slave_main.cpp:88\n"
        "[Current thread is 1 (Thread 0x7fe82b61b5c0 (LWP 25093))]\n"
        "#0  0x000055d1c0a3b2f4 in Readout::fill (this=0x55d1c1e0, n=3) at /src/slaves/readout.cpp:120\n");
    QCOMPARE(CrashWatch::crashingFunction(bt), QStringLiteral("Readout::fill (readout.cpp:120)"));
    // A signal from outside: where the process was (a system call, without sources).
    QCOMPARE(CrashWatch::crashingFunction(QStringLiteral("#0  0x1 in ?? ()\n#1  0x2 in poll () from /lib/libc.so.6\n")),
             QStringLiteral("poll"));
    QCOMPARE(CrashWatch::crashingFunction(QString()), QString());
    const QJsonObject crash{{QStringLiteral("time"), QDateTime(QDate(2026, 1, 2), QTime(14, 3, 7)).toMSecsSinceEpoch()},
                            {QStringLiteral("process"), QStringLiteral("RO1")},
                            {QStringLiteral("signal_name"), QStringLiteral("SIGSEGV")},
                            {QStringLiteral("host"), QStringLiteral("daq03")},
                            {QStringLiteral("pid"), 4711},
                            {QStringLiteral("backtrace"), bt}};
    QCOMPARE(CrashWatch::describe(crash),
             QStringLiteral("14:03:07 RO1: SIGSEGV in Readout::fill (readout.cpp:120) on daq03 (PID 4711)"));
    QJsonObject bare = crash;
    bare.remove(QStringLiteral("backtrace"));
    QVERIFY(CrashWatch::describe(bare).contains(QStringLiteral("SIGSEGV (no backtrace) on daq03")));
}

void tst_LastCrash::crashOfANodeShownInTheWindow()
{
    QVERIFY(m_bed.start(QStringLiteral("lastcrash-test")));
    ProcessFixture &fx = *m_bed.fx;
    fx.start(QStringLiteral("dialog-agent"),
             {QStringLiteral("--host-name"), QStringLiteral("guihost"), QStringLiteral("--data-dir"),
              m_bed.dir->filePath(QStringLiteral("agent")), QStringLiteral("--stop-children")});
    QVERIFY(waitUntil([&] { return !fx.processEntry(QStringLiteral("DIALOG.Agent.guihost")).isEmpty(); }, 15000, 100));
    const QString partition = m_bed.writePartition(
        QStringLiteral("lastcrash"),
        QJsonArray{QJsonObject{{QStringLiteral("name"), QStringLiteral("RO1")}, {QStringLiteral("kind"), QStringLiteral("readout")}},
                   QJsonObject{{QStringLiteral("name"), QStringLiteral("FE1")}, {QStringLiteral("kind"), QStringLiteral("control")}}},
        3000, false, {});
    fx.start(QStringLiteral("dialog-master"), {QStringLiteral("--config"), partition, QStringLiteral("--no-is")});
    for (const auto &[name, kind] : {std::pair{"RO1", "readout"}, std::pair{"FE1", "control"}})
        QCOMPARE(fx.run(QStringLiteral("dialogctl"),
                        QStringList{QStringLiteral("agent"), QStringLiteral("start"), QStringLiteral("guihost"),
                                    QLatin1String(name), QStringLiteral("--"), QStringLiteral("dialog-slave"),
                                    QStringLiteral("--kind"), QLatin1String(kind), QStringLiteral("--name"),
                                    QLatin1String(name), QStringLiteral("--no-is"), QStringLiteral("--master"),
                                    QStringLiteral("Master")} +
                            kRcHeartbeat),
                 0);
    ClientOptions o = fx.clientOptions(QStringLiteral("lastcrash-gui"));
    o.heartbeatMs = 200;
    m_window = std::make_unique<RunControlWindow>(o, QStringLiteral("Master"), true);
    m_window->resize(980, 620);
    m_window->show();
    m_window->setConfirmation([](const QString &) { return true; });
    QTableWidget *table = m_window->slaveTable();
    const auto row = [&](const QString &name) -> QTableWidgetItem * {
        for (int r = 0; r < table->rowCount(); ++r)
            if (table->item(r, 0) && table->item(r, 0)->text() == name)
                return table->item(r, 0);
        return nullptr;
    };
    QTRY_VERIFY_WITH_TIMEOUT(row(QStringLiteral("RO1")) && row(QStringLiteral("FE1")), 15000);
    QVERIFY(m_window->crashLine()->isHidden()); // no crash yet
    QTRY_COMPARE_WITH_TIMEOUT(m_window->mode(), RunControlWindow::Mode::Control, 10000);
    QVERIFY(m_bed.transition(QStringLiteral("configure")).isOk());

    QCOMPARE(fx.run(QStringLiteral("dialogctl"), {QStringLiteral("agent"), QStringLiteral("signal"), QStringLiteral("guihost"),
                                                  QStringLiteral("RO1"), QStringLiteral("SEGV")}),
             0);
    // The agent's report (gdb takes a few seconds), asked for by the window every 3 s.
    QTRY_VERIFY_WITH_TIMEOUT(m_window->crashLine()->isVisible(), 60000);
    const QString line = m_window->crashLine()->text();
    QVERIFY2(line.startsWith(QStringLiteral("Last crash: ")) && line.contains(QStringLiteral("RO1: SIGSEGV in ")) &&
                 line.contains(QStringLiteral("on guihost")),
             qPrintable(line));
    // The function is that of the backtrace's first frame (the tooltip): where RO1 was when the
    // signal came (a system call, for a SIGSEGV sent from outside).
    const QString backtrace = m_window->crashLine()->toolTip();
    const QString function = line.section(QStringLiteral(" in "), 1).section(QStringLiteral(" on guihost"), 0, 0);
    QVERIFY2(!function.isEmpty() && backtrace.startsWith(QStringLiteral("#0 ")) &&
                 backtrace.section(QLatin1Char('\n'), 0, 0).contains(function.section(QLatin1Char(' '), 0, 0)),
             qPrintable(line + QLatin1Char('\n') + backtrace.left(600)));
    QVERIFY2(row(QStringLiteral("RO1"))->toolTip().contains(QStringLiteral("last crash: ")), qPrintable(row(QStringLiteral("RO1"))->toolTip()));
    QVERIFY(row(QStringLiteral("FE1"))->toolTip().isEmpty());
    QTRY_VERIFY_WITH_TIMEOUT(m_bed.masterState().contains(QStringLiteral("state")), 5000);
    QVERIFY(saveScreenshot(m_window.get(), QStringLiteral("runcontrol-crash.png")));
}

void tst_LastCrash::cleanupTestCase()
{
    m_window.reset();
    m_bed.stop();
}

QTEST_MAIN(tst_LastCrash)
#include "tst_lastcrash.moc"
