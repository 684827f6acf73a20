// The typed run-control records (RunCtrl.P.State, RunCtrl.P.Log, transition requests): what the
// processes write is what every reader gets back, and bad input is refused with a reason.
#include "dialog/rc/staterecord.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QtTest>

using namespace dialog::rc;

class tst_StateRecord : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void slaveStateRoundTrips();
    void masterStateRoundTrips();
    void stateKeepsTheWireNames();
    void badStateIsRefused_data();
    void badStateIsRefused();
    void unknownKeysAreIgnored();
    void logMessageRoundTrips();
    void badLogMessageIsRefused();
    void transitionRequest_data();
    void transitionRequest();
    void transitionRequestRoundTrips();
    void treeOfAControllerRoundTrips();
};

namespace {
StateRecord master()
{
    StateRecord r;
    r.process = QStringLiteral("Master");
    r.kind = QStringLiteral("master");
    r.state = State::Error;
    r.busy = true;
    r.transition = Transition::Reset;
    r.lastTransition = Transition::Start;
    r.transitionMs = 1234;
    r.error = QStringLiteral("start failed: RO2 lost");
    r.timeMs = 1700000000123;
    r.pid = 4711;
    r.runNumber = 42;
    r.partition = QStringLiteral("demo");
    r.runType = QStringLiteral("Calibration");
    SlaveRecord a;
    a.name = QStringLiteral("RO1");
    a.kind = QStringLiteral("readout");
    a.present = true;
    a.state = State::Running;
    a.pid = 100;
    SlaveRecord b;
    b.name = QStringLiteral("RO2");
    b.kind = QStringLiteral("readout");
    b.lost = true;
    b.error = QStringLiteral("lost");
    SlaveRecord c;
    c.name = QStringLiteral("FE1");
    c.kind = QStringLiteral("control");
    c.present = true;
    c.state = State::Configured;
    c.busy = true;
    c.transition = Transition::Start;
    r.slaves = {a, b, c};
    r.culprits = {QStringLiteral("RO2")};
    r.recoveringTo = State::Running;
    r.runStartMs = 1700000000000;
    r.runStopMs = 0;
    r.runActiveMs = 99000;
    return r;
}
} // namespace

void tst_StateRecord::slaveStateRoundTrips()
{
    StateRecord r;
    r.process = QStringLiteral("FE1");
    r.kind = QStringLiteral("control");
    r.state = State::Paused;
    r.lastTransition = Transition::Pause;
    r.runNumber = 7;
    r.timeMs = 5;
    StateRecord back;
    const dialog::Status parsed = StateRecord::fromJson(r.toJson(), &back);
    QVERIFY2(parsed.isOk(), qPrintable(parsed.toString()));
    QCOMPARE(back, r);
    QVERIFY(!back.isMaster());
    QVERIFY(back.slaves.isEmpty());
}

void tst_StateRecord::masterStateRoundTrips()
{
    const StateRecord r = master();
    StateRecord back;
    QVERIFY(StateRecord::fromJson(r.toJson(), &back).isOk());
    QCOMPARE(back, r);
    QVERIFY(back.isMaster());
    QVERIFY(back.slave(QStringLiteral("RO2")));
    QVERIFY(back.slave(QStringLiteral("RO2"))->lost);
    QCOMPARE(back.slave(QStringLiteral("FE1"))->transition, std::optional(Transition::Start));
    QVERIFY(!back.slave(QStringLiteral("nobody")));
}

void tst_StateRecord::stateKeepsTheWireNames()
{
    // Scripts read these keys (dialogctl get RunCtrl.Master.State): the names are a contract.
    const QJsonObject o = QJsonDocument::fromJson(master().toJson()).object();
    QCOMPARE(o.value(QStringLiteral("state")).toString(), QStringLiteral("Error"));
    QCOMPARE(o.value(QStringLiteral("busy")).toBool(), true);
    QCOMPARE(o.value(QStringLiteral("transition")).toString(), QStringLiteral("reset"));
    QCOMPARE(o.value(QStringLiteral("last_transition")).toString(), QStringLiteral("start"));
    QCOMPARE(o.value(QStringLiteral("run_number")).toInt(), 42);
    QCOMPARE(o.value(QStringLiteral("run_type")).toString(), QStringLiteral("Calibration"));
    QCOMPARE(o.value(QStringLiteral("recovering_to")).toString(), QStringLiteral("Running"));
    QCOMPARE(o.value(QStringLiteral("culprits")).toArray().first().toString(), QStringLiteral("RO2"));
    const QJsonObject ro2 = o.value(QStringLiteral("slaves")).toArray().at(1).toObject();
    QCOMPARE(ro2.value(QStringLiteral("name")).toString(), QStringLiteral("RO2"));
    QCOMPARE(ro2.value(QStringLiteral("present")).toBool(), false);
    QCOMPARE(ro2.value(QStringLiteral("lost")).toBool(), true);
    QCOMPARE(ro2.value(QStringLiteral("state")).toString(), QString()); // not present: no state
}

