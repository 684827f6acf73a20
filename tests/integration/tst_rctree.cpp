// The run-control tree with the real binaries on loopback: a master over a readout slave and two
// segment controllers (dialog-master --segment), a segment left out of the run, a removable slave
// killed mid-run and recovered into the running run, a non-removable one stopped, and a bad tree
// refused by the master and by `dialogctl up`.
#include "rcfixture.h"
#include "unprivileged.h"

#include <QJsonArray>
#include <QTemporaryDir>
#include <QtTest>
#include <csignal>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace dialog;
using namespace dialog::test;

namespace {

QJsonObject node(const QString &name, const QString &kind, bool removable = false)
{
    QJsonObject o{{QStringLiteral("name"), name}, {QStringLiteral("kind"), kind}};
    if (removable)
        o.insert(QStringLiteral("removable"), true);
    return o;
}

/// The partition's segments with CAL removable (its controller's loss removes it from the run).
QJsonObject removableCalTree()
{
    return {{QStringLiteral("segments"),
             QJsonArray{QJsonObject{{QStringLiteral("name"), QStringLiteral("TRK")},
                                    {QStringLiteral("slaves"),
                                     QJsonArray{QStringLiteral("FE1"), QStringLiteral("FE2")}}},
                        QJsonObject{{QStringLiteral("name"), QStringLiteral("CAL")},
                                    {QStringLiteral("slaves"), QJsonArray{QStringLiteral("FE3")}},
                                    {QStringLiteral("removable"), true}}}}};
}

/// The node named @p name anywhere in @p tree (a "tree" of a controller's state), or {}.
QJsonObject findNode(const QJsonArray &tree, const QString &name)
{
    for (const QJsonValue &v : tree) {
        const QJsonObject o = v.toObject();
        if (o.value(QStringLiteral("name")).toString() == name)
            return o;
        if (const QJsonObject below = findNode(o.value(QStringLiteral("children")).toArray(), name);
            !below.isEmpty())
            return below;
    }
    return {};
}
} // namespace

class tst_RcTree : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void init();
    void cleanup();

    void disabledSegmentIsLeftOutOfTheRun();
    void removableSlaveKilledMidRunIsRemovedThenRecovered();
    void autoRecoveryBringsARestartedSlaveBackIn();
    void removableSlaveHangingPastTheTimeOutIsRemoved();
    void nonRemovableSlaveStoppedPutsTheRunInErrorNamingIt();
    void badTreeRefusedByMasterAndUp();
    void upStartsTheSegmentControllers();
    void disabledNodesStayDisabledWhenTheirControllerRestarts();
    void removableSegmentLostMidRunIsRemovedAndItsChildrenReset();
    void nonRemovableSegmentLostLeavesItsChildrenUntilTheReset();
    void removedSlaveStillRunningIsResetAtUnconfigure();
    void runRecordListsWhatWasOut();
    void removalRaisesTheAlarmOfTheDemoRule();
    void takenSegmentIsDrivenByItsOwnerAlone();
    void ownersRunsAreNumberedAndRecordedByTheRunRegistry();
    void accessListLetsTheMasterResetALostSegmentsChildren();

private:
    /// Starts dialog-configdb with @p partition put as partitions/tree; false if it did not answer.
    bool startConfigDb(const QString &partition);
    /// Master → RO1 (readout), TRK {FE1 (removable), FE2}, CAL {FE3}; @p extra merged into the root;
    /// with @p autoRecover FE1 has "recover": "auto".
    QString writePartition(bool startControlServer = false, const QJsonObject &extra = {},
                           bool autoRecover = false);
    /// Starts the master, both segment controllers and every slave; waits until the tree is present.
    /// @p fe1Args: extra options of FE1 (a misbehaviour).
    void startTree(const QString &partition, const QStringList &fe1Args = {});
    QProcess *startSlave(const QString &kind, const QString &name, const QString &controller,
                         const QStringList &extra = {});
    /// Starts the controller @p name ("Master" or a segment) of @p partition.
    QProcess *startController(const QString &partition, const QString &name);
    /// Stops controller @p name (SIGTERM, or @p kill SIGKILL), waits for its end, and with
    /// @p restart starts it again; false if it did not end. The new one's pid in @p pid.
    bool stopController(const QString &name, bool kill, bool restart, qint64 *pid = nullptr);
    /// SIGKILLs FE1 (removable); false if the master's tree does not list it removed within 10 s.
    bool killFe1UntilRemoved();
    /// The last state @p name published (subscribed on first use).
    QJsonObject stateOf(const QString &name);
    Reply transition(const QString &t, int timeoutMs = 20000);
    /// `dialogctl rc ARGS…` against the fixture; its exit code, output in @p out / @p err.
    int rc(const QStringList &args, QByteArray *out = nullptr, QByteArray *err = nullptr);
    QJsonObject masterState() const;
    QJsonObject treeNode(const QString &name) const;
    bool treePresent() const;

    RcBed m_bed;
    QHash<QString, QProcess *> m_slaves;
    QHash<QString, QProcess *> m_controllers;
    QHash<QString, Subscription *> m_states;
    QString m_partition;
    QStringList m_controllerArgs;    ///< extra options of every controller
    bool m_controllersUseIs = false; ///< the controllers publish to IS (else --no-is)
    /// `dialogctl runs show N --json` once the run has ended, or {}.
    QJsonObject endedRun(int number);
};

void tst_RcTree::initTestCase()
{
    // Processes `dialogctl up` starts are detached: become their reaper so none is left a zombie.
    ::prctl(PR_SET_CHILD_SUBREAPER, 1);
}

void tst_RcTree::init()
{
    QVERIFY(m_bed.start(QStringLiteral("rctree-test")));
}

void tst_RcTree::cleanup()
{
    for (QProcess *p : std::as_const(m_slaves))
        if (p->state() != QProcess::NotRunning)
            ::kill(pid_t(p->processId()), SIGCONT); // a stopped one must be able to terminate
    m_slaves.clear();
    m_controllers.clear();
    m_states.clear();
    m_controllerArgs.clear();
    m_controllersUseIs = false;
    m_bed.stop();
}

QString tst_RcTree::writePartition(bool startControlServer, const QJsonObject &extra, bool autoRecover)
{
    QJsonObject fe1 = node(QStringLiteral("FE1"), QStringLiteral("control"), true);
    if (autoRecover)
        fe1.insert(QStringLiteral("recover"), QStringLiteral("auto"));
    QJsonObject tree{
        {QStringLiteral("segments"),
         QJsonArray{QJsonObject{
                        {QStringLiteral("name"), QStringLiteral("TRK")},
                        {QStringLiteral("slaves"), QJsonArray{QStringLiteral("FE1"), QStringLiteral("FE2")}}},
                    QJsonObject{{QStringLiteral("name"), QStringLiteral("CAL")},
                                {QStringLiteral("slaves"), QJsonArray{QStringLiteral("FE3")}}}}}};
    for (auto it = extra.begin(); it != extra.end(); ++it)
        tree.insert(it.key(), it.value());
    return m_bed.writePartition(QStringLiteral("tree"),
                                QJsonArray{node(QStringLiteral("RO1"), QStringLiteral("readout")), fe1,
                                           node(QStringLiteral("FE2"), QStringLiteral("control")),
                                           node(QStringLiteral("FE3"), QStringLiteral("control"))},
                                3000, startControlServer, tree);
}

QProcess *tst_RcTree::startSlave(const QString &kind, const QString &name, const QString &controller,
                                 const QStringList &extra)
{
    QProcess *p =
        m_bed.fx->start(QStringLiteral("dialog-slave"),
                        QStringList{QStringLiteral("--kind"), kind, QStringLiteral("--name"), name,
                                    QStringLiteral("--no-is"), QStringLiteral("--master"), controller} +
                            kRcHeartbeat + extra);
    p->setProcessChannelMode(QProcess::ForwardedErrorChannel);
    m_slaves.insert(name, p);
    return p;
}

