// dialog-alarmserver with the real daemons (Control Server, IS server, a slave) and dialogctl alarm:
// a transient latched alarm stays until acknowledged, hysteresis, a shelved alarm comes back after
// its expiry, a lost process and a stale object raise alarms, a restart keeps acknowledgements,
// shelves and latched alarms, bad rule files are refused with the line and the reason, refused
// operator actions (unknown alarm, missing comment) and a second alarm server in the partition.
#include "isfixture.h"

#include "dialog/audit.h"
#include "dialog/is/typeregistry.h"

#include <QJsonArray>
#include <QScopeGuard>
#include <QTemporaryDir>
#include <QtTest>

using namespace dialog;
using namespace dialog::test;

namespace {

// Beat must be written every second; FrontEndStatus (resources/is-types) carries the temperature.
const QByteArray BeatXml = R"(<?xml version="1.0" encoding="UTF-8"?>
<is-types>
  <type name="Beat" description="Written by the test" expected_interval_s="1">
    <attribute name="n" type="u32" description="Counter"/>
    <attribute name="mode" type="string" description="A state as text"/>
  </type>
</is-types>
)";

const QByteArray Rules = R"({"alarms": [
  {"path": "Detector/ECAL/FE3/temperature", "severity": "major", "latch": true,
   "description": "FE3 is too hot", "guidance": "Call the front-end expert, manual page 2",
   "links": ["docs/fe3.html"],
   "condition": {"is": "DAQ.FE3", "type": "FrontEndStatus", "attribute": "temperature", "above": 40}},
  {"path": "Detector/ECAL/FE3/warm", "severity": "minor",
   "condition": {"is": "DAQ.FE3", "type": "FrontEndStatus", "attribute": "temperature", "above": 35,
                 "hysteresis": 2}},
  {"path": "Detector/ECAL/FE3/mode", "severity": "major", "ack_comment_required": true,
   "condition": {"is": "DAQ.Beat", "type": "Beat", "attribute": "mode", "matches": "^ERR"}},
  {"path": "Detector/ECAL/FE3/beat", "severity": "invalid", "for_s": 0.3,
   "condition": {"stale": "DAQ.Beat"}},
  {"path": "DAQ/Processes/FE9", "severity": "major",
   "condition": {"process": "FE9", "when": "lost"}},
  {"path": "DAQ/Processes/FE8", "severity": "major", "latch": true,
   "condition": {"process": "FE8", "when": "error"}},
  {"path": "DAQ/Run/FE8", "severity": "minor", "condition": {"run_state": "FE8", "not_in": ["Initial"]}},
  {"path": "DAQ/Summary/ecal", "severity": "minor",
   "condition": {"any": [{"alarm": "Detector/ECAL/FE3/temperature"}, {"alarm": "Detector/ECAL/FE3/mode"}]}}
]}
)";

} // namespace

