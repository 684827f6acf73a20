// Run control with the real binaries on loopback: master and slaves through full run cycles,
// failures (crash, failing configure, hang), recovery, and the launcher (dialogctl up/down) over a
// fake ssh.
#include "dialog/rc/protocol.h"
#include "rcfixture.h"

#include <QJsonArray>
#include <QTemporaryDir>
#include <QtTest>
#include <csignal>
#include <sys/prctl.h>
#include <sys/wait.h>

using namespace dialog;
using namespace dialog::test;

namespace {
const QStringList &kHeartbeat = kRcHeartbeat;
}

class tst_RunControl : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void init();
    void cleanup();

    void helpAndBadArguments();
    void fullRunCycleWithThreeSlaves();
    void illegalTransitionRefusedWithReason();
    void commandDrivesTheMasterToo();
    void slaveCrashMidRunPutsErrorThenRecoversWhenRestarted();
    void hungSlaveDeclaredLostIsSeenAgainAndRunRecovers();
    void restartedMasterTakesOverTheRun();
    void restartedMasterKeepsAPausedRunsTimes();
    void slaveFailingConfigureIsNamedAndResetRecovers();
    void hangingSlaveTimesOut();
    void readoutCountsCorruptEventsAndWritesOutput();
    void launcherUpAndDownOverSsh();
    void launcherReportsBadPartitionAndMissingBinary();

private:
    /// Writes a partition with @p slaves (JSON objects) for the fixture's Control Server.
    QString writePartition(const QJsonArray &slaves, int timeoutMs = 5000, bool startControlServer = false,
                           const QJsonObject &extra = {});
    QProcess *startSlave(const QString &kind, const QString &name, const QStringList &extra = {});
    QProcess *startMaster(const QString &partition);
    /// Sends a transition request to the master and waits for the reply.
    Reply transition(const QString &t, int timeoutMs = 20000);
    QJsonObject masterState() const;
    /// Appends every state the master publishes from now until @p scope goes to @p out: a
    /// takeover's intermediate states are checked too, not only the last one.
    void recordMasterStates(QObject *scope, QList<QJsonObject> *out);
    QString slaveState(const QString &name) const;
    bool allSlavesPresent() const;

    RcBed m_bed;
};

void tst_RunControl::initTestCase()
{
    // Processes `dialogctl up` starts are detached: become their reaper so none is left a zombie.
    ::prctl(PR_SET_CHILD_SUBREAPER, 1);
}

void tst_RunControl::init()
{
    QVERIFY(m_bed.start(QStringLiteral("rc-test")));
}

void tst_RunControl::cleanup()
{
    m_bed.stop();
}

QString tst_RunControl::writePartition(const QJsonArray &slaves, int timeoutMs, bool startControlServer,
                                       const QJsonObject &extra)
{
    return m_bed.writePartition(QStringLiteral("test"), slaves, timeoutMs, startControlServer, extra);
}

QProcess *tst_RunControl::startSlave(const QString &kind, const QString &name, const QStringList &extra)
{
    QProcess *p = m_bed.fx->start(QStringLiteral("dialog-slave"),
                                  QStringList{QStringLiteral("--kind"), kind, QStringLiteral("--name"), name,
                                              QStringLiteral("--no-is")} +
                                      kHeartbeat + extra);
    p->setProcessChannelMode(QProcess::ForwardedErrorChannel);
    return p;
}

QProcess *tst_RunControl::startMaster(const QString &partition)
{
    return m_bed.fx->start(QStringLiteral("dialog-master"),
                           QStringList{QStringLiteral("--config"), partition, QStringLiteral("--no-is")});
}

Reply tst_RunControl::transition(const QString &t, int timeoutMs)
{
    return m_bed.transition(t, timeoutMs);
}

QJsonObject tst_RunControl::masterState() const
{
    return m_bed.masterState();
}

void tst_RunControl::recordMasterStates(QObject *scope, QList<QJsonObject> *out)
{
    connect(m_bed.master, &Subscription::messageReceived, scope,
            [out](const Message &m) { out->append(QJsonDocument::fromJson(m.data()).object()); });
}

QString tst_RunControl::slaveState(const QString &name) const
{
    for (const QJsonValue &v : masterState().value(QStringLiteral("slaves")).toArray())
        if (v.toObject().value(QStringLiteral("name")).toString() == name)
            return v.toObject().value(QStringLiteral("present")).toBool()
                       ? v.toObject().value(QStringLiteral("state")).toString()
                       : QStringLiteral("absent");
    return {};
}

bool tst_RunControl::allSlavesPresent() const
{
    const QJsonArray a = masterState().value(QStringLiteral("slaves")).toArray();
    for (const QJsonValue &v : a)
        if (!v.toObject().value(QStringLiteral("present")).toBool())
            return false;
    return !a.isEmpty();
}