QProcess *tst_RcTree::startController(const QString &partition, const QString &name)
{
    QStringList args{QStringLiteral("--config"), partition};
    if (!m_controllersUseIs)
        args << QStringLiteral("--no-is");
    if (name != QLatin1String("Master"))
        args << QStringLiteral("--segment") << name;
    args << m_controllerArgs;
    QProcess *p = m_bed.fx->start(QStringLiteral("dialog-master"), args);
    m_controllers.insert(name, p);
    return p;
}

bool tst_RcTree::stopController(const QString &name, bool kill, bool restart, qint64 *pid)
{
    QProcess *p = m_controllers.value(name);
    if (!p)
        return false;
    ::kill(pid_t(p->processId()), kill ? SIGKILL : SIGTERM);
    if (!p->waitForFinished(10000))
        return false;
    if (restart) {
        QProcess *again = startController(m_partition, name);
        if (pid)
            *pid = again->processId();
    }
    return true;
}

bool tst_RcTree::killFe1UntilRemoved()
{
    ::kill(pid_t(m_slaves.value(QStringLiteral("FE1"))->processId()), SIGKILL);
    return waitUntil(
        [this] { return treeNode(QStringLiteral("FE1")).value(QStringLiteral("removed")).toBool(); }, 10000);
}

QJsonObject tst_RcTree::stateOf(const QString &name)
{
    Subscription *&sub = m_states[name];
    if (!sub)
        sub = m_bed.client->subscribe(rc::stateService(name));
    return QJsonDocument::fromJson(sub->lastMessage().data()).object();
}

void tst_RcTree::startTree(const QString &partition, const QStringList &fe1Args)
{
    m_partition = partition;
    for (const QString &controller : {QStringLiteral("Master"), QStringLiteral("TRK"), QStringLiteral("CAL")})
        startController(partition, controller);
    startSlave(QStringLiteral("readout"), QStringLiteral("RO1"), QStringLiteral("Master"));
    startSlave(QStringLiteral("control"), QStringLiteral("FE1"), QStringLiteral("TRK"), fe1Args);
    startSlave(QStringLiteral("control"), QStringLiteral("FE2"), QStringLiteral("TRK"));
    startSlave(QStringLiteral("control"), QStringLiteral("FE3"), QStringLiteral("CAL"));
    QTRY_VERIFY_WITH_TIMEOUT(treePresent(), 15000);
    for (const QString &n : {"TRK", "CAL", "FE1", "FE2", "FE3"})
        QTRY_VERIFY_WITH_TIMEOUT(!stateOf(n).isEmpty(), 5000);
}

Reply tst_RcTree::transition(const QString &t, int timeoutMs)
{
    return m_bed.transition(t, timeoutMs);
}

int tst_RcTree::rc(const QStringList &args, QByteArray *out, QByteArray *err)
{
    return m_bed.fx->run(QStringLiteral("dialogctl"),
                         QStringList{QStringLiteral("rc")} + args +
                             QStringList{QStringLiteral("--timeout-ms"), QStringLiteral("10000")},
                         out, err);
}

QJsonObject tst_RcTree::masterState() const
{
    return m_bed.masterState();
}

QJsonObject tst_RcTree::treeNode(const QString &name) const
{
    return findNode(masterState().value(QStringLiteral("tree")).toArray(), name);
}

bool tst_RcTree::treePresent() const
{
    for (const QString &n : {"RO1", "TRK", "CAL", "FE1", "FE2", "FE3"})
        if (!treeNode(n).value(QStringLiteral("present")).toBool())
            return false;
    return true;
}

void tst_RcTree::disabledSegmentIsLeftOutOfTheRun()
{
    startTree(writePartition());
    QByteArray out, err;
    QCOMPARE(rc({QStringLiteral("disable"), QStringLiteral("CAL")}, &out, &err), 0);
    QTRY_VERIFY_WITH_TIMEOUT(!treeNode(QStringLiteral("CAL")).value(QStringLiteral("enabled")).toBool(true),
                             5000);
    // Refused with the reason: an unknown node.
    QCOMPARE(rc({QStringLiteral("disable"), QStringLiteral("FE9")}, nullptr, &err), 2);
    QVERIFY2(err.contains("unknown node 'FE9'"), err.constData());

    for (const QString &t : {QStringLiteral("configure"), QStringLiteral("start")}) {
        const Reply r = transition(t);
        QVERIFY2(r.isOk(), qPrintable(t + QStringLiteral(": ") + r.errorString()));
    }
    QCOMPARE(masterState().value(QStringLiteral("state")).toString(), QStringLiteral("Running"));
    for (const QString &n : {"RO1", "TRK", "FE1", "FE2"})
        QTRY_COMPARE_WITH_TIMEOUT(treeNode(n).value(QStringLiteral("state")).toString(),
                                  QStringLiteral("Running"), 5000);
    // The disabled segment got no command: it and its slave are where they were.
    QCOMPARE(treeNode(QStringLiteral("CAL")).value(QStringLiteral("state")).toString(),
             QStringLiteral("Initial"));
    QCOMPARE(treeNode(QStringLiteral("FE3")).value(QStringLiteral("state")).toString(),
             QStringLiteral("Initial"));

    // Not during a run; the tree shows who is out.
    QCOMPARE(rc({QStringLiteral("enable"), QStringLiteral("CAL")}, nullptr, &err), 2);
    QVERIFY2(err.contains("between runs only"), err.constData());
    QCOMPARE(rc({QStringLiteral("tree")}, &out), 0);
    QVERIFY2(out.contains("Master") && out.contains("Running, run 1") && out.contains("disabled"),
             out.constData());
    QVERIFY2(QRegularExpression(QStringLiteral("\\n    FE3 +control +Initial"))
                 .match(QString::fromUtf8(out))
                 .hasMatch(),
             out.constData());
    QCOMPARE(rc({QStringLiteral("tree"), QStringLiteral("--json")}, &out), 0);
    const QJsonObject tree = QJsonDocument::fromJson(out).object();
    QCOMPARE(tree.value(QStringLiteral("state")).toString(), QStringLiteral("Running"));
    QCOMPARE(findNode(tree.value(QStringLiteral("children")).toArray(), QStringLiteral("CAL"))
                 .value(QStringLiteral("enabled"))
                 .toBool(true),
             false);

    for (const QString &t : {QStringLiteral("stop"), QStringLiteral("unconfigure")})
        QVERIFY(transition(t).isOk());
    QCOMPARE(rc({QStringLiteral("enable"), QStringLiteral("CAL")}, nullptr, &err), 0);
    QVERIFY(transition(QStringLiteral("configure")).isOk());
    QTRY_COMPARE_WITH_TIMEOUT(treeNode(QStringLiteral("FE3")).value(QStringLiteral("state")).toString(),
                              QStringLiteral("Configured"), 5000);
}

