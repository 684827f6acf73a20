// A standby Control Server in the partition: `dialogctl up` starts the primary and its standby and
// hands both addresses to every process; when the primary is lost, the standby takes over and the
// master, the slaves and the IS servers follow it. The run is driven from a script with
// `dialogctl rc`, which waits for the master's answer and exits non-zero when it refuses. A normal
// start logs no error line. Real binaries on loopback.
#include "launchrecord.h"
#include "processfixture.h"

#include <QDirIterator>
#include <QJsonArray>
#include <QTemporaryDir>
#include <QtTest>
#include <csignal>
#include <sys/prctl.h>
#include <sys/wait.h>

using namespace dialog;
using namespace dialog::test;

class tst_PartitionStandby : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void init();
    void cleanup();
    void standbyServesThePartitionAfterThePrimaryIsLost();
    void noSecretRunsOpenWhenSaidSo();
    void missingSecretFileIsMadeAndUsed();
    void missingSecretFileWithARemoteHostRefused();

private:
    /// The partition of the tests, with @p extra merged into its top level.
    QString writePartition(const QJsonObject &extra = {});
    /// The process record `dialogctl up` keeps (name -> entry); every pid seen is remembered for reaping.
    QHash<QString, QJsonObject> record();
    /// `dialogctl rc ARGS`: its exit code, stdout and stderr.
    int rc(const QStringList &args, QByteArray *out, QByteArray *err);
    /// The names `dialogctl ls --json` lists at the Control Server @p address.
    QStringList processesAt(const QString &address);

    ProcessFixture m_fx;
    std::unique_ptr<QTemporaryDir> m_dir = std::make_unique<QTemporaryDir>();
    QString m_runDir = m_dir->filePath(QStringLiteral("run"));
    quint16 m_primary = freePort(), m_standby = freePort();
    QSet<qint64> m_pids;
};

void tst_PartitionStandby::initTestCase()
{
    // Processes `dialogctl up` starts are detached: become their reaper so none is left a zombie.
    ::prctl(PR_SET_CHILD_SUBREAPER, 1);
    QVERIFY(m_primary != m_standby);
    // What the tool and the test's clients use: both servers, the primary first (as `up` hands out).
    qputenv("DIALOG_CONTROL_SERVER",
            QStringLiteral("127.0.0.1:%1,127.0.0.1:%2").arg(m_primary).arg(m_standby).toUtf8());
}

void tst_PartitionStandby::init()
{
    // Each test says which secret its tools use (cleanup()'s `dialogctl down` keeps the test's own).
    qunsetenv("DIALOG_SECRET_FILE");
}

void tst_PartitionStandby::cleanup()
{
    if (QFile::exists(m_runDir + QStringLiteral("/processes.json")))
        m_fx.run(QStringLiteral("dialogctl"),
                 {QStringLiteral("down"), m_dir->filePath(QStringLiteral("test.json")), QStringLiteral("--run-dir"),
                  m_runDir},
                 nullptr, nullptr, 20000);
    QTRY_VERIFY_WITH_TIMEOUT(
        [&] {
            for (qint64 pid : std::as_const(m_pids))
                ::waitpid(pid_t(pid), nullptr, WNOHANG);
            for (qint64 pid : std::as_const(m_pids))
                if (::kill(pid_t(pid), 0) == 0)
                    return false;
            return true;
        }(),
        10000);
}

