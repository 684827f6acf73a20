// Unit tests of the Control Server's directory (controlserver/directory.h): pure logic, no I/O.
#include "directory.h"
#include "statuscheck.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QtTest>

using namespace dialog::cs;
using Result = Directory::ConnectResult;

namespace {

ProcessRecord proc(const QString &name, quint16 port, quint32 pid, quint64 incarnation,
                   int heartbeatMs = 1000, qint64 connectedAtMs = 0)
{
    ProcessRecord p;
    p.name = name;
    p.host = QStringLiteral("host-") + name.toLower();
    p.port = port;
    p.pid = pid;
    p.incarnation = incarnation;
    p.heartbeatMs = heartbeatMs;
    p.connectedAtMs = connectedAtMs;
    p.lastSeenMs = connectedAtMs;
    return p;
}

QStringList names(const QJsonArray &a)
{
    QStringList l;
    for (const QJsonValue &v : a)
        l.append(v.toString());
    return l;
}

QStringList processNamesIn(const QJsonArray &a)
{
    QStringList l;
    for (const QJsonValue &v : a)
        l.append(v.toObject().value(QStringLiteral("name")).toString());
    return l;
}

QStringList sortedKeys(const QJsonObject &o)
{
    QStringList k = o.keys();
    k.sort();
    return k;
}

} // namespace

class tst_Directory : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void newProcessAccepted();
    void sameIncarnationRefreshed();
    void otherIncarnationNameInUse();
    void connectIgnoresRegistrationsInRecord();
    void connectedMatchesIncarnation();
    void processAtFindsHostAndPort();
    void processNamesSorted();

    void duplicateServiceRefused();
    void sameProcessRegistersServiceTwice();
    void unknownProcessCannotRegister();
    void unregisterServiceOnlyByOwner();
    void unregisterUnknownServiceRefused_data();
    void unregisterUnknownServiceRefused();

    void commandTargetsSorted();
    void requestBeforeProviderExists();
    void cancelRequestForgetsRequester();
    void subscribersAndProviders();

    void removeProcessFreesEverything();
    void removalWithoutReasonIsNotLost();
    void removeUnknownProcessReturnsEmptyRecord();
    void reconnectAfterLossLeavesLostList();
    void lostListIsBounded();
    void lostListBoundedByAgeAndNames();

    void expiryUsesEachProcessHeartbeat();
    void toJsonShape();
    void statisticsOnlyOfProcessesThatReported();
    void publishedSnapshotsReadBack();
};

void tst_Directory::newProcessAccepted()
{
    Directory d;
    QString reason = QStringLiteral("untouched");
    QCOMPARE(d.connectProcess(proc(QStringLiteral("B"), 2000, 20, 2), &reason), Result::Accepted);
    QCOMPARE(d.connectProcess(proc(QStringLiteral("A"), 1000, 10, 1), &reason), Result::Accepted);
    QCOMPARE(reason, QStringLiteral("untouched"));
    QCOMPARE(d.processCount(), 2);
    QCOMPARE(d.processNames(), (QStringList{QStringLiteral("A"), QStringLiteral("B")}));
    const ProcessRecord *a = d.process(QStringLiteral("A"));
    QVERIFY(a);
    QCOMPARE(a->host, QStringLiteral("host-a"));
    QCOMPARE(a->port, quint16(1000));
    QCOMPARE(a->pid, 10u);
    QCOMPARE(a->incarnation, quint64(1));
    QCOMPARE(d.process(QStringLiteral("C")), nullptr);
}

void tst_Directory::sameIncarnationRefreshed()
{
    Directory d;
    QCOMPARE(d.connectProcess(proc(QStringLiteral("A"), 1000, 10, 7), nullptr), Result::Accepted);
    QCOMPARE(d.connectProcess(proc(QStringLiteral("B"), 2000, 20, 8), nullptr), Result::Accepted);
    QVERIFY(d.registerService(QStringLiteral("A"), QStringLiteral("A.Rate"), nullptr));
    d.registerCommand(QStringLiteral("A"), QStringLiteral("Reset"));
    d.request(QStringLiteral("A"), QStringLiteral("B.State"));
    d.request(QStringLiteral("B"), QStringLiteral("A.Rate"));

    // The same process connects again (e.g. after a Control Server hiccup), from a new port.
    QString reason;
    QCOMPARE(d.connectProcess(proc(QStringLiteral("A"), 1001, 10, 7), &reason), Result::Refreshed);
    QCOMPARE(d.processCount(), 2);
    QCOMPARE(d.process(QStringLiteral("A"))->port, quint16(1001));
    // Its old registrations are dropped; it re-registers them one by one.
    QVERIFY(d.process(QStringLiteral("A"))->services.isEmpty());
    QVERIFY(d.process(QStringLiteral("A"))->commands.isEmpty());
    QVERIFY(d.process(QStringLiteral("A"))->requests.isEmpty());
    QCOMPARE(d.provider(QStringLiteral("A.Rate")), nullptr);
    QCOMPARE(d.serviceCount(), 0);
    QVERIFY(d.commandTargets(QStringLiteral("Reset")).isEmpty());
    QVERIFY(d.requesters(QStringLiteral("B.State")).isEmpty());
    // Others' requests for its services stay queued.
    QCOMPARE(d.requesters(QStringLiteral("A.Rate")), QStringList{QStringLiteral("B")});
    // A refresh is not a loss.
    QVERIFY(d.toJson(0).value(QStringLiteral("lost")).toArray().isEmpty());
}