void tst_StateRecord::badStateIsRefused_data()
{
    QTest::addColumn<QByteArray>("json");
    QTest::addColumn<QString>("reason");
    QTest::newRow("empty") << QByteArray() << QStringLiteral("malformed JSON");
    QTest::newRow("garbage") << QByteArray("\x01\xff{") << QStringLiteral("malformed JSON");
    QTest::newRow("array") << QByteArray("[1,2]") << QStringLiteral("expected a JSON object");
    QTest::newRow("no state") << QByteArray("{\"process\":\"X\"}") << QStringLiteral("unknown state ''");
    QTest::newRow("unknown state") << QByteArray("{\"state\":\"Dancing\"}")
                                   << QStringLiteral("unknown state 'Dancing'");
    QTest::newRow("state of the wrong type")
        << QByteArray("{\"state\":3}") << QStringLiteral("unknown state");
}

void tst_StateRecord::badStateIsRefused()
{
    QFETCH(QByteArray, json);
    QFETCH(QString, reason);
    StateRecord out;
    out.process = QStringLiteral("untouched");
    const dialog::Status s = StateRecord::fromJson(json, &out);
    QCOMPARE(s.code(), dialog::Status::Code::BadRequest);
    QVERIFY2(s.message().startsWith(reason), qPrintable(s.message()));
    QCOMPARE(out.process, QStringLiteral("untouched"));
}

void tst_StateRecord::unknownKeysAreIgnored()
{
    StateRecord r;
    QVERIFY(StateRecord::fromJson(
                "{\"state\":\"running\",\"busy\":true,\"future_key\":[1,2],\"run_number\":-5,\"slaves\":7}", &r)
                .isOk());
    QCOMPARE(r.state, State::Running); // state names are case-insensitive
    QVERIFY(r.busy);
    QCOMPARE(r.runNumber, 0u);   // out of range: clamped, not wrapped
    QVERIFY(r.slaves.isEmpty()); // wrong type: nothing
}

void tst_StateRecord::logMessageRoundTrips()
{
    const LogMessage r{123, QStringLiteral("RO1"), Severity::Warning,
                       QStringLiteral("3 new consistency errors")};
    LogMessage back;
    QVERIFY(LogMessage::fromJson(r.toJson(), &back).isOk());
    QCOMPARE(back.timeMs, r.timeMs);
    QCOMPARE(back.process, r.process);
    QCOMPARE(back.severity, r.severity);
    QCOMPARE(back.text, r.text);
    QCOMPARE(QJsonDocument::fromJson(r.toJson()).object().value(QStringLiteral("severity")).toString(),
             QStringLiteral("warning"));
}

void tst_StateRecord::badLogMessageIsRefused()
{
    LogMessage m;
    const dialog::Status panic = LogMessage::fromJson("{\"severity\":\"panic\",\"text\":\"x\"}", &m);
    QCOMPARE(panic, dialog::Status(dialog::Status::Code::BadRequest, QStringLiteral("unknown severity 'panic'")));
    const dialog::Status garbage = LogMessage::fromJson("not json", &m);
    QCOMPARE(garbage.code(), dialog::Status::Code::BadRequest);
    QVERIFY(garbage.message().startsWith(QStringLiteral("malformed JSON")));
}