QString tst_PartitionStandby::writePartition(const QJsonObject &extra)
{
    auto slave = [](const QString &name) {
        return QJsonObject{{QStringLiteral("name"), name}, {QStringLiteral("kind"), QStringLiteral("control")}};
    };
    const QJsonObject p{
        {QStringLiteral("name"), QStringLiteral("test")},
        {QStringLiteral("control_server"),
         QJsonArray{QJsonObject{{QStringLiteral("port"), m_primary}},
                    QJsonObject{{QStringLiteral("port"), m_standby}}}},
        {QStringLiteral("heartbeat_ms"), 200},
        {QStringLiteral("bin_dir"), QStringLiteral(DIALOG_BIN_DIR)},
        {QStringLiteral("is_types_dir"), QStringLiteral(DIALOG_SOURCE_DIR "/resources/is-types")},
        {QStringLiteral("is_servers"), QJsonArray{QJsonObject{{QStringLiteral("name"), QStringLiteral("RunParams")}},
                                                  QJsonObject{{QStringLiteral("name"), QStringLiteral("DAQ")}}}},
        {QStringLiteral("master"),
         QJsonObject{{QStringLiteral("name"), QStringLiteral("Master")},
                     {QStringLiteral("transition_timeout_ms"), 5000},
                     {QStringLiteral("run_number_file"), m_dir->filePath(QStringLiteral("runnumber"))}}},
        {QStringLiteral("slaves"), QJsonArray{slave(QStringLiteral("FE1")), slave(QStringLiteral("FE2"))}}};
    QJsonObject doc = p;
    for (auto it = extra.begin(); it != extra.end(); ++it)
        doc.insert(it.key(), it.value());
    const QString path = m_dir->filePath(QStringLiteral("test.json"));
    QFile f(path);
    f.open(QIODevice::WriteOnly | QIODevice::Truncate);
    f.write(QJsonDocument(doc).toJson());
    return path;
}

QHash<QString, QJsonObject> tst_PartitionStandby::record()
{
    return launchRecord(m_runDir, &m_pids);
}

int tst_PartitionStandby::rc(const QStringList &args, QByteArray *out, QByteArray *err)
{
    return m_fx.run(QStringLiteral("dialogctl"), QStringList{QStringLiteral("rc")} + args, out, err, 60000);
}

QStringList tst_PartitionStandby::processesAt(const QString &address)
{
    QByteArray out;
    if (m_fx.run(QStringLiteral("dialogctl"),
                 {QStringLiteral("ls"), QStringLiteral("--json"), QStringLiteral("--control-server"), address,
                  QStringLiteral("--timeout-ms"), QStringLiteral("2000")},
                 &out) != 0)
        return {};
    QStringList names;
    for (const QJsonValue &v : QJsonDocument::fromJson(out).object().value(QStringLiteral("processes")).toArray())
        names << v.toObject().value(QStringLiteral("name")).toString();
    return names;
}