void tst_Directory::otherIncarnationNameInUse()
{
    Directory d;
    QCOMPARE(d.connectProcess(proc(QStringLiteral("Reader"), 4000, 4242, 1), nullptr), Result::Accepted);
    QVERIFY(d.registerService(QStringLiteral("Reader"), QStringLiteral("Reader.Rate"), nullptr));

    QString reason;
    QCOMPARE(d.connectProcess(proc(QStringLiteral("Reader"), 5000, 777, 2), &reason), Result::NameInUse);
    QVERIFY2(reason.contains(QLatin1String("pid 4242")), qPrintable(reason));
    QVERIFY2(reason.contains(QLatin1String("'Reader'")), qPrintable(reason));
    QVERIFY2(reason.contains(QLatin1String("host-reader:4000")), qPrintable(reason));
    QVERIFY2(!reason.contains(QLatin1String("777")), qPrintable(reason));
    QCOMPARE(d.connectProcess(proc(QStringLiteral("Reader"), 5000, 777, 2), nullptr), Result::NameInUse);

    // The holder is untouched.
    const ProcessRecord *p = d.process(QStringLiteral("Reader"));
    QVERIFY(p);
    QCOMPARE(p->incarnation, quint64(1));
    QCOMPARE(p->pid, 4242u);
    QCOMPARE(p->port, quint16(4000));
    QCOMPARE(d.provider(QStringLiteral("Reader.Rate")), p);
    QCOMPARE(d.processCount(), 1);
}

void tst_Directory::connectIgnoresRegistrationsInRecord()
{
    Directory d;
    ProcessRecord p = proc(QStringLiteral("A"), 1000, 10, 1);
    p.services = {QStringLiteral("S")};
    p.commands = {QStringLiteral("C")};
    p.requests = {QStringLiteral("R")};
    QCOMPARE(d.connectProcess(p, nullptr), Result::Accepted);
    QVERIFY(d.process(QStringLiteral("A"))->services.isEmpty());
    QVERIFY(d.process(QStringLiteral("A"))->commands.isEmpty());
    QVERIFY(d.process(QStringLiteral("A"))->requests.isEmpty());
    QCOMPARE(d.provider(QStringLiteral("S")), nullptr);
    QCOMPARE(d.serviceCount(), 0);
    QVERIFY(d.commandTargets(QStringLiteral("C")).isEmpty());
    QVERIFY(d.requesters(QStringLiteral("R")).isEmpty());
}

void tst_Directory::connectedMatchesIncarnation()
{
    Directory d;
    d.connectProcess(proc(QStringLiteral("A"), 1000, 10, 99), nullptr);
    QCOMPARE(d.connected(QStringLiteral("A"), 99), d.process(QStringLiteral("A")));
    QVERIFY(d.connected(QStringLiteral("A"), 99));
    QCOMPARE(d.connected(QStringLiteral("A"), 98), nullptr);
    QCOMPARE(d.connected(QStringLiteral("B"), 99), nullptr);
}

void tst_Directory::processAtFindsHostAndPort()
{
    Directory d;
    d.connectProcess(proc(QStringLiteral("A"), 1000, 10, 1), nullptr);
    d.connectProcess(proc(QStringLiteral("B"), 2000, 20, 2), nullptr);
    QCOMPARE(d.processAt(QStringLiteral("host-a"), 1000), QStringLiteral("A"));
    QCOMPARE(d.processAt(QStringLiteral("host-b"), 2000), QStringLiteral("B"));
    QVERIFY(d.processAt(QStringLiteral("host-a"), 2000).isEmpty());
    QVERIFY(d.processAt(QStringLiteral("host-c"), 1000).isEmpty());
}

void tst_Directory::processNamesSorted()
{
    Directory d;
    QStringList expected;
    for (int i = 25; i >= 0; --i) {
        const QString n = QStringLiteral("Proc.") + QChar(u'A' + i);
        expected.prepend(n);
        QCOMPARE(d.connectProcess(proc(n, quint16(1000 + i), quint32(i), 1), nullptr), Result::Accepted);
    }
    QCOMPARE(d.processCount(), 26);
    QCOMPARE(d.processNames(), expected);
    QCOMPARE(processNamesIn(d.toJson(0).value(QStringLiteral("processes")).toArray()), expected);
}

void tst_Directory::duplicateServiceRefused()
{
    Directory d;
    d.connectProcess(proc(QStringLiteral("A"), 1000, 10, 1), nullptr);
    d.connectProcess(proc(QStringLiteral("B"), 2000, 20, 2), nullptr);
    QString owner = QStringLiteral("untouched");
    QVERIFY(d.registerService(QStringLiteral("A"), QStringLiteral("Shared.Name"), &owner));
    QCOMPARE(owner, QStringLiteral("untouched"));

    QVERIFY(!d.registerService(QStringLiteral("B"), QStringLiteral("Shared.Name"), &owner));
    QCOMPARE(owner, QStringLiteral("A"));
    QVERIFY(!d.registerService(QStringLiteral("B"), QStringLiteral("Shared.Name"), nullptr));
    QCOMPARE(d.provider(QStringLiteral("Shared.Name")), d.process(QStringLiteral("A")));
    QVERIFY(d.process(QStringLiteral("B"))->services.isEmpty());
    QCOMPARE(d.serviceCount(), 1);
}

