// The master's run-number file: what a master restarted mid-run reads back is what its predecessor
// saved, older layouts read with the missing fields unknown, and a bad file is refused with a reason.
#include "runrecord.h"

#include <QTemporaryDir>
#include <QtTest>

using namespace dialog::daq;

class tst_RunRecord : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void roundTrips();
    void absentFileIsRunZero();
    void olderLayoutsRead_data();
    void olderLayoutsRead();
    void badFileIsRefused();
    void activeTimeCountsOnlyWhileRunning();

private:
    QString writeFile(const QByteArray &text);
    QTemporaryDir m_dir;
};

QString tst_RunRecord::writeFile(const QByteArray &text)
{
    const QString path = m_dir.filePath(QStringLiteral("runnumber"));
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate) || f.write(text) != text.size())
        qFatal("cannot write %s", qPrintable(path));
    return path;
}

void tst_RunRecord::roundTrips()
{
    RunRecord r;
    r.number = 372541;
    r.startMs = 1795844806008;
    r.activeMsBefore = 12345;
    r.runningSinceMs = 1795844906008;
    r.disabled = QStringList{QStringLiteral("CAL"), QStringLiteral("FE3")};
    r.owners.insert(QStringLiteral("CAL"), {QStringLiteral("alice@cr-03"), 1795844706008, 4711});
    const QString path = m_dir.filePath(QStringLiteral("sub/runnumber"));
    QString error;
    QVERIFY2(r.write(path, &error), qPrintable(error));
    RunRecord back;
    QVERIFY2(RunRecord::read(path, &back, &error), qPrintable(error));
    QCOMPARE(back.number, r.number);
    QCOMPARE(back.startMs, r.startMs);
    QCOMPARE(back.activeMsBefore, r.activeMsBefore);
    QCOMPARE(back.runningSinceMs, r.runningSinceMs);
    QCOMPARE(back.disabled, r.disabled);
    QCOMPARE(back.owners.size(), 1);
    QCOMPARE(back.owners.value(QStringLiteral("CAL")).owner, QStringLiteral("alice@cr-03"));
    QCOMPARE(back.owners.value(QStringLiteral("CAL")).sinceMs, 1795844706008);
    QCOMPARE(back.owners.value(QStringLiteral("CAL")).run, 4711u);
}

void tst_RunRecord::absentFileIsRunZero()
{
    RunRecord r;
    r.number = 7;
    QString error;
    QVERIFY(RunRecord::read(m_dir.filePath(QStringLiteral("none")), &r, &error));
    QCOMPARE(r.number, 0u);
    QCOMPARE(r.startMs, 0);
    QVERIFY(error.isEmpty());
}

void tst_RunRecord::olderLayoutsRead_data()
{
    QTest::addColumn<QByteArray>("text");
    QTest::addColumn<quint32>("number");
    QTest::addColumn<qint64>("startMs");
    QTest::addColumn<qint64>("activeMsBefore");
    QTest::newRow("number only") << QByteArray("41\n") << 41u << qint64(0) << qint64(0);
    QTest::newRow("number, no newline") << QByteArray("41") << 41u << qint64(0) << qint64(0);
    QTest::newRow("number and start")
        << QByteArray("41\n1795844806008\n") << 41u << qint64(1795844806008) << qint64(0);
    QTest::newRow("garbled start is unknown")
        << QByteArray("41\nsoon\n77\n") << 41u << qint64(0) << qint64(77);
    QTest::newRow("negative field is unknown") << QByteArray("41\n-5\n") << 41u << qint64(0) << qint64(0);
}

void tst_RunRecord::olderLayoutsRead()
{
    QFETCH(QByteArray, text);
    RunRecord r;
    QString error;
    QVERIFY2(RunRecord::read(writeFile(text), &r, &error), qPrintable(error));
    QTEST(r.number, "number");
    QTEST(r.startMs, "startMs");
    QTEST(r.activeMsBefore, "activeMsBefore");
    QCOMPARE(r.runningSinceMs, 0);
}

void tst_RunRecord::badFileIsRefused()
{
    RunRecord r;
    QString error;
    QVERIFY(!RunRecord::read(writeFile("run forty-one\n"), &r, &error));
    QVERIFY2(error.contains(QLatin1String("does not hold a run number")), qPrintable(error));
    QCOMPARE(r.number, 0u);
}

void tst_RunRecord::activeTimeCountsOnlyWhileRunning()
{
    RunRecord r;
    r.activeMsBefore = 5000;
    QCOMPARE(r.activeMsAt(1000000), 5000); // paused or stopped: it stands still
    r.runningSinceMs = 990000;
    QCOMPARE(r.activeMsAt(1000000), 15000);
    QCOMPARE(r.activeMsAt(980000), 5000); // a clock stepped back never makes it shrink below what ran
}

QTEST_GUILESS_MAIN(tst_RunRecord)
#include "tst_runrecord.moc"