void tst_RcTree::removableSlaveKilledMidRunIsRemovedThenRecovered()
{
    startTree(writePartition());
    QVERIFY(transition(QStringLiteral("configure")).isOk());
    QVERIFY(transition(QStringLiteral("start")).isOk());
    const int run = masterState().value(QStringLiteral("run_number")).toInt();
    QVERIFY(run > 0);
    QStringList masterStates;
    connect(m_bed.master, &Subscription::messageReceived, this, [&](const Message &m) {
        masterStates << QJsonDocument::fromJson(m.data()).object().value(QStringLiteral("state")).toString();
    });

    QVERIFY(killFe1UntilRemoved());
    QVERIFY(!treeNode(QStringLiteral("FE1")).value(QStringLiteral("reason")).toString().isEmpty());
    const QJsonArray removed = masterState().value(QStringLiteral("removed")).toArray();
    QCOMPARE(removed.size(), 1);
    QCOMPARE(removed.first().toObject().value(QStringLiteral("node")).toString(), QStringLiteral("FE1"));
    QCOMPARE(removed.first().toObject().value(QStringLiteral("segment")).toString(), QStringLiteral("TRK"));
    QCOMPARE(removed.first().toObject().value(QStringLiteral("reason")).toString(), QStringLiteral("lost"));
    QCOMPARE(masterState().value(QStringLiteral("state")).toString(), QStringLiteral("Running"));

    // Not back yet: recovery is refused with the reason.
    QByteArray out, err;
    QCOMPARE(rc({QStringLiteral("recover"), QStringLiteral("FE1")}, nullptr, &err), 2);
    QVERIFY2(err.contains("FE1 is not back yet"), err.constData());

    // Restarted by hand, brought back into the running run.
    startSlave(QStringLiteral("control"), QStringLiteral("FE1"), QStringLiteral("TRK"));
    QTRY_VERIFY_WITH_TIMEOUT(treeNode(QStringLiteral("FE1")).value(QStringLiteral("present")).toBool(),
                             10000);
    Subscription *fe1 = m_bed.client->subscribe(rc::stateService(QStringLiteral("FE1")));
    const int recovered = rc({QStringLiteral("recover"), QStringLiteral("FE1")}, &out, &err);
    QVERIFY2(recovered == 0, err.constData());
    auto fe1State = [fe1] { return QJsonDocument::fromJson(fe1->lastMessage().data()).object(); };
    QTRY_COMPARE_WITH_TIMEOUT(fe1State().value(QStringLiteral("state")).toString(), QStringLiteral("Running"),
                              5000);
    QCOMPARE(fe1State().value(QStringLiteral("run_number")).toInt(), run);
    QTRY_VERIFY_WITH_TIMEOUT(!treeNode(QStringLiteral("FE1")).value(QStringLiteral("removed")).toBool(),
                             5000);
    QVERIFY(masterState().value(QStringLiteral("removed")).toArray().isEmpty());
    // The run never stopped.
    QCOMPARE(masterState().value(QStringLiteral("run_number")).toInt(), run);
    QVERIFY2(!masterStates.isEmpty() && masterStates.count(QStringLiteral("Running")) == masterStates.size(),
             qPrintable(masterStates.join(QLatin1Char(' '))));
    QVERIFY(transition(QStringLiteral("stop")).isOk());
    QCOMPARE(treeNode(QStringLiteral("FE1")).value(QStringLiteral("state")).toString(),
             QStringLiteral("Configured"));
}

void tst_RcTree::autoRecoveryBringsARestartedSlaveBackIn()
{
    startTree(writePartition(false, {}, true));
    QVERIFY(transition(QStringLiteral("configure")).isOk());
    QVERIFY(transition(QStringLiteral("start")).isOk());
    const int run = masterState().value(QStringLiteral("run_number")).toInt();
    QVERIFY(killFe1UntilRemoved());
    // Back: in the run again without anyone asking, with the run's number.
    startSlave(QStringLiteral("control"), QStringLiteral("FE1"), QStringLiteral("TRK"));
    Subscription *fe1 = m_bed.client->subscribe(rc::stateService(QStringLiteral("FE1")));
    QTRY_VERIFY_WITH_TIMEOUT(!treeNode(QStringLiteral("FE1")).value(QStringLiteral("removed")).toBool(),
                             10000);
    auto fe1State = [fe1] { return QJsonDocument::fromJson(fe1->lastMessage().data()).object(); };
    QTRY_COMPARE_WITH_TIMEOUT(fe1State().value(QStringLiteral("state")).toString(), QStringLiteral("Running"),
                              5000);
    QCOMPARE(fe1State().value(QStringLiteral("run_number")).toInt(), run);
    QCOMPARE(masterState().value(QStringLiteral("state")).toString(), QStringLiteral("Running"));
}

void tst_RcTree::removableSlaveHangingPastTheTimeOutIsRemoved()
{
    // FE1 never completes its start: after the partition's 3 s the run is Running without it.
    startTree(writePartition(), {QStringLiteral("--hang-on"), QStringLiteral("start")});
    QVERIFY(transition(QStringLiteral("configure")).isOk());
    const Reply r = transition(QStringLiteral("start"));
    QVERIFY2(r.isOk(), qPrintable(r.errorString()));
    QCOMPARE(masterState().value(QStringLiteral("state")).toString(), QStringLiteral("Running"));
    QTRY_VERIFY_WITH_TIMEOUT(treeNode(QStringLiteral("FE1")).value(QStringLiteral("removed")).toBool(), 5000);
    QCOMPARE(treeNode(QStringLiteral("FE1")).value(QStringLiteral("reason")).toString(),
             QStringLiteral("no answer within 3000 ms"));
    QCOMPARE(treeNode(QStringLiteral("FE2")).value(QStringLiteral("state")).toString(),
             QStringLiteral("Running"));
    // Still in its start at the end of the run: the unconfigure resets it, the next configure has it.
    QVERIFY(transition(QStringLiteral("stop")).isOk());
    QVERIFY(transition(QStringLiteral("unconfigure")).isOk());
    QTRY_COMPARE_WITH_TIMEOUT(stateOf(QStringLiteral("FE1")).value(QStringLiteral("state")).toString(),
                              QStringLiteral("Initial"), 5000);
    QCOMPARE(stateOf(QStringLiteral("FE1")).value(QStringLiteral("busy")).toBool(), false);
    QVERIFY(transition(QStringLiteral("configure")).isOk());
    QTRY_COMPARE_WITH_TIMEOUT(treeNode(QStringLiteral("FE1")).value(QStringLiteral("state")).toString(),
                              QStringLiteral("Configured"), 5000);
    QCOMPARE(treeNode(QStringLiteral("FE1")).value(QStringLiteral("removed")).toBool(), false);
}

void tst_RcTree::nonRemovableSlaveStoppedPutsTheRunInErrorNamingIt()
{
    startTree(writePartition());
    QVERIFY(transition(QStringLiteral("configure")).isOk());
    QVERIFY(transition(QStringLiteral("start")).isOk());
    ::kill(pid_t(m_slaves.value(QStringLiteral("FE2"))->processId()), SIGSTOP);
    QTRY_COMPARE_WITH_TIMEOUT(masterState().value(QStringLiteral("state")).toString(),
                              QStringLiteral("Error"), 10000);
    const QString error = masterState().value(QStringLiteral("error")).toString();
    QVERIFY2(error.contains(QLatin1String("TRK")) && error.contains(QLatin1String("FE2")), qPrintable(error));
    QCOMPARE(masterState().value(QStringLiteral("culprits")).toArray().first().toString(),
             QStringLiteral("TRK"));
    QVERIFY(!treeNode(QStringLiteral("FE2")).value(QStringLiteral("removed")).toBool());
}

void tst_RcTree::badTreeRefusedByMasterAndUp()
{
    const QString partition = writePartition(
        true, {{QStringLiteral("segments"),
                QJsonArray{QJsonObject{{QStringLiteral("name"), QStringLiteral("A")},
                                       {QStringLiteral("segments"), QJsonArray{QStringLiteral("B")}}},
                           QJsonObject{{QStringLiteral("name"), QStringLiteral("B")},
                                       {QStringLiteral("segments"), QJsonArray{QStringLiteral("A")}}}}}});
    QByteArray err;
    QCOMPARE(m_bed.fx->run(QStringLiteral("dialog-master"), {QStringLiteral("--config"), partition}, nullptr,
                           &err),
             1);
    QVERIFY2(err.contains("tree.json: segments: cycle: A -> B -> A"), err.constData());
    QCOMPARE(m_bed.fx->run(
                 QStringLiteral("dialogctl"),
                 {QStringLiteral("up"), partition, QStringLiteral("--run-dir"), m_bed.dir->filePath("run")},
                 nullptr, &err),
             1);
    QVERIFY2(err.contains("tree.json: segments: cycle: A -> B -> A"), err.constData());
    QVERIFY(!QFile::exists(m_bed.dir->filePath(QStringLiteral("run/processes.json"))));
    const QString good = writePartition();
    QCOMPARE(
        m_bed.fx->run(QStringLiteral("dialog-master"),
                      {QStringLiteral("--config"), good, QStringLiteral("--segment"), QStringLiteral("XYZ")},
                      nullptr, &err),
        1);
    QVERIFY2(err.contains("--segment XYZ: the partition tree has no such segment"), err.constData());
}

