// dialogctl up / dialogctl down over a real OpenSSH server: sshd started by the test on 127.0.0.1 with a
// host key and a client key made for the purpose, reached through an ssh config file with
// BatchMode=yes. The "remote" host is this machine, so the same paths hold on both sides.
// Needs openssh-server (run.sh installs it); skipped, with the reason, only when not run as root
// (sshd cannot log a user in otherwise; ./run.sh test runs as root).
#include "processfixture.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTemporaryDir>
#include <QtTest>
#include <csignal>
#include <unistd.h>

namespace {
const QString kSshd = QStringLiteral("/usr/sbin/sshd");

/// True while @p pid is a live process (not a zombie) whose command line contains @p what.
bool running(qint64 pid, const QByteArray &what)
{
    QFile stat(QStringLiteral("/proc/%1/stat").arg(pid));
    if (!stat.open(QIODevice::ReadOnly))
        return false;
    const QByteArray s = stat.readAll();
    const qsizetype close = s.lastIndexOf(')');
    if (close < 0 || close + 2 >= s.size() || s.at(close + 2) == 'Z' || s.at(close + 2) == 'X')
        return false;
    QFile cmd(QStringLiteral("/proc/%1/cmdline").arg(pid));
    return cmd.open(QIODevice::ReadOnly) && cmd.readAll().replace('\0', ' ').contains(what);
}
} // namespace

class tst_Ssh : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void upAndDownOverRealSsh();
    void clearErrors_data();
    void clearErrors();

private:
    bool keygen(const QString &file);
    /// A partition whose slaves run on @p host; with @p allRemote, the master too, and no Control
    /// Server is started (nothing local).
    QString writePartition(const QString &name, const QString &host, const QString &binDir,
                           bool allRemote = false);
    /// Runs the dialogctl tool to completion (bounded); its exit code.
    int dialog(const QStringList &args, QByteArray *out, QByteArray *err)
    {
        return m_fx.run(QStringLiteral("dialogctl"), args, out, err, 90000);
    }

    dialog::test::ProcessFixture m_fx;
    QTemporaryDir m_dir;
    QProcess m_sshd;
    quint16 m_sshPort = 0;
    QString m_sshConfig;
};

bool tst_Ssh::keygen(const QString &file)
{
    QProcess p;
    p.start(QStringLiteral("ssh-keygen"),
            {QStringLiteral("-q"), QStringLiteral("-t"), QStringLiteral("ed25519"), QStringLiteral("-N"),
             QString(), QStringLiteral("-f"), file});
    return p.waitForFinished(20000) && p.exitStatus() == QProcess::NormalExit && p.exitCode() == 0;
}