void tst_Directory::sameProcessRegistersServiceTwice()
{
    Directory d;
    d.connectProcess(proc(QStringLiteral("A"), 1000, 10, 1), nullptr);
    QString owner;
    QVERIFY(d.registerService(QStringLiteral("A"), QStringLiteral("S"), &owner));
    QVERIFY(d.registerService(QStringLiteral("A"), QStringLiteral("S"), &owner));
    QVERIFY(owner.isEmpty());
    QCOMPARE(d.serviceCount(), 1);
    QCOMPARE(d.process(QStringLiteral("A"))->services, QSet<QString>{QStringLiteral("S")});
    QCOMPARE(d.provider(QStringLiteral("S"))->name, QStringLiteral("A"));
}

void tst_Directory::unknownProcessCannotRegister()
{
    Directory d;
    QString owner;
    QVERIFY(!d.registerService(QStringLiteral("Ghost"), QStringLiteral("S"), &owner));
    QVERIFY(owner.isEmpty());
    QCOMPARE(d.provider(QStringLiteral("S")), nullptr);
    QCOMPARE(d.serviceCount(), 0);
    d.registerCommand(QStringLiteral("Ghost"), QStringLiteral("C"));
    QVERIFY(d.commandTargets(QStringLiteral("C")).isEmpty());
    d.request(QStringLiteral("Ghost"), QStringLiteral("S"));
    QVERIFY(d.requesters(QStringLiteral("S")).isEmpty());
    QCOMPARE(d.processCount(), 0);
}

void tst_Directory::unregisterServiceOnlyByOwner()
{
    Directory d;
    d.connectProcess(proc(QStringLiteral("A"), 1000, 10, 1), nullptr);
    d.connectProcess(proc(QStringLiteral("B"), 2000, 20, 2), nullptr);
    QVERIFY(d.registerService(QStringLiteral("A"), QStringLiteral("S"), nullptr));
    QVERIFY(d.registerService(QStringLiteral("A"), QStringLiteral("T"), nullptr));

    QVERIFY(!d.unregisterService(QStringLiteral("B"), QStringLiteral("S")));
    QVERIFY(!d.unregisterService(QStringLiteral("Ghost"), QStringLiteral("S")));
    QCOMPARE(d.provider(QStringLiteral("S"))->name, QStringLiteral("A"));

    QVERIFY(d.unregisterService(QStringLiteral("A"), QStringLiteral("S")));
    QCOMPARE(d.provider(QStringLiteral("S")), nullptr);
    QCOMPARE(d.process(QStringLiteral("A"))->services, QSet<QString>{QStringLiteral("T")});
    QCOMPARE(d.serviceCount(), 1);
    QVERIFY(!d.unregisterService(QStringLiteral("A"), QStringLiteral("S")));

    // Now free for another process.
    QVERIFY(d.registerService(QStringLiteral("B"), QStringLiteral("S"), nullptr));
    QCOMPARE(d.provider(QStringLiteral("S"))->name, QStringLiteral("B"));
    QCOMPARE(d.processCount(), 2);
}

void tst_Directory::unregisterUnknownServiceRefused_data()
{
    QTest::addColumn<QString>("process");
    QTest::newRow("connected-process") << QStringLiteral("A");
    QTest::newRow("unknown-process") << QStringLiteral("Ghost");
    QTest::newRow("empty-process-name") << QString();
}

void tst_Directory::unregisterUnknownServiceRefused()
{
    QFETCH(QString, process);
    Directory d;
    d.connectProcess(proc(QStringLiteral("A"), 1000, 10, 1), nullptr);

    const bool removed = d.unregisterService(process, QStringLiteral("Never.Registered"));
    QVERIFY(!removed);
    // Nothing may appear in the directory as a side effect.
    QCOMPARE(d.processNames(), QStringList{QStringLiteral("A")});
    QCOMPARE(d.serviceCount(), 0);
}

void tst_Directory::commandTargetsSorted()
{
    Directory d;
    for (const char *n : {"Zeta", "Alpha", "Mid", "Other"})
        d.connectProcess(proc(QLatin1String(n), 1000, 1, 1), nullptr);
    d.registerCommand(QStringLiteral("Zeta"), QStringLiteral("Run.Start"));
    d.registerCommand(QStringLiteral("Alpha"), QStringLiteral("Run.Start"));
    d.registerCommand(QStringLiteral("Mid"), QStringLiteral("Run.Start"));
    d.registerCommand(QStringLiteral("Mid"), QStringLiteral("Run.Start")); // twice: still one target
    d.registerCommand(QStringLiteral("Other"), QStringLiteral("Run.Stop"));

    QCOMPARE(d.commandTargets(QStringLiteral("Run.Start")),
             (QStringList{QStringLiteral("Alpha"), QStringLiteral("Mid"), QStringLiteral("Zeta")}));
    QCOMPARE(d.commandTargets(QStringLiteral("Run.Stop")), QStringList{QStringLiteral("Other")});
    QVERIFY(d.commandTargets(QStringLiteral("Run.Pause")).isEmpty());
    QCOMPARE(d.process(QStringLiteral("Mid"))->commands, QSet<QString>{QStringLiteral("Run.Start")});

    d.unregisterCommand(QStringLiteral("Mid"), QStringLiteral("Run.Start"));
    QCOMPARE(d.commandTargets(QStringLiteral("Run.Start")),
             (QStringList{QStringLiteral("Alpha"), QStringLiteral("Zeta")}));
    QVERIFY(d.process(QStringLiteral("Mid"))->commands.isEmpty());
    d.unregisterCommand(QStringLiteral("Other"), QStringLiteral("Run.Start")); // not registered: no effect
    QCOMPARE(d.commandTargets(QStringLiteral("Run.Start")).size(), 2);
}