static QJsonObject slave(const QString &name, const QString &kind)
{
    return {{QStringLiteral("name"), name}, {QStringLiteral("kind"), kind}};
}

static const QJsonArray threeSlaves{slave(QStringLiteral("FE1"), QStringLiteral("control")),
                                    slave(QStringLiteral("FE2"), QStringLiteral("control")),
                                    slave(QStringLiteral("RO1"), QStringLiteral("readout"))};

void tst_RunControl::helpAndBadArguments()
{
    QByteArray out, err;
    QCOMPARE(m_bed.fx->run(QStringLiteral("dialog-slave"), {QStringLiteral("--help")}, &out), 0);
    QVERIFY(out.contains("--fail-on") && out.contains("--spill-s"));
    QCOMPARE(m_bed.fx->run(QStringLiteral("dialog-slave"),
                           {QStringLiteral("--kind"), QStringLiteral("trigger"), QStringLiteral("--name"),
                            QStringLiteral("X")},
                           nullptr, &err),
             1);
    QVERIFY2(err.startsWith("dialog-slave: invalid --kind 'trigger'"), err.constData());
    QCOMPARE(m_bed.fx->run(QStringLiteral("dialog-slave"),
                           {QStringLiteral("--kind"), QStringLiteral("readout"), QStringLiteral("--name"),
                            QStringLiteral("X"), QStringLiteral("--fail-on"), QStringLiteral("launch")},
                           nullptr, &err),
             1);
    QVERIFY2(err.contains("invalid --fail-on 'launch' (unknown transition 'launch'"), err.constData());
    QCOMPARE(m_bed.fx->run(QStringLiteral("dialog-slave"),
                           {QStringLiteral("--kind"), QStringLiteral("control"), QStringLiteral("--name"),
                            QStringLiteral("X"), QStringLiteral("--threads"), QStringLiteral("4")},
                           nullptr, &err),
             1);
    QVERIFY2(err.contains("--threads applies to --kind readout only"), err.constData());
    QCOMPARE(m_bed.fx->run(QStringLiteral("dialog-master"), {}, nullptr, &err), 1);
    QVERIFY2(err.contains("--config PARTITION.json is required"), err.constData());
    QFile bad(m_bed.dir->filePath(QStringLiteral("bad.json")));
    QVERIFY(bad.open(QIODevice::WriteOnly));
    bad.write(R"({"name":"b","control_server":{},"master":{"name":"M"},"slaves":[{"name":"A","kind":"x"}]})");
    bad.close();
    QCOMPARE(m_bed.fx->run(QStringLiteral("dialog-master"), {QStringLiteral("--config"), bad.fileName()},
                           nullptr, &err),
             1);
    QVERIFY2(err.contains("bad.json: slaves[0].kind: 'x': expected \"control\" or \"readout\""),
             err.constData());
}

void tst_RunControl::fullRunCycleWithThreeSlaves()
{
    startMaster(writePartition(threeSlaves));
    startSlave(QStringLiteral("control"), QStringLiteral("FE1"));
    startSlave(QStringLiteral("control"), QStringLiteral("FE2"));
    startSlave(
        QStringLiteral("readout"), QStringLiteral("RO1"),
        {QStringLiteral("--threads"), QStringLiteral("2"), QStringLiteral("--off-s"), QStringLiteral("0")});
    QTRY_VERIFY_WITH_TIMEOUT(allSlavesPresent(), 10000);
    QCOMPARE(masterState().value(QStringLiteral("state")).toString(), QStringLiteral("Initial"));

    const QList<QPair<QString, QString>> cycle{{"configure", "Configured"}, {"start", "Running"},
                                               {"pause", "Paused"},         {"resume", "Running"},
                                               {"stop", "Configured"},      {"unconfigure", "Initial"}};
    Subscription *ro = m_bed.client->subscribe(QStringLiteral("RunCtrl.RO1.Status"));
    for (const auto &[t, expected] : cycle) {
        const Reply r = transition(t);
        QVERIFY2(r.isOk(), qPrintable(t + QStringLiteral(": ") + r.errorString()));
        QCOMPARE(QJsonDocument::fromJson(r.data()).object().value(QStringLiteral("state")).toString(),
                 expected);
        QTRY_COMPARE_WITH_TIMEOUT(masterState().value(QStringLiteral("state")).toString(), expected, 5000);
        for (const QString &s : {QStringLiteral("FE1"), QStringLiteral("FE2"), QStringLiteral("RO1")})
            QTRY_COMPARE_WITH_TIMEOUT(slaveState(s), expected, 5000);
        if (t == QLatin1String("start")) {
            QCOMPARE(masterState().value(QStringLiteral("run_number")).toInt(), 1);
            // Events flow while running.
            QTRY_VERIFY_WITH_TIMEOUT(QJsonDocument::fromJson(ro->lastMessage().data())
                                             .object()
                                             .value(QStringLiteral("events"))
                                             .toInteger() > 0,
                                     5000);
        }
    }
    const QJsonObject st = QJsonDocument::fromJson(ro->lastMessage().data()).object();
    QCOMPARE(st.value(QStringLiteral("errors")).toInt(), 0);
    // The run number is persisted and incremented on the next start.
    QFile f(m_bed.dir->filePath(QStringLiteral("runnumber")));
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QList<QByteArray> lines = f.readAll().trimmed().split('\n'); // the number, then the run's start
    QCOMPARE(lines.value(0), QByteArray("1"));
    QVERIFY(lines.value(1).toLongLong() > 0);
    QVERIFY(transition(QStringLiteral("configure")).isOk());
    QVERIFY(transition(QStringLiteral("start")).isOk());
    QCOMPARE(masterState().value(QStringLiteral("run_number")).toInt(), 2);
    QVERIFY(transition(QStringLiteral("stop")).isOk());
}

