// examples/myslave, a slave of one's own written with dialog/rc/slave.h, built against the INSTALLED
// toolkit (cmake --install into the build tree, then find_package(Dialog)) and run from a partition
// entry "program": the installed dialogctl starts the installed Control Server, IS servers and
// master with it, and drives a full run cycle; its IS object of its own type, its command and its
// request service are checked, and a failing configure's reason reaches `dialogctl rc`.
#include "processfixture.h"

#include "dialog/rc/protocol.h"

#include <QDir>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QScopeGuard>
#include <QTemporaryDir>
#include <QTest>
#include <csignal>
#include <sys/wait.h>

using namespace dialog;

namespace {

struct Ran
{
    int code = -1;
    QByteArray out, err;
};

} // namespace

class tst_MySlave : public QObject
{
    Q_OBJECT
private slots:
    void initTestCase();
    void fullRunCycle();
    void missingProgramIsRefused();

private:
    /// Runs @p program with @p args (DIALOG_CONTROL_SERVER the partition's), bounded by @p timeoutMs.
    Ran run(const QString &program, const QStringList &args, int timeoutMs = 60000);
    /// Runs the installed dialogctl.
    Ran ctl(const QStringList &args, int timeoutMs = 30000)
    {
        return run(m_prefix + "/bin/dialogctl", args, timeoutMs);
    }
    /// The attributes of the IS object @p name as `dialogctl is get --json` prints them.
    QJsonObject isGet(const QString &name);

    QString m_work = QStringLiteral(DIALOG_MYSLAVE_WORK_DIR);
    QString m_prefix = m_work + QStringLiteral("/prefix");
    QString m_slave; ///< the built example
    QString m_controlServer;
};

Ran tst_MySlave::run(const QString &program, const QStringList &args, int timeoutMs)
{
    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    if (!m_controlServer.isEmpty())
        env.insert(QStringLiteral("DIALOG_CONTROL_SERVER"), m_controlServer);
    p.setProcessEnvironment(env);
    p.start(program, args);
    Ran r;
    if (!p.waitForStarted(10000)) {
        r.err = p.errorString().toUtf8();
        return r;
    }
    if (!p.waitForFinished(timeoutMs)) {
        p.kill();
        p.waitForFinished(5000);
        r.err = "timed out: " + p.readAllStandardError();
        return r;
    }
    r.out = p.readAllStandardOutput();
    r.err = p.readAllStandardError();
    r.code = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -2;
    return r;
}

QJsonObject tst_MySlave::isGet(const QString &name)
{
    const Ran r = ctl({QStringLiteral("is"), QStringLiteral("get"), name, QStringLiteral("--json")});
    if (r.code != 0)
        return {};
    return QJsonDocument::fromJson(r.out).object();
}