void tst_PartitionStandby::standbyServesThePartitionAfterThePrimaryIsLost()
{
    const QString partition = writePartition();
    QByteArray out, err;
    QCOMPARE(m_fx.run(QStringLiteral("dialogctl"),
                      {QStringLiteral("up"), partition, QStringLiteral("--run-dir"), m_runDir}, &out, &err, 60000),
             0);
    // The standby is a process of the partition, up once it watches the primary.
    QVERIFY2(out.contains("Standby") && out.contains(QByteArray::number(m_standby)), out.constData());
    const QHash<QString, QJsonObject> procs = record();
    QVERIFY(procs.contains(QStringLiteral("Standby")));
    QCOMPARE(procs.value(QStringLiteral("Standby")).value(QStringLiteral("status")).toString(),
             QStringLiteral("registered"));
    // Secure by default: the partition names no secret, so `dialogctl up` made <run-dir>/secret
    // (0600), gave it to every process and says how to join; without it nobody is believed.
    const QString secret = m_runDir + QStringLiteral("/secret");
    QVERIFY2(err.contains("names no secret_file: made its secret " + secret.toUtf8()), err.constData());
    QVERIFY2(out.contains("export DIALOG_SECRET_FILE=" + secret.toUtf8() + '\n'), out.constData());
    QCOMPARE(QFile::permissions(secret) & ~(QFile::ReadOwner | QFile::WriteOwner | QFile::ReadUser | QFile::WriteUser),
             QFileDevice::Permissions());
    QVERIFY(processesAt(QStringLiteral("127.0.0.1:%1").arg(m_primary)).isEmpty());
    qputenv("DIALOG_SECRET_FILE", secret.toUtf8());
    QVERIFY(processesAt(QStringLiteral("127.0.0.1:%1").arg(m_primary)).contains(QStringLiteral("FE2")));
    // Identities: every process proved its name with the key `dialogctl up` gave it alone.
    QFile csLog(m_runDir + QStringLiteral("/logs/ControlServer.log"));
    QVERIFY(csLog.open(QIODevice::ReadOnly));
    const QByteArray connects = csLog.readAll();
    for (const char *name : {"Master", "FE1", "FE2", "IS.Server.RunParams", "DIALOG.Standby"})
        QVERIFY2(connects.contains(QByteArray("process ") + name) &&
                     connects.mid(connects.indexOf(QByteArray("process ") + name)).split('\n').first().contains("(name proven)"),
                 name);
    QCOMPARE(QFile::permissions(m_runDir + QStringLiteral("/keys/FE1.key")) &
                 ~(QFile::ReadOwner | QFile::WriteOwner | QFile::ReadUser | QFile::WriteUser),
             QFileDevice::Permissions());
    // Holding the secret and FE1's key does not make FE2: its own name is not proven (refused
    // "must prove its name"), and FE1's key offered for FE2 is a wrong proof (refused at the handshake).
    qputenv("DIALOG_PROCESS_KEY_FILE", (m_runDir + QStringLiteral("/keys/FE1.key")).toUtf8());
    const QStringList asFe2{QStringLiteral("ls"), QStringLiteral("--name"), QStringLiteral("FE2"),
                            QStringLiteral("--timeout-ms"), QStringLiteral("3000")};
    auto csLogHas = [&](const QByteArray &what) {
        QFile f(csLog.fileName());
        return f.open(QIODevice::ReadOnly) && f.readAll().contains(what);
    };
    QCOMPARE(m_fx.run(QStringLiteral("dialogctl"), asFe2, &out, &err, 20000), 1);
    QTRY_VERIFY_WITH_TIMEOUT(csLogHas("refused connection of FE2 from 127.0.0.1 - FE2 is a process of the "
                                      "partition and must prove its name"),
                             5000);
    QFile fe1Key(m_runDir + QStringLiteral("/keys/FE1.key"));
    QVERIFY(fe1Key.open(QIODevice::ReadOnly));
    const QByteArray forgedKey = "FE2\n" + fe1Key.readAll().split('\n').value(1) + '\n';
    const QString forged = m_dir->filePath(QStringLiteral("forged.key"));
    QFile f(forged);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(forgedKey);
    f.close();
    qputenv("DIALOG_PROCESS_KEY_FILE", forged.toUtf8());
    QCOMPARE(m_fx.run(QStringLiteral("dialogctl"), asFe2, &out, &err, 20000), 1);
    QVERIFY2(err.contains("the Control Server refused the connection: authentication failed: wrong proof of the "
                          "name FE2: not its process key"),
             err.constData());
    qunsetenv("DIALOG_PROCESS_KEY_FILE");
    QTRY_VERIFY_WITH_TIMEOUT(processesAt(QStringLiteral("127.0.0.1:%1").arg(m_primary)).contains(QStringLiteral("FE2")),
                             10000); // the real FE2 is still there

    // Driven from a script: each transition waited for, a refusal is an exit code with the reason.
    QCOMPARE(rc({QStringLiteral("configure")}, &out, &err), 0);
    QVERIFY2(out.startsWith("Master: Configured"), out.constData());
    QCOMPARE(rc({QStringLiteral("start")}, &out, &err), 0);
    QVERIFY2(out.startsWith("Master: Running, run 1"), out.constData());
    QCOMPARE(rc({QStringLiteral("configure")}, &out, &err), 2);
    QVERIFY2(err.contains("configure refused") && err.contains("Running"), err.constData());
    QCOMPARE(rc({QStringLiteral("warp")}, &out, &err), 1);
    QVERIFY2(err.contains("unknown transition 'warp'"), err.constData());

    // A normal start: no error line in any process's log (a state published before the client was
    // connected waits for the connection instead of failing).
    QDirIterator logs(m_runDir + QStringLiteral("/logs"), {QStringLiteral("*.log")});
    int logsRead = 0;
    while (logs.hasNext()) {
        QFile f(logs.next());
        QVERIFY(f.open(QIODevice::ReadOnly));
        ++logsRead;
        for (const QByteArray &line : f.readAll().split('\n'))
            QVERIFY2(!line.contains("cannot publish") && !line.contains("not started") &&
                         !line.contains("rror"),
                     qPrintable(f.fileName() + QStringLiteral(": ") + QString::fromUtf8(line)));
    }
    QVERIFY(logsRead >= 7);

    // The primary is lost: the standby takes over, and every process of the partition follows it.
    const qint64 primaryPid = procs.value(QStringLiteral("ControlServer")).value(QStringLiteral("pid")).toInteger();
    QVERIFY(primaryPid > 0);
    QCOMPARE(::kill(pid_t(primaryPid), SIGKILL), 0);
    const QString standby = QStringLiteral("127.0.0.1:%1").arg(m_standby);
    const QStringList everyone{QStringLiteral("Master"), QStringLiteral("FE1"), QStringLiteral("FE2"),
                               QStringLiteral("IS.Server.RunParams"), QStringLiteral("IS.Server.DAQ")};
    QTRY_VERIFY_WITH_TIMEOUT(
        [&] {
            const QStringList there = processesAt(standby);
            return std::all_of(everyone.cbegin(), everyone.cend(),
                               [&](const QString &n) { return there.contains(n); });
        }(),
        30000);
    // The run goes on through the standby.
    QCOMPARE(rc({QStringLiteral("stop")}, &out, &err), 0);
    QVERIFY2(out.startsWith("Master: Configured"), out.constData());
    QCOMPARE(rc({QStringLiteral("state"), QStringLiteral("--json")}, &out, &err), 0);
    QCOMPARE(QJsonDocument::fromJson(out).object().value(QStringLiteral("state")).toString(),
             QStringLiteral("Configured"));
}