void tst_RunControl::illegalTransitionRefusedWithReason()
{
    startMaster(writePartition(QJsonArray{slave(QStringLiteral("FE1"), QStringLiteral("control"))}));
    startSlave(QStringLiteral("control"), QStringLiteral("FE1"));
    QTRY_VERIFY_WITH_TIMEOUT(allSlavesPresent(), 10000);
    Reply r = transition(QStringLiteral("start"));
    QCOMPARE(r.error(), Status::Code::Failed);
    QVERIFY2(r.errorString().contains(
                 QLatin1String("illegal transition 'start' in state Initial (legal: configure, reset)")),
             qPrintable(r.errorString()));
    r = transition(QStringLiteral("launch"));
    QVERIFY2(r.errorString().contains(QLatin1String("unknown transition 'launch'")),
             qPrintable(r.errorString()));
    QCOMPARE(masterState().value(QStringLiteral("state")).toString(), QStringLiteral("Initial"));
    QCOMPARE(slaveState(QStringLiteral("FE1")), QStringLiteral("Initial"));
}

void tst_RunControl::commandDrivesTheMasterToo()
{
    startMaster(writePartition(QJsonArray{slave(QStringLiteral("FE1"), QStringLiteral("control"))}));
    startSlave(QStringLiteral("control"), QStringLiteral("FE1"));
    QTRY_VERIFY_WITH_TIMEOUT(allSlavesPresent(), 10000);
    QByteArray err;
    QCOMPARE(m_bed.fx->run(QStringLiteral("dialogctl"),
                           {QStringLiteral("send"), QStringLiteral("RunCtrl.Master.Command"),
                            QStringLiteral("configure")},
                           nullptr, &err),
             0);
    QTRY_COMPARE_WITH_TIMEOUT(masterState().value(QStringLiteral("state")).toString(),
                              QStringLiteral("Configured"), 10000);
    QCOMPARE(slaveState(QStringLiteral("FE1")), QStringLiteral("Configured"));
}

void tst_RunControl::slaveCrashMidRunPutsErrorThenRecoversWhenRestarted()
{
    startMaster(writePartition(threeSlaves));
    startSlave(QStringLiteral("control"), QStringLiteral("FE1"));
    QProcess *fe2 = startSlave(QStringLiteral("control"), QStringLiteral("FE2"));
    startSlave(QStringLiteral("readout"), QStringLiteral("RO1"),
               {QStringLiteral("--threads"), QStringLiteral("2")});
    QTRY_VERIFY_WITH_TIMEOUT(allSlavesPresent(), 10000);
    QVERIFY(transition(QStringLiteral("configure")).isOk());
    QVERIFY(transition(QStringLiteral("start")).isOk());

    ::kill(pid_t(fe2->processId()), SIGKILL); // a crash mid-run
    QTRY_COMPARE_WITH_TIMEOUT(masterState().value(QStringLiteral("state")).toString(),
                              QStringLiteral("Error"), 10000);
    QCOMPARE(masterState().value(QStringLiteral("culprits")).toArray(), QJsonArray{QStringLiteral("FE2")});
    QVERIFY(masterState().value(QStringLiteral("error")).toString().contains(QLatin1String("FE2 lost")));
    QCOMPARE(masterState().value(QStringLiteral("recovering_to")).toString(), QStringLiteral("Running"));
    // While in Error only reset is legal.
    QVERIFY(!transition(QStringLiteral("stop")).isOk());

    // The replacement is brought to Running and the master leaves Error by itself.
    startSlave(QStringLiteral("control"), QStringLiteral("FE2"));
    QTRY_COMPARE_WITH_TIMEOUT(masterState().value(QStringLiteral("state")).toString(),
                              QStringLiteral("Running"), 15000);
    QCOMPARE(slaveState(QStringLiteral("FE2")), QStringLiteral("Running"));
    QVERIFY(masterState().value(QStringLiteral("culprits")).toArray().isEmpty());
    QCOMPARE(masterState().value(QStringLiteral("run_number")).toInt(), 1);
    QVERIFY(transition(QStringLiteral("stop")).isOk());
}