void tst_Ssh::initTestCase()
{
    // openssh-server is one of run.sh's packages: its absence is a broken set-up, not a reason to skip.
    QVERIFY2(QFileInfo(kSshd).isExecutable(), "sshd is not installed (Debian package openssh-server)");
    if (::geteuid() != 0)
        QSKIP("sshd needs root to log a user in: run the test as root");
    QVERIFY(m_dir.isValid());
    QDir().mkpath(QStringLiteral("/run/sshd")); // sshd's privilege separation directory
    const QString hostKey = m_dir.filePath(QStringLiteral("host_key"));
    const QString key = m_dir.filePath(QStringLiteral("id_test"));
    const QString otherKey = m_dir.filePath(QStringLiteral("id_other"));
    QVERIFY(keygen(hostKey) && keygen(key) && keygen(otherKey));
    QVERIFY(QFile::copy(key + QStringLiteral(".pub"), m_dir.filePath(QStringLiteral("authorized_keys"))));

    m_sshPort = dialog::test::freePort();
    const QString sshdConfig = m_dir.filePath(QStringLiteral("sshd_config"));
    QFile sc(sshdConfig);
    QVERIFY(sc.open(QIODevice::WriteOnly));
    sc.write(
        QStringLiteral("Port %1\nListenAddress 127.0.0.1\nHostKey %2\nAuthorizedKeysFile %3\n"
                       "PidFile %4\nUsePAM no\nPasswordAuthentication no\nKbdInteractiveAuthentication no\n"
                       "PermitRootLogin prohibit-password\nStrictModes no\nLogLevel VERBOSE\n")
            .arg(m_sshPort)
            .arg(hostKey, m_dir.filePath(QStringLiteral("authorized_keys")),
                 m_dir.filePath(QStringLiteral("sshd.pid")))
            .toUtf8());
    sc.close();

    // Hosts as a partition names them: a good one, one whose key is refused, one nobody listens on.
    m_sshConfig = m_dir.filePath(QStringLiteral("ssh_config"));
    QFile cc(m_sshConfig);
    QVERIFY(cc.open(QIODevice::WriteOnly));
    const QString common = QStringLiteral("  HostName 127.0.0.1\n  User root\n  IdentitiesOnly yes\n"
                                          "  StrictHostKeyChecking no\n  UserKnownHostsFile /dev/null\n"
                                          "  LogLevel ERROR\n  ConnectTimeout 10\n");
    cc.write(QStringLiteral("Host daqhost\n  Port %1\n  IdentityFile %2\n%3"
                            "Host daqhost-badkey\n  Port %1\n  IdentityFile %4\n%3"
                            "Host daqhost-down\n  Port %5\n  IdentityFile %2\n%3")
                 .arg(m_sshPort)
                 .arg(key, common, otherKey)
                 .arg(dialog::test::freePort())
                 .toUtf8());
    cc.close();

    m_sshd.setProcessChannelMode(QProcess::MergedChannels);
    m_sshd.start(kSshd, {QStringLiteral("-D"), QStringLiteral("-e"), QStringLiteral("-f"), sshdConfig});
    QVERIFY2(m_sshd.waitForStarted(5000), qPrintable(m_sshd.errorString()));
    // Ready once it accepts connections (it may also die on a bad configuration: say why).
    QTRY_VERIFY2_WITH_TIMEOUT(
        [&] {
            QTcpSocket s;
            s.connectToHost(QHostAddress::LocalHost, m_sshPort);
            return s.waitForConnected(200);
        }() ||
            m_sshd.state() == QProcess::NotRunning,
        m_sshd.readAll().constData(), 10000);
    QVERIFY2(m_sshd.state() == QProcess::Running, m_sshd.readAll().constData());
}

void tst_Ssh::cleanupTestCase()
{
    if (m_sshd.state() != QProcess::NotRunning) {
        m_sshd.terminate();
        if (!m_sshd.waitForFinished(5000)) {
            m_sshd.kill();
            m_sshd.waitForFinished(5000);
        }
    }
}

QString tst_Ssh::writePartition(const QString &name, const QString &host, const QString &binDir,
                                bool allRemote)
{
    const QJsonObject partition{
        {QStringLiteral("name"), name},
        {QStringLiteral("control_server"), QJsonObject{{QStringLiteral("host"), QStringLiteral("localhost")},
                                                       {QStringLiteral("port"), dialog::test::freePort()},
                                                       {QStringLiteral("start"), !allRemote}}},
        {QStringLiteral("ssh_command"), QJsonArray{QStringLiteral("ssh"), QStringLiteral("-F"), m_sshConfig,
                                                   QStringLiteral("-o"), QStringLiteral("BatchMode=yes")}},
        {QStringLiteral("bin_dir"), binDir},
        {QStringLiteral("is_types_dir"), QStringLiteral(DIALOG_SOURCE_DIR "/resources/is-types")},
        {QStringLiteral("master"),
         QJsonObject{{QStringLiteral("name"), QStringLiteral("Master")},
                     {QStringLiteral("host"), allRemote ? host : QStringLiteral("localhost")},
                     {QStringLiteral("args"), QJsonArray{QStringLiteral("--no-is")}}}},
        {QStringLiteral("slaves"),
         QJsonArray{
             QJsonObject{{QStringLiteral("name"), QStringLiteral("FE1")},
                         {QStringLiteral("kind"), QStringLiteral("control")},
                         {QStringLiteral("host"), host},
                         {QStringLiteral("args"), QJsonArray{QStringLiteral("--no-is")}}},
             QJsonObject{{QStringLiteral("name"), QStringLiteral("RO1")},
                         {QStringLiteral("kind"), QStringLiteral("readout")},
                         {QStringLiteral("host"), host},
                         {QStringLiteral("args"), QJsonArray{QStringLiteral("--threads"), QStringLiteral("2"),
                                                             QStringLiteral("--no-is")}}}}}};
    const QString path = m_dir.filePath(name + QStringLiteral(".json"));
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly))
        return {};
    f.write(QJsonDocument(partition).toJson());
    return path;
}