class tst_AlarmServer : public QObject, protected IsTestBase
{
    Q_OBJECT

private Q_SLOTS:
    void init();
    void cleanup()
    {
        tearDownIs();
        m_tmp.reset();
    }
    void transientLatchedAlarmStaysUntilAcknowledged();
    void shelvedAlarmComesBackAfterItsExpiry();
    void lostProcessAndStaleObjectRaiseAlarms();
    void restartKeepsAcknowledgementsShelvesAndLatches();
    void exampleRulesAreValid();
    void badRuleFileRefusedWithLineAndReason_data();
    void badRuleFileRefusedWithLineAndReason();
    void refusedActionsAndSecondServer();
    void fullDatabaseKeepsAlarmsAndRetriesTheHistory();

private:
    QString write(const QString &name, const QByteArray &content)
    {
        const QString path = m_dir.filePath(name);
        QFile f(path);
        if (!f.open(QIODevice::WriteOnly) || f.write(content) != content.size())
            qWarning() << "cannot write" << path;
        return path;
    }
    QStringList serverArgs() const
    {
        return {QStringLiteral("--rules"),         m_dir.filePath(QStringLiteral("rules.json")),
                QStringLiteral("--types"),         m_dir.filePath(QStringLiteral("types")),
                QStringLiteral("--data-dir"),      m_dir.filePath(QStringLiteral("data")),
                QStringLiteral("--stale-poll-ms"), QStringLiteral("200"),
                QStringLiteral("--is-server"),     QStringLiteral("DAQ")};
    }
    /// Starts dialog-alarmserver and waits until it answers.
    QProcess *startAlarmServer(const QStringList &extra = {})
    {
        QProcess *p = m_fx->start(QStringLiteral("dialog-alarmserver"), serverArgs() + extra);
        if (!waitUntil([&] { return ctl({QStringLiteral("ls")}) == 0; }, 20000 * SanitizerTimeScale, 50))
            qWarning() << "the alarm server did not answer" << p->readAllStandardError();
        return p;
    }
    int ctl(const QStringList &args, QByteArray *out = nullptr, QByteArray *err = nullptr)
    {
        return m_fx->run(QStringLiteral("dialogctl"), QStringList{QStringLiteral("alarm")} + args, out, err);
    }
    /// Every alarm, by path, as `dialogctl alarm ls --all --json` prints them.
    QHash<QString, QJsonObject> alarms()
    {
        QByteArray out;
        QHash<QString, QJsonObject> all;
        if (ctl({QStringLiteral("ls"), QStringLiteral("--all"), QStringLiteral("--json")}, &out) != 0)
            return all;
        for (const QJsonObject &o : jsonLines(out))
            all.insert(o.value(QStringLiteral("path")).toString(), o);
        return all;
    }
    QString stateOf(const QString &path)
    {
        return alarms().value(path).value(QStringLiteral("state")).toString();
    }
    bool waitForState(const QString &path, const QString &state, int timeoutMs = 10000)
    {
        const bool ok =
            waitUntil([&] { return stateOf(path) == state; }, timeoutMs * SanitizerTimeScale, 100);
        if (!ok)
            qWarning() << path << "is" << alarms().value(path) << "not" << state;
        return ok;
    }
    void setTemperature(float t)
    {
        is::Object o = is::Object::create(m_dict->types(), QStringLiteral("FrontEndStatus"));
        QVERIFY(o.set(QStringLiteral("temperature"), t).isOk());
        QVERIFY(m_dict->updateSync(QStringLiteral("DAQ.FE3"), o).isOk());
    }
    void setBeat(const QString &mode)
    {
        is::Object o = is::Object::create(m_dict->types(), QStringLiteral("Beat"));
        QVERIFY(o.set(QStringLiteral("mode"), mode).isOk());
        QVERIFY(m_dict->updateSync(QStringLiteral("DAQ.Beat"), o).isOk());
    }
    /// `dialogctl alarm tree PATH --json`.
    QJsonObject tree(const QString &path)
    {
        QByteArray out;
        ctl({QStringLiteral("tree"), path, QStringLiteral("--json")}, &out);
        return QJsonDocument::fromJson(out).object();
    }
    QList<QJsonObject> history(const QString &path)
    {
        QByteArray out;
        ctl({QStringLiteral("history"), path, QStringLiteral("--json")}, &out);
        return jsonLines(out);
    }

    std::unique_ptr<QTemporaryDir> m_tmp;
    QDir m_dir;
};

void tst_AlarmServer::init()
{
    m_tmp = std::make_unique<QTemporaryDir>();
    QVERIFY(m_tmp->isValid());
    m_dir = QDir(m_tmp->path());
    QVERIFY(QDir().mkpath(m_dir.filePath(QStringLiteral("types"))));
    for (const QString &f : {QStringLiteral("readout.xml"), QStringLiteral("frontend.xml")})
        QVERIFY(QFile::copy(isTypesDir() + u'/' + f, m_dir.filePath(QStringLiteral("types/") + f)));
    write(QStringLiteral("types/beat.xml"), BeatXml);
    write(QStringLiteral("rules.json"), Rules);
    QVERIFY(setUpIs(QStringLiteral("alarm-test")));
    QVERIFY(m_dict->types().loadFile(m_dir.filePath(QStringLiteral("types/beat.xml"))).isOk());
    startServer(QStringLiteral("DAQ"), {QStringLiteral("--types"), m_dir.filePath(QStringLiteral("types"))});
    QVERIFY(waitForServer(QStringLiteral("DAQ")));
}