void tst_Directory::requestBeforeProviderExists()
{
    Directory d;
    d.connectProcess(proc(QStringLiteral("Waiter"), 1000, 10, 1), nullptr);
    d.request(QStringLiteral("Waiter"), QStringLiteral("Late.Service"));
    QCOMPARE(d.provider(QStringLiteral("Late.Service")), nullptr);
    QCOMPARE(d.requesters(QStringLiteral("Late.Service")), QStringList{QStringLiteral("Waiter")});
    QCOMPARE(d.process(QStringLiteral("Waiter"))->requests, QSet<QString>{QStringLiteral("Late.Service")});

    d.connectProcess(proc(QStringLiteral("Late"), 2000, 20, 2), nullptr);
    QVERIFY(d.registerService(QStringLiteral("Late"), QStringLiteral("Late.Service"), nullptr));
    QCOMPARE(d.provider(QStringLiteral("Late.Service"))->name, QStringLiteral("Late"));
    QCOMPARE(d.requesters(QStringLiteral("Late.Service")), QStringList{QStringLiteral("Waiter")});
    QCOMPARE(d.subscribersOf(*d.process(QStringLiteral("Late"))), QStringList{QStringLiteral("Waiter")});
    QCOMPARE(d.providersFor(*d.process(QStringLiteral("Waiter"))), QStringList{QStringLiteral("Late")});
}

void tst_Directory::cancelRequestForgetsRequester()
{
    Directory d;
    d.connectProcess(proc(QStringLiteral("A"), 1000, 10, 1), nullptr);
    d.connectProcess(proc(QStringLiteral("B"), 2000, 20, 2), nullptr);
    d.request(QStringLiteral("A"), QStringLiteral("S"));
    d.request(QStringLiteral("B"), QStringLiteral("S"));
    QCOMPARE(d.requesters(QStringLiteral("S")), (QStringList{QStringLiteral("A"), QStringLiteral("B")}));
    d.cancelRequest(QStringLiteral("A"), QStringLiteral("S"));
    QCOMPARE(d.requesters(QStringLiteral("S")), QStringList{QStringLiteral("B")});
    QVERIFY(d.process(QStringLiteral("A"))->requests.isEmpty());
    d.cancelRequest(QStringLiteral("B"), QStringLiteral("S"));
    QVERIFY(d.requesters(QStringLiteral("S")).isEmpty());
}

void tst_Directory::subscribersAndProviders()
{
    Directory d;
    for (const char *n : {"P", "Q", "Sub1", "Sub2", "Idle"})
        d.connectProcess(proc(QLatin1String(n), 1000, 1, 1), nullptr);
    QVERIFY(d.registerService(QStringLiteral("P"), QStringLiteral("P.One"), nullptr));
    QVERIFY(d.registerService(QStringLiteral("P"), QStringLiteral("P.Two"), nullptr));
    QVERIFY(d.registerService(QStringLiteral("Q"), QStringLiteral("Q.One"), nullptr));
    d.request(QStringLiteral("Sub2"), QStringLiteral("P.One"));
    d.request(QStringLiteral("Sub2"), QStringLiteral("P.Two")); // twice the same provider: listed once
    d.request(QStringLiteral("Sub2"), QStringLiteral("Q.One"));
    d.request(QStringLiteral("Sub2"), QStringLiteral("Nobody.Provides"));
    d.request(QStringLiteral("Sub1"), QStringLiteral("P.Two"));
    d.request(QStringLiteral("P"), QStringLiteral("P.One")); // its own service: not its own partner
    d.request(QStringLiteral("P"), QStringLiteral("Q.One"));

    QCOMPARE(d.subscribersOf(*d.process(QStringLiteral("P"))),
             (QStringList{QStringLiteral("Sub1"), QStringLiteral("Sub2")}));
    QCOMPARE(d.subscribersOf(*d.process(QStringLiteral("Q"))),
             (QStringList{QStringLiteral("P"), QStringLiteral("Sub2")}));
    QVERIFY(d.subscribersOf(*d.process(QStringLiteral("Idle"))).isEmpty());

    QCOMPARE(d.providersFor(*d.process(QStringLiteral("Sub2"))),
             (QStringList{QStringLiteral("P"), QStringLiteral("Q")}));
    QCOMPARE(d.providersFor(*d.process(QStringLiteral("Sub1"))), QStringList{QStringLiteral("P")});
    QCOMPARE(d.providersFor(*d.process(QStringLiteral("P"))), QStringList{QStringLiteral("Q")});
    QVERIFY(d.providersFor(*d.process(QStringLiteral("Idle"))).isEmpty());

    // removeProcess returns the record, so the partners can still be computed after removal.
    const ProcessRecord gone = d.removeProcess(QStringLiteral("P"), QStringLiteral("crashed"), 10);
    QCOMPARE(d.subscribersOf(gone), (QStringList{QStringLiteral("Sub1"), QStringLiteral("Sub2")}));
    QCOMPARE(d.providersFor(gone), QStringList{QStringLiteral("Q")});
}