void tst_PartitionStandby::noSecretRunsOpenWhenSaidSo()
{
    // "secret": "none": no secret made or handed out, said so, and the Control Server believes anyone.
    QFile::remove(m_runDir + QStringLiteral("/secret"));
    const QString partition = writePartition({{QStringLiteral("secret"), QStringLiteral("none")}});
    QByteArray out, err;
    QCOMPARE(m_fx.run(QStringLiteral("dialogctl"),
                      {QStringLiteral("up"), partition, QStringLiteral("--run-dir"), m_runDir}, &out, &err, 60000),
             0);
    (void)record(); // every pid, for the reaper
    QVERIFY2(out.contains("runs without a shared secret") && !out.contains("DIALOG_SECRET_FILE"), out.constData());
    QVERIFY(!QFile::exists(m_runDir + QStringLiteral("/secret")));
    QVERIFY(processesAt(QStringLiteral("127.0.0.1:%1").arg(m_primary)).contains(QStringLiteral("FE2")));
    // Any other value is a mistake, told before anything starts.
    writePartition({{QStringLiteral("secret"), QStringLiteral("off")}});
    QCOMPARE(m_fx.run(QStringLiteral("dialogctl"),
                      {QStringLiteral("up"), m_dir->filePath(QStringLiteral("test.json")), QStringLiteral("--run-dir"),
                       m_dir->filePath(QStringLiteral("run-off"))},
                      &out, &err, 60000),
             1);
    QVERIFY2(err.contains("secret: 'off': the only value is \"none\""), err.constData());
    writePartition({{QStringLiteral("secret"), QStringLiteral("none")}}); // for cleanup()'s `dialogctl down`
}