void tst_Ssh::upAndDownOverRealSsh()
{
    const QString partition =
        writePartition(QStringLiteral("remote"), QStringLiteral("daqhost"), QStringLiteral(DIALOG_BIN_DIR));
    const QString runDir = m_dir.filePath(QStringLiteral("run"));
    QByteArray out, err;
    const int rc = dialog(
        {QStringLiteral("up"), partition, QStringLiteral("--run-dir"), runDir, QStringLiteral("--json")},
        &out, &err);
    const QJsonArray procs =
        QJsonDocument::fromJson(out).object().value(QStringLiteral("processes")).toArray();
    // Whatever happens below, nothing started here outlives the test.
    auto cleanup = qScopeGuard([&] {
        QByteArray o, e;
        dialog({QStringLiteral("down"), partition, QStringLiteral("--run-dir"), runDir}, &o, &e);
    });
    // Before the fix ssh never returned while the daemon ran: "ssh daqhost: no answer within 15 s".
    QVERIFY2(rc == 0, (out + err).constData());
    QCOMPARE(procs.size(), 4); // Control Server, master, FE1 and RO1 (the last two over ssh)
    QList<QPair<qint64, QByteArray>> remote;
    for (const QJsonValue &v : procs) {
        const QJsonObject o = v.toObject();
        if (o.value(QStringLiteral("role")).toString() != QLatin1String("controlserver"))
            QCOMPARE(o.value(QStringLiteral("status")).toString(), QStringLiteral("registered"));
        if (o.value(QStringLiteral("host")).toString() == QLatin1String("daqhost"))
            remote << qMakePair(o.value(QStringLiteral("pid")).toInteger(),
                                "--name " + o.value(QStringLiteral("name")).toString().toUtf8());
    }
    QCOMPARE(remote.size(), 2);
    // The PID recorded is the daemon's own (what `dialogctl down` signals), not a shell's.
    for (const auto &r : remote)
        QVERIFY2(
            running(r.first, "dialog-slave") && running(r.first, r.second),
            qPrintable(QStringLiteral("pid %1 is not %2").arg(r.first).arg(QString::fromUtf8(r.second))));

    QVERIFY2(dialog({QStringLiteral("down"), partition, QStringLiteral("--run-dir"), runDir,
                     QStringLiteral("--json")},
                    &out, &err) == 0,
             (out + err).constData());
    for (const QJsonValue &v :
         QJsonDocument::fromJson(out).object().value(QStringLiteral("processes")).toArray())
        QCOMPARE(v.toObject().value(QStringLiteral("status")).toString(), QStringLiteral("stopped"));
    for (const auto &r : remote)
        QTRY_VERIFY_WITH_TIMEOUT(!running(r.first, "dialog-slave"), 10000);
}

void tst_Ssh::clearErrors_data()
{
    QTest::addColumn<QString>("host");
    QTest::addColumn<QString>("binDir");
    QTest::addColumn<QString>("message");
    QTest::newRow("key refused") << QStringLiteral("daqhost-badkey") << QStringLiteral(DIALOG_BIN_DIR)
                                 << QStringLiteral("cannot reach daqhost-badkey over ssh");
    QTest::newRow("host unreachable") << QStringLiteral("daqhost-down") << QStringLiteral(DIALOG_BIN_DIR)
                                      << QStringLiteral("cannot reach daqhost-down over ssh");
    QTest::newRow("program missing") << QStringLiteral("daqhost") << QStringLiteral("/nonexistent/bin")
                                     << QStringLiteral("/nonexistent/bin/dialog-slave not found (bin_dir");
}

void tst_Ssh::clearErrors()
{
    QFETCH(QString, host);
    QFETCH(QString, binDir);
    QFETCH(QString, message);
    // Nothing local (the launcher looks for local programs in the same bin_dir): every failure
    // below is the remote side's.
    const QString partition = writePartition(
        QStringLiteral("bad-%1").arg(QTest::currentDataTag()).replace(QLatin1Char(' '), QLatin1Char('-')),
        host, binDir, true);
    const QString runDir = m_dir.filePath(QStringLiteral("run-") + QFileInfo(partition).baseName());
    QByteArray out, err;
    const int rc = dialog({QStringLiteral("up"), partition, QStringLiteral("--run-dir"), runDir}, &out, &err);
    auto cleanup = qScopeGuard([&] {
        QByteArray o, e;
        dialog({QStringLiteral("down"), partition, QStringLiteral("--run-dir"), runDir}, &o, &e);
    });
    QVERIFY2(rc == 1, (out + err).constData());
    QVERIFY2((out + err).contains(message.toUtf8()), (out + err).constData());
}

QTEST_GUILESS_MAIN(tst_Ssh)
#include "tst_ssh.moc"