void tst_AlarmServer::transientLatchedAlarmStaysUntilAcknowledged()
{
    startAlarmServer();
    setTemperature(20);
    QVERIFY(waitUntil(
        [&] {
            return alarms()
                       .value(QStringLiteral("Detector/ECAL/FE3/temperature"))
                       .contains(QStringLiteral("value")) &&
                   stateOf(QStringLiteral("Detector/ECAL/FE3/temperature")) == QStringLiteral("normal");
        },
        10000));
    // A transient excursion: 45 °C for a moment, then back to 20.
    setTemperature(45);
    QVERIFY(waitForState(QStringLiteral("Detector/ECAL/FE3/temperature"), QStringLiteral("active")));
    QVERIFY(waitForState(QStringLiteral("Detector/ECAL/FE3/warm"), QStringLiteral("active")));
    // The tree shows the worst alarm below each node; the summary alarm follows the one it names.
    QCOMPARE(tree(QStringLiteral("Detector")).value(QStringLiteral("worst")).toString(),
             QStringLiteral("major"));
    QVERIFY(waitForState(QStringLiteral("DAQ/Summary/ecal"), QStringLiteral("active")));
    // The alarm as an IS object (of a type the alarm server declared on the IS server).
    is::Entry entry;
    QTRY_VERIFY_WITH_TIMEOUT(
        m_dict->fetchTypesSync(QStringLiteral("DAQ")).isOk() &&
            m_dict->getSync(QStringLiteral("DAQ.Alarm.Detector.ECAL.FE3.temperature"), &entry).isOk(),
        10000);
    QCOMPARE(entry.object.get<QString>(QStringLiteral("severity")), QStringLiteral("major"));
    QCOMPARE(entry.object.get<QString>(QStringLiteral("guidance")),
             QStringLiteral("Call the front-end expert, manual page 2"));
    // Hysteresis: 34 is below 35 but not below 35 - 2: the minor alarm stays.
    setTemperature(34);
    QVERIFY(waitForState(QStringLiteral("Detector/ECAL/FE3/temperature"), QStringLiteral("latched")));
    QVERIFY(expectNothingFor(
        500, [&] { return stateOf(QStringLiteral("Detector/ECAL/FE3/warm")) != u"active"; },
        "the warm alarm cleared within its hysteresis"));
    setTemperature(20);
    QVERIFY(waitForState(QStringLiteral("Detector/ECAL/FE3/warm"), QStringLiteral("normal")));
    // The latched alarm is still there, and in the table, until someone acknowledges it.
    QVERIFY(expectNothingFor(
        500, [&] { return stateOf(QStringLiteral("Detector/ECAL/FE3/temperature")) != u"latched"; },
        "a latched alarm went without an acknowledgement"));
    // A subscriber of ALARM.Table that comes late has the whole table with its first message.
    QJsonObject table;
    m_client->subscribe(QStringLiteral("ALARM.Table"), this,
                        [&](const Message &m) { table = QJsonDocument::fromJson(m.data()).object(); });
    QTRY_VERIFY_WITH_TIMEOUT(!table.isEmpty(), 10000);
    QStringList listed;
    for (const QJsonValue &v : table.value(QStringLiteral("alarms")).toArray())
        listed << v.toObject().value(QStringLiteral("path")).toString() + u' ' +
                      v.toObject().value(QStringLiteral("state")).toString();
    QVERIFY2(listed.contains(QStringLiteral("Detector/ECAL/FE3/temperature latched")),
             qPrintable(listed.join(u',')));
    QByteArray out, err;
    QCOMPARE(ctl({QStringLiteral("ls")}, &out), 0);
    QVERIFY2(out.contains("Detector/ECAL/FE3/temperature") && out.contains("latched"), out);
    QCOMPARE(ctl({QStringLiteral("ack"), QStringLiteral("Detector/ECAL/FE3/temperature"),
                  QStringLiteral("--comment"), QStringLiteral("fan restarted")},
                 &out, &err),
             0);
    QCOMPARE(stateOf(QStringLiteral("Detector/ECAL/FE3/temperature")), QStringLiteral("normal"));
    QTRY_COMPARE_WITH_TIMEOUT(
        m_dict->getSync(QStringLiteral("DAQ.Alarm.Detector.ECAL.FE3.temperature"), nullptr).code(),
        Status::Code::NotFound, 10000);
    // The history, newest first: acknowledged (with who and the comment), latched, raised.
    QList<QJsonObject> rows;
    QVERIFY(waitUntil(
        [&] { return (rows = history(QStringLiteral("Detector/ECAL/FE3/temperature"))).size() >= 3; },
        10000));
    QCOMPARE(rows.at(0).value(QStringLiteral("event")).toString(), QStringLiteral("acknowledged"));
    QCOMPARE(rows.at(0).value(QStringLiteral("comment")).toString(), QStringLiteral("fan restarted"));
    QVERIFY(!rows.at(0).value(QStringLiteral("who")).toString().isEmpty());
    QCOMPARE(rows.at(1).value(QStringLiteral("event")).toString(), QStringLiteral("latched"));
    QCOMPARE(rows.at(2).value(QStringLiteral("event")).toString(), QStringLiteral("raised"));
}

