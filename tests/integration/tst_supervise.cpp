// Supervision: `dialogctl up --supervise` (foreground) and `--daemon` restart the processes whose
// partition entry says "restart": "on-failure". A slave SIGKILLed mid-run comes back by itself and
// the run continues; a program that always exits is given up after restart_limit restarts; each
// restart reaches the message log. Real binaries on loopback.
#include "launchrecord.h"
#include "processfixture.h"

#include <QJsonArray>
#include <QTemporaryDir>
#include <QtTest>
#include <csignal>
#include <sys/prctl.h>
#include <sys/wait.h>

using namespace dialog;
using namespace dialog::test;

class tst_Supervise : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void init();
    void cleanup();
    void partitionRestartFieldsAreChecked();
    void slaveKilledMidRunComesBackAndTheRunContinues();
    void alwaysExitingProgramIsGivenUpAfterTheLimit();

private:
    QString writePartition(const QJsonArray &slaves);
    QJsonObject masterState() const;
    /// The process record `dialogctl up` keeps (name -> entry); every pid seen is remembered for reaping.
    QHash<QString, QJsonObject> record();
    void reap();
    Reply transition(const QString &t);

    std::unique_ptr<ProcessFixture> m_fx;
    std::unique_ptr<QTemporaryDir> m_dir;
    std::unique_ptr<Client> m_client;
    Subscription *m_master = nullptr;
    QString m_runDir;
    QSet<qint64> m_pids;
};

void tst_Supervise::initTestCase()
{
    // Processes `dialogctl up` starts are detached: become their reaper so none is left a zombie.
    ::prctl(PR_SET_CHILD_SUBREAPER, 1);
}

void tst_Supervise::init()
{
    m_fx = std::make_unique<ProcessFixture>();
    m_dir = std::make_unique<QTemporaryDir>();
    m_runDir = m_dir->filePath(QStringLiteral("run"));
    QVERIFY(m_fx->startControlServer({QStringLiteral("--heartbeat-ms"), QStringLiteral("200")}));
    ClientOptions o = m_fx->clientOptions(QStringLiteral("supervise-test"));
    o.heartbeatMs = 200;
    m_client = std::make_unique<Client>(o);
    QVERIFY(m_client->start());
    m_master = m_client->subscribe(QStringLiteral("RunCtrl.Master.State"));
}

void tst_Supervise::cleanup()
{
    // Whatever a failed test left: the supervisor first, then the partition.
    if (QFile::exists(m_runDir + QStringLiteral("/processes.json")))
        m_fx->run(QStringLiteral("dialogctl"),
                  {QStringLiteral("down"), m_dir->filePath(QStringLiteral("test.json")),
                   QStringLiteral("--run-dir"), m_runDir},
                  nullptr, nullptr, 20000);
    m_client.reset();
    m_fx.reset();
    QTRY_VERIFY_WITH_TIMEOUT(
        [&] {
            reap();
            for (qint64 pid : std::as_const(m_pids))
                if (::kill(pid_t(pid), 0) == 0)
                    return false;
            return true;
        }(),
        5000);
    m_pids.clear();
    m_dir.reset();
}

QString tst_Supervise::writePartition(const QJsonArray &slaves)
{
    // Hosts other than localhost are reached over a stand-in for ssh that runs the command here.
    const QJsonObject p{
        {QStringLiteral("ssh_command"),
         QJsonArray{QStringLiteral(DIALOG_SOURCE_DIR "/tests/integration/fakessh.sh"), QStringLiteral("-o"),
                    QStringLiteral("BatchMode=yes")}},
        {QStringLiteral("name"), QStringLiteral("test")},
        {QStringLiteral("control_server"),
         QJsonObject{{QStringLiteral("port"), m_fx->port()}, {QStringLiteral("start"), false}}},
        {QStringLiteral("heartbeat_ms"), 200},
        {QStringLiteral("bin_dir"), QStringLiteral(DIALOG_BIN_DIR)},
        {QStringLiteral("master"),
         QJsonObject{{QStringLiteral("name"), QStringLiteral("Master")},
                     {QStringLiteral("args"), QJsonArray{QStringLiteral("--no-is")}},
                     {QStringLiteral("transition_timeout_ms"), 5000},
                     {QStringLiteral("run_number_file"), m_dir->filePath(QStringLiteral("runnumber"))}}},
        {QStringLiteral("slaves"), slaves}};
    const QString path = m_dir->filePath(QStringLiteral("test.json"));
    QFile f(path);
    f.open(QIODevice::WriteOnly | QIODevice::Truncate);
    f.write(QJsonDocument(p).toJson());
    return path;
}