void tst_MySlave::initTestCase()
{
    // Only what the example needs of the installed tree: the library, the development files, the
    // daemons and their data (no GUIs). A second run installs and builds only what changed.
    QDir().mkpath(m_work);
    for (const char *component : {"runtime", "dev", "daemons"}) {
        const Ran r =
            run(QStringLiteral(DIALOG_CMAKE_COMMAND),
                {QStringLiteral("--install"), QStringLiteral(DIALOG_BUILD_DIR), QStringLiteral("--prefix"),
                 m_prefix, QStringLiteral("--component"), QLatin1String(component)});
        QVERIFY2(r.code == 0, (r.out + r.err).constData());
    }
    const QString build = m_work + QStringLiteral("/myslave-build");
    QStringList configure{QStringLiteral("-S"),
                          QStringLiteral(DIALOG_SOURCE_DIR "/examples/myslave"),
                          QStringLiteral("-B"),
                          build,
                          QStringLiteral("-G"),
                          QStringLiteral(DIALOG_CMAKE_GENERATOR),
                          QStringLiteral("-DCMAKE_BUILD_TYPE="), // no optimisation: the quickest build
                          QStringLiteral("-DCMAKE_CXX_COMPILER=" DIALOG_CXX_COMPILER),
                          QStringLiteral("-DCMAKE_PREFIX_PATH=") + m_prefix};
    if (!QStringLiteral(DIALOG_CXX_LAUNCHER).isEmpty())
        configure << QStringLiteral("-DCMAKE_CXX_COMPILER_LAUNCHER=" DIALOG_CXX_LAUNCHER);
    Ran r = run(QStringLiteral(DIALOG_CMAKE_COMMAND), configure);
    QVERIFY2(r.code == 0, (r.out + r.err).constData());
    // The example found the installed Dialog, not the build tree's.
    QFile cache(build + QStringLiteral("/CMakeCache.txt"));
    QVERIFY(cache.open(QIODevice::ReadOnly));
    const QByteArray cached = cache.readAll();
    QVERIFY2(cached.contains("Dialog_DIR:PATH=" + m_prefix.toUtf8()),
             "find_package(Dialog) did not use the prefix");
    r = run(QStringLiteral(DIALOG_CMAKE_COMMAND), {QStringLiteral("--build"), build, QStringLiteral("-j2")},
            180000);
    QVERIFY2(r.code == 0, (r.out + r.err).constData());
    m_slave = build + QStringLiteral("/myslave");
    QVERIFY(QFileInfo(m_slave).isExecutable());
    r = run(m_slave, {QStringLiteral("--help")});
    QCOMPARE(r.code, 0);
    QVERIFY2(r.out.contains("--voltage") && r.out.contains("--master"), r.out.constData());
    r = run(m_slave, {QStringLiteral("--name"), QStringLiteral("X"), QStringLiteral("--channels"),
                      QStringLiteral("99")});
    QCOMPARE(r.code, 1); // a bad parameter: a one-line reason, no start
    QVERIFY2(r.err.contains("--channels"), r.err.constData());
}