void tst_AlarmServer::shelvedAlarmComesBackAfterItsExpiry()
{
    startAlarmServer();
    setTemperature(45);
    QVERIFY(waitForState(QStringLiteral("Detector/ECAL/FE3/warm"), QStringLiteral("active")));
    QByteArray out, err;
    // A shelve needs a reason.
    QCOMPARE(ctl({QStringLiteral("shelve"), QStringLiteral("Detector/ECAL/FE3/warm"), QStringLiteral("--for"),
                  QStringLiteral("1500ms")},
                 &out, &err),
             2);
    QVERIFY2(err.contains("needs a reason"), err);
    QCOMPARE(ctl({QStringLiteral("shelve"), QStringLiteral("Detector/ECAL/FE3/warm"), QStringLiteral("--for"),
                  QStringLiteral("1500ms"), QStringLiteral("--reason"), QStringLiteral("noisy channel")},
                 &out, &err),
             0);
    QVERIFY(
        alarms().value(QStringLiteral("Detector/ECAL/FE3/warm")).value(QStringLiteral("shelved")).toBool());
    QCOMPARE(tree(QStringLiteral("Detector/ECAL/FE3/warm")).value(QStringLiteral("shelved")).toBool(), true);
    // Unshelved by itself when the time is up, still active.
    QVERIFY(waitUntil(
        [&] {
            return !alarms()
                        .value(QStringLiteral("Detector/ECAL/FE3/warm"))
                        .value(QStringLiteral("shelved"))
                        .toBool();
        },
        10000 * SanitizerTimeScale, 100));
    QCOMPARE(stateOf(QStringLiteral("Detector/ECAL/FE3/warm")), QStringLiteral("active"));
    const QList<QJsonObject> rows = history(QStringLiteral("Detector/ECAL/FE3/warm"));
    QVERIFY(!rows.isEmpty());
    QCOMPARE(rows.at(0).value(QStringLiteral("event")).toString(), QStringLiteral("unshelved"));
    QCOMPARE(rows.at(0).value(QStringLiteral("comment")).toString(), QStringLiteral("shelve expired"));
}