QJsonObject tst_Supervise::masterState() const
{
    return QJsonDocument::fromJson(m_master->lastMessage().data()).object();
}

QHash<QString, QJsonObject> tst_Supervise::record()
{
    return launchRecord(m_runDir, &m_pids);
}

void tst_Supervise::reap()
{
    for (qint64 pid : std::as_const(m_pids))
        ::waitpid(pid_t(pid), nullptr, WNOHANG);
}

Reply tst_Supervise::transition(const QString &t)
{
    Reply out;
    bool done = false;
    m_client->request(QStringLiteral("RunCtrl.Master.State"), t.toUtf8(), 15000, this, [&](const Reply &r) {
        out = r;
        done = true;
    });
    waitUntil([&done] { return done; }, 17000, 5); // the request times out by itself
    return out;
}

static QJsonObject slave(const QString &name, const QString &kind, const QJsonArray &args = {},
                         const QJsonObject &restart = {})
{
    QJsonArray all{QStringLiteral("--no-is")};
    for (const QJsonValue &a : args)
        all.append(a);
    QJsonObject o{
        {QStringLiteral("name"), name}, {QStringLiteral("kind"), kind}, {QStringLiteral("args"), all}};
    for (auto it = restart.begin(); it != restart.end(); ++it)
        o.insert(it.key(), it.value());
    return o;
}

void tst_Supervise::partitionRestartFieldsAreChecked()
{
    const QList<QPair<QJsonObject, QByteArray>> cases{
        {{{QStringLiteral("restart"), QStringLiteral("always")}},
         "slaves[0].restart: 'always': expected \"no\" or \"on-failure\""},
        {{{QStringLiteral("restart"), QStringLiteral("on-failure")}, {QStringLiteral("restart_limit"), 0}},
         "slaves[0].restart_limit: expected an integer in 1..1000"},
        {{{QStringLiteral("restart_delay_ms"), -5}},
         "slaves[0].restart_delay_ms: expected an integer in 0..30000"},
    };
    for (const auto &c : cases) {
        const QString partition =
            writePartition({slave(QStringLiteral("FE1"), QStringLiteral("control"), {}, c.first)});
        QByteArray err;
        QCOMPARE(m_fx->run(QStringLiteral("dialogctl"),
                           {QStringLiteral("up"), partition, QStringLiteral("--run-dir"), m_runDir}, nullptr,
                           &err),
                 1);
        QVERIFY2(err.contains(c.second), err.constData());
    }
    // Supervising a partition that is not up, or in which nothing may be restarted, is refused.
    QByteArray err;
    const QString partition = writePartition({slave(QStringLiteral("FE1"), QStringLiteral("control"))});
    QCOMPARE(m_fx->run(QStringLiteral("dialogctl"),
                       {QStringLiteral("supervise"), partition, QStringLiteral("--run-dir"), m_runDir},
                       nullptr, &err),
             1);
    QVERIFY2(err.contains("nothing recorded"), err.constData());
    QCOMPARE(m_fx->run(QStringLiteral("dialogctl"),
                       {QStringLiteral("up"), partition, QStringLiteral("--run-dir"), m_runDir,
                        QStringLiteral("--daemon")},
                       nullptr, &err),
             1);
    QVERIFY2(err.contains("--daemon needs --supervise"), err.constData());
}