void tst_RcTree::upStartsTheSegmentControllers()
{
    // `dialogctl up` starts its own Control Server: stop the fixture's and reuse its port.
    m_bed.client.reset();
    m_bed.fx->stopAll();
    // An access list that keeps run-control commands from everyone: up adds the rules that let the
    // master reset the children of its removable segment CAL when CAL's controller is lost.
    const QString access = m_bed.dir->filePath(QStringLiteral("access.json"));
    QFile f(access);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(R"({"rules": [{"deny": "command", "name": "RunCtrl.*.Command"}]})");
    f.close();
    QJsonObject extra = removableCalTree();
    extra.insert(QStringLiteral("bin_dir"), QStringLiteral(DIALOG_BIN_DIR));
    extra.insert(QStringLiteral("access"), access);
    const QString partition = writePartition(true, extra);
    const QString runDir = m_bed.dir->filePath(QStringLiteral("run"));
    QByteArray out, err;
    const int up = m_bed.fx->run(
        QStringLiteral("dialogctl"),
        {QStringLiteral("up"), partition, QStringLiteral("--run-dir"), runDir, QStringLiteral("--json")},
        &out, &err, 30000);
    const QJsonArray procs =
        QJsonDocument::fromJson(out).object().value(QStringLiteral("processes")).toArray();
    // Whatever fails below, what 'up' started goes, and is reaped (this test is their subreaper).
    auto down = qScopeGuard([&] {
        m_bed.client.reset();
        m_bed.fx->run(QStringLiteral("dialogctl"),
                      {QStringLiteral("down"), partition, QStringLiteral("--run-dir"), runDir}, nullptr,
                      nullptr, 30000);
        waitUntil(
            [&] {
                bool gone = true;
                for (const QJsonValue &v : procs) {
                    const auto pid = pid_t(v.toObject().value(QStringLiteral("pid")).toInteger());
                    ::waitpid(pid, nullptr, WNOHANG);
                    gone = gone && (pid <= 0 || ::kill(pid, 0) != 0);
                }
                return gone;
            },
            5000);
    });
    QVERIFY2(up == 0, err.constData());
    QStringList masters;
    for (const QJsonValue &v : procs)
        if (v.toObject().value(QStringLiteral("role")).toString() == QLatin1String("master"))
            masters << v.toObject().value(QStringLiteral("name")).toString();
    QCOMPARE(masters, (QStringList{"Master", "TRK", "CAL"}));
    // The tree up and driven as one: every slave reached through its own controller.
    ClientOptions o = m_bed.fx->clientOptions(QStringLiteral("rctree-test"));
    o.controlServers = {QStringLiteral("127.0.0.1:%1").arg(m_bed.fx->port())};
    o.secretFile = runDir + QStringLiteral("/secret"); // the partition names none: up made it
    m_bed.client = std::make_unique<Client>(o);
    QVERIFY(m_bed.client->start());
    m_bed.master = m_bed.client->subscribe(rc::stateService(QStringLiteral("Master")));
    QTRY_VERIFY_WITH_TIMEOUT(treePresent(), 15000);
    QVERIFY(transition(QStringLiteral("configure")).isOk());
    for (const QString &n : {"RO1", "TRK", "CAL", "FE1", "FE2", "FE3"})
        QTRY_COMPARE_WITH_TIMEOUT(treeNode(n).value(QStringLiteral("state")).toString(),
                                  QStringLiteral("Configured"), 5000);

    // The list up gave the Control Server: the master may reset CAL's child, nobody else.
    QFile written(runDir + QStringLiteral("/access.json"));
    QVERIFY(written.open(QIODevice::ReadOnly));
    const QJsonArray rules =
        QJsonDocument::fromJson(written.readAll()).object().value(QStringLiteral("rules")).toArray();
    QVERIFY(rules.contains(
        QJsonObject{{QStringLiteral("allow"), QStringLiteral("command")},
                    {QStringLiteral("name"), QStringLiteral("RunCtrl.FE3.Command")},
                    {QStringLiteral("process"), QStringLiteral("Master")},
                    {QStringLiteral("comment"),
                     QStringLiteral("dialogctl up: Master resets FE3 when CAL, its controller, is lost")}}));
    QVERIFY(m_bed.client->sendCommand(rc::commandName(QStringLiteral("FE3")), "reset"));
    QTRY_COMPARE_WITH_TIMEOUT(m_bed.client->error(), Status::Code::PermissionDenied, 5000);
    QVERIFY(transition(QStringLiteral("start")).isOk());
    QTRY_COMPARE_WITH_TIMEOUT(treeNode(QStringLiteral("FE3")).value(QStringLiteral("state")).toString(),
                              QStringLiteral("Running"), 5000);
    // CAL's controller SIGKILLed: CAL removed, FE3 reset by the master through the list.
    qint64 cal = 0;
    for (const QJsonValue &v : procs)
        if (v.toObject().value(QStringLiteral("name")).toString() == QLatin1String("CAL"))
            cal = v.toObject().value(QStringLiteral("pid")).toInteger();
    QVERIFY(cal > 0);
    ::kill(pid_t(cal), SIGKILL);
    QTRY_VERIFY_WITH_TIMEOUT(treeNode(QStringLiteral("CAL")).value(QStringLiteral("removed")).toBool(),
                             10000);
    QTRY_COMPARE_WITH_TIMEOUT(stateOf(QStringLiteral("FE3")).value(QStringLiteral("state")).toString(),
                              QStringLiteral("Initial"), 10000);
    QCOMPARE(masterState().value(QStringLiteral("state")).toString(), QStringLiteral("Running"));
}