void tst_AlarmServer::lostProcessAndStaleObjectRaiseAlarms()
{
    QProcess *slave = m_fx->start(QStringLiteral("dialog-slave"),
                                  {QStringLiteral("--kind"), QStringLiteral("control"),
                                   QStringLiteral("--name"), QStringLiteral("FE9"), QStringLiteral("--no-is"),
                                   QStringLiteral("--heartbeat-ms"), QStringLiteral("200")});
    startAlarmServer();
    setBeat(QStringLiteral("OK"));
    QVERIFY(waitUntil([&] { return !m_fx->processEntry(QStringLiteral("FE9")).isEmpty(); }, 10000));
    QCOMPARE(stateOf(QStringLiteral("DAQ/Processes/FE9")), QStringLiteral("normal"));
    slave->kill();
    QVERIFY(waitForState(QStringLiteral("DAQ/Processes/FE9"), QStringLiteral("active"), 15000));
    QVERIFY(alarms()
                .value(QStringLiteral("DAQ/Processes/FE9"))
                .value(QStringLiteral("value"))
                .toString()
                .contains(QStringLiteral("FE9")));
    // A slave whose configure fails goes to Error: its error alarm and its run-state alarm are raised.
    m_fx->start(QStringLiteral("dialog-slave"),
                {QStringLiteral("--kind"), QStringLiteral("control"), QStringLiteral("--name"),
                 QStringLiteral("FE8"), QStringLiteral("--no-is"), QStringLiteral("--fail-on"),
                 QStringLiteral("configure")});
    QVERIFY(waitUntil(
        [&] {
            return !alarms()
                        .value(QStringLiteral("DAQ/Run/FE8"))
                        .value(QStringLiteral("value"))
                        .toString()
                        .isEmpty();
        },
        15000));
    QCOMPARE(stateOf(QStringLiteral("DAQ/Run/FE8")), QStringLiteral("normal"));
    QCOMPARE(
        m_fx->run(QStringLiteral("dialogctl"), {QStringLiteral("send"), QStringLiteral("RunCtrl.FE8.Command"),
                                                QStringLiteral("configure")}),
        0);
    QVERIFY(waitForState(QStringLiteral("DAQ/Processes/FE8"), QStringLiteral("active")));
    QVERIFY2(
        alarms()
            .value(QStringLiteral("DAQ/Processes/FE8"))
            .value(QStringLiteral("value"))
            .toString()
            .contains(QStringLiteral("Error")),
        qPrintable(
            alarms().value(QStringLiteral("DAQ/Processes/FE8")).value(QStringLiteral("value")).toString()));
    QVERIFY(waitForState(QStringLiteral("DAQ/Run/FE8"), QStringLiteral("active")));
    // DAQ.Beat is no longer written: stale after its type's second, raised after for_s.
    QVERIFY(waitForState(QStringLiteral("Detector/ECAL/FE3/beat"), QStringLiteral("active"), 15000));
    QVERIFY(alarms()
                .value(QStringLiteral("Detector/ECAL/FE3/beat"))
                .value(QStringLiteral("value"))
                .toString()
                .contains(QStringLiteral("stale")));
    // Written again: fresh, the (not latching) alarm clears.
    setBeat(QStringLiteral("OK"));
    QVERIFY(waitForState(QStringLiteral("Detector/ECAL/FE3/beat"), QStringLiteral("normal"), 15000));
}