void tst_MySlave::fullRunCycle()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const quint16 port = test::freePort();
    m_controlServer = QStringLiteral("127.0.0.1:%1").arg(port);
    const QJsonObject partition{
        {QStringLiteral("name"), QStringLiteral("MySlaveTest")},
        {QStringLiteral("control_server"),
         QJsonObject{{QStringLiteral("host"), QStringLiteral("localhost")}, {QStringLiteral("port"), port}}},
        {QStringLiteral("heartbeat_ms"), 200},
        {QStringLiteral("bin_dir"), m_prefix + QStringLiteral("/bin")},
        {QStringLiteral("is_types_dir"), m_prefix + QStringLiteral("/share/dialog/is-types")},
        {QStringLiteral("is_servers"),
         QJsonArray{QJsonObject{{QStringLiteral("name"), QStringLiteral("RunParams")}},
                    QJsonObject{{QStringLiteral("name"), QStringLiteral("DAQ")}}}},
        {QStringLiteral("master"),
         QJsonObject{{QStringLiteral("name"), QStringLiteral("Master")},
                     {QStringLiteral("transition_timeout_ms"), 10000},
                     {QStringLiteral("run_number_file"), dir.filePath(QStringLiteral("runnumber"))}}},
        {QStringLiteral("slaves"),
         QJsonArray{QJsonObject{
             {QStringLiteral("name"), QStringLiteral("HV1")},
             {QStringLiteral("program"), m_slave},
             {QStringLiteral("args"), QJsonArray{QStringLiteral("--channels"), QStringLiteral("4"),
                                                 QStringLiteral("--voltage"), QStringLiteral("2500")}}}}}};
    const QString file = dir.filePath(QStringLiteral("myslave.json"));
    {
        QFile f(file);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(QJsonDocument(partition).toJson());
    }
    const QString runDir = dir.filePath(QStringLiteral("run"));
    // The partition names no secret: `dialogctl up` makes the one of this environment, which the
    // tools below use too.
    const QString secret = runDir + QStringLiteral("/secret");
    qputenv("DIALOG_SECRET_FILE", secret.toUtf8());
    Ran r = ctl({QStringLiteral("up"), file, QStringLiteral("--run-dir"), runDir, QStringLiteral("--json")},
                60000);
    QList<qint64> pids;
    for (const QJsonValue &v :
         QJsonDocument::fromJson(r.out).object().value(QStringLiteral("processes")).toArray())
        pids << v.toObject().value(QStringLiteral("pid")).toInteger();
    bool downed = false;
    auto down = qScopeGuard([&] {
        if (!downed)
            ctl({QStringLiteral("down"), file, QStringLiteral("--run-dir"), runDir});
        for (qint64 pid : std::as_const(pids))
            ::waitpid(pid_t(pid), nullptr, WNOHANG);
    });
    QVERIFY2(r.code == 0, (r.out + r.err).constData());
    QCOMPARE(pids.size(), 5); // Control Server, RunParams, DAQ, Master, HV1

    // 2500 V is over the supply's 2000 V: configure fails, and the slave's reason reaches the
    // master's answer and dialogctl's message.
    r = ctl({QStringLiteral("rc"), QStringLiteral("configure")});
    QCOMPARE(r.code, 2);
    QVERIFY2(r.err.contains("HV1") && r.err.contains("over the supply's limit of 2000 V"), r.err.constData());
    r = ctl({QStringLiteral("rc"), QStringLiteral("reset")});
    QVERIFY2(r.code == 0, r.err.constData());

    // The command of its own sets the voltage; the IS object of its own type shows it.
    r = ctl({QStringLiteral("send"), QStringLiteral("HV1.SetVoltage"), QStringLiteral("1800")});
    QVERIFY2(r.code == 0, r.err.constData());
    QJsonObject hv;
    QTRY_VERIFY_WITH_TIMEOUT((hv = isGet(QStringLiteral("DAQ.HV1")))
                                     .value(QStringLiteral("value"))
                                     .toObject()
                                     .value(QStringLiteral("commands"))
                                     .toInteger() == 1,
                             15000);
    QCOMPARE(hv.value(QStringLiteral("type")).toString(), QStringLiteral("HvSupplyStatus"));
    QJsonObject a = hv.value(QStringLiteral("value")).toObject();
    QCOMPARE(a.value(QStringLiteral("setVoltage")).toDouble(), 1800.0);
    QCOMPARE(a.value(QStringLiteral("channels")).toInteger(), 4);
    QCOMPARE(a.value(QStringLiteral("on")).toBool(), false);

    r = ctl({QStringLiteral("rc"), QStringLiteral("configure")});
    QVERIFY2(r.code == 0, r.err.constData());
    QTRY_VERIFY_WITH_TIMEOUT(isGet(QStringLiteral("DAQ.HV1"))
                                 .value(QStringLiteral("value"))
                                 .toObject()
                                 .value(QStringLiteral("on"))
                                 .toBool(),
                             10000);
    a = isGet(QStringLiteral("DAQ.HV1")).value(QStringLiteral("value")).toObject();
    QCOMPARE(a.value(QStringLiteral("voltages")).toArray(), QJsonArray({1800.0, 1800.0, 1800.0, 1800.0}));

    r = ctl({QStringLiteral("rc"), QStringLiteral("start")});
    QVERIFY2(r.code == 0, r.err.constData());
    r = ctl({QStringLiteral("rc"), QStringLiteral("state"), QStringLiteral("--json")});
    QVERIFY2(r.code == 0, r.err.constData());
    const QJsonObject state = QJsonDocument::fromJson(r.out).object();
    QCOMPARE(state.value(QStringLiteral("state")).toString(), QStringLiteral("Running"));
    const quint32 run = quint32(state.value(QStringLiteral("run_number")).toInteger());
    QVERIFY2(run > 0, r.out.constData());
    // The master lists the slave with the kind it says it is (a "program" entry names none).
    const QJsonArray slaves = state.value(QStringLiteral("slaves")).toArray();
    QCOMPARE(slaves.size(), 1);
    QCOMPARE(slaves.first().toObject().value(QStringLiteral("kind")).toString(), QStringLiteral("hv"));
    // The slave's own state: Running, in the run the master numbered, its kind its own.
    QJsonObject hvState = isGet(QStringLiteral("RunParams.RunCtrl.HV1"));
    QCOMPARE(hvState.value(QStringLiteral("value")).toObject().value(QStringLiteral("state")).toString(),
             QStringLiteral("Running"));
    QTRY_COMPARE_WITH_TIMEOUT(isGet(QStringLiteral("DAQ.HV1"))
                                  .value(QStringLiteral("value"))
                                  .toObject()
                                  .value(QStringLiteral("runNumber"))
                                  .toInteger(),
                              qint64(run), 10000);

    // Its request service answers (the Slave leaves requests of other services to their handler).
    ClientOptions probe;
    probe.name = QStringLiteral("MySlaveProbe");
    probe.controlServers = {m_controlServer};
    probe.secretFile = secret;
    Client client(probe);
    QVERIFY(client.start());
    std::optional<Reply> reply;
    client.request(QStringLiteral("HV1.Readback"), "{}", 10000, &client,
                   [&](const Reply &rep) { reply = rep; });
    QTRY_VERIFY_WITH_TIMEOUT(reply.has_value(), 12000);
    QVERIFY2(reply->isOk(), qPrintable(reply->errorString()));
    QCOMPARE(
        QJsonDocument::fromJson(reply->data()).object().value(QStringLiteral("voltages")).toArray().size(),
        4);

    r = ctl({QStringLiteral("rc"), QStringLiteral("stop")});
    QVERIFY2(r.code == 0, r.err.constData());
    r = ctl({QStringLiteral("rc"), QStringLiteral("unconfigure")});
    QVERIFY2(r.code == 0, r.err.constData());
    QTRY_VERIFY_WITH_TIMEOUT(!isGet(QStringLiteral("DAQ.HV1"))
                                  .value(QStringLiteral("value"))
                                  .toObject()
                                  .value(QStringLiteral("on"))
                                  .toBool(true),
                             10000);
    hvState = isGet(QStringLiteral("RunParams.RunCtrl.HV1"));
    QCOMPARE(hvState.value(QStringLiteral("value")).toObject().value(QStringLiteral("state")).toString(),
             QStringLiteral("Initial"));

    r = ctl({QStringLiteral("down"), file, QStringLiteral("--run-dir"), runDir});
    QVERIFY2(r.code == 0, (r.out + r.err).constData());
    downed = true;
    QTRY_VERIFY_WITH_TIMEOUT(
        [&] {
            for (qint64 pid : std::as_const(pids)) {
                ::waitpid(pid_t(pid), nullptr, WNOHANG);
                if (::kill(pid_t(pid), 0) == 0)
                    return false;
            }
            return true;
        }(),
        10000);
}