void tst_RcTree::disabledNodesStayDisabledWhenTheirControllerRestarts()
{
    startTree(writePartition());
    // CAL is the master's child, FE2 TRK's: each controller keeps its own children's flags.
    QCOMPARE(rc({QStringLiteral("disable"), QStringLiteral("CAL")}), 0);
    QCOMPARE(rc({QStringLiteral("disable"), QStringLiteral("FE2")}), 0);
    QTRY_VERIFY_WITH_TIMEOUT(!treeNode(QStringLiteral("FE2")).value(QStringLiteral("enabled")).toBool(true),
                             5000);
    // TRK crashes (and is seen lost before it comes back), the master is restarted.
    qint64 master = 0;
    QVERIFY(stopController(QStringLiteral("TRK"), true, false));
    QTRY_VERIFY_WITH_TIMEOUT(treeNode(QStringLiteral("TRK")).value(QStringLiteral("lost")).toBool(), 10000);
    const qint64 trk = startController(m_partition, QStringLiteral("TRK"))->processId();
    QVERIFY(stopController(QStringLiteral("Master"), false, true, &master));
    // The new incarnations' states (their pids), with the nodes still out.
    QTRY_VERIFY_WITH_TIMEOUT(
        masterState().value(QStringLiteral("pid")).toInteger() == master && treePresent(), 15000);
    QTRY_COMPARE_WITH_TIMEOUT(stateOf(QStringLiteral("TRK")).value(QStringLiteral("pid")).toInteger(), trk,
                              15000);
    QCOMPARE(treeNode(QStringLiteral("CAL")).value(QStringLiteral("enabled")).toBool(true), false);
    QCOMPARE(findNode(stateOf(QStringLiteral("TRK")).value(QStringLiteral("tree")).toArray(),
                      QStringLiteral("FE2"))
                 .value(QStringLiteral("enabled"))
                 .toBool(true),
             false);
    QTRY_COMPARE_WITH_TIMEOUT(treeNode(QStringLiteral("FE1")).value(QStringLiteral("enabled")).toBool(false),
                              true, 5000);
    QVERIFY(transition(QStringLiteral("configure")).isOk());
    QTRY_COMPARE_WITH_TIMEOUT(treeNode(QStringLiteral("FE1")).value(QStringLiteral("state")).toString(),
                              QStringLiteral("Configured"), 5000);
    QCOMPARE(treeNode(QStringLiteral("FE2")).value(QStringLiteral("state")).toString(),
             QStringLiteral("Initial"));
    QCOMPARE(stateOf(QStringLiteral("FE3")).value(QStringLiteral("state")).toString(),
             QStringLiteral("Initial"));

    // Enabled again: a restart keeps that too.
    QVERIFY(transition(QStringLiteral("unconfigure")).isOk());
    QCOMPARE(rc({QStringLiteral("enable"), QStringLiteral("CAL")}), 0);
    QVERIFY(stopController(QStringLiteral("Master"), false, true, &master));
    QTRY_VERIFY_WITH_TIMEOUT(
        masterState().value(QStringLiteral("pid")).toInteger() == master && treePresent(), 15000);
    QCOMPARE(treeNode(QStringLiteral("CAL")).value(QStringLiteral("enabled")).toBool(false), true);
}

void tst_RcTree::removableSegmentLostMidRunIsRemovedAndItsChildrenReset()
{
    startTree(writePartition(false, removableCalTree()));
    QVERIFY(transition(QStringLiteral("configure")).isOk());
    QVERIFY(transition(QStringLiteral("start")).isOk());
    const int run = masterState().value(QStringLiteral("run_number")).toInt();
    QTRY_COMPARE_WITH_TIMEOUT(stateOf(QStringLiteral("FE3")).value(QStringLiteral("state")).toString(),
                              QStringLiteral("Running"), 5000);

    // CAL's controller dies: CAL is out of the run, and FE3 is not left running without it.
    QVERIFY(stopController(QStringLiteral("CAL"), true, false));
    QTRY_VERIFY_WITH_TIMEOUT(treeNode(QStringLiteral("CAL")).value(QStringLiteral("removed")).toBool(),
                             10000);
    QCOMPARE(treeNode(QStringLiteral("CAL")).value(QStringLiteral("reason")).toString(),
             QStringLiteral("lost"));
    QTRY_COMPARE_WITH_TIMEOUT(stateOf(QStringLiteral("FE3")).value(QStringLiteral("state")).toString(),
                              QStringLiteral("Initial"), 10000);
    QCOMPARE(masterState().value(QStringLiteral("state")).toString(), QStringLiteral("Running"));
    QCOMPARE(stateOf(QStringLiteral("FE1")).value(QStringLiteral("state")).toString(),
             QStringLiteral("Running"));

    // CAL restarted: recovered into the running run with FE3, the run's number on both.
    startController(m_partition, QStringLiteral("CAL"));
    QTRY_VERIFY_WITH_TIMEOUT(treeNode(QStringLiteral("CAL")).value(QStringLiteral("present")).toBool(),
                             10000);
    QByteArray err;
    QCOMPARE(rc({QStringLiteral("recover"), QStringLiteral("CAL")}, nullptr, &err), 0);
    QTRY_COMPARE_WITH_TIMEOUT(stateOf(QStringLiteral("FE3")).value(QStringLiteral("state")).toString(),
                              QStringLiteral("Running"), 10000);
    QCOMPARE(stateOf(QStringLiteral("FE3")).value(QStringLiteral("run_number")).toInt(), run);
    QTRY_VERIFY_WITH_TIMEOUT(!treeNode(QStringLiteral("CAL")).value(QStringLiteral("removed")).toBool(),
                             5000);
    QCOMPARE(masterState().value(QStringLiteral("state")).toString(), QStringLiteral("Running"));
    QCOMPARE(masterState().value(QStringLiteral("run_number")).toInt(), run);
}

void tst_RcTree::nonRemovableSegmentLostLeavesItsChildrenUntilTheReset()
{
    startTree(writePartition());
    QVERIFY(transition(QStringLiteral("configure")).isOk());
    QVERIFY(transition(QStringLiteral("start")).isOk());
    QVERIFY(stopController(QStringLiteral("TRK"), true, false));
    QTRY_COMPARE_WITH_TIMEOUT(masterState().value(QStringLiteral("state")).toString(),
                              QStringLiteral("Error"), 10000);
    QVERIFY2(masterState().value(QStringLiteral("error")).toString().contains(QLatin1String("TRK lost")),
             qPrintable(masterState().value(QStringLiteral("error")).toString()));
    // The run is in Error; TRK's slaves wait for a restarted TRK to take them over…
    QCOMPARE(stateOf(QStringLiteral("FE1")).value(QStringLiteral("state")).toString(),
             QStringLiteral("Running"));
    // …or for the operator's reset, which reaches them without their controller.
    const Reply r = transition(QStringLiteral("reset"));
    QVERIFY2(r.isOk(), qPrintable(r.errorString()));
    for (const QString &n : {QStringLiteral("FE1"), QStringLiteral("FE2"), QStringLiteral("FE3")})
        QTRY_COMPARE_WITH_TIMEOUT(stateOf(n).value(QStringLiteral("state")).toString(),
                                  QStringLiteral("Initial"), 10000);
}

void tst_RcTree::removedSlaveStillRunningIsResetAtUnconfigure()
{
    startTree(writePartition());
    QVERIFY(transition(QStringLiteral("configure")).isOk());
    QVERIFY(transition(QStringLiteral("start")).isOk());
    // FE1 stops answering (removed as lost), then comes back still Running, out of the run.
    QProcess *fe1 = m_slaves.value(QStringLiteral("FE1"));
    ::kill(pid_t(fe1->processId()), SIGSTOP);
    QTRY_VERIFY_WITH_TIMEOUT(treeNode(QStringLiteral("FE1")).value(QStringLiteral("removed")).toBool(),
                             10000);
    ::kill(pid_t(fe1->processId()), SIGCONT);
    QTRY_VERIFY_WITH_TIMEOUT(treeNode(QStringLiteral("FE1")).value(QStringLiteral("present")).toBool(),
                             10000);
    QCOMPARE(treeNode(QStringLiteral("FE1")).value(QStringLiteral("state")).toString(),
             QStringLiteral("Running"));
    QVERIFY(treeNode(QStringLiteral("FE1")).value(QStringLiteral("removed")).toBool());

    QVERIFY(transition(QStringLiteral("stop")).isOk());
    QCOMPARE(stateOf(QStringLiteral("FE1")).value(QStringLiteral("state")).toString(),
             QStringLiteral("Running"));
    QVERIFY(transition(QStringLiteral("unconfigure")).isOk());
    QTRY_COMPARE_WITH_TIMEOUT(stateOf(QStringLiteral("FE1")).value(QStringLiteral("state")).toString(),
                              QStringLiteral("Initial"), 5000);
    // In the next run again, from the start.
    QVERIFY(transition(QStringLiteral("configure")).isOk());
    QTRY_COMPARE_WITH_TIMEOUT(treeNode(QStringLiteral("FE1")).value(QStringLiteral("state")).toString(),
                              QStringLiteral("Configured"), 5000);
    QCOMPARE(treeNode(QStringLiteral("FE1")).value(QStringLiteral("removed")).toBool(), false);
}

