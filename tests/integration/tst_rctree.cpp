// The run-control tree with the real binaries on loopback: a master over a readout slave and two
// segment controllers (dialog-master --segment), a segment left out of the run, a removable slave
// killed mid-run and recovered into the running run, a non-removable one stopped, and a bad tree
// refused by the master and by `dialogctl up`.
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

QJsonObject node(const QString &name, const QString &kind, bool removable = false)
{
    QJsonObject o{{QStringLiteral("name"), name}, {QStringLiteral("kind"), kind}};
    if (removable)
        o.insert(QStringLiteral("removable"), true);
    return o;
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

private:
    /// Master → RO1 (readout), TRK {FE1 (removable), FE2}, CAL {FE3}; @p extra merged into the root;
    /// with @p autoRecover FE1 has "recover": "auto".
    QString writePartition(bool startControlServer = false, const QJsonObject &extra = {},
                           bool autoRecover = false);
    /// Starts the master, both segment controllers and every slave; waits until the tree is present.
    /// @p fe1Args: extra options of FE1 (a misbehaviour).
    void startTree(const QString &partition, const QStringList &fe1Args = {});
    QProcess *startSlave(const QString &kind, const QString &name, const QString &controller,
                         const QStringList &extra = {});
    Reply transition(const QString &t, int timeoutMs = 20000);
    /// `dialogctl rc ARGS…` against the fixture; its exit code, output in @p out / @p err.
    int rc(const QStringList &args, QByteArray *out = nullptr, QByteArray *err = nullptr);
    QJsonObject masterState() const;
    QJsonObject treeNode(const QString &name) const;
    bool treePresent() const;

    RcBed m_bed;
    QHash<QString, QProcess *> m_slaves;
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

void tst_RcTree::startTree(const QString &partition, const QStringList &fe1Args)
{
    m_bed.fx->start(QStringLiteral("dialog-master"),
                    {QStringLiteral("--config"), partition, QStringLiteral("--no-is")});
    for (const QString &segment : {QStringLiteral("TRK"), QStringLiteral("CAL")})
        m_bed.fx->start(QStringLiteral("dialog-master"),
                        {QStringLiteral("--config"), partition, QStringLiteral("--no-is"),
                         QStringLiteral("--segment"), segment});
    startSlave(QStringLiteral("readout"), QStringLiteral("RO1"), QStringLiteral("Master"));
    startSlave(QStringLiteral("control"), QStringLiteral("FE1"), QStringLiteral("TRK"), fe1Args);
    startSlave(QStringLiteral("control"), QStringLiteral("FE2"), QStringLiteral("TRK"));
    startSlave(QStringLiteral("control"), QStringLiteral("FE3"), QStringLiteral("CAL"));
    QTRY_VERIFY_WITH_TIMEOUT(treePresent(), 15000);
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

    ::kill(pid_t(m_slaves.value(QStringLiteral("FE1"))->processId()), SIGKILL);
    QTRY_VERIFY_WITH_TIMEOUT(treeNode(QStringLiteral("FE1")).value(QStringLiteral("removed")).toBool(),
                             10000);
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
    QCOMPARE(rc({QStringLiteral("recover"), QStringLiteral("FE1")}, &out, &err), 0);
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
    ::kill(pid_t(m_slaves.value(QStringLiteral("FE1"))->processId()), SIGKILL);
    QTRY_VERIFY_WITH_TIMEOUT(treeNode(QStringLiteral("FE1")).value(QStringLiteral("removed")).toBool(),
                             10000);
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
    const QString partition =
        writePartition(true, {{QStringLiteral("bin_dir"), QStringLiteral(DIALOG_BIN_DIR)}});
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
}

QTEST_GUILESS_MAIN(tst_RcTree)
#include "tst_rctree.moc"