void tst_Directory::removeProcessFreesEverything()
{
    Directory d;
    d.connectProcess(proc(QStringLiteral("A"), 1000, 10, 1, 1000, 111), nullptr);
    d.connectProcess(proc(QStringLiteral("B"), 2000, 20, 2), nullptr);
    QVERIFY(d.registerService(QStringLiteral("A"), QStringLiteral("A.Two"), nullptr));
    QVERIFY(d.registerService(QStringLiteral("A"), QStringLiteral("A.One"), nullptr));
    d.registerCommand(QStringLiteral("A"), QStringLiteral("Only.A"));
    d.registerCommand(QStringLiteral("A"), QStringLiteral("Shared"));
    d.registerCommand(QStringLiteral("B"), QStringLiteral("Shared"));
    d.request(QStringLiteral("A"), QStringLiteral("B.Service"));
    d.request(QStringLiteral("B"), QStringLiteral("A.One"));

    const ProcessRecord gone =
        d.removeProcess(QStringLiteral("A"), QStringLiteral("missed 3 heartbeats"), 5000);
    QCOMPARE(gone.name, QStringLiteral("A"));
    QCOMPARE(gone.services, (QSet<QString>{QStringLiteral("A.One"), QStringLiteral("A.Two")}));
    QCOMPARE(gone.requests, QSet<QString>{QStringLiteral("B.Service")});

    QCOMPARE(d.process(QStringLiteral("A")), nullptr);
    QCOMPARE(d.processNames(), QStringList{QStringLiteral("B")});
    QCOMPARE(d.provider(QStringLiteral("A.One")), nullptr);
    QCOMPARE(d.provider(QStringLiteral("A.Two")), nullptr);
    QCOMPARE(d.serviceCount(), 0);
    QVERIFY(d.commandTargets(QStringLiteral("Only.A")).isEmpty());
    QCOMPARE(d.commandTargets(QStringLiteral("Shared")), QStringList{QStringLiteral("B")});
    QVERIFY(d.requesters(QStringLiteral("B.Service")).isEmpty());
    // B's request for A's service stays queued for a replacement.
    QCOMPARE(d.requesters(QStringLiteral("A.One")), QStringList{QStringLiteral("B")});
    // The names are free again.
    QVERIFY(d.registerService(QStringLiteral("B"), QStringLiteral("A.Two"), nullptr));
    QCOMPARE(d.connectProcess(proc(QStringLiteral("A"), 1000, 11, 3), nullptr), Result::Accepted);

    // Listed as lost (until it came back: see reconnectAfterLossLeavesLostList).
    Directory e;
    e.connectProcess(proc(QStringLiteral("A"), 1000, 10, 1, 1000, 111), nullptr);
    e.registerService(QStringLiteral("A"), QStringLiteral("A.Two"), nullptr);
    e.registerService(QStringLiteral("A"), QStringLiteral("A.One"), nullptr);
    e.registerCommand(QStringLiteral("A"), QStringLiteral("Cmd"));
    e.request(QStringLiteral("A"), QStringLiteral("X"));
    e.removeProcess(QStringLiteral("A"), QStringLiteral("missed 3 heartbeats"), 5000);
    const QJsonArray lost = e.toJson(6000).value(QStringLiteral("lost")).toArray();
    QCOMPARE(lost.size(), 1);
    const QJsonObject l = lost.first().toObject();
    QCOMPARE(l.value(QStringLiteral("name")).toString(), QStringLiteral("A"));
    QCOMPARE(l.value(QStringLiteral("reason")).toString(), QStringLiteral("missed 3 heartbeats"));
    QCOMPARE(l.value(QStringLiteral("lost_at_ms")).toInteger(), 5000);
    QCOMPARE(l.value(QStringLiteral("connected_at_ms")).toInteger(), 111);
    QCOMPARE(l.value(QStringLiteral("pid")).toInteger(), 10);
    QCOMPARE(names(l.value(QStringLiteral("services")).toArray()),
             (QStringList{QStringLiteral("A.One"), QStringLiteral("A.Two")}));
    QCOMPARE(names(l.value(QStringLiteral("commands")).toArray()), QStringList{QStringLiteral("Cmd")});
    QCOMPARE(names(l.value(QStringLiteral("subscriptions")).toArray()), QStringList{QStringLiteral("X")});
    QVERIFY(e.toJson(6000).value(QStringLiteral("processes")).toArray().isEmpty());
}

void tst_Directory::removalWithoutReasonIsNotLost()
{
    Directory d;
    d.connectProcess(proc(QStringLiteral("A"), 1000, 10, 1), nullptr);
    d.registerService(QStringLiteral("A"), QStringLiteral("S"), nullptr);
    const ProcessRecord gone = d.removeProcess(QStringLiteral("A"), QString(), 5000);
    QCOMPARE(gone.name, QStringLiteral("A"));
    QCOMPARE(d.processCount(), 0);
    QCOMPARE(d.provider(QStringLiteral("S")), nullptr);
    QVERIFY(d.toJson(5000).value(QStringLiteral("lost")).toArray().isEmpty());
}

void tst_Directory::removeUnknownProcessReturnsEmptyRecord()
{
    Directory d;
    d.connectProcess(proc(QStringLiteral("A"), 1000, 10, 1), nullptr);
    const ProcessRecord r = d.removeProcess(QStringLiteral("Ghost"), QStringLiteral("gone"), 5);
    QVERIFY(r.name.isEmpty());
    QCOMPARE(d.processCount(), 1);
    QVERIFY(d.toJson(5).value(QStringLiteral("lost")).toArray().isEmpty());
}