QJsonObject tst_RcTree::endedRun(int number)
{
    QJsonObject run;
    // The end is recorded once the message log was asked for the run's warnings (none runs here).
    waitUntil(
        [&] {
            QByteArray out;
            m_bed.fx->run(QStringLiteral("dialogctl"),
                          {QStringLiteral("runs"), QStringLiteral("show"), QString::number(number),
                           QStringLiteral("--json")},
                          &out);
            run = QJsonDocument::fromJson(out).object();
            return run.contains(QStringLiteral("end_reason"));
        },
        15000, 100);
    return run.contains(QStringLiteral("end_reason")) ? run : QJsonObject();
}

void tst_RcTree::runRecordListsWhatWasOut()
{
    const QString partition = writePartition();
    QVERIFY(startConfigDb(partition));
    QByteArray out, err;
    // FE2's parameters, read by its controller TRK from the master's version.
    const QString fe2 = m_bed.dir->filePath(QStringLiteral("fe2.json"));
    QFile f(fe2);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(R"({"registers": 6})");
    f.close();
    QVERIFY2(
        m_bed.fx->run(QStringLiteral("dialogctl"),
                      {QStringLiteral("config"), QStringLiteral("put"), QStringLiteral("slaves/FE2"), fe2},
                      &out, &err) == 0,
        err.constData());
    m_controllerArgs = {QStringLiteral("--configdb"), QStringLiteral("configdb")};
    startTree(partition);
    Subscription *fe2Status = m_bed.client->subscribe(rc::statusService(QStringLiteral("FE2")));

    // Run 1: CAL left out from the start, FE1 removed during it and recovered.
    QCOMPARE(rc({QStringLiteral("disable"), QStringLiteral("CAL")}), 0);
    QVERIFY(transition(QStringLiteral("configure")).isOk());
    QTRY_COMPARE_WITH_TIMEOUT(QJsonDocument::fromJson(fe2Status->lastMessage().data())
                                  .object()
                                  .value(QStringLiteral("registers"))
                                  .toInt(),
                              6, 10000);
    QVERIFY(transition(QStringLiteral("start")).isOk());
    const int run = masterState().value(QStringLiteral("run_number")).toInt();
    QVERIFY(killFe1UntilRemoved());
    startSlave(QStringLiteral("control"), QStringLiteral("FE1"), QStringLiteral("TRK"));
    QTRY_VERIFY_WITH_TIMEOUT(treeNode(QStringLiteral("FE1")).value(QStringLiteral("present")).toBool(),
                             10000);
    QCOMPARE(rc({QStringLiteral("recover"), QStringLiteral("FE1")}, nullptr, &err), 0);
    QTRY_VERIFY_WITH_TIMEOUT(!treeNode(QStringLiteral("FE1")).value(QStringLiteral("removed")).toBool(),
                             5000);
    QVERIFY(transition(QStringLiteral("stop")).isOk());

    const QJsonObject first = endedRun(run);
    QVERIFY2(!first.isEmpty(), "run 1 not ended in the registry");
    const QJsonArray outOfRun = first.value(QStringLiteral("out")).toArray();
    QCOMPARE(outOfRun.size(), 2);
    const QJsonObject cal = outOfRun.at(0).toObject(), fe1 = outOfRun.at(1).toObject();
    QCOMPARE(cal.value(QStringLiteral("node")).toString(), QStringLiteral("CAL"));
    QCOMPARE(cal.value(QStringLiteral("out")).toString(), QStringLiteral("disabled"));
    QCOMPARE(cal.value(QStringLiteral("segment")).toString(), QStringLiteral("Master"));
    QCOMPARE(fe1.value(QStringLiteral("node")).toString(), QStringLiteral("FE1"));
    QCOMPARE(fe1.value(QStringLiteral("out")).toString(), QStringLiteral("removed"));
    QCOMPARE(fe1.value(QStringLiteral("segment")).toString(), QStringLiteral("TRK"));
    QCOMPARE(fe1.value(QStringLiteral("reason")).toString(), QStringLiteral("lost"));
    QVERIFY(fe1.value(QStringLiteral("time_ms")).toInteger() >=
            first.value(QStringLiteral("start_time")).toInteger());
    QVERIFY(fe1.value(QStringLiteral("recovered_ms")).toInteger() >=
            fe1.value(QStringLiteral("time_ms")).toInteger());
    QCOMPARE(m_bed.fx->run(QStringLiteral("dialogctl"),
                           {QStringLiteral("runs"), QStringLiteral("show"), QString::number(run)}, &out),
             0);
    QVERIFY2(QRegularExpression(QStringLiteral("CAL +disabled \\(by Master\\)"))
                     .match(QString::fromUtf8(out))
                     .hasMatch() &&
                 QRegularExpression(QStringLiteral("FE1 +removed \\(by TRK\\) at .*: lost; recovered at "))
                     .match(QString::fromUtf8(out))
                     .hasMatch(),
             out.constData());

    // Run 2: CAL still out, nothing removed; the difference is FE1.
    QVERIFY(transition(QStringLiteral("start")).isOk());
    const int second = masterState().value(QStringLiteral("run_number")).toInt();
    QCOMPARE(second, run + 1);
    QVERIFY(transition(QStringLiteral("stop")).isOk());
    QCOMPARE(endedRun(second).value(QStringLiteral("out")).toArray().size(), 1);
    QCOMPARE(m_bed.fx->run(QStringLiteral("dialogctl"),
                           {QStringLiteral("runs"), QStringLiteral("diff"), QString::number(run),
                            QString::number(second)},
                           &out),
             0);
    QVERIFY2(out.contains("out of the run FE1: removed: lost -> (in)\n") &&
                 !out.contains("out of the run CAL"),
             out.constData());
}

void tst_RcTree::removalRaisesTheAlarmOfTheDemoRule()
{
    // The rule of resources/alarms/demo.json on the master's RunParams.RunCtrl.Master.Tree.
    QFile demo(QStringLiteral(DIALOG_SOURCE_DIR "/resources/alarms/demo.json"));
    QVERIFY(demo.open(QIODevice::ReadOnly));
    QJsonObject rule;
    for (const QJsonValue &a :
         QJsonDocument::fromJson(demo.readAll()).object().value(QStringLiteral("alarms")).toArray())
        if (a.toObject().value(QStringLiteral("path")).toString() == QLatin1String("DAQ/RunControl/removed"))
            rule = a.toObject();
    QVERIFY(!rule.isEmpty());
    const QString rules = m_bed.dir->filePath(QStringLiteral("rules.json"));
    QFile f(rules);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(QJsonDocument(QJsonObject{{QStringLiteral("alarms"), QJsonArray{rule}}}).toJson());
    f.close();
    const QString types = QStringLiteral(DIALOG_SOURCE_DIR "/resources/is-types");
    m_bed.fx->start(QStringLiteral("dialog-isserver"), {QStringLiteral("--name"), QStringLiteral("RunParams"),
                                                        QStringLiteral("--types"), types});
    m_bed.fx->start(QStringLiteral("dialog-alarmserver"),
                    {QStringLiteral("--rules"), rules, QStringLiteral("--types"), types,
                     QStringLiteral("--data-dir"), m_bed.dir->filePath(QStringLiteral("alarms")),
                     QStringLiteral("--stale-poll-ms"), QStringLiteral("200")});
    const auto alarmState = [this] {
        QByteArray out;
        m_bed.fx->run(QStringLiteral("dialogctl"),
                      {QStringLiteral("alarm"), QStringLiteral("ls"), QStringLiteral("--all"),
                       QStringLiteral("--json")},
                      &out);
        for (const QJsonObject &o : jsonLines(out))
            if (o.value(QStringLiteral("path")).toString() == QLatin1String("DAQ/RunControl/removed"))
                return o.value(QStringLiteral("state")).toString();
        return QString();
    };
    QTRY_COMPARE_WITH_TIMEOUT(alarmState(), QStringLiteral("normal"), 20000);

    m_controllersUseIs = true;
    m_controllerArgs = {QStringLiteral("--is-types"), types};
    startTree(writePartition());
    QVERIFY(transition(QStringLiteral("configure")).isOk());
    QVERIFY(transition(QStringLiteral("start")).isOk());
    QCOMPARE(alarmState(), QStringLiteral("normal"));
    QVERIFY(killFe1UntilRemoved());
    QTRY_COMPARE_WITH_TIMEOUT(alarmState(), QStringLiteral("active"), 10000);
    // FE1 back in the run: the condition clears, the latched alarm waits for the shift.
    startSlave(QStringLiteral("control"), QStringLiteral("FE1"), QStringLiteral("TRK"));
    QTRY_VERIFY_WITH_TIMEOUT(treeNode(QStringLiteral("FE1")).value(QStringLiteral("present")).toBool(),
                             10000);
    QCOMPARE(rc({QStringLiteral("recover"), QStringLiteral("FE1")}), 0);
    QTRY_COMPARE_WITH_TIMEOUT(alarmState(), QStringLiteral("latched"), 10000);
}