void tst_RunControl::hungSlaveDeclaredLostIsSeenAgainAndRunRecovers()
{
    // A slave that hangs (GC pause, swap storm, NFS stall) long enough to be declared lost, then
    // wakes up and re-registers with the same incarnation: the master and every other subscriber
    // must see it again, and the master must recover the run by itself.
    startMaster(writePartition(threeSlaves));
    startSlave(QStringLiteral("control"), QStringLiteral("FE1"));
    QProcess *fe2 = startSlave(QStringLiteral("control"), QStringLiteral("FE2"));
    startSlave(QStringLiteral("readout"), QStringLiteral("RO1"),
               {QStringLiteral("--threads"), QStringLiteral("2")});
    QTRY_VERIFY_WITH_TIMEOUT(allSlavesPresent(), 10000);
    QVERIFY(transition(QStringLiteral("configure")).isOk());
    QVERIFY(transition(QStringLiteral("start")).isOk());
    Subscription *watcher = m_bed.client->subscribe(dialog::rc::stateService(QStringLiteral("FE2")));
    QTRY_COMPARE_WITH_TIMEOUT(watcher->state(), Subscription::State::Active, 5000);
    const quint64 before = watcher->receivedCount();

    QElapsedTimer t;
    t.start();
    ::kill(pid_t(fe2->processId()), SIGSTOP);
    QTRY_COMPARE_WITH_TIMEOUT(masterState().value(QStringLiteral("state")).toString(),
                              QStringLiteral("Error"), 10000);
    QVERIFY(masterState().value(QStringLiteral("error")).toString().contains(QLatin1String("FE2 lost")));
    QTRY_COMPARE_WITH_TIMEOUT(watcher->state(), Subscription::State::Lost, 5000);
    // Hung for 3 s in all: meanwhile it stays lost and the run stays in Error.
    QVERIFY(expectNothingFor(
        int(qMax<qint64>(0, 3000 - t.elapsed())),
        [&] {
            return watcher->state() != Subscription::State::Lost ||
                   masterState().value(QStringLiteral("state")).toString() != QLatin1String("Error");
        },
        "a stopped slave seen again, or the run out of Error without it"));
    ::kill(pid_t(fe2->processId()), SIGCONT);
    t.restart();

    // Seen again by a plain subscriber (its current value re-delivered) and by the master.
    QTRY_COMPARE_WITH_TIMEOUT(watcher->state(), Subscription::State::Active, 10000);
    QVERIFY(watcher->receivedCount() > before);
    QTRY_COMPARE_WITH_TIMEOUT(masterState().value(QStringLiteral("state")).toString(),
                              QStringLiteral("Running"), 15000);
    qInfo("hung slave woke up -> master Running again after %lld ms", qint64(t.elapsed()));
    QCOMPARE(slaveState(QStringLiteral("FE2")), QStringLiteral("Running"));
    QVERIFY(masterState().value(QStringLiteral("culprits")).toArray().isEmpty());
    QVERIFY(transition(QStringLiteral("stop")).isOk());
    // reset -> configure works: nobody is "not running".
    QVERIFY(transition(QStringLiteral("reset")).isOk());
    const Reply configured = transition(QStringLiteral("configure"));
    QVERIFY2(configured.isOk(), qPrintable(configured.errorString()));
}

