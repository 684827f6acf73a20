// The Control Server's supervision (controlserver/supervision.cpp) alone, on a directory without a
// network: a process is declared lost once, with its record, when it disconnects or falls silent;
// the server's own pauses are told from the processes' silence.
#include "supervision.h"

#include <QtTest>

using namespace dialog::cs;

namespace {
ProcessRecord process(const QString &name, int heartbeatMs, qint64 lastSeenMs)
{
    ProcessRecord p;
    p.name = name;
    p.host = QStringLiteral("127.0.0.1");
    p.port = 40000;
    p.pid = 42;
    p.incarnation = 7;
    p.heartbeatMs = heartbeatMs;
    p.lastSeenMs = lastSeenMs;
    return p;
}
} // namespace

class tst_Supervision : public QObject
{
    Q_OBJECT

private slots:
    void lostOnceWithItsRecord();
    void silentProcessIsLost();
    void stalled_data();
    void stalled();
};

void tst_Supervision::lostOnceWithItsRecord()
{
    ServerContext ctx{ServerOptions()};
    QString why;
    QCOMPARE(ctx.directory.connectProcess(process(QStringLiteral("Reader"), 1000, ctx.now()), &why),
             Directory::ConnectResult::Accepted);
    ctx.directory.registerCommand(QStringLiteral("Reader"), QStringLiteral("Stop"));
    Supervision supervision(ctx);
    QSignalSpy lost(&supervision, &Supervision::lost);
    QSignalSpy changed(&supervision, &Supervision::directoryChanged);
    supervision.lose(QStringLiteral("Reader"), QStringLiteral("crashed"));
    QCOMPARE(lost.count(), 1);
    const auto record = lost.first().first().value<ProcessRecord>();
    QCOMPARE(record.name, QStringLiteral("Reader"));
    QCOMPARE(record.incarnation, quint64(7));
    QVERIFY(record.commands.contains(QStringLiteral("Stop")));
    QCOMPARE(changed.count(), 1);
    QCOMPARE(changed.first().first().toBool(), true); // it had commands: the routes change
    QVERIFY(!ctx.directory.process(QStringLiteral("Reader")));
    QCOMPARE(ctx.directory.snapshot(ctx.wallNow()).lost.last().lostReason, QStringLiteral("crashed"));
    supervision.lose(QStringLiteral("Reader"), QStringLiteral("again"));
    QCOMPARE(lost.count(), 1);
}

void tst_Supervision::silentProcessIsLost()
{
    ServerOptions o;
    o.heartbeatMisses = 2;
    ServerContext ctx{o};
    QString why;
    ctx.directory.connectProcess(process(QStringLiteral("Quiet"), 10, ctx.now()), &why);
    Supervision supervision(ctx);
    QSignalSpy lost(&supervision, &Supervision::lost);
    supervision.start();
    QTRY_COMPARE_WITH_TIMEOUT(lost.count(), 1, 10000);
    QCOMPARE(lost.first().first().value<ProcessRecord>().name, QStringLiteral("Quiet"));
    QCOMPARE(ctx.directory.snapshot(ctx.wallNow()).lost.last().lostReason,
             QStringLiteral("no heartbeat for 2 intervals"));
}

void tst_Supervision::stalled_data()
{
    QTest::addColumn<qint64>("gap");
    QTest::addColumn<int>("misses");
    QTest::addColumn<int>("heartbeatMs");
    QTest::addColumn<int>("shortestMs");
    QTest::addColumn<bool>("stalled");
    QTest::newRow("a tick") << qint64(20) << 3 << 1000 << 1000 << false;
    QTest::newRow("shorter than the floor") << qint64(199) << 1 << 50 << 50 << false;
    QTest::newRow("over the floor, short intervals") << qint64(201) << 1 << 50 << 50 << true;
    QTest::newRow("within misses x interval") << qint64(3000) << 3 << 1000 << 1000 << false;
    QTest::newRow("past misses x interval") << qint64(3001) << 3 << 1000 << 1000 << true;
    QTest::newRow("a process with a shorter interval") << qint64(1000) << 3 << 1000 << 300 << true;
}

void tst_Supervision::stalled()
{
    QFETCH(qint64, gap);
    QFETCH(int, misses);
    QFETCH(int, heartbeatMs);
    QFETCH(int, shortestMs);
    QFETCH(bool, stalled);
    QCOMPARE(Supervision::stalled(gap, misses, heartbeatMs, shortestMs), stalled);
}

QTEST_GUILESS_MAIN(tst_Supervision)
#include "tst_supervision.moc"
