// Migration of a process between hosts through the host agents (network namespaces,
// tests/multihost/network.h): the Control Server on host 1, agents daq2, daq3 and daq4 on hosts 2-4,
// `dialogctl up` from the operator's host 5 (no sshd anywhere) of a partition whose master runs on
// daq2 and whose readout RO1 has "hosts": ["daq3", "daq4"], "migrate": true. A run is started;
// daq3's cable pulled: the agent of daq4 starts RO1 under the same name, the master brings it into
// the run (removable, "recover": "auto"); the cable back: one RO1 only, the other copy standing by.
// Then the runner's host cut off and its copy killed there: the standby takes it back; one copy
// when the cable is back.
// Run as root; skipped with the reason when namespaces cannot be made.
#include "network.h"
#include "processfixture.h"

#include "dialog/client.h"
#include "dialog/rc/protocol.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

#include <csignal>

using namespace dialog;
using namespace dialog::test;

class tst_Migration : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void readoutMovesToFallbackHostAndBackToOneCopy();

private:
    /// `dialogctl ARGS` on the operator's host: its exit code, stdout in @p out (and stderr
    /// after it unless @p stdoutOnly).
    int dialogctl(const QStringList &args, QByteArray *out = nullptr, bool stdoutOnly = false);
    /// RO1's entry in `dialogctl agent ls HOST --json` (empty when the agent does not answer).
    QJsonObject agentEntry(const QString &host, const QString &name);
    /// The PID under which the Control Server's directory has @p name (0: not there).
    qint64 registeredPid(const QString &name);
    QString writePartition();
    QJsonObject node(const QString &name) const;

    Network m_net;
    QTemporaryDir m_dir;
    std::vector<std::unique_ptr<QProcess>> m_children;
    std::unique_ptr<Client> m_client;
    Subscription *m_master = nullptr;
    QString m_partition, m_runDir;
};

void tst_Migration::initTestCase()
{
    if (const QString skip = m_net.setUpAsOperator(); !skip.isEmpty())
        QSKIP(qPrintable(QStringLiteral("multihost: %1").arg(skip)));
}

void tst_Migration::cleanupTestCase()
{
    if (!m_partition.isEmpty())
        dialogctl({QStringLiteral("down"), m_partition, QStringLiteral("--run-dir"), m_runDir});
    m_master = nullptr;
    m_client.reset();
    // The agents run with --stop-children: each stops what it started before it ends.
    Network::stopAll(m_children, 15000);
    m_net.tearDown();
}

int tst_Migration::dialogctl(const QStringList &args, QByteArray *out, bool stdoutOnly)
{
    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("DIALOG_CONTROL_SERVER"), m_net.address(1) + QStringLiteral(":3425"));
    p.setProcessEnvironment(env);
    p.start(bin(QStringLiteral("dialogctl")), args);
    if (!waitUntil([&] { return p.state() == QProcess::NotRunning; }, 90000, 20))
        p.kill();
    p.waitForFinished(5000);
    if (out)
        *out = p.readAllStandardOutput() + (stdoutOnly ? QByteArray() : p.readAllStandardError());
    return p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
}

QJsonObject tst_Migration::agentEntry(const QString &host, const QString &name)
{
    QByteArray out;
    if (dialogctl({QStringLiteral("agent"), QStringLiteral("ls"), host, QStringLiteral("--json")}, &out, true) != 0)
        return {};
    for (const QJsonValue &v : QJsonDocument::fromJson(out).object().value(QStringLiteral("processes")).toArray())
        if (v.toObject().value(QStringLiteral("name")).toString() == name)
            return v.toObject();
    return {};
}

qint64 tst_Migration::registeredPid(const QString &name)
{
    QByteArray out;
    if (dialogctl({QStringLiteral("ls"), QStringLiteral("--json")}, &out, true) != 0)
        return 0;
    for (const QJsonValue &v : QJsonDocument::fromJson(out).object().value(QStringLiteral("processes")).toArray())
        if (v.toObject().value(QStringLiteral("name")).toString() == name)
            return v.toObject().value(QStringLiteral("pid")).toInteger();
    return 0;
}