void tst_RunControl::restartedMasterTakesOverTheRun()
{
    // The master crashes mid-run and is restarted (by a supervisor): the slaves are still Running,
    // and the new master takes that run over (state, run number, start time) instead of sitting in
    // Initial beside a running run.
    const QString partition = writePartition(threeSlaves);
    QProcess *master = startMaster(partition);
    startSlave(QStringLiteral("control"), QStringLiteral("FE1"));
    startSlave(QStringLiteral("control"), QStringLiteral("FE2"));
    startSlave(QStringLiteral("readout"), QStringLiteral("RO1"),
               {QStringLiteral("--threads"), QStringLiteral("2")});
    QTRY_VERIFY_WITH_TIMEOUT(allSlavesPresent(), 10000);
    QVERIFY(transition(QStringLiteral("configure")).isOk());
    QVERIFY(transition(QStringLiteral("start")).isOk());
    QVERIFY(transition(QStringLiteral("stop")).isOk());
    QVERIFY(transition(QStringLiteral("start")).isOk()); // run 2
    QTRY_VERIFY_WITH_TIMEOUT(masterState().value(QStringLiteral("run_number")).toInt() == 2 &&
                                 !masterState().value(QStringLiteral("busy")).toBool() &&
                                 masterState().value(QStringLiteral("state")).toString() ==
                                     QLatin1String("Running"),
                             5000);
    const qint64 startMs = qint64(masterState().value(QStringLiteral("run_start_ms")).toDouble());
    QVERIFY(startMs > 0);

    const qint64 oldPid = master->processId();
    ::kill(pid_t(oldPid), SIGKILL);
    const qint64 activeBefore = qint64(masterState().value(QStringLiteral("run_active_ms")).toDouble());
    QTRY_COMPARE_WITH_TIMEOUT(m_bed.master->state(), Subscription::State::Lost, 10000);
    QObject recording;
    QList<QJsonObject> published;
    recordMasterStates(&recording, &published);
    const qint64 newPid = startMaster(partition)->processId();
    QVERIFY(newPid != oldPid);
    QTRY_COMPARE_WITH_TIMEOUT(qint64(masterState().value(QStringLiteral("pid")).toInteger()), newPid, 10000);
    QTRY_COMPARE_WITH_TIMEOUT(masterState().value(QStringLiteral("state")).toString(),
                              QStringLiteral("Running"), 15000);
    // Every state of the new master that shows the run shows it whole: never a start time of 0
    // beside "Running", never a data-taking time that restarted.
    for (const QJsonObject &s : std::as_const(published)) {
        if (s.value(QStringLiteral("state")).toString() == QLatin1String("Initial"))
            continue;
        QCOMPARE(s.value(QStringLiteral("run_number")).toInt(), 2);
        QCOMPARE(qint64(s.value(QStringLiteral("run_start_ms")).toDouble()), startMs);
        QVERIFY(qint64(s.value(QStringLiteral("run_active_ms")).toDouble()) >= activeBefore);
    }
    QVERIFY(allSlavesPresent());
    // It drives the run it took over: stop reaches every slave, and the next start is run 3.
    const Reply stopped = transition(QStringLiteral("stop"));
    QVERIFY2(stopped.isOk(), qPrintable(stopped.errorString()));
    QCOMPARE(slaveState(QStringLiteral("RO1")), QStringLiteral("Configured"));
    QVERIFY(transition(QStringLiteral("start")).isOk());
    QTRY_COMPARE_WITH_TIMEOUT(masterState().value(QStringLiteral("run_number")).toInt(), 3, 5000);
    QVERIFY(transition(QStringLiteral("stop")).isOk());
}

void tst_RunControl::restartedMasterKeepsAPausedRunsTimes()
{
    // Paused, the run's data-taking time stands still: the master that takes it over shows exactly
    // the start time and data-taking time its predecessor showed, and counts on from there.
    const QString partition = writePartition(threeSlaves);
    QProcess *master = startMaster(partition);
    startSlave(QStringLiteral("control"), QStringLiteral("FE1"));
    startSlave(QStringLiteral("control"), QStringLiteral("FE2"));
    startSlave(QStringLiteral("readout"), QStringLiteral("RO1"));
    QTRY_VERIFY_WITH_TIMEOUT(allSlavesPresent(), 10000);
    for (const char *t : {"configure", "start", "pause"})
        QVERIFY(transition(QLatin1String(t)).isOk());
    QTRY_VERIFY_WITH_TIMEOUT(!masterState().value(QStringLiteral("busy")).toBool() &&
                                 masterState().value(QStringLiteral("state")).toString() ==
                                     QLatin1String("Paused"),
                             5000);
    const qint64 startMs = qint64(masterState().value(QStringLiteral("run_start_ms")).toDouble());
    const qint64 activeMs = qint64(masterState().value(QStringLiteral("run_active_ms")).toDouble());
    QVERIFY(startMs > 0);

    ::kill(pid_t(master->processId()), SIGKILL);
    QTRY_COMPARE_WITH_TIMEOUT(m_bed.master->state(), Subscription::State::Lost, 10000);
    QObject recording;
    QList<QJsonObject> published;
    recordMasterStates(&recording, &published);
    const qint64 newPid = startMaster(partition)->processId();
    QTRY_VERIFY_WITH_TIMEOUT(qint64(masterState().value(QStringLiteral("pid")).toInteger()) == newPid &&
                                 masterState().value(QStringLiteral("state")).toString() ==
                                     QLatin1String("Paused"),
                             15000);
    for (const QJsonObject &s : std::as_const(published)) {
        if (s.value(QStringLiteral("state")).toString() == QLatin1String("Initial"))
            continue;
        QCOMPARE(s.value(QStringLiteral("run_number")).toInt(), 1);
        QCOMPARE(qint64(s.value(QStringLiteral("run_start_ms")).toDouble()), startMs);
        QCOMPARE(qint64(s.value(QStringLiteral("run_active_ms")).toDouble()), activeMs);
    }
    QVERIFY(transition(QStringLiteral("resume")).isOk());
    QTRY_VERIFY_WITH_TIMEOUT(
        qint64(masterState().value(QStringLiteral("run_active_ms")).toDouble()) > activeMs, 5000);
    QVERIFY(transition(QStringLiteral("stop")).isOk());
}