void tst_Directory::reconnectAfterLossLeavesLostList()
{
    Directory d;
    d.connectProcess(proc(QStringLiteral("A"), 1000, 10, 1), nullptr);
    d.connectProcess(proc(QStringLiteral("B"), 2000, 20, 2), nullptr);
    d.removeProcess(QStringLiteral("A"), QStringLiteral("crashed"), 100);
    d.removeProcess(QStringLiteral("B"), QStringLiteral("crashed"), 200);
    QCOMPARE(processNamesIn(d.toJson(300).value(QStringLiteral("lost")).toArray()),
             (QStringList{QStringLiteral("A"), QStringLiteral("B")}));

    // A replacement with the same name (new incarnation) takes over: no longer lost.
    QCOMPARE(d.connectProcess(proc(QStringLiteral("A"), 1002, 12, 5), nullptr), Result::Accepted);
    const QJsonObject json = d.toJson(400);
    QCOMPARE(processNamesIn(json.value(QStringLiteral("lost")).toArray()), QStringList{QStringLiteral("B")});
    QCOMPARE(processNamesIn(json.value(QStringLiteral("processes")).toArray()),
             QStringList{QStringLiteral("A")});
}

void tst_Directory::lostListBoundedByAgeAndNames()
{
    Directory d;
    d.setLostLimits(LostLimits{3, 10000, 4});
    for (int i = 0; i < 5; ++i) {
        const QString n = QStringLiteral("Hog%1").arg(i);
        d.connectProcess(proc(n, quint16(1000 + i), quint32(i), 1), nullptr);
        for (int s = 0; s < 10; ++s) {
            QVERIFY(d.registerService(n, QStringLiteral("%1.S%2").arg(n).arg(s), nullptr));
            d.registerCommand(n, QStringLiteral("%1.C%2").arg(n).arg(s));
        }
        d.request(n, QStringLiteral("Other.Service"));
        // The full record goes back to the caller (it tells the partners about every service).
        QCOMPARE(d.removeProcess(n, QStringLiteral("lost"), 1000 * (i + 1)).services.size(), 10);
    }
    dialog::DirectorySnapshot snap = d.snapshot(5000);
    QCOMPARE(snap.lost.size(), 3); // the count bound: the two oldest went
    QCOMPARE(snap.lost.first().name, QStringLiteral("Hog2"));
    for (const dialog::ProcessEntry &l : snap.lost) {
        QCOMPARE(l.services.size(), 4);
        QCOMPARE(l.commands.size(), 4);
        QCOMPARE(l.subscriptions.size(), 1);
        QCOMPARE(l.omittedNames, 12);
        QCOMPARE(l.services.first(), l.name + QStringLiteral(".S0")); // the first names are kept
    }
    // The age bound: Hog2 was lost at 3000, Hog3 at 4000.
    QVERIFY(!d.expireLost(13000));
    QVERIFY(d.expireLost(13500));
    snap = d.snapshot(13500);
    QCOMPARE(snap.lost.size(), 2);
    QCOMPARE(snap.lost.first().name, QStringLiteral("Hog3"));
    QVERIFY(d.expireLost(100000));
    QCOMPARE(d.lostCount(), 0);
}

void tst_Directory::lostListIsBounded()
{
    Directory d;
    for (int i = 0; i < 105; ++i) {
        const QString n = QStringLiteral("P%1").arg(i, 3, 10, QLatin1Char('0'));
        d.connectProcess(proc(n, 1000, quint32(i), 1), nullptr);
        d.removeProcess(n, QStringLiteral("lost"), i);
    }
    const QJsonArray lost = d.toJson(1000).value(QStringLiteral("lost")).toArray();
    QCOMPARE(lost.size(), 100);
    // Oldest dropped first; most recent last.
    QCOMPARE(lost.first().toObject().value(QStringLiteral("name")).toString(), QStringLiteral("P005"));
    QCOMPARE(lost.last().toObject().value(QStringLiteral("name")).toString(), QStringLiteral("P104"));
    QCOMPARE(lost.last().toObject().value(QStringLiteral("lost_at_ms")).toInteger(), 104);
}

void tst_Directory::expiryUsesEachProcessHeartbeat()
{
    Directory d;
    d.connectProcess(proc(QStringLiteral("Slow"), 1000, 1, 1, 1000, 0), nullptr);
    d.connectProcess(proc(QStringLiteral("Fast"), 1001, 2, 2, 200, 0), nullptr);
    d.connectProcess(proc(QStringLiteral("Quiet"), 1002, 3, 3, 1000, 0), nullptr); // never heard from again
    d.heartbeat(QStringLiteral("Slow"), 10000);
    d.heartbeat(QStringLiteral("Fast"), 10000);
    d.heartbeat(QStringLiteral("Ghost"), 10000); // unknown: ignored
    QCOMPARE(d.processCount(), 3);
    QCOMPARE(d.process(QStringLiteral("Slow"))->lastSeenMs, 10000);

    // Silent for more than misses x interval; exactly misses x interval is still alive.
    QCOMPARE(d.expired(10000, 3), QStringList{QStringLiteral("Quiet")});
    QCOMPARE(d.expired(10600, 3), QStringList{QStringLiteral("Quiet")});
    QCOMPARE(d.expired(10601, 3), (QStringList{QStringLiteral("Fast"), QStringLiteral("Quiet")}));
    QCOMPARE(d.expired(13000, 3), (QStringList{QStringLiteral("Fast"), QStringLiteral("Quiet")}));
    QCOMPARE(d.expired(13001, 3),
             (QStringList{QStringLiteral("Fast"), QStringLiteral("Quiet"), QStringLiteral("Slow")}));
    QCOMPARE(d.expired(11001, 1),
             (QStringList{QStringLiteral("Fast"), QStringLiteral("Quiet"), QStringLiteral("Slow")}));

    // A heartbeat revives.
    d.heartbeat(QStringLiteral("Fast"), 12900);
    QCOMPARE(d.expired(13000, 3), QStringList{QStringLiteral("Quiet")});
    // Processes start as last seen when they connected.
    d.connectProcess(proc(QStringLiteral("New"), 1003, 4, 4, 1000, 20000), nullptr);
    QVERIFY(!d.expired(23000, 3).contains(QStringLiteral("New")));
    QVERIFY(d.expired(23001, 3).contains(QStringLiteral("New")));
}