void tst_StateRecord::transitionRequest_data()
{
    QTest::addColumn<QByteArray>("data");
    QTest::addColumn<bool>("ok");
    QTest::addColumn<int>("transition");
    QTest::addColumn<quint32>("runNumber");
    QTest::addColumn<QString>("runTypeOrError");
    QTest::newRow("bare name") << QByteArray("configure") << true << int(Transition::Configure) << 0u
                               << QString();
    QTest::newRow("bare name, spaces, capitals")
        << QByteArray("  Start\n") << true << int(Transition::Start) << 0u << QString();
    QTest::newRow("object") << QByteArray(R"({"transition":"start","run_number":12,"run_type":"Physics"})")
                            << true << int(Transition::Start) << 12u << QStringLiteral("Physics");
    QTest::newRow("unknown name") << QByteArray("explode") << false << 0 << 0u
                                  << QStringLiteral("unknown transition 'explode'");
    QTest::newRow("object without transition")
        << QByteArray(R"({"run_number":1})") << false << 0 << 0u << QStringLiteral("unknown transition ''");
    QTest::newRow("malformed object")
        << QByteArray("{\"transition\":") << false << 0 << 0u << QStringLiteral("malformed request");
    QTest::newRow("negative run number") << QByteArray(R"({"transition":"start","run_number":-1})") << false
                                         << 0 << 0u << QStringLiteral("run_number -1 out of range");
}

void tst_StateRecord::transitionRequest()
{
    QFETCH(QByteArray, data);
    QFETCH(bool, ok);
    QFETCH(int, transition);
    QFETCH(quint32, runNumber);
    QFETCH(QString, runTypeOrError);
    TransitionRequest r;
    const dialog::Status s = TransitionRequest::fromJson(data, &r);
    QCOMPARE(s.isOk(), ok);
    if (!ok) {
        QCOMPARE(s.code(), dialog::Status::Code::BadRequest);
        QVERIFY2(s.message().startsWith(runTypeOrError), qPrintable(s.message()));
        return;
    }
    QCOMPARE(int(r.transition), transition);
    QCOMPARE(r.runNumber, runNumber);
    QCOMPARE(r.runType, runTypeOrError);
}

void tst_StateRecord::transitionRequestRoundTrips()
{
    TransitionRequest r;
    r.transition = Transition::Resume;
    r.runNumber = 77;
    r.runType = QStringLiteral("Cosmics");
    TransitionRequest back;
    QVERIFY(TransitionRequest::fromJson(r.toJson(), &back).isOk());
    QCOMPARE(back.transition, r.transition);
    QCOMPARE(back.runNumber, r.runNumber);
    QCOMPARE(back.runType, r.runType);
}

void tst_StateRecord::treeOfAControllerRoundTrips()
{
    StateRecord r;
    r.process = QStringLiteral("TRK");
    r.kind = QStringLiteral("segment");
    r.state = State::Running;
    SlaveRecord fe1;
    fe1.name = QStringLiteral("FE1");
    fe1.kind = QStringLiteral("control");
    fe1.removable = true;
    fe1.removed = true;
    fe1.removedReason = QStringLiteral("lost");
    SlaveRecord fe2;
    fe2.name = QStringLiteral("FE2");
    fe2.enabled = false;
    r.slaves = {fe1, fe2};
    r.removed = {RemovedNode{QStringLiteral("FE1"), QStringLiteral("TRK"), QStringLiteral("lost"), 1234}};
    r.tree = QJsonArray{QJsonObject{{QStringLiteral("name"), QStringLiteral("FE1")},
                                    {QStringLiteral("children"), QJsonArray{}}}};
    StateRecord back;
    QVERIFY(StateRecord::fromJson(r.toJson(), &back).isOk());
    QVERIFY(back.isMaster()); // a segment controller's record carries the controller's fields
    QCOMPARE(back, r);
    const QJsonObject o = QJsonDocument::fromJson(r.toJson()).object();
    QCOMPARE(o.value(QStringLiteral("removed")).toArray().first().toObject().value(QStringLiteral("reason")),
             QJsonValue(QStringLiteral("lost")));
    QCOMPARE(o.value(QStringLiteral("slaves")).toArray().at(1).toObject().value(QStringLiteral("enabled")),
             QJsonValue(false));
    // A record written before the tree: every node enabled, nothing removed.
    StateRecord old;
    QVERIFY(
        StateRecord::fromJson(R"({"state":"Running","kind":"master","slaves":[{"name":"A"}]})", &old).isOk());
    QVERIFY(old.slaves.first().enabled);
    QVERIFY(!old.slaves.first().removed);
    QVERIFY(old.removed.isEmpty() && old.tree.isEmpty());
}

QTEST_GUILESS_MAIN(tst_StateRecord)
#include "tst_staterecord.moc"