void tst_AlarmServer::restartKeepsAcknowledgementsShelvesAndLatches()
{
    QProcess *server = startAlarmServer();
    setTemperature(45);
    setBeat(QStringLiteral("ERROR: link down"));
    QVERIFY(waitForState(QStringLiteral("Detector/ECAL/FE3/temperature"), QStringLiteral("active")));
    QVERIFY(waitForState(QStringLiteral("Detector/ECAL/FE3/mode"), QStringLiteral("active")));
    setTemperature(37); // the latched alarm's condition goes; the warm one stays
    QVERIFY(waitForState(QStringLiteral("Detector/ECAL/FE3/temperature"), QStringLiteral("latched")));
    QCOMPARE(ctl({QStringLiteral("ack"), QStringLiteral("Detector/ECAL/FE3/mode"),
                  QStringLiteral("--comment"), QStringLiteral("known, expert called")}),
             0);
    QCOMPARE(ctl({QStringLiteral("shelve"), QStringLiteral("Detector/ECAL/FE3/warm"), QStringLiteral("--for"),
                  QStringLiteral("8h"), QStringLiteral("--reason"), QStringLiteral("for the night")}),
             0);
    server->terminate();
    QVERIFY(server->waitForFinished(10000));
    QCOMPARE(server->exitCode(), 0);

    startAlarmServer();
    const QHash<QString, QJsonObject> a = alarms();
    QCOMPARE(
        a.value(QStringLiteral("Detector/ECAL/FE3/temperature")).value(QStringLiteral("state")).toString(),
        QStringLiteral("latched"));
    const QJsonObject mode = a.value(QStringLiteral("Detector/ECAL/FE3/mode"));
    QCOMPARE(mode.value(QStringLiteral("state")).toString(), QStringLiteral("acknowledged"));
    QCOMPARE(mode.value(QStringLiteral("ack_comment")).toString(), QStringLiteral("known, expert called"));
    QVERIFY(a.value(QStringLiteral("Detector/ECAL/FE3/warm")).value(QStringLiteral("shelved")).toBool());
    QCOMPARE(
        a.value(QStringLiteral("Detector/ECAL/FE3/warm")).value(QStringLiteral("shelve_reason")).toString(),
        QStringLiteral("for the night"));
    // The acknowledged alarm's condition still holds after the restart: it is not raised again.
    QVERIFY(expectNothingFor(
        700, [&] { return stateOf(QStringLiteral("Detector/ECAL/FE3/mode")) != u"acknowledged"; },
        "an acknowledged alarm was raised again by the restart"));
    // And it goes when its condition clears.
    setBeat(QStringLiteral("OK"));
    QVERIFY(waitForState(QStringLiteral("Detector/ECAL/FE3/mode"), QStringLiteral("normal")));
}

void tst_AlarmServer::exampleRulesAreValid()
{
    QByteArray out, err;
    QCOMPARE(
        m_fx->run(QStringLiteral("dialog-alarmserver"),
                  {QStringLiteral("--rules"), QStringLiteral(DIALOG_SOURCE_DIR "/resources/alarms/demo.json"),
                   QStringLiteral("--types"), isTypesDir(), QStringLiteral("--check")},
                  &out, &err),
        0);
    QVERIFY2(out.contains("10 alarms, valid"), out + err);
}

void tst_AlarmServer::badRuleFileRefusedWithLineAndReason_data()
{
    QTest::addColumn<QByteArray>("rules");
    QTest::addColumn<QString>("expected");
    const auto alarm = [](const char *path, const char *condition, const char *extra = "") {
        return QByteArray("  {\"path\": \"") + path + "\", " + extra + "\"condition\": " + condition + "}";
    };
    const QByteArray fine = alarm("A/ok", R"({"process": "X"})");
    QTest::newRow("unknown attribute")
        << "{\"alarms\": [\n" + fine + ",\n" +
               alarm(
                   "A/t",
                   R"({"is": "DAQ.FE3", "type": "FrontEndStatus", "attribute": "temprature", "above": 1})") +
               "\n]}"
        << QStringLiteral(
               "rules.json:3: alarms[1] (A/t): unknown attribute 'temprature' of IS type FrontEndStatus");
    QTest::newRow("type mismatch")
        << "{\"alarms\": [\n" + fine + ",\n\n" +
               alarm(
                   "A/t",
                   R"({"is": "DAQ.FE3", "type": "FrontEndStatus", "attribute": "temperature", "matches": "x"})") +
               "\n]}"
        << QStringLiteral(
               "rules.json:4: alarms[1] (A/t): type mismatch: temperature of type FrontEndStatus is "
               "float, matches needs a string");
    QTest::newRow("cycle")
        << "{\"alarms\": [\n" + alarm("A/x", R"({"alarm": "A/y"})") + ",\n" +
               alarm("A/y", R"({"alarm": "A/x"})") + "\n]}"
        << QStringLiteral("rules.json:2: alarms[0] (A/x): cycle of alarm references: A/x -> A/y -> A/x");
    QTest::newRow("duplicate path")
        << "{\"alarms\": [\n" + fine + ",\n" + fine + "\n]}"
        << QStringLiteral("rules.json:3: alarms[1] (A/ok): duplicate path: alarms[0] has it already");
    QTest::newRow("alarm that is a node")
        << "{\"alarms\": [\n" + fine + ",\n" + alarm("A/ok/below", R"({"process": "X"})") + "\n]}"
        << QStringLiteral(
               "rules.json:2: alarms[0] (A/ok): is an alarm and also a node of the tree above A/ok/below");
    QTest::newRow("unknown key") << "{\"alarms\": [\n" +
                                        alarm("A/k", R"({"process": "X"})", "\"latching\": true, ") + "\n]}"
                                 << QStringLiteral("rules.json:2: alarms[0] (A/k): unknown key \"latching\"");
    QTest::newRow("not JSON") << QByteArray("{\"alarms\": [\n  {\"path\": \"A\",\n}\n")
                              << QStringLiteral("rules.json:3: ");
}