QString tst_Migration::writePartition()
{
    QJsonObject p = m_net.partition(QStringLiteral("migration"), m_dir.filePath(QStringLiteral("runnumber")));
    QJsonObject master = p.value(QStringLiteral("master")).toObject();
    master.insert(QStringLiteral("host"), QStringLiteral("daq2"));
    master.insert(QStringLiteral("args"), QJsonArray{QStringLiteral("--no-is")});
    p.insert(QStringLiteral("master"), master);
    p.insert(QStringLiteral("ssh_command"), QJsonArray{QStringLiteral("/nonexistent/ssh")}); // agents only
    p.insert(QStringLiteral("bin_dir"), QStringLiteral(DIALOG_BIN_DIR));
    p.insert(QStringLiteral("slaves"),
             QJsonArray{QJsonObject{{QStringLiteral("name"), QStringLiteral("RO1")},
                                    {QStringLiteral("kind"), QStringLiteral("readout")},
                                    {QStringLiteral("hosts"), QJsonArray{QStringLiteral("daq3"), QStringLiteral("daq4")}},
                                    {QStringLiteral("migrate"), true},
                                    // The copy that loses the name when daq3 is back exits refused:
                                    // its policy must not start it again while daq4's holds the name.
                                    {QStringLiteral("restart"), QStringLiteral("on-failure")},
                                    {QStringLiteral("loss_interval_ms"), 1500},
                                    {QStringLiteral("removable"), true},
                                    {QStringLiteral("recover"), QStringLiteral("auto")},
                                    {QStringLiteral("args"), QJsonArray{QStringLiteral("--no-is"), QStringLiteral("--threads"),
                                                                        QStringLiteral("1"), QStringLiteral("--rate"),
                                                                        QStringLiteral("1000")}}}});
    const QString path = m_dir.filePath(QStringLiteral("migration.json"));
    QFile f(path);
    f.open(QIODevice::WriteOnly | QIODevice::Truncate);
    f.write(QJsonDocument(p).toJson());
    return path;
}

QJsonObject tst_Migration::node(const QString &name) const
{
    for (const QJsonValue &v :
         QJsonDocument::fromJson(m_master->lastMessage().data()).object().value(QStringLiteral("tree")).toArray())
        if (v.toObject().value(QStringLiteral("name")).toString() == name)
            return v.toObject();
    return {};
}