void tst_Supervise::slaveKilledMidRunComesBackAndTheRunContinues()
{
    // A logger is around: restarts reach the message log too.
    QProcess *logger = m_fx->start(QStringLiteral("dialog-logger"),
                                   {QStringLiteral("--data-dir"), m_dir->filePath(QStringLiteral("log")),
                                    QStringLiteral("--heartbeat-ms"), QStringLiteral("200")});
    QVERIFY(logger->state() == QProcess::Running);
    const QString sshLog = m_dir->filePath(QStringLiteral("ssh.log"));
    qputenv("FAKESSH_LOG", sshLog.toUtf8());
    const QJsonObject onFailure{{QStringLiteral("restart"), QStringLiteral("on-failure")},
                                {QStringLiteral("restart_delay_ms"), 100}};
    QJsonObject remoteOnFailure = onFailure;
    remoteOnFailure.insert(QStringLiteral("host"), QStringLiteral("daq-pc2"));
    const QString partition =
        writePartition({slave(QStringLiteral("FE1"), QStringLiteral("control"), {}, onFailure),
                        slave(QStringLiteral("FE2"), QStringLiteral("control"), {}, onFailure),
                        slave(QStringLiteral("RO1"), QStringLiteral("readout"),
                              {QStringLiteral("--threads"), QStringLiteral("2")}, remoteOnFailure)});
    QProcess *up = m_fx->start(QStringLiteral("dialogctl"),
                               {QStringLiteral("up"), partition, QStringLiteral("--run-dir"), m_runDir,
                                QStringLiteral("--supervise")});
    QByteArray upErr;
    QTRY_VERIFY_WITH_TIMEOUT((upErr += up->readAllStandardError()).contains("supervising 3 processes"),
                             20000);
    QVERIFY(up->readAllStandardOutput().contains("partition test is up"));
    QTRY_COMPARE_WITH_TIMEOUT(masterState().value(QStringLiteral("slaves")).toArray().size(), 3, 10000);
    QVERIFY(transition(QStringLiteral("configure")).isOk());
    QVERIFY(transition(QStringLiteral("start")).isOk());
    QCOMPARE(masterState().value(QStringLiteral("state")).toString(), QStringLiteral("Running"));

    const qint64 fe2 = record().value(QStringLiteral("FE2")).value(QStringLiteral("pid")).toInteger();
    QVERIFY(fe2 > 0);
    QElapsedTimer t;
    t.start();
    ::kill(pid_t(fe2), SIGKILL); // a crash mid-run
    // The master notices (Error naming FE2) and, once the supervisor brought FE2 back, recovers the
    // run by itself.
    QTRY_COMPARE_WITH_TIMEOUT(masterState().value(QStringLiteral("state")).toString(),
                              QStringLiteral("Error"), 10000);
    QTRY_COMPARE_WITH_TIMEOUT(masterState().value(QStringLiteral("state")).toString(),
                              QStringLiteral("Running"), 15000);
    qInfo("FE2 SIGKILLed mid-run: the master is back in Running after %lld ms", t.elapsed());
    QCOMPARE(masterState().value(QStringLiteral("run_number")).toInt(), 1);
    const QJsonObject fe2Now = record().value(QStringLiteral("FE2"));
    QVERIFY(fe2Now.value(QStringLiteral("pid")).toInteger() != fe2);
    QCOMPARE(fe2Now.value(QStringLiteral("status")).toString(), QStringLiteral("restarted"));
    QTRY_VERIFY_WITH_TIMEOUT((upErr += up->readAllStandardError()).contains("restarted FE2 on localhost"),
                             5000);
    QVERIFY2(upErr.contains("FE2 on localhost is gone"), upErr.constData());
    QVERIFY(QFile::exists(m_runDir + QStringLiteral("/logs/FE2.log.1"))); // the lost instance's log

    // RO1 runs on another host: it is restarted there, over ssh, by the launcher's own start.
    const qint64 ro1 = record().value(QStringLiteral("RO1")).value(QStringLiteral("pid")).toInteger();
    QVERIFY(ro1 > 0);
    t.restart();
    ::kill(pid_t(ro1), SIGKILL);
    QTRY_COMPARE_WITH_TIMEOUT(masterState().value(QStringLiteral("state")).toString(),
                              QStringLiteral("Error"), 10000);
    QTRY_COMPARE_WITH_TIMEOUT(masterState().value(QStringLiteral("state")).toString(),
                              QStringLiteral("Running"), 15000);
    qInfo("remote RO1 SIGKILLed mid-run: the master is back in Running after %lld ms", t.elapsed());
    QTRY_VERIFY_WITH_TIMEOUT((upErr += up->readAllStandardError()).contains("restarted RO1 on daq-pc2"),
                             5000);
    QFile ssh(sshLog);
    QVERIFY(ssh.open(QIODevice::ReadOnly));
    const QByteArray calls = ssh.readAll();
    QCOMPARE(calls.count("daq-pc2: mkdir -p"), 2); // started by `up`, then by the supervisor
    QVERIFY(record().value(QStringLiteral("RO1")).value(QStringLiteral("pid")).toInteger() != ro1);
    QVERIFY(transition(QStringLiteral("stop")).isOk());

    // The restart is in the message log.
    QByteArray out;
    QVERIFY(waitUntil(
        [&] {
            m_fx->run(QStringLiteral("dialogctl"),
                      {QStringLiteral("log"), QStringLiteral("search"), QStringLiteral("--category"),
                       QStringLiteral("dialog.supervise"), QStringLiteral("--text"),
                       QStringLiteral("restarted FE2")},
                      &out);
            return out.contains("restarted FE2 on localhost");
        },
        10000, 200));

    // `dialogctl down` stops the supervisor first (it must not restart what is being stopped).
    QByteArray err;
    QCOMPARE(m_fx->run(QStringLiteral("dialogctl"),
                       {QStringLiteral("down"), partition, QStringLiteral("--run-dir"), m_runDir}, &out, &err,
                       20000),
             0);
    QTRY_COMPARE_WITH_TIMEOUT(up->state(), QProcess::NotRunning, 5000);
    QCOMPARE(up->exitCode(), 0);
    QVERIFY2(!out.contains("still alive"), out.constData());
    QVERIFY(!QFile::exists(m_runDir + QStringLiteral("/supervisor.pid")));
    qunsetenv("FAKESSH_LOG");
}