void tst_AlarmServer::badRuleFileRefusedWithLineAndReason()
{
    QFETCH(QByteArray, rules);
    QFETCH(QString, expected);
    write(QStringLiteral("rules.json"), rules);
    QByteArray out, err;
    QCOMPARE(m_fx->run(QStringLiteral("dialog-alarmserver"), serverArgs(), &out, &err), 1);
    QVERIFY2(QString::fromUtf8(err).contains(expected), err);
    // Nothing was served.
    QCOMPARE(ctl({QStringLiteral("ls"), QStringLiteral("--timeout-ms"), QStringLiteral("300")}), 3);
}

void tst_AlarmServer::refusedActionsAndSecondServer()
{
    // Disabling is for experts: here, nobody.
    const QString access = write(QStringLiteral("access.json"),
                                 R"({"rules": [{"deny": "command", "name": "ALARM.disable.*"}]})");
    const QString audit = m_dir.filePath(QStringLiteral("audit.jsonl"));
    startAlarmServer({QStringLiteral("--access"), access, QStringLiteral("--audit-file"), audit});
    QByteArray out, err;
    QCOMPARE(ctl({QStringLiteral("ack"), QStringLiteral("No/such/alarm")}, &out, &err), 2);
    QVERIFY2(err.contains("unknown alarm 'No/such/alarm'"), err);
    setBeat(QStringLiteral("ERROR"));
    QVERIFY(waitForState(QStringLiteral("Detector/ECAL/FE3/mode"), QStringLiteral("active")));
    QCOMPARE(ctl({QStringLiteral("ack"), QStringLiteral("Detector/ECAL/FE3/mode"),
                  QStringLiteral("--comment"), QStringLiteral("  ")},
                 &out, &err),
             2);
    QVERIFY2(err.contains("needs a comment"), err);
    QCOMPARE(stateOf(QStringLiteral("Detector/ECAL/FE3/mode")), QStringLiteral("active"));
    QCOMPARE(ctl({QStringLiteral("tree"), QStringLiteral("No/such")}, &out, &err), 2);
    QCOMPARE(ctl({QStringLiteral("disable"), QStringLiteral("Detector/ECAL/FE3/mode")}, &out, &err), 4);
    QVERIFY2(err.contains("permission denied"), err);
    QCOMPARE(ctl({QStringLiteral("ack"), QStringLiteral("Detector/ECAL/FE3/mode"),
                  QStringLiteral("--comment"), QStringLiteral("seen")}),
             0);
    // Every action, done or refused, is in the audit trail with who asked and why it was refused.
    QHash<QString, AuditRecord> records;
    QVERIFY(waitUntil(
        [&] {
            for (const AuditRecord &r : AuditTrail::read(audit, 0))
                records.insert(r.operation + u' ' + r.name, r);
            return records.size() >= 3 &&
                   records.value(QStringLiteral("ack ALARM.Detector/ECAL/FE3/mode")).allowed;
        },
        5000));
    QVERIFY(!records.value(QStringLiteral("ack ALARM.No/such/alarm")).allowed);
    QCOMPARE(records.value(QStringLiteral("ack ALARM.No/such/alarm")).because,
             QStringLiteral("unknown alarm 'No/such/alarm'"));
    QVERIFY(!records.value(QStringLiteral("disable ALARM.Detector/ECAL/FE3/mode")).allowed);
    QCOMPARE(records.value(QStringLiteral("disable ALARM.Detector/ECAL/FE3/mode")).because,
             QStringLiteral("rules[0]"));
    QVERIFY(records.value(QStringLiteral("ack ALARM.Detector/ECAL/FE3/mode")).allowed);
    QVERIFY(!records.value(QStringLiteral("ack ALARM.Detector/ECAL/FE3/mode")).origin.process.isEmpty());
    // One alarm server per partition.
    QProcess *second =
        m_fx->start(QStringLiteral("dialog-alarmserver"),
                    serverArgs().mid(0, serverArgs().size() - 2) +
                        QStringList{QStringLiteral("--name"), QStringLiteral("AlarmServer2"),
                                    QStringLiteral("--data-dir"), m_dir.filePath(QStringLiteral("d2"))});
    QVERIFY(second->waitForFinished(15000 * SanitizerTimeScale));
    QCOMPARE(second->exitCode(), 1);
    const QByteArray secondErr = second->readAllStandardError();
    QVERIFY2(secondErr.contains("another alarm server serves this partition (ALARM.Server is taken)"),
             secondErr);
    QCOMPARE(ctl({QStringLiteral("ls")}), 0);
}