void tst_RcTree::takenSegmentIsDrivenByItsOwnerAlone()
{
    startTree(writePartition());
    const auto cal = [this](const char *key) {
        return treeNode(QStringLiteral("CAL")).value(QLatin1String(key));
    };
    QByteArray out, err;
    // Only a node out of the run is taken.
    QCOMPARE(rc({QStringLiteral("take"), QStringLiteral("CAL")}, nullptr, &err), 2);
    QVERIFY2(err.contains("take CAL: disable it first"), err.constData());
    QCOMPARE(rc({QStringLiteral("disable"), QStringLiteral("CAL")}), 0);
    QCOMPARE(rc({QStringLiteral("take"), QStringLiteral("CAL")}, &out, &err), 0);
    QTRY_VERIFY_WITH_TIMEOUT(!cal("owner").toString().isEmpty(), 5000);
    const QString owner = cal("owner").toString();
    QVERIFY2(owner.contains(QLatin1Char('@')), qPrintable(owner));
    QCOMPARE(rc({QStringLiteral("tree")}, &out), 0);
    QVERIFY2(out.contains(", taken by " + owner.toUtf8()), out.constData());
    QCOMPARE(rc({QStringLiteral("enable"), QStringLiteral("CAL")}, nullptr, &err), 2);
    QVERIFY2(err.contains("it is taken by " + owner.toUtf8()), err.constData());

    // The main run and the commissioning run of CAL side by side, each with its own number.
    QVERIFY(transition(QStringLiteral("configure")).isOk());
    QVERIFY(transition(QStringLiteral("start")).isOk());
    QCOMPARE(
        rc({QStringLiteral("configure"), QStringLiteral("--node"), QStringLiteral("CAL")}, nullptr, &err), 0);
    QCOMPARE(rc({QStringLiteral("start"), QStringLiteral("--node"), QStringLiteral("CAL"),
                 QStringLiteral("--run-number"), QStringLiteral("900")},
                nullptr, &err),
             0);
    QTRY_COMPARE_WITH_TIMEOUT(stateOf(QStringLiteral("FE3")).value(QStringLiteral("state")).toString(),
                              QStringLiteral("Running"), 5000);
    QCOMPARE(stateOf(QStringLiteral("FE3")).value(QStringLiteral("run_number")).toInt(), 900);
    QVERIFY(masterState().value(QStringLiteral("run_number")).toInt() != 900);
    QCOMPARE(masterState().value(QStringLiteral("state")).toString(), QStringLiteral("Running"));

    // CAL is driven by its owner alone: not directly, not by another operator.
    Reply direct;
    bool answered = false;
    m_bed.client->request(rc::stateService(QStringLiteral("CAL")), "stop", 5000, m_bed.client.get(),
                          [&](const Reply &r) {
                              direct = r;
                              answered = true;
                          });
    QTRY_VERIFY_WITH_TIMEOUT(answered, 7000);
    QVERIFY2(!direct.isOk() &&
                 direct.errorString().contains(QLatin1String("transitions are taken from Master only")),
             qPrintable(direct.errorString()));
    if (::geteuid() == 0 && reachableByOthers(bin(QStringLiteral("dialogctl")))) {
        QProcess other; // the same dialogctl as user nobody
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("DIALOG_CONTROL_SERVER"), m_bed.fx->controlServer());
        env.insert(QStringLiteral("HOME"), QStringLiteral("/tmp"));
        other.setProcessEnvironment(env);
        other.start(QStringLiteral("setpriv"),
                    {QStringLiteral("--reuid=65534"), QStringLiteral("--regid=65534"),
                     QStringLiteral("--clear-groups"), bin(QStringLiteral("dialogctl")), QStringLiteral("rc"),
                     QStringLiteral("stop"), QStringLiteral("--node"), QStringLiteral("CAL"),
                     QStringLiteral("--timeout-ms"), QStringLiteral("10000")});
        QVERIFY(other.waitForFinished(15000));
        const QByteArray otherErr = other.readAllStandardError();
        QCOMPARE(other.exitCode(), 2);
        QVERIFY2(otherErr.contains("stop CAL: it is taken by " + owner.toUtf8() + ", who drives it alone"),
                 otherErr.constData());
        QCOMPARE(stateOf(QStringLiteral("FE3")).value(QStringLiteral("state")).toString(),
                 QStringLiteral("Running"));
    } else {
        qInfo("not root, or the build tree out of others' reach: another user's request is not tried");
    }

    // A run-control command straight to CAL (through the Control Server) is refused too: a command
    // names no user to check against the owner; CAL says why in its log.
    QStringList calLog;
    connect(m_bed.client->subscribe(rc::logService(QStringLiteral("CAL"))), &Subscription::messageReceived,
            this, [&calLog](const Message &m) { calLog << QString::fromUtf8(m.data()); });
    QVERIFY(m_bed.client->sendCommand(rc::commandName(QStringLiteral("CAL")), "stop"));
    QTRY_VERIFY_WITH_TIMEOUT(
        calLog.join(QLatin1Char('\n'))
            .contains(QStringLiteral("refused command from rctree-test: CAL is taken by %1").arg(owner)),
        5000);
    QCOMPARE(stateOf(QStringLiteral("CAL")).value(QStringLiteral("state")).toString(),
             QStringLiteral("Running"));

    // CAL stays taken across a restart of its controller (the master): still its owner's alone.
    qint64 master = 0;
    QVERIFY(stopController(QStringLiteral("Master"), false, true, &master));
    QTRY_VERIFY_WITH_TIMEOUT(
        masterState().value(QStringLiteral("pid")).toInteger() == master && treePresent(), 15000);
    QCOMPARE(cal("owner").toString(), owner);
    QCOMPARE(cal("enabled").toBool(true), false);
    QCOMPARE(rc({QStringLiteral("release"), QStringLiteral("CAL")}, nullptr, &err),
             2); // the owner's, in Initial
    QVERIFY2(err.contains("release CAL: bring it to Initial first (it is Running)"), err.constData());

    // Released once back in Initial; it joins the main run at its next configure.
    QCOMPARE(rc({QStringLiteral("stop"), QStringLiteral("--node"), QStringLiteral("CAL")}), 0);
    QCOMPARE(rc({QStringLiteral("release"), QStringLiteral("CAL")}, nullptr, &err), 2);
    QVERIFY2(err.contains("release CAL: bring it to Initial first (it is Configured)"), err.constData());
    QCOMPARE(rc({QStringLiteral("unconfigure"), QStringLiteral("--node"), QStringLiteral("CAL")}), 0);
    for (const QString &t : {QStringLiteral("stop"), QStringLiteral("unconfigure")})
        QVERIFY(transition(t).isOk());
    QCOMPARE(rc({QStringLiteral("release"), QStringLiteral("CAL")}, nullptr, &err), 0);
    QTRY_VERIFY_WITH_TIMEOUT(cal("owner").toString().isEmpty() && cal("enabled").toBool(), 5000);
    QCOMPARE(
        rc({QStringLiteral("configure"), QStringLiteral("--node"), QStringLiteral("CAL")}, nullptr, &err), 2);
    QVERIFY2(err.contains("configure CAL: it is not taken"), err.constData());
    QVERIFY(transition(QStringLiteral("configure")).isOk());
    QTRY_COMPARE_WITH_TIMEOUT(stateOf(QStringLiteral("FE3")).value(QStringLiteral("state")).toString(),
                              QStringLiteral("Configured"), 5000);
}