void tst_RunControl::slaveFailingConfigureIsNamedAndResetRecovers()
{
    startMaster(writePartition(threeSlaves));
    startSlave(QStringLiteral("control"), QStringLiteral("FE1"));
    startSlave(QStringLiteral("control"), QStringLiteral("FE2"),
               {QStringLiteral("--fail-on"), QStringLiteral("configure")});
    startSlave(QStringLiteral("readout"), QStringLiteral("RO1"),
               {QStringLiteral("--threads"), QStringLiteral("2")});
    QTRY_VERIFY_WITH_TIMEOUT(allSlavesPresent(), 10000);
    const Reply r = transition(QStringLiteral("configure"));
    QCOMPARE(r.error(), Status::Code::Failed);
    QVERIFY2(r.errorString().contains(QLatin1String("FE2: configure failed: failing as requested")),
             qPrintable(r.errorString()));
    QVERIFY(!r.errorString().contains(QLatin1String("FE1")));
    QTRY_COMPARE_WITH_TIMEOUT(masterState().value(QStringLiteral("state")).toString(),
                              QStringLiteral("Error"), 5000);
    QCOMPARE(masterState().value(QStringLiteral("culprits")).toArray(), QJsonArray{QStringLiteral("FE2")});
    QTRY_COMPARE_WITH_TIMEOUT(slaveState(QStringLiteral("FE2")), QStringLiteral("Error"), 5000);
    QVERIFY(transition(QStringLiteral("reset")).isOk());
    QTRY_COMPARE_WITH_TIMEOUT(masterState().value(QStringLiteral("state")).toString(),
                              QStringLiteral("Initial"), 5000);
    for (const QString &s : {QStringLiteral("FE1"), QStringLiteral("FE2"), QStringLiteral("RO1")})
        QTRY_COMPARE_WITH_TIMEOUT(slaveState(s), QStringLiteral("Initial"), 5000);
}

void tst_RunControl::hangingSlaveTimesOut()
{
    startMaster(writePartition(QJsonArray{slave(QStringLiteral("FE1"), QStringLiteral("control")),
                                          slave(QStringLiteral("RO1"), QStringLiteral("readout"))},
                               1500));
    startSlave(QStringLiteral("control"), QStringLiteral("FE1"));
    startSlave(QStringLiteral("readout"), QStringLiteral("RO1"),
               {QStringLiteral("--threads"), QStringLiteral("2"), QStringLiteral("--hang-on"),
                QStringLiteral("start")});
    QTRY_VERIFY_WITH_TIMEOUT(allSlavesPresent(), 10000);
    QVERIFY(transition(QStringLiteral("configure")).isOk());
    const Reply r = transition(QStringLiteral("start"));
    QVERIFY2(r.errorString().contains(QLatin1String("RO1: no answer within 1500 ms")),
             qPrintable(r.errorString()));
    QTRY_COMPARE_WITH_TIMEOUT(masterState().value(QStringLiteral("state")).toString(),
                              QStringLiteral("Error"), 5000);
    // The readout hangs, so the control slave (second phase) was never started.
    QCOMPARE(slaveState(QStringLiteral("FE1")), QStringLiteral("Configured"));
    QVERIFY(transition(QStringLiteral("reset")).isOk()); // reset abandons the hung transition
    QTRY_COMPARE_WITH_TIMEOUT(slaveState(QStringLiteral("RO1")), QStringLiteral("Initial"), 5000);
}