void tst_PartitionStandby::missingSecretFileIsMadeAndUsed()
{
    // A partition that names a secret file which does not exist yet, every process on this host:
    // `dialogctl up` makes it (0600) and every process uses it.
    const QString partition = writePartition({{QStringLiteral("secret_file"), QStringLiteral("secret")}});
    const QString secret = m_dir->filePath(QStringLiteral("secret"));
    QFile::remove(secret);
    QByteArray out, err;
    QCOMPARE(m_fx.run(QStringLiteral("dialogctl"),
                      {QStringLiteral("up"), partition, QStringLiteral("--run-dir"), m_runDir}, &out, &err, 60000),
             0);
    QVERIFY2(err.contains("made the partition's secret"), err.constData());
    QVERIFY(QFile::exists(secret));
    QCOMPARE(QFile::permissions(secret) & ~(QFile::ReadOwner | QFile::WriteOwner | QFile::ReadUser | QFile::WriteUser),
             QFileDevice::Permissions());
    (void)record(); // every pid, for the reaper
    // Without the secret the partition's Control Server believes nobody; with it, it lists them.
    QVERIFY(processesAt(QStringLiteral("127.0.0.1:%1").arg(m_primary)).isEmpty());
    qputenv("DIALOG_SECRET_FILE", secret.toUtf8());
    QTRY_VERIFY_WITH_TIMEOUT(processesAt(QStringLiteral("127.0.0.1:%1").arg(m_primary)).contains(QStringLiteral("FE2")),
                             10000);
    // A second `up` keeps the file it made (the processes hold that secret).
    const QByteArray made = [&] {
        QFile f(secret);
        return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
    }();
    QCOMPARE(m_fx.run(QStringLiteral("dialogctl"),
                      {QStringLiteral("down"), partition, QStringLiteral("--run-dir"), m_runDir}, nullptr, nullptr,
                      20000),
             0);
    QCOMPARE(m_fx.run(QStringLiteral("dialogctl"),
                      {QStringLiteral("up"), partition, QStringLiteral("--run-dir"), m_runDir}, &out, &err, 60000),
             0);
    QVERIFY2(!err.contains("made the partition's secret"), err.constData());
    QFile f(secret);
    QVERIFY(f.open(QIODevice::ReadOnly));
    QCOMPARE(f.readAll(), made);
    (void)record(); // DIALOG_SECRET_FILE stays set for cleanup()'s `dialogctl down`
}

void tst_PartitionStandby::missingSecretFileWithARemoteHostRefused()
{
    // The same file must be on every host, which `dialogctl up` does not copy: nothing is started.
    qunsetenv("DIALOG_SECRET_FILE");
    const QString secret = m_dir->filePath(QStringLiteral("secret-remote"));
    const QString partition = writePartition(
        {{QStringLiteral("secret_file"), secret},
         {QStringLiteral("slaves"),
          QJsonArray{QJsonObject{{QStringLiteral("name"), QStringLiteral("FE9")},
                                 {QStringLiteral("kind"), QStringLiteral("control")},
                                 {QStringLiteral("host"), QStringLiteral("daq-fe9.invalid")}}}}});
    QByteArray out, err;
    QCOMPARE(m_fx.run(QStringLiteral("dialogctl"),
                      {QStringLiteral("up"), partition, QStringLiteral("--run-dir"), m_runDir}, &out, &err, 30000),
             1);
    QVERIFY2(err.contains("does not exist, and FE9 runs on daq-fe9.invalid") && err.contains("secret generate"),
             err.constData());
    QVERIFY(!QFile::exists(secret));
    QVERIFY(!out.contains("registered")); // refused before anything was started
}

QTEST_GUILESS_MAIN(tst_PartitionStandby)
#include "tst_partitionstandby.moc"