void tst_Directory::toJsonShape()
{
    Directory d;
    ProcessRecord b = proc(QStringLiteral("Beta"), 40002, 2002, 2, 1000, 1234567890123);
    ProcessRecord a = proc(QStringLiteral("Alpha"), 65535, 4000000000u, 1, 1000, 42);
    d.connectProcess(b, nullptr);
    d.connectProcess(a, nullptr);
    for (const char *s : {"Alpha.Zulu", "Alpha.Bravo", "Alpha.Mike"})
        QVERIFY(d.registerService(QStringLiteral("Alpha"), QLatin1String(s), nullptr));
    for (const char *c : {"cmd.z", "cmd.a"})
        d.registerCommand(QStringLiteral("Alpha"), QLatin1String(c));
    for (const char *r : {"Beta.Y", "Beta.X", "Nowhere"})
        d.request(QStringLiteral("Alpha"), QLatin1String(r));

    const QJsonObject json = d.toJson(987654321);
    QCOMPARE(sortedKeys(json),
             (QStringList{QStringLiteral("lost"), QStringLiteral("processes"), QStringLiteral("time_ms")}));
    QCOMPARE(json.value(QStringLiteral("time_ms")).toInteger(), 987654321);
    QVERIFY(json.value(QStringLiteral("lost")).isArray());
    QVERIFY(json.value(QStringLiteral("lost")).toArray().isEmpty());

    const QJsonArray procs = json.value(QStringLiteral("processes")).toArray();
    QCOMPARE(processNamesIn(procs), (QStringList{QStringLiteral("Alpha"), QStringLiteral("Beta")}));

    const QJsonObject pa = procs.at(0).toObject();
    QCOMPARE(sortedKeys(pa), (QStringList{QStringLiteral("commands"), QStringLiteral("connected_at_ms"),
                                          QStringLiteral("host"), QStringLiteral("name"),
                                          QStringLiteral("pid"), QStringLiteral("port"),
                                          QStringLiteral("services"), QStringLiteral("subscriptions")}));
    QCOMPARE(pa.value(QStringLiteral("name")).toString(), QStringLiteral("Alpha"));
    QCOMPARE(pa.value(QStringLiteral("host")).toString(), QStringLiteral("host-alpha"));
    QCOMPARE(pa.value(QStringLiteral("port")).toInteger(), 65535);
    QCOMPARE(pa.value(QStringLiteral("pid")).toInteger(), 4000000000); // u32 above INT_MAX survives
    QCOMPARE(pa.value(QStringLiteral("connected_at_ms")).toInteger(), 42);
    QCOMPARE(names(pa.value(QStringLiteral("services")).toArray()),
             (QStringList{QStringLiteral("Alpha.Bravo"), QStringLiteral("Alpha.Mike"),
                          QStringLiteral("Alpha.Zulu")}));
    QCOMPARE(names(pa.value(QStringLiteral("commands")).toArray()),
             (QStringList{QStringLiteral("cmd.a"), QStringLiteral("cmd.z")}));
    QCOMPARE(names(pa.value(QStringLiteral("subscriptions")).toArray()),
             (QStringList{QStringLiteral("Beta.X"), QStringLiteral("Beta.Y"), QStringLiteral("Nowhere")}));

    const QJsonObject pb = procs.at(1).toObject();
    QCOMPARE(pb.value(QStringLiteral("port")).toInteger(), 40002);
    QCOMPARE(pb.value(QStringLiteral("pid")).toInteger(), 2002);
    QCOMPARE(pb.value(QStringLiteral("connected_at_ms")).toInteger(), 1234567890123);
    QVERIFY(pb.value(QStringLiteral("services")).isArray());
    QVERIFY(pb.value(QStringLiteral("services")).toArray().isEmpty());
    QVERIFY(pb.value(QStringLiteral("commands")).toArray().isEmpty());
    QVERIFY(pb.value(QStringLiteral("subscriptions")).toArray().isEmpty());
}