void tst_RunControl::readoutCountsCorruptEventsAndWritesOutput()
{
    startMaster(writePartition(QJsonArray{slave(QStringLiteral("RO1"), QStringLiteral("readout"))}));
    const QString out = m_bed.dir->filePath(QStringLiteral("data"));
    startSlave(QStringLiteral("readout"), QStringLiteral("RO1"),
               {QStringLiteral("--threads"), QStringLiteral("3"), QStringLiteral("--rate"),
                QStringLiteral("20000"), QStringLiteral("--corrupt-every"), QStringLiteral("1000"),
                QStringLiteral("--output-dir"), out, QStringLiteral("--event-size"), QStringLiteral("256")});
    QTRY_VERIFY_WITH_TIMEOUT(allSlavesPresent(), 10000);
    Subscription *ro = m_bed.client->subscribe(QStringLiteral("RunCtrl.RO1.Status"));
    QVERIFY(transition(QStringLiteral("configure")).isOk());
    QVERIFY(transition(QStringLiteral("start")).isOk());
    auto status = [&] { return QJsonDocument::fromJson(ro->lastMessage().data()).object(); };
    QTRY_VERIFY_WITH_TIMEOUT(status().value(QStringLiteral("events")).toInteger() > 20000, 10000);
    QVERIFY(transition(QStringLiteral("stop")).isOk());
    QTRY_VERIFY_WITH_TIMEOUT(!status().value(QStringLiteral("running")).toBool(), 5000);
    const QJsonObject s = status();
    const qint64 events = s.value(QStringLiteral("events")).toInteger();
    // Exactly one corrupt event in every 1000, each detected by a processing thread.
    QCOMPARE(s.value(QStringLiteral("errors")).toInteger(), events / 1000);
    QVERIFY(s.value(QStringLiteral("recent_errors"))
                .toArray()
                .first()
                .toString()
                .contains(QLatin1String("checksum mismatch")));
    // Every byte read out was written: nothing is lost between the stages.
    QFile f(QDir(out).filePath(QStringLiteral("run000001_RO1.raw")));
    QVERIFY2(f.exists(), qPrintable(f.fileName()));
    QCOMPARE(f.size(), s.value(QStringLiteral("bytes")).toInteger());
    QCOMPARE(s.value(QStringLiteral("written_bytes")).toInteger(), f.size());
}