bool tst_RcTree::startConfigDb(const QString &partition)
{
    m_bed.fx->start(QStringLiteral("dialog-configdb"),
                    {QStringLiteral("--data-dir"), m_bed.dir->filePath(QStringLiteral("configdb"))});
    if (!waitUntil(
            [&] {
                return m_bed.fx->run(QStringLiteral("dialogctl"),
                                     {QStringLiteral("config"), QStringLiteral("tag")}) == 0;
            },
            20000, 50))
        return false;
    QByteArray err;
    if (m_bed.fx->run(
            QStringLiteral("dialogctl"),
            {QStringLiteral("config"), QStringLiteral("put"), QStringLiteral("partitions/tree"), partition},
            nullptr, &err) != 0) {
        qWarning("config put: %s", err.constData());
        return false;
    }
    return true;
}

void tst_RcTree::ownersRunsAreNumberedAndRecordedByTheRunRegistry()
{
    const QString partition = writePartition();
    QVERIFY(startConfigDb(partition));
    m_controllerArgs = {QStringLiteral("--configdb"), QStringLiteral("configdb")};
    startTree(partition);
    QByteArray err;
    QCOMPARE(rc({QStringLiteral("disable"), QStringLiteral("CAL")}), 0);
    QCOMPARE(rc({QStringLiteral("take"), QStringLiteral("CAL")}), 0);
    QTRY_VERIFY_WITH_TIMEOUT(
        !treeNode(QStringLiteral("CAL")).value(QStringLiteral("owner")).toString().isEmpty(), 5000);
    const QString owner = treeNode(QStringLiteral("CAL")).value(QStringLiteral("owner")).toString();
    QCOMPARE(
        rc({QStringLiteral("configure"), QStringLiteral("--node"), QStringLiteral("CAL")}, nullptr, &err), 0);
    // With a run registry, it numbers the owner's runs as every run: a number of one's own is refused.
    QCOMPARE(rc({QStringLiteral("start"), QStringLiteral("--node"), QStringLiteral("CAL"),
                 QStringLiteral("--run-number"), QStringLiteral("900")},
                nullptr, &err),
             2);
    QVERIFY2(err.contains("start CAL: its runs are numbered by the run registry"), err.constData());
    QCOMPARE(rc({QStringLiteral("start"), QStringLiteral("--node"), QStringLiteral("CAL")}, nullptr, &err),
             0);
    QTRY_COMPARE_WITH_TIMEOUT(stateOf(QStringLiteral("FE3")).value(QStringLiteral("state")).toString(),
                              QStringLiteral("Running"), 5000);
    const int own = stateOf(QStringLiteral("FE3")).value(QStringLiteral("run_number")).toInt();
    QVERIFY(own > 0);
    // The main run meanwhile takes the next number of the same sequence.
    QVERIFY(transition(QStringLiteral("configure")).isOk());
    QVERIFY(transition(QStringLiteral("start")).isOk());
    QCOMPARE(masterState().value(QStringLiteral("run_number")).toInt(), own + 1);
    // The master restarted meanwhile: the owner's run is still its to end.
    qint64 master = 0;
    QVERIFY(stopController(QStringLiteral("Master"), false, true, &master));
    QTRY_VERIFY_WITH_TIMEOUT(
        masterState().value(QStringLiteral("pid")).toInteger() == master && treePresent(), 15000);
    QCOMPARE(rc({QStringLiteral("stop"), QStringLiteral("--node"), QStringLiteral("CAL")}, nullptr, &err), 0);
    const QJsonObject record = endedRun(own);
    QVERIFY2(!record.isEmpty(), "the owner's run not ended in the registry");
    QCOMPARE(record.value(QStringLiteral("partition")).toString(), QStringLiteral("tree/CAL"));
    QCOMPARE(record.value(QStringLiteral("run_type")).toString(), QStringLiteral("Commissioning"));
    QCOMPARE(record.value(QStringLiteral("operator")).toString(), owner);
    QCOMPARE(record.value(QStringLiteral("master")).toString(), QStringLiteral("CAL"));
    QCOMPARE(record.value(QStringLiteral("end_reason")).toString(), QStringLiteral("normal"));
    QStringList processes;
    for (const QJsonValue &p : record.value(QStringLiteral("processes")).toArray())
        processes << p.toObject().value(QStringLiteral("name")).toString();
    QCOMPARE(processes, (QStringList{QStringLiteral("CAL"), QStringLiteral("FE3")}));
    // The main run's record is not touched by CAL's: still open, then ended by its own stop.
    QVERIFY(transition(QStringLiteral("stop")).isOk());
    const QJsonObject main = endedRun(own + 1);
    QCOMPARE(main.value(QStringLiteral("partition")).toString(), QStringLiteral("tree"));
    QCOMPARE(main.value(QStringLiteral("end_reason")).toString(), QStringLiteral("normal"));
}

void tst_RcTree::accessListLetsTheMasterResetALostSegmentsChildren()
{
    // A Control Server whose access list keeps run-control commands to the controllers, with the rule
    // docs/rctree.md gives: the master may command the children of its (removable) segment CAL.
    m_bed.stop();
    QTemporaryDir dir;
    const QString access = dir.filePath(QStringLiteral("access.json"));
    QFile f(access);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(R"({"rules": [
        {"allow": "command", "name": "RunCtrl.FE3.Command", "process": "Master"},
        {"deny": "command", "name": "RunCtrl.*.Command"}]})");
    f.close();
    QVERIFY(m_bed.start(QStringLiteral("rctree-test"), QStringLiteral("Master"),
                        {QStringLiteral("--access"), access}));
    startTree(writePartition(false, removableCalTree()));
    QVERIFY(transition(QStringLiteral("configure")).isOk());
    QVERIFY(transition(QStringLiteral("start")).isOk());
    QTRY_COMPARE_WITH_TIMEOUT(stateOf(QStringLiteral("FE3")).value(QStringLiteral("state")).toString(),
                              QStringLiteral("Running"), 5000);
    // Anyone else's command to FE3 is refused by the list...
    QVERIFY(m_bed.client->sendCommand(rc::commandName(QStringLiteral("FE3")), "stop"));
    QTRY_COMPARE_WITH_TIMEOUT(m_bed.client->error(), Status::Code::PermissionDenied, 5000);
    // ...the master's reset of CAL's orphan passes it.
    QVERIFY(stopController(QStringLiteral("CAL"), true, false));
    QTRY_VERIFY_WITH_TIMEOUT(treeNode(QStringLiteral("CAL")).value(QStringLiteral("removed")).toBool(),
                             10000);
    QTRY_COMPARE_WITH_TIMEOUT(stateOf(QStringLiteral("FE3")).value(QStringLiteral("state")).toString(),
                              QStringLiteral("Initial"), 10000);
    QCOMPARE(masterState().value(QStringLiteral("state")).toString(), QStringLiteral("Running"));
}

QTEST_GUILESS_MAIN(tst_RcTree)
#include "tst_rctree.moc"
