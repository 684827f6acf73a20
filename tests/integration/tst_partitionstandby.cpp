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
    void cleanup();
    void standbyServesThePartitionAfterThePrimaryIsLost();

private:
    QString writePartition();
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

QString tst_PartitionStandby::writePartition()
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
    const QString path = m_dir->filePath(QStringLiteral("test.json"));
    QFile f(path);
    f.open(QIODevice::WriteOnly | QIODevice::Truncate);
    f.write(QJsonDocument(p).toJson());
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

QTEST_GUILESS_MAIN(tst_PartitionStandby)
#include "tst_partitionstandby.moc"