void tst_RunControl::launcherUpAndDownOverSsh()
{
    // The launcher starts its own Control Server: stop the fixture's and reuse its port.
    m_bed.client.reset();
    m_bed.fx->stopAll();
    const QString sshLog = m_bed.dir->filePath(QStringLiteral("ssh.log"));
    qputenv("FAKESSH_LOG", sshLog.toUtf8());
    const QJsonArray slaves{
        QJsonObject{{QStringLiteral("name"), QStringLiteral("FE1")},
                    {QStringLiteral("kind"), QStringLiteral("control")}},
        QJsonObject{{QStringLiteral("name"), QStringLiteral("RO1")},
                    {QStringLiteral("kind"), QStringLiteral("readout")},
                    {QStringLiteral("host"), QStringLiteral("daq-pc2")},
                    {QStringLiteral("args"), QJsonArray{QStringLiteral("--threads"), QStringLiteral("2"),
                                                        QStringLiteral("--no-is")}}}};
    const QString partition =
        writePartition(slaves, 5000, true,
                       {{QStringLiteral("ssh_command"),
                         QJsonArray{QStringLiteral(DIALOG_SOURCE_DIR "/tests/integration/fakessh.sh"),
                                    QStringLiteral("-o"), QStringLiteral("BatchMode=yes")}},
                        {QStringLiteral("bin_dir"), QStringLiteral(DIALOG_BIN_DIR)}});
    const QString runDir = m_bed.dir->filePath(QStringLiteral("run"));
    QByteArray out, err;
    const int rc = m_bed.fx->run(
        QStringLiteral("dialogctl"),
        {QStringLiteral("up"), partition, QStringLiteral("--run-dir"), runDir, QStringLiteral("--json")},
        &out, &err, 30000);
    // Whatever fails below, what 'up' started goes: 'down' from the run directory.
    bool downed = false;
    auto downAnyway = qScopeGuard([&] {
        if (!downed)
            m_bed.fx->run(QStringLiteral("dialogctl"),
                          {QStringLiteral("down"), partition, QStringLiteral("--run-dir"), runDir}, nullptr,
                          nullptr, 30000);
    });
    const QJsonArray procs =
        QJsonDocument::fromJson(out).object().value(QStringLiteral("processes")).toArray();
    QList<qint64> pids;
    for (const QJsonValue &v : procs)
        pids << v.toObject().value(QStringLiteral("pid")).toInteger();
    auto reap = [&] {
        for (qint64 pid : pids)
            ::waitpid(pid_t(pid), nullptr, WNOHANG);
    };
    QVERIFY2(rc == 0, err.constData());
    QCOMPARE(procs.size(), 4); // Control Server, master, FE1, RO1 (no IS servers in this partition)
    for (const QJsonValue &v : procs) {
        const QJsonObject o = v.toObject();
        QVERIFY(o.value(QStringLiteral("pid")).toInteger() > 0);
        if (o.value(QStringLiteral("role")).toString() != QLatin1String("controlserver"))
            QCOMPARE(o.value(QStringLiteral("status")).toString(), QStringLiteral("registered"));
    }
    // RO1 went over "ssh" to its host, the others were started locally.
    QFile log(sshLog);
    QVERIFY(log.open(QIODevice::ReadOnly));
    const QByteArray sshCalls = log.readAll();
    QVERIFY2(sshCalls.startsWith("daq-pc2: "), sshCalls.constData());
    QVERIFY2(sshCalls.contains("'--name' 'RO1'") && !sshCalls.contains("'FE1'"), sshCalls.constData());
    // The partition names no secret: the one `dialogctl up` made went to the other host on ssh's
    // stdin (never on a command line), and the remote process was told where it is.
    QFile secret(runDir + QStringLiteral("/secret"));
    QVERIFY(secret.open(QIODevice::ReadOnly));
    const QByteArray made = secret.readAll().trimmed();
    QVERIFY(made.size() >= 32);
    QVERIFY2(sshCalls.contains("cat >'" + secret.fileName().toUtf8() + ".new'") && !sshCalls.contains(made),
             sshCalls.constData());
    // So did RO1's own key (and no other's), and RO1 was told where it is.
    const QByteArray key = (runDir + QStringLiteral("/keys/RO1.key")).toUtf8();
    QVERIFY2(sshCalls.contains("cat >'" + key + ".new'") && !sshCalls.contains("FE1.key"), sshCalls.constData());
    QVERIFY2(sshCalls.contains("DIALOG_SECRET_FILE='" + secret.fileName().toUtf8() + "' DIALOG_PROCESS_KEY_FILE='" +
                               key + "' nohup"),
             sshCalls.constData());

    // A second 'up' is refused while the partition runs.
    QCOMPARE(m_bed.fx->run(QStringLiteral("dialogctl"),
                           {QStringLiteral("up"), partition, QStringLiteral("--run-dir"), runDir}, nullptr,
                           &err, 30000),
             1);
    QVERIFY2(err.contains("is already up"), err.constData());

    QVERIFY2(m_bed.fx->run(QStringLiteral("dialogctl"),
                           {QStringLiteral("down"), partition, QStringLiteral("--run-dir"), runDir,
                            QStringLiteral("--json")},
                           &out, &err, 30000) == 0,
             (out + err).constData());
    downed = true;
    for (const QJsonValue &v :
         QJsonDocument::fromJson(out).object().value(QStringLiteral("processes")).toArray())
        QCOMPARE(v.toObject().value(QStringLiteral("status")).toString(), QStringLiteral("stopped"));
    QTRY_VERIFY_WITH_TIMEOUT(
        [&] {
            reap();
            for (qint64 pid : pids)
                if (::kill(pid_t(pid), 0) == 0)
                    return false;
            return true;
        }(),
        5000);
    QVERIFY(!QFile::exists(runDir + QStringLiteral("/processes.json")));
    qunsetenv("FAKESSH_LOG");
}

void tst_RunControl::launcherReportsBadPartitionAndMissingBinary()
{
    QByteArray err;
    QFile bad(m_bed.dir->filePath(QStringLiteral("bad.json")));
    QVERIFY(bad.open(QIODevice::WriteOnly));
    bad.write("{\"name\": \"x\",\n \"control_server\": {\"port\": \"3425\"}}");
    bad.close();
    QCOMPARE(
        m_bed.fx->run(QStringLiteral("dialogctl"), {QStringLiteral("up"), bad.fileName()}, nullptr, &err), 1);
    QVERIFY2(err.startsWith("dialogctl up: bad.json: control_server.port: expected an integer in 1..65535"),
             err.constData());

    const QString partition =
        writePartition(threeSlaves, 5000, true,
                       {{QStringLiteral("is_servers"),
                         QJsonArray{QJsonObject{{QStringLiteral("name"), QStringLiteral("DAQ")}}}}});
    const QString emptyBin = m_bed.dir->filePath(QStringLiteral("nobin"));
    QDir().mkpath(emptyBin);
    QCOMPARE(m_bed.fx->run(QStringLiteral("dialogctl"),
                           {QStringLiteral("up"), partition, QStringLiteral("--bin-dir"), emptyBin,
                            QStringLiteral("--run-dir"), m_bed.dir->filePath(QStringLiteral("run"))},
                           nullptr, &err),
             1);
    QVERIFY2(err.contains("dialog-controlserver not found in " + emptyBin.toUtf8()), err.constData());
    // Nothing was started.
    QVERIFY(!QFile::exists(m_bed.dir->filePath(QStringLiteral("run/processes.json"))));
}

QTEST_GUILESS_MAIN(tst_RunControl)
#include "tst_runcontrol.moc"