void tst_AlarmServer::fullDatabaseKeepsAlarmsAndRetriesTheHistory()
{
    const QString data = m_dir.filePath(QStringLiteral("data"));
    QVERIFY(QDir().mkpath(data));
    if (!ProcessFixture::mountTmpfs(data, QStringLiteral("1m")))
        QSKIP("cannot mount a tmpfs here (not root, or no capability)");
    auto unmount = qScopeGuard([&] {
        m_fx->stopAll();
        QProcess::execute(QStringLiteral("umount"), {data});
    });
    startAlarmServer();
    // The file system fills up.
    QFile filler(data + QStringLiteral("/filler"));
    QVERIFY(filler.open(QIODevice::WriteOnly));
    const QByteArray block(4096, 'x');
    while (filler.write(block) == block.size() && filler.flush()) {
    }
    filler.close();
    setTemperature(45);
    setBeat(QStringLiteral("ERROR"));
    // The alarms work from memory; the history writes wait, counted, and say why.
    QVERIFY(waitForState(QStringLiteral("Detector/ECAL/FE3/temperature"), QStringLiteral("active")));
    // (Rows may wait before the first write has failed: wait for the failure itself.)
    QByteArray out;
    const QRegularExpression failures(QStringLiteral("writes waiting, ([1-9]\\d*) failures: \\S"));
    QVERIFY2(waitUntil(
                 [&] {
                     ctl({QStringLiteral("ls")}, &out);
                     return failures.match(QString::fromUtf8(out)).hasMatch();
                 },
                 10000),
             out.constData());
    QCOMPARE(ctl({QStringLiteral("ack"), QStringLiteral("Detector/ECAL/FE3/mode"),
                  QStringLiteral("--comment"), QStringLiteral("seen")}),
             0);
    // Room again: the waiting rows are written, in order.
    QVERIFY(QFile::remove(data + QStringLiteral("/filler")));
    QVERIFY(waitUntil(
        [&] {
            ctl({QStringLiteral("ls")}, &out);
            return !out.contains("writes waiting");
        },
        15000));
    const QList<QJsonObject> rows = history(QStringLiteral("Detector/ECAL/FE3/mode"));
    QCOMPARE(rows.size(), 2);
    QCOMPARE(rows.at(0).value(QStringLiteral("event")).toString(), QStringLiteral("acknowledged"));
    QCOMPARE(rows.at(1).value(QStringLiteral("event")).toString(), QStringLiteral("raised"));
}

QTEST_GUILESS_MAIN(tst_AlarmServer)
#include "tst_alarmserver.moc"