void tst_Supervise::alwaysExitingProgramIsGivenUpAfterTheLimit()
{
    const QString partition = writePartition(
        {slave(QStringLiteral("FE1"), QStringLiteral("control")),
         slave(QStringLiteral("FE9"), QStringLiteral("control"), {QStringLiteral("--no-such-option")},
               {{QStringLiteral("restart"), QStringLiteral("on-failure")},
                {QStringLiteral("restart_limit"), 3},
                {QStringLiteral("restart_delay_ms"), 50}})});
    QByteArray out, err;
    // FE9 does not come up (exit 1), but the supervisor starts in the background and tries again.
    QCOMPARE(m_fx->run(QStringLiteral("dialogctl"),
                       {QStringLiteral("up"), partition, QStringLiteral("--run-dir"), m_runDir,
                        QStringLiteral("--supervise"), QStringLiteral("--daemon")},
                       &out, &err, 30000),
             1);
    QVERIFY2(out.contains("supervisor of partition test: pid"), out.constData());
    QFile pidFile(m_runDir + QStringLiteral("/supervisor.pid"));
    QVERIFY(pidFile.open(QIODevice::ReadOnly));
    const qint64 supervisor = pidFile.readAll().trimmed().toLongLong();
    QVERIFY(supervisor > 0);
    m_pids.insert(supervisor);

    QFile log(m_runDir + QStringLiteral("/logs/supervisor.log"));
    QByteArray text;
    QVERIFY(waitUntil(
        [&] {
            record(); // remember the pids of the attempts, to reap them
            reap();
            if (log.open(QIODevice::ReadOnly)) {
                text = log.readAll();
                log.close();
            }
            return text.contains("given up");
        },
        15000, 20));
    QCOMPARE(text.count("restarted FE9 on localhost"), 3);
    QVERIFY2(text.contains("after 3 restarts within a minute; given up (restart_limit 3)"), text.constData());
    QVERIFY(text.contains("restart 3 of at most 3 per minute in 200 ms")); // the back-off doubles
    // Each loss says how the program ended; the log of the instance before is kept.
    QVERIFY2(text.contains("its log ends: dialog-slave: Unknown option 'no-such-option'"), text.constData());
    QVERIFY(QFile::exists(m_runDir + QStringLiteral("/logs/FE9.log.1")));
    QVERIFY(record()
                .value(QStringLiteral("FE9"))
                .value(QStringLiteral("status"))
                .toString()
                .startsWith(QLatin1String("given up")));
    QCOMPARE(record().value(QStringLiteral("FE1")).value(QStringLiteral("status")).toString(),
             QStringLiteral("registered"));

    QCOMPARE(m_fx->run(QStringLiteral("dialogctl"),
                       {QStringLiteral("down"), partition, QStringLiteral("--run-dir"), m_runDir}, &out, &err,
                       20000),
             0);
    QTRY_VERIFY_WITH_TIMEOUT(
        [&] {
            ::waitpid(pid_t(supervisor), nullptr, WNOHANG);
            return ::kill(pid_t(supervisor), 0) != 0;
        }(),
        5000);
    QVERIFY(!QFile::exists(m_runDir + QStringLiteral("/supervisor.pid")));
}

QTEST_GUILESS_MAIN(tst_Supervise)
#include "tst_supervise.moc"