void tst_MySlave::missingProgramIsRefused()
{
    // A "program" that is not there: `dialogctl up` names it and the slave, and starts nothing.
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const quint16 port = test::freePort();
    m_controlServer = QStringLiteral("127.0.0.1:%1").arg(port);
    const QJsonObject partition{
        {QStringLiteral("name"), QStringLiteral("MySlaveMissing")},
        {QStringLiteral("control_server"),
         QJsonObject{{QStringLiteral("host"), QStringLiteral("localhost")}, {QStringLiteral("port"), port}}},
        {QStringLiteral("bin_dir"), m_prefix + QStringLiteral("/bin")},
        {QStringLiteral("master"), QJsonObject{{QStringLiteral("name"), QStringLiteral("Master")}}},
        {QStringLiteral("slaves"),
         QJsonArray{QJsonObject{{QStringLiteral("name"), QStringLiteral("HV9")},
                                {QStringLiteral("program"), QStringLiteral("no-such-slave")}}}}};
    const QString file = dir.filePath(QStringLiteral("missing.json"));
    {
        QFile f(file);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(QJsonDocument(partition).toJson());
    }
    const Ran r =
        ctl({QStringLiteral("up"), file, QStringLiteral("--run-dir"), dir.filePath(QStringLiteral("run"))});
    QCOMPARE(r.code, 1);
    QVERIFY2(r.err.contains("no-such-slave, the program of slave 'HV9', is not an executable file"),
             r.err.constData());
    QVERIFY(!test::ProcessFixture::waitForPort(port, 500)); // no Control Server was started
}

QTEST_GUILESS_MAIN(tst_MySlave)
#include "tst_myslave.moc"