void tst_Migration::readoutMovesToFallbackHostAndBackToOneCopy()
{
    m_children.push_back(m_net.start(1, QStringLiteral("dialog-controlserver"),
                                     QStringList{QStringLiteral("--bind"), QStringLiteral("0.0.0.0"), QStringLiteral("--port"),
                                                 QStringLiteral("3425")} +
                                         kHeartbeat));
    for (int h = 2; h <= 4; ++h)
        m_children.push_back(m_net.start(h, QStringLiteral("dialog-agent"),
                                         QStringList{QStringLiteral("--host-name"), QStringLiteral("daq%1").arg(h),
                                                     QStringLiteral("--data-dir"), m_dir.filePath(QStringLiteral("agent%1").arg(h)),
                                                     QStringLiteral("--stop-children")} +
                                             kHeartbeat));
    QVERIFY(waitUntil([&] {
        QByteArray out;
        dialogctl({QStringLiteral("agent"), QStringLiteral("ls")}, &out);
        return out.contains("daq2") && out.contains("daq3") && out.contains("daq4");
    }, 30000, 200));

    m_partition = writePartition();
    m_runDir = m_dir.filePath(QStringLiteral("run"));
    QByteArray out;
    QCOMPARE(dialogctl({QStringLiteral("up"), m_partition, QStringLiteral("--run-dir"), m_runDir}, &out), 0);
    const QJsonObject first = agentEntry(QStringLiteral("daq3"), QStringLiteral("RO1"));
    QVERIFY2(first.value(QStringLiteral("state")) == QLatin1String("running"), out.constData());
    QCOMPARE(agentEntry(QStringLiteral("daq4"), QStringLiteral("RO1")).value(QStringLiteral("state")).toString(),
             QStringLiteral("standby"));
    const qint64 pid3 = first.value(QStringLiteral("pid")).toInteger();
    QCOMPARE(registeredPid(QStringLiteral("RO1")), pid3);

    m_client = std::make_unique<Client>(m_net.operatorOptions());
    QVERIFY(m_client->start());
    m_master = m_client->subscribe(rc::stateService(QStringLiteral("Master")));
    QTRY_VERIFY_WITH_TIMEOUT(node(QStringLiteral("RO1")).value(QStringLiteral("present")).toBool(), 20000);
    QCOMPARE(dialogctl({QStringLiteral("rc"), QStringLiteral("configure")}, &out), 0);
    QCOMPARE(dialogctl({QStringLiteral("rc"), QStringLiteral("start")}, &out), 0);
    QTRY_COMPARE_WITH_TIMEOUT(node(QStringLiteral("RO1")).value(QStringLiteral("state")).toString(), QStringLiteral("Running"),
                              10000);
    const int run = QJsonDocument::fromJson(m_master->lastMessage().data()).object().value(QStringLiteral("run_number")).toInt();

    // daq3's cable pulled: RO1 and daq3's agent are lost; daq4's agent starts RO1 after the loss
    // interval, it registers under the same name, and the master brings it into the run.
    QElapsedTimer t;
    t.start();
    QCOMPARE(m_net.cable(3, false), QString());
    qint64 pid4 = 0;
    QVERIFY2(waitUntil(
                 [&] {
                     const QJsonObject e = agentEntry(QStringLiteral("daq4"), QStringLiteral("RO1"));
                     pid4 = e.value(QStringLiteral("state")) == QLatin1String("running") ? e.value(QStringLiteral("pid")).toInteger() : 0;
                     return pid4 > 0 && registeredPid(QStringLiteral("RO1")) == pid4;
                 },
                 30000, 200),
             "RO1 did not move to daq4");
    qInfo("daq3 cut -> RO1 registered from daq4 after %lld ms (loss interval 1500 ms, heartbeat %d ms)", qint64(t.elapsed()),
          HeartbeatMs);
    QTRY_VERIFY_WITH_TIMEOUT(node(QStringLiteral("RO1")).value(QStringLiteral("state")).toString() == QLatin1String("Running") &&
                                 !node(QStringLiteral("RO1")).value(QStringLiteral("removed")).toBool(),
                             30000);
    const QJsonObject during = QJsonDocument::fromJson(m_master->lastMessage().data()).object();
    QCOMPARE(during.value(QStringLiteral("state")).toString(), QStringLiteral("Running"));
    QCOMPARE(during.value(QStringLiteral("run_number")).toInt(), run);

    // The cable back: the copy on daq3 meets the name held by daq4's; one of them stands by, the
    // directory has the other, and it stays so.
    QCOMPARE(m_net.cable(3, true), QString());
    QJsonObject e3, e4;
    QVERIFY2(waitUntil(
                 [&] {
                     e3 = agentEntry(QStringLiteral("daq3"), QStringLiteral("RO1"));
                     e4 = agentEntry(QStringLiteral("daq4"), QStringLiteral("RO1"));
                     const bool one3 = e3.value(QStringLiteral("state")) == QLatin1String("running");
                     const bool one4 = e4.value(QStringLiteral("state")) == QLatin1String("running");
                     const QJsonObject other = one3 ? e4 : e3;
                     return !e3.isEmpty() && one3 != one4 && other.value(QStringLiteral("state")) == QLatin1String("standby");
                 },
                 30000, 200),
             qPrintable(QStringLiteral("daq3: %1 daq4: %2")
                            .arg(QString::fromUtf8(QJsonDocument(e3).toJson(QJsonDocument::Compact)),
                                 QString::fromUtf8(QJsonDocument(e4).toJson(QJsonDocument::Compact)))));
    const QJsonObject runner = e3.value(QStringLiteral("state")) == QLatin1String("running") ? e3 : e4;
    qInfo("after the cable is back: RO1 runs on %s", e3 == runner ? "daq3" : "daq4");
    QCOMPARE(registeredPid(QStringLiteral("RO1")), runner.value(QStringLiteral("pid")).toInteger());
    QVERIFY(!QFile::exists(QStringLiteral("/proc/%1").arg(pid3)) || e3 == runner);
    QTRY_COMPARE_WITH_TIMEOUT(
        QJsonDocument::fromJson(m_master->lastMessage().data()).object().value(QStringLiteral("state")).toString(),
        QStringLiteral("Running"), 10000);

    // Now the runner's host cut off, and its copy killed there: the other agent (standing by,
    // first in "hosts") takes it back, and it stays one copy.
    const int runnerHost = e3 == runner ? 3 : 4, otherHost = 7 - runnerHost;
    const QString runnerAgent = QStringLiteral("daq%1").arg(runnerHost), otherAgent = QStringLiteral("daq%1").arg(otherHost);
    const qint64 runnerPid = runner.value(QStringLiteral("pid")).toInteger();
    QCOMPARE(m_net.cable(runnerHost, false), QString());
    QCOMPARE(::kill(pid_t(runnerPid), SIGKILL), 0);
    qint64 otherPid = 0;
    QVERIFY2(waitUntil(
                 [&] {
                     const QJsonObject e = agentEntry(otherAgent, QStringLiteral("RO1"));
                     otherPid = e.value(QStringLiteral("state")) == QLatin1String("running") ? e.value(QStringLiteral("pid")).toInteger() : 0;
                     return otherPid > 0 && registeredPid(QStringLiteral("RO1")) == otherPid;
                 },
                 30000, 200),
             "RO1 did not move back");
    QCOMPARE(m_net.cable(runnerHost, true), QString());
    QJsonObject cut;
    QVERIFY2(waitUntil(
                 [&] {
                     cut = agentEntry(runnerAgent, QStringLiteral("RO1"));
                     return cut.value(QStringLiteral("state")) == QLatin1String("standby");
                 },
                 30000, 200),
             qPrintable(QString::fromUtf8(QJsonDocument(cut).toJson(QJsonDocument::Compact))));
    // Killed before its agent noticed the cut, the copy may have been started again there (the
    // agent cannot know sooner than its heartbeat tells): then the duplicate-name rule stopped it
    // on the way back. Either way it stands by now, and there is one copy.
    qInfo("the copy killed on %s: restarts %d, last exit %s", qPrintable(runnerAgent), cut.value(QStringLiteral("restarts")).toInt(),
          QJsonDocument(cut.value(QStringLiteral("last_exit")).toObject()).toJson(QJsonDocument::Compact).constData());
    QCOMPARE(registeredPid(QStringLiteral("RO1")), otherPid);
    QCOMPARE(agentEntry(otherAgent, QStringLiteral("RO1")).value(QStringLiteral("pid")).toInteger(), otherPid);

    QCOMPARE(dialogctl({QStringLiteral("rc"), QStringLiteral("stop")}, &out), 0);
    QCOMPARE(dialogctl({QStringLiteral("down"), m_partition, QStringLiteral("--run-dir"), m_runDir}, &out), 0);
    m_partition.clear();
    QCOMPARE(agentEntry(QStringLiteral("daq4"), QStringLiteral("RO1")).value(QStringLiteral("state")).toString(),
             QStringLiteral("stopped"));
    QCOMPARE(agentEntry(QStringLiteral("daq3"), QStringLiteral("RO1")).value(QStringLiteral("state")).toString(),
             QStringLiteral("stopped"));
}

QTEST_GUILESS_MAIN(tst_Migration)
#include "tst_migration.moc"
