// The typed snapshots of DIALOG.Directory and DIALOG.Statistics: round trips, the wire names
// scripts rely on, and malformed input refused with a reason.
#include "dialog/directory.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QtTest>

using namespace dialog;

class tst_Snapshot : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void directoryRoundTrips();
    void directoryKeepsTheWireNames();
    void malformedIsRefused_data();
    void malformedIsRefused();
    void statisticsRoundTrips();
    void statisticsClampsNonsense();
    void serviceNames();
};

namespace {
DirectorySnapshot sample()
{
    DirectorySnapshot d;
    d.timeMs = 1700000000000;
    ProcessEntry a;
    a.name = QStringLiteral("RO1");
    a.host = QStringLiteral("10.1.0.2");
    a.port = 40001;
    a.pid = 123;
    a.services = {QStringLiteral("RunCtrl.RO1.Log"), QStringLiteral("RunCtrl.RO1.State")};
    a.commands = {QStringLiteral("RunCtrl.RO1.Command")};
    a.subscriptions = {QStringLiteral("RunParams.Info")};
    a.connectedAtMs = 1699999999000;
    ProcessEntry b = a;
    b.name = QStringLiteral("RO2");
    b.lostAtMs = 1700000000500;
    b.lostReason = QStringLiteral("no heartbeat for 3 s");
    d.processes = {a};
    d.lost = {b};
    return d;
}
} // namespace

void tst_Snapshot::directoryRoundTrips()
{
    const DirectorySnapshot d = sample();
    QString error;
    const auto back = DirectorySnapshot::fromJson(d.toJson(), &error);
    QVERIFY2(back, qPrintable(error));
    QCOMPARE(*back, d);
    QCOMPARE(back->processNames(), QStringList{QStringLiteral("RO1")});
    QVERIFY(back->process(QStringLiteral("RO1")));
    QVERIFY(!back->process(QStringLiteral("RO2"))); // lost: not a live process
    QCOMPARE(back->lost.first().lostReason, QStringLiteral("no heartbeat for 3 s"));
}

void tst_Snapshot::directoryKeepsTheWireNames()
{
    const QJsonObject o = sample().toJsonObject();
    const QJsonObject p = o.value(QStringLiteral("processes")).toArray().first().toObject();
    QCOMPARE(p.value(QStringLiteral("name")).toString(), QStringLiteral("RO1"));
    QCOMPARE(p.value(QStringLiteral("host")).toString(), QStringLiteral("10.1.0.2"));
    QCOMPARE(p.value(QStringLiteral("port")).toInt(), 40001);
    QCOMPARE(p.value(QStringLiteral("subscriptions")).toArray().size(), 1);
    QVERIFY(!p.contains(QStringLiteral("reason"))); // live processes carry no loss fields
    const QJsonObject l = o.value(QStringLiteral("lost")).toArray().first().toObject();
    QCOMPARE(l.value(QStringLiteral("reason")).toString(), QStringLiteral("no heartbeat for 3 s"));
    QCOMPARE(l.value(QStringLiteral("lost_at_ms")).toInteger(), 1700000000500);
    QCOMPARE(o.value(QStringLiteral("time_ms")).toInteger(), 1700000000000);
}

void tst_Snapshot::malformedIsRefused_data()
{
    QTest::addColumn<QByteArray>("json");
    QTest::addColumn<QString>("reason");
    QTest::newRow("empty") << QByteArray() << QStringLiteral("malformed DIALOG.Directory: ");
    QTest::newRow("truncated") << QByteArray("{\"processes\":[")
                               << QStringLiteral("malformed DIALOG.Directory: ");
    QTest::newRow("array") << QByteArray("[]")
                           << QStringLiteral("malformed DIALOG.Directory: no \"processes\" array");
    QTest::newRow("processes not an array")
        << QByteArray("{\"processes\":{}}")
        << QStringLiteral("malformed DIALOG.Directory: no \"processes\" array");
}

void tst_Snapshot::malformedIsRefused()
{
    QFETCH(QByteArray, json);
    QFETCH(QString, reason);
    QString error;
    QVERIFY(!DirectorySnapshot::fromJson(json, &error));
    QVERIFY2(error.startsWith(reason), qPrintable(error));
    QVERIFY(!StatisticsSnapshot::fromJson(json, &error));
    QVERIFY2(error.startsWith(QStringLiteral("malformed DIALOG.Statistics")), qPrintable(error));
}

void tst_Snapshot::statisticsRoundTrips()
{
    StatisticsSnapshot s;
    s.timeMs = 99;
    ProcessStatistics p;
    p.name = QStringLiteral("Reader");
    p.atMs = 98;
    p.messagesOut = (quint64(1) << 53); // the largest counter JSON carries exactly
    p.bytesOut = 123456789012;
    p.messagesIn = 5;
    p.bytesIn = 6;
    p.dropped = 7;
    p.reconnects = 8;
    p.protocolErrors = 9;
    p.queuedBytes = 10;
    p.outgoingConnections = 11;
    p.incomingConnections = 12;
    s.processes = {p};
    const auto back = StatisticsSnapshot::fromJson(s.toJson());
    QVERIFY(back);
    QCOMPARE(back->timeMs, 99);
    QVERIFY(back->process(QStringLiteral("Reader")));
    QCOMPARE(*back->process(QStringLiteral("Reader")), p);
    QVERIFY(!back->process(QStringLiteral("Writer")));
}

void tst_Snapshot::statisticsClampsNonsense()
{
    const auto s = StatisticsSnapshot::fromJson(
        R"({"processes":[{"name":"X","messages_out":-5,"bytes_in":"many","dropped":2.9}]})");
    QVERIFY(s);
    QCOMPARE(s->processes.size(), 1);
    QCOMPARE(s->processes.first().messagesOut, 0u);
    QCOMPARE(s->processes.first().bytesIn, 0u);
    QCOMPARE(s->processes.first().dropped, 2u);
}

void tst_Snapshot::serviceNames()
{
    QCOMPARE(directoryServiceName(), QStringLiteral("DIALOG.Directory"));
    QCOMPARE(statisticsServiceName(), QStringLiteral("DIALOG.Statistics"));
}

QTEST_GUILESS_MAIN(tst_Snapshot)
#include "tst_snapshot.moc"