void tst_Directory::statisticsOnlyOfProcessesThatReported()
{
    Directory d;
    d.connectProcess(proc(QStringLiteral("Old"), 1000, 10, 1), nullptr);
    d.connectProcess(proc(QStringLiteral("New"), 2000, 20, 2), nullptr);
    ProcessStatistics st;
    st.messagesOut = 9007199254740992ull; // 2^53: still exact in JSON
    st.bytesOut = 123456;
    st.messagesIn = 7;
    st.bytesIn = 700;
    st.dropped = 3;
    st.reconnects = 2;
    st.protocolErrors = 1;
    st.queuedBytes = 4096;
    st.outgoingConnections = 5;
    st.incomingConnections = 6;
    st.atMs = 1700000000000;
    d.setStatistics(QStringLiteral("New"), st);
    d.setStatistics(QStringLiteral("Unknown"), st); // ignored, no crash
    QCOMPARE(d.process(QStringLiteral("New"))->statistics.bytesOut, quint64(123456));
    QCOMPARE(d.process(QStringLiteral("Old"))->statistics.atMs, 0);

    const QJsonObject j = d.statisticsJson(1700000000500);
    QCOMPARE(j.value(QStringLiteral("time_ms")).toInteger(), 1700000000500);
    const QJsonArray procs = j.value(QStringLiteral("processes")).toArray();
    QCOMPARE(procs.size(), 1); // "Old" sent bare heartbeats: absent, not zeros
    const QJsonObject n = procs.first().toObject();
    QCOMPARE(n.value(QStringLiteral("name")).toString(), QStringLiteral("New"));
    QCOMPARE(n.value(QStringLiteral("at_ms")).toInteger(), 1700000000000);
    QCOMPARE(quint64(n.value(QStringLiteral("messages_out")).toDouble()), 9007199254740992ull);
    QCOMPARE(n.value(QStringLiteral("bytes_out")).toInteger(), 123456);
    QCOMPARE(n.value(QStringLiteral("messages_in")).toInteger(), 7);
    QCOMPARE(n.value(QStringLiteral("bytes_in")).toInteger(), 700);
    QCOMPARE(n.value(QStringLiteral("dropped")).toInteger(), 3);
    QCOMPARE(n.value(QStringLiteral("reconnects")).toInteger(), 2);
    QCOMPARE(n.value(QStringLiteral("protocol_errors")).toInteger(), 1);
    QCOMPARE(n.value(QStringLiteral("queued_bytes")).toInteger(), 4096);
    QCOMPARE(n.value(QStringLiteral("outgoing_connections")).toInt(), 5);
    QCOMPARE(n.value(QStringLiteral("incoming_connections")).toInt(), 6);

    // A lost process leaves the snapshot; one that connects again starts without figures.
    d.removeProcess(QStringLiteral("New"), QStringLiteral("killed"), 1);
    QVERIFY(d.statisticsJson(2).value(QStringLiteral("processes")).toArray().isEmpty());
    d.connectProcess(proc(QStringLiteral("New"), 2000, 20, 3), nullptr);
    QVERIFY(d.statisticsJson(3).value(QStringLiteral("processes")).toArray().isEmpty());
}

void tst_Directory::publishedSnapshotsReadBack()
{
    // What the Control Server publishes is what readers get through dialog::DirectorySnapshot.
    Directory d;
    // A says its software version in its HELLO; B, of an older release, does not.
    ProcessRecord withVersion = proc(QStringLiteral("A"), 1000, 10, 1);
    withVersion.version = QStringLiteral("0.1.0");
    QCOMPARE(d.connectProcess(withVersion, nullptr), Result::Accepted);
    QCOMPARE(d.connectProcess(proc(QStringLiteral("B"), 2000, 20, 2), nullptr), Result::Accepted);
    QVERIFY(d.registerService(QStringLiteral("A"), QStringLiteral("A.Rate"), nullptr));
    d.registerCommand(QStringLiteral("A"), QStringLiteral("Reset"));
    d.request(QStringLiteral("A"), QStringLiteral("B.State"));
    d.removeProcess(QStringLiteral("B"), QStringLiteral("no heartbeat"), 77);
    ProcessStatistics st;
    st.messagesOut = 5;
    st.atMs = 60;
    d.setStatistics(QStringLiteral("A"), st);

    const auto dir = dialog::test::fromJson<dialog::DirectorySnapshot>(QJsonDocument(d.toJson(100)).toJson());
    QVERIFY(dir);
    QCOMPARE(*dir, d.snapshot(100));
    QCOMPARE(dir->processNames(), QStringList{QStringLiteral("A")});
    const dialog::ProcessEntry *a = dir->process(QStringLiteral("A"));
    QVERIFY(a);
    QCOMPARE(a->host, QStringLiteral("host-a"));
    QCOMPARE(a->port, quint16(1000));
    QCOMPARE(a->services, QStringList{QStringLiteral("A.Rate")});
    QCOMPARE(a->commands, QStringList{QStringLiteral("Reset")});
    QCOMPARE(a->subscriptions, QStringList{QStringLiteral("B.State")});
    QCOMPARE(a->version, QStringLiteral("0.1.0"));
    QCOMPARE(d.toJson(100)
                 .value(QStringLiteral("processes"))
                 .toArray()
                 .first()
                 .toObject()
                 .value(QStringLiteral("version"))
                 .toString(),
             QStringLiteral("0.1.0"));
    QCOMPARE(dir->lost.size(), 1);
    QCOMPARE(dir->lost.first().version, QString()); // not said: "unknown" to the run registry
    QCOMPARE(dir->lost.first().name, QStringLiteral("B"));
    QCOMPARE(dir->lost.first().lostReason, QStringLiteral("no heartbeat"));
    QCOMPARE(dir->lost.first().lostAtMs, 77);

    const auto stats = dialog::test::fromJson<dialog::StatisticsSnapshot>(QJsonDocument(d.statisticsJson(100)).toJson());
    QVERIFY(stats);
    QCOMPARE(stats->processes.size(), 1);
    QCOMPARE(stats->processes.first().name, QStringLiteral("A"));
    QCOMPARE(stats->processes.first().messagesOut, 5u);
    QCOMPARE(stats->processes.first().atMs, 60);
}

QTEST_GUILESS_MAIN(tst_Directory)
#include "tst_directory.moc"
