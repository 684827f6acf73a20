// The typed snapshots of DIALOG.Directory and DIALOG.Statistics: round trips, the wire names
// scripts rely on, and malformed input refused with a reason.
#include "statuscheck.h"

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
    void smallDirectoryIsOnePage();
    void largeDirectoryComesInPages();
    void assemblerSkipsIncompleteGenerations();
    void lostEntryCountsOmittedNames();
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
    DirectorySnapshot read;
    const dialog::Status s = DirectorySnapshot::fromJson(d.toJson(), &read);
    QVERIFY2(s.isOk(), qPrintable(s.toString()));
    const DirectorySnapshot *back = &read;
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
    DirectorySnapshot d;
    const dialog::Status dir = DirectorySnapshot::fromJson(json, &d);
    QCOMPARE(dir.code(), dialog::Status::Code::BadRequest);
    QVERIFY2(dir.message().startsWith(reason), qPrintable(dir.message()));
    StatisticsSnapshot s;
    const dialog::Status stats = StatisticsSnapshot::fromJson(json, &s);
    QCOMPARE(stats.code(), dialog::Status::Code::BadRequest);
    QVERIFY2(stats.message().startsWith(QStringLiteral("malformed DIALOG.Statistics")), qPrintable(stats.message()));
}

namespace {
/// @p processes processes with @p services long service names each (and a lost one like them).
DirectorySnapshot large(int processes, int services, int nameBytes)
{
    DirectorySnapshot d;
    d.timeMs = 42;
    for (int i = 0; i < processes; ++i) {
        ProcessEntry p;
        p.name = QStringLiteral("P%1").arg(i, 3, 10, QLatin1Char('0'));
        p.host = QStringLiteral("127.0.0.1");
        p.port = quint16(20000 + i);
        for (int s = 0; s < services; ++s)
            p.services << QStringLiteral("%1.S%2.")
                              .arg(p.name)
                              .arg(s, 5, 10, QLatin1Char('0'))
                              .leftJustified(nameBytes, QLatin1Char('x'));
        p.commands = {p.name + QStringLiteral(".Cmd")};
        p.subscriptions = {QStringLiteral("Other.\"quoted\"\u00e9")}; // escapes count in the size
        d.processes << p;
    }
    ProcessEntry gone = d.processes.first();
    gone.name = QStringLiteral("Gone");
    gone.lostAtMs = 41;
    gone.lostReason = QStringLiteral("no heartbeat");
    d.lost << gone;
    return d;
}

/// What @p a.add(@p message) completes (std::nullopt while pages are missing or for a malformed one).
std::optional<DirectorySnapshot> take(DirectoryAssembler &a, const QByteArray &message)
{
    std::optional<DirectorySnapshot> out;
    if (const dialog::Status s = a.add(message, &out); !s.isOk())
        qWarning() << s.toString();
    return out;
}

std::optional<DirectorySnapshot> assemble(const QList<QByteArray> &pages, DirectoryAssembler &a)
{
    std::optional<DirectorySnapshot> out;
    for (qsizetype i = 0; i < pages.size(); ++i) {
        out = take(a, pages.at(i));
        if (i + 1 < pages.size() && out)
            return std::nullopt; // complete before the last page: wrong
    }
    return out;
}
} // namespace

void tst_Snapshot::smallDirectoryIsOnePage()
{
    const DirectorySnapshot d = sample();
    const QList<QByteArray> pages = d.toPages(1 << 20, 7);
    QCOMPARE(pages.size(), 1);
    // A reader that knows nothing of pages reads it as before.
    QCOMPARE(*dialog::test::fromJson<DirectorySnapshot>(pages.first()), d);
    DirectoryAssembler a;
    const auto back = take(a, pages.first());
    QVERIFY(back);
    QCOMPARE(*back, d);
    // A message of a Control Server that does not page is a whole directory.
    QCOMPARE(*take(a, d.toJson()), d);
}

void tst_Snapshot::largeDirectoryComesInPages()
{
    // 3 processes × 300 names of 1,000 bytes (~900 KB) in pages of 64 KiB: one process spans pages.
    const DirectorySnapshot d = large(3, 300, 1000);
    const qint64 limit = DirectorySnapshot::MinPageBytes;
    const QList<QByteArray> pages = d.toPages(limit, 9);
    QVERIFY2(pages.size() > 3 * 300 * 1000 / limit, qPrintable(QString::number(pages.size())));
    for (const QByteArray &p : pages) {
        QVERIFY2(p.size() <= limit, qPrintable(QString::number(p.size())));
        QVERIFY(dialog::test::fromJson<DirectorySnapshot>(p)); // each page is a valid (partial) snapshot
    }
    DirectoryAssembler a;
    const auto back = assemble(pages, a);
    QVERIFY(back);
    QCOMPARE(*back, d);
    // The next generation on the same assembler.
    const auto again = assemble(d.toPages(limit, 10), a);
    QVERIFY(again);
    QCOMPARE(*again, d);
}

void tst_Snapshot::assemblerSkipsIncompleteGenerations()
{
    const DirectorySnapshot d = large(2, 200, 1000);
    const QList<QByteArray> g1 = d.toPages(DirectorySnapshot::MinPageBytes, 1);
    DirectorySnapshot e = d;
    e.processes.removeLast();
    const QList<QByteArray> g2 = e.toPages(DirectorySnapshot::MinPageBytes, 2);
    QVERIFY(g1.size() > 2);
    DirectoryAssembler a;
    // Generation 1 breaks off after two pages, generation 2 comes whole: only it is complete.
    QVERIFY(!take(a, g1.at(0)));
    QVERIFY(!take(a, g1.at(1)));
    const auto back = assemble(g2, a);
    QVERIFY(back);
    QCOMPARE(*back, e);
    // A page whose generation's start was missed is not taken for a whole directory.
    for (qsizetype i = 1; i < g1.size(); ++i)
        QVERIFY(!take(a, g1.at(i)));
    std::optional<DirectorySnapshot> none;
    const dialog::Status bad = a.add(R"({"processes":[],"page":3,"pages":2})", &none);
    QCOMPARE(bad.code(), dialog::Status::Code::BadRequest);
    QVERIFY2(bad.message().contains(QStringLiteral("page 3 of 2")), qPrintable(bad.message()));
    QVERIFY(!none);
}

void tst_Snapshot::lostEntryCountsOmittedNames()
{
    DirectorySnapshot d = sample();
    d.lost.first().omittedNames = 1234;
    const QJsonObject l = d.toJsonObject().value(QStringLiteral("lost")).toArray().first().toObject();
    QCOMPARE(l.value(QStringLiteral("omitted")).toInt(), 1234);
    QCOMPARE(*dialog::test::fromJson<DirectorySnapshot>(d.toJson()), d);
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
    const auto back = dialog::test::fromJson<StatisticsSnapshot>(s.toJson());
    QVERIFY(back);
    QCOMPARE(back->timeMs, 99);
    QVERIFY(back->process(QStringLiteral("Reader")));
    QCOMPARE(*back->process(QStringLiteral("Reader")), p);
    QVERIFY(!back->process(QStringLiteral("Writer")));
}

void tst_Snapshot::statisticsClampsNonsense()
{
    const auto s = dialog::test::fromJson<StatisticsSnapshot>(
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
