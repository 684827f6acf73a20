// Several hosts on one machine: network namespaces joined by a bridge (in a namespace of its own,
// so nothing touches the machine's network), one DIALOG process group per "host", addresses
// 10.213.0.0/24 that no host name resolves to. Cables are pulled with `ip link set down`; latency
// and loss come from a slow cable (tests/multihost/wire.py: frames forwarded in user space after a
// delay, some dropped) put between a host and the switch, so that no kernel qdisc (tc netem) is
// needed. Run as root; skipped with the reason when namespaces cannot be made.
// The test process itself is the operator's host: it enters the last namespace.
#include "network.h"
#include "processfixture.h"

#include "dialog/client.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTcpSocket>
#include <QTemporaryDir>
#include <QRegularExpression>
#include <QtTest>
#include <csignal>
#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

using namespace dialog;
using namespace dialog::test;

class tst_MultiHost : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void cleanup();

    void runCycleAcrossHostsAndSlaveCablePulled();
    void runCycleWithLatencyAndLoss();
    void controlServerHostCutStandbyTakesOver();
    void advertisedAddressFollowsTheStandby();
    void upAndDownOverSshOnAnotherHost();

private:
    QProcess *start(int host, const QString &program, const QStringList &args,
                    const QString &controlServers = {});
    QString writePartition();
    void startPartition();
    Reply transition(const QString &t, int timeoutMs = 20000);
    QJsonObject masterState() const;
    /// Every slave's object in the RunParams IS server (host 1), read with `dialogctl is get` from the
    /// operator's host, ends with @p state.
    void checkIsHolds(const QString &state);

    Network m_net;
    QString m_skip;
    QTemporaryDir m_dir;
    std::vector<std::unique_ptr<QProcess>> m_children;
    std::unique_ptr<Client> m_client;
    Subscription *m_master = nullptr;
};

void tst_MultiHost::initTestCase()
{
    m_skip = m_net.setUpAsOperator();
    if (!m_skip.isEmpty())
        QSKIP(qPrintable(QStringLiteral("multihost: %1").arg(m_skip)));
}

void tst_MultiHost::cleanupTestCase()
{
    cleanup();
    m_net.tearDown();
}

void tst_MultiHost::cleanup()
{
    m_master = nullptr;
    m_client.reset();
    for (auto &p : m_children) {
        if (p->state() != QProcess::NotRunning) {
            ::kill(pid_t(p->processId()), SIGCONT);
            p->terminate();
            if (!p->waitForFinished(3000)) {
                p->kill();
                p->waitForFinished(3000);
            }
        }
    }
    m_children.clear();
    const QString counts = m_net.fastCable();
    if (!counts.isEmpty())
        qInfo("slow cable: %s", qPrintable(counts));
    for (int i = 1; i < Hosts; ++i)
        m_net.cable(i, true);
}

QProcess *tst_MultiHost::start(int host, const QString &program, const QStringList &args,
                               const QString &controlServers)
{
    m_children.push_back(m_net.start(host, program, args, controlServers));
    return m_children.back().get();
}

/// The slaves of the demo partition (resources/partitions/demo.json) with their arguments; the
/// readouts lighter (one thread, 10 kHz) for a shared CI machine.
static QList<std::tuple<QString, QString, QStringList>> demoSlaves()
{
    QFile f(QStringLiteral(DIALOG_SOURCE_DIR "/resources/partitions/demo.json"));
    QList<std::tuple<QString, QString, QStringList>> out;
    if (!f.open(QIODevice::ReadOnly))
        return out;
    for (const QJsonValue &v : QJsonDocument::fromJson(f.readAll()).object().value(QStringLiteral("slaves")).toArray()) {
        const QJsonObject o = v.toObject();
        QStringList args;
        for (const QJsonValue &a : o.value(QStringLiteral("args")).toArray())
            args << a.toString();
        for (int i = 0; i + 1 < args.size(); ++i) {
            if (args.at(i) == QLatin1String("--threads"))
                args[i + 1] = QStringLiteral("1");
            else if (args.at(i) == QLatin1String("--rate"))
                args[i + 1] = QStringLiteral("10000");
        }
        out.append({o.value(QStringLiteral("name")).toString(), o.value(QStringLiteral("kind")).toString(), args});
    }
    return out;
}

/// Control slaves on host 3, readouts on host 4.
static int slaveHost(const QString &kind)
{
    return kind == QLatin1String("readout") ? 4 : 3;
}

QString tst_MultiHost::writePartition()
{
    QJsonArray slaves;
    for (const auto &[name, kind, args] : demoSlaves())
        slaves.append(QJsonObject{{QStringLiteral("name"), name},
                                  {QStringLiteral("kind"), kind},
                                  {QStringLiteral("host"), QStringLiteral("10.213.0.%1").arg(slaveHost(kind))}});
    QJsonObject p = m_net.partition(QStringLiteral("multihost"), m_dir.filePath(QStringLiteral("runnumber")));
    p.insert(QStringLiteral("slaves"), slaves);
    const QString path = m_dir.filePath(QStringLiteral("multihost.json"));
    QFile f(path);
    f.open(QIODevice::WriteOnly | QIODevice::Truncate);
    f.write(QJsonDocument(p).toJson());
    return path;
}

void tst_MultiHost::startPartition()
{
    // The demo partition: Control Server and IS servers on host 1, master on host 2, its four
    // front-end slaves on host 3 and its two readouts on host 4; the operator (this process) on host 5. Nobody is told a host name: addresses only.
    start(1, QStringLiteral("dialog-controlserver"),
          QStringList{QStringLiteral("--bind"), QStringLiteral("0.0.0.0"), QStringLiteral("--port"),
                      QStringLiteral("3425")} +
              kHeartbeat);
    // The IS servers of run parameters and readout statistics on the Control Server's host.
    for (const char *server : {"RunParams", "DAQ"})
        start(1, QStringLiteral("dialog-isserver"),
              QStringList{QStringLiteral("--name"), QLatin1String(server), QStringLiteral("--types"),
                          QStringLiteral(DIALOG_SOURCE_DIR "/resources/is-types")} +
                  kHeartbeat);
    start(2, QStringLiteral("dialog-master"), {QStringLiteral("--config"), writePartition()});
    const auto slaves = demoSlaves();
    QCOMPARE(slaves.size(), 6); // FE1..4, RO1..2
    for (const auto &[name, kind, args] : slaves)
        start(slaveHost(kind), QStringLiteral("dialog-slave"),
              QStringList{QStringLiteral("--kind"), kind, QStringLiteral("--name"), name} + args + kHeartbeat);
    ClientOptions o;
    o.name = QStringLiteral("operator");
    o.controlServers = {m_net.address(1) + QStringLiteral(":3425")};
    o.heartbeatMs = HeartbeatMs;
    m_client = std::make_unique<Client>(o);
    QVERIFY(m_client->start());
    m_master = m_client->subscribe(QStringLiteral("RunCtrl.Master.State"));
    QTRY_VERIFY_WITH_TIMEOUT(
        [this] {
            const QJsonArray a = masterState().value(QStringLiteral("slaves")).toArray();
            for (const QJsonValue &v : a)
                if (!v.toObject().value(QStringLiteral("present")).toBool())
                    return false;
            return a.size() == 6;
        }(),
        20000);
}

Reply tst_MultiHost::transition(const QString &t, int timeoutMs)
{
    Reply out;
    bool done = false;
    m_client->request(QStringLiteral("RunCtrl.Master.State"), t.toUtf8(), timeoutMs, this,
                      [&](const Reply &r) {
                          out = r;
                          done = true;
                      });
    waitUntil([&done] { return done; }, timeoutMs + 2000, 5);
    return out;
}

QJsonObject tst_MultiHost::masterState() const
{
    return m_master ? QJsonDocument::fromJson(m_master->lastMessage().data()).object() : QJsonObject();
}

void tst_MultiHost::checkIsHolds(const QString &state)
{
    for (const auto &[slave, kind, args] : demoSlaves()) {
        const QString object = QStringLiteral("RunParams.RunCtrl.%1").arg(slave);
        QByteArray value;
        QTRY_VERIFY2_WITH_TIMEOUT(
            [&] {
                QProcess get;
                QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
                env.insert(QStringLiteral("DIALOG_CONTROL_SERVER"),
                           m_net.address(1) + QStringLiteral(":3425"));
                get.setProcessEnvironment(env);
                get.start(bin(QStringLiteral("dialogctl")),
                          {QStringLiteral("is"), QStringLiteral("get"), object});
                get.waitForFinished(20000);
                value = get.readAllStandardOutput() + get.readAllStandardError();
                return get.exitCode() == 0 && value.contains(state.toUtf8());
            }(),
            value.constData(), 10000);
    }
}

void tst_MultiHost::runCycleAcrossHostsAndSlaveCablePulled()
{
    startPartition();
    for (const char *t : {"configure", "start", "stop", "start"}) {
        const Reply r = transition(QLatin1String(t));
        QVERIFY2(r.isOk(), qPrintable(QStringLiteral("%1: %2").arg(QLatin1String(t), r.errorString())));
    }
    for (const QJsonValue &v : masterState().value(QStringLiteral("slaves")).toArray())
        QCOMPARE(v.toObject().value(QStringLiteral("state")).toString(), QStringLiteral("Running"));
    // From another host, `dialogctl ls` lists every process with its own host's address, although the
    // Control Server was given no --advertise and its host name resolves nowhere else.
    QProcess ls;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("DIALOG_CONTROL_SERVER"), m_net.address(1) + QStringLiteral(":3425"));
    ls.setProcessEnvironment(env);
    ls.start(bin(QStringLiteral("dialogctl")), {QStringLiteral("ls"), QStringLiteral("--json")});
    QVERIFY(ls.waitForFinished(30000));
    const QByteArray listing = ls.readAllStandardOutput();
    QVERIFY2(ls.exitCode() == 0, (listing + ls.readAllStandardError()).constData());
    QMap<QString, QString> hostOf;
    for (const QJsonValue &v :
         QJsonDocument::fromJson(listing).object().value(QStringLiteral("processes")).toArray())
        hostOf.insert(v.toObject().value(QStringLiteral("name")).toString(),
                      v.toObject().value(QStringLiteral("host")).toString());
    QCOMPARE(hostOf.value(QStringLiteral("Master")), m_net.address(2));
    QCOMPARE(hostOf.value(QStringLiteral("FE1")), m_net.address(3));
    QCOMPARE(hostOf.value(QStringLiteral("RO2")), m_net.address(4));
    QCOMPARE(hostOf.value(QStringLiteral("operator")), m_net.address(5));

    QElapsedTimer t;
    t.start();
    QCOMPARE(m_net.cable(3, false), QString());
    QTRY_COMPARE_WITH_TIMEOUT(masterState().value(QStringLiteral("state")).toString(),
                              QStringLiteral("Error"), 10000);
    const qint64 detected = t.elapsed();
    const QString error = masterState().value(QStringLiteral("error")).toString();
    QVERIFY2(error.contains(QRegularExpression(QStringLiteral("FE[1-4] lost"))), qPrintable(error));
    qInfo("slave host cable pulled -> master Error naming the slave after %lld ms (heartbeat %d ms x 3)",
          detected, HeartbeatMs);

    letTimePass(1000, "the slave's host stays cut off a while after the master noticed");
    t.restart();
    QCOMPARE(m_net.cable(3, true), QString());
    QTRY_COMPARE_WITH_TIMEOUT(masterState().value(QStringLiteral("state")).toString(),
                              QStringLiteral("Running"), 20000);
    qInfo("cable back -> slaves re-registered and master Running again after %lld ms", qint64(t.elapsed()));
    QVERIFY(masterState().value(QStringLiteral("culprits")).toArray().isEmpty());
    QVERIFY(transition(QStringLiteral("stop")).isOk());
    // IS on host 1 holds every slave's last state, read from the operator's host.
    checkIsHolds(QStringLiteral("Configured"));
}

void tst_MultiHost::runCycleWithLatencyAndLoss()
{
    // 20 ms each way and 1 % of the frames lost each way on the readout host's cable.
    const QString why = m_net.slowCable(4, 20, 0.01);
    QVERIFY2(why.isEmpty(), qPrintable(why));
    startPartition();
    QElapsedTimer t;
    t.start();
    for (const char *tr : {"configure", "start", "stop", "unconfigure"}) {
        const Reply r = transition(QLatin1String(tr));
        QVERIFY2(r.isOk(), qPrintable(QStringLiteral("%1: %2").arg(QLatin1String(tr), r.errorString())));
    }
    qInfo("run cycle configure -> start -> stop -> unconfigure with 20 ms latency and 1 %% loss: %lld ms",
          qint64(t.elapsed()));
    QCOMPARE(masterState().value(QStringLiteral("state")).toString(), QStringLiteral("Initial"));
    // The subscribers on another host (IS on host 1, read from host 5) end with the last values.
    checkIsHolds(QStringLiteral("Initial"));
    // And the readouts' traffic did go through the slow cable.
    const QString counts = m_net.fastCable();
    qInfo("slow cable: %s", qPrintable(counts));
    static const QRegularExpression forwarded(QStringLiteral("forwarded=(\\d+)"));
    QVERIFY2(forwarded.match(counts).captured(1).toLongLong() > 0, qPrintable(counts));
}

void tst_MultiHost::controlServerHostCutStandbyTakesOver()
{
    // Primary on host 1, standby on host 2; a publisher on host 3, this process subscribes on host 5.
    const QString both =
        m_net.address(1) + QStringLiteral(":3425,") + m_net.address(2) + QStringLiteral(":3425");
    start(1, QStringLiteral("dialog-controlserver"),
          QStringList{QStringLiteral("--bind"), QStringLiteral("0.0.0.0"), QStringLiteral("--port"),
                      QStringLiteral("3425"), QStringLiteral("--advertise"), m_net.address(1)} +
              kHeartbeat);
    // A standby that finds no primary at its start takes over at once: start it once the primary listens.
    QTRY_VERIFY_WITH_TIMEOUT(listening(m_net.address(1), 3425), 15000);
    start(2, QStringLiteral("dialog-controlserver"),
          QStringList{QStringLiteral("--bind"), QStringLiteral("0.0.0.0"), QStringLiteral("--port"),
                      QStringLiteral("3425"), QStringLiteral("--advertise"), m_net.address(2),
                      QStringLiteral("--standby-of"), m_net.address(1) + QStringLiteral(":3425")} +
              kHeartbeat);
    start(3, QStringLiteral("dialogctl"),
          QStringList{QStringLiteral("publish"), QStringLiteral("Counter.Host3"), QStringLiteral("--rate"),
                      QStringLiteral("50")} +
              kHeartbeat,
          both);
    ClientOptions o;
    o.name = QStringLiteral("operator");
    o.controlServers = both.split(QLatin1Char(','));
    o.heartbeatMs = HeartbeatMs;
    m_client = std::make_unique<Client>(o);
    Subscription *counter = m_client->subscribe(QStringLiteral("Counter.Host3"));
    QVERIFY(m_client->start());
    QTRY_COMPARE_WITH_TIMEOUT(counter->state(), Subscription::State::Active, 20000);
    letTimePass(500, "the counter runs before the cable is pulled");

    QElapsedTimer t;
    t.start();
    bool left = false;
    qint64 leftAt = -1, backAt = -1;
    QObject watch; // the connection ends with this function
    connect(m_client.get(), &Client::stateChanged, &watch, [&](Client::State s) {
        if (s != Client::State::Connected && !left) {
            left = true;
            leftAt = t.elapsed();
        } else if (s == Client::State::Connected && left && backAt < 0) {
            backAt = t.elapsed();
        }
    });
    const quint64 before = counter->receivedCount();
    QCOMPARE(m_net.cable(1, false), QString());
    // Data keeps flowing between the other hosts while the Control Server is unreachable.
    QTRY_VERIFY_WITH_TIMEOUT(left, 10000);
    const quint64 atLoss = counter->receivedCount();
    QTRY_VERIFY_WITH_TIMEOUT(backAt >= 0, 20000);
    QVERIFY(atLoss > before);
    // The processes follow the standby: the publisher is there again for a new subscriber.
    Subscription *late = m_client->subscribe(QStringLiteral("Counter.Host3"));
    QTRY_COMPARE_WITH_TIMEOUT(late->state(), Subscription::State::Active, 20000);
    const quint64 during = counter->receivedCount();
    QTRY_VERIFY_WITH_TIMEOUT(counter->receivedCount() > during + 10, 5000);
    qInfo("Control Server host cut: operator noticed after %lld ms, connected to the standby after %lld ms; "
          "updates received during the cut: %llu",
          leftAt, backAt, static_cast<unsigned long long>(during - before));
}

void tst_MultiHost::advertisedAddressFollowsTheStandby()
{
    // Host 3 reaches the primary (host 1) over the control network and the standby (host 2) over a
    // data network of its own. A process that is told no address advertises the one of its route to
    // the Control Server it is connected to: after the failover, its data-network address.
    QCOMPARE(m_net.dataNetwork(2, 3), QString());
    const QString primary = m_net.address(1) + QStringLiteral(":3425");
    const QString standby = m_net.dataAddress(2) + QStringLiteral(":3425");
    // A slower heartbeat than the other cases: a standby that misses three of the primary's beats
    // takes over, and a takeover before the cut (a loaded machine's stall of 3 x 200 ms) redirects
    // the publisher to the standby's control-network address, which is not the route this case is
    // about. At 1 s a stall must last 3 s.
    const QStringList beat{QStringLiteral("--heartbeat-ms"), QStringLiteral("1000")};
    start(1, QStringLiteral("dialog-controlserver"),
          QStringList{QStringLiteral("--bind"), QStringLiteral("0.0.0.0"), QStringLiteral("--port"),
                      QStringLiteral("3425")} +
              beat);
    // A standby that finds no primary at its start takes over at once: start it once the primary listens.
    QTRY_VERIFY_WITH_TIMEOUT(listening(m_net.address(1), 3425), 15000);
    start(2, QStringLiteral("dialog-controlserver"),
          QStringList{QStringLiteral("--bind"), QStringLiteral("0.0.0.0"), QStringLiteral("--port"),
                      QStringLiteral("3425"), QStringLiteral("--advertise"), m_net.address(2),
                      QStringLiteral("--standby-of"), primary} +
              beat);
    start(3, QStringLiteral("dialogctl"),
          QStringList{QStringLiteral("publish"), QStringLiteral("Counter.Data"), QStringLiteral("--name"),
                      QStringLiteral("DataPublisher"), QStringLiteral("--rate"), QStringLiteral("20")} +
              beat,
          primary + QLatin1Char(',') + standby);
    // Where the publisher says it is, asked from the operator's host (both servers are on its network).
    auto advertised = [this](const QString &server) {
        QProcess ls;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("DIALOG_CONTROL_SERVER"), server);
        ls.setProcessEnvironment(env);
        ls.start(bin(QStringLiteral("dialogctl")), {QStringLiteral("ls"), QStringLiteral("--json"),
                                                    QStringLiteral("--timeout-ms"), QStringLiteral("5000")});
        if (!ls.waitForFinished(10000))
            ls.kill();
        ls.waitForFinished(2000);
        for (const QJsonValue &v : QJsonDocument::fromJson(ls.readAllStandardOutput())
                                       .object()
                                       .value(QStringLiteral("processes"))
                                       .toArray())
            if (v.toObject().value(QStringLiteral("name")).toString() == QLatin1String("DataPublisher"))
                return v.toObject().value(QStringLiteral("host")).toString();
        return QString();
    };
    // Bounded waits (a QTRY of a 12-s step would retry for three times its time-out on failure).
    QString seen;
    waitUntil([&] { return (seen = advertised(primary)) == m_net.address(3); }, 40000, 100);
    QCOMPARE(seen, m_net.address(3));
    QCOMPARE(m_net.cable(1, false), QString());
    waitUntil([&] { return (seen = advertised(m_net.address(2) + QStringLiteral(":3425"))) == m_net.dataAddress(3); },
              40000, 100);
    QCOMPARE(seen, m_net.dataAddress(3));
}

namespace {
bool keygen(const QString &file)
{
    QProcess p;
    p.start(QStringLiteral("ssh-keygen"),
            {QStringLiteral("-q"), QStringLiteral("-t"), QStringLiteral("ed25519"), QStringLiteral("-N"),
             QString(), QStringLiteral("-f"), file});
    return p.waitForFinished(20000) && p.exitStatus() == QProcess::NormalExit && p.exitCode() == 0;
}
} // namespace

void tst_MultiHost::upAndDownOverSshOnAnotherHost()
{
    // A real OpenSSH server on host 3 (its own address, a host key and a client key made here);
    // `dialogctl up` on the operator's host starts the slaves there over ssh (-F config, BatchMode),
    // they register with the host's address, `dialogctl down` stops them; the errors a user meets.
    const QString sshd = QStringLiteral("/usr/sbin/sshd");
    if (!QFileInfo(sshd).isExecutable())
        QSKIP("multihost: sshd is not installed (Debian package openssh-server)");
    QDir().mkpath(QStringLiteral("/run/sshd"));
    const QString hostKey = m_dir.filePath(QStringLiteral("host_key"));
    const QString key = m_dir.filePath(QStringLiteral("id_test"));
    const QString otherKey = m_dir.filePath(QStringLiteral("id_other"));
    QVERIFY(keygen(hostKey) && keygen(key) && keygen(otherKey));
    QFile::remove(m_dir.filePath(QStringLiteral("authorized_keys")));
    QVERIFY(QFile::copy(key + QStringLiteral(".pub"), m_dir.filePath(QStringLiteral("authorized_keys"))));
    const QString sshdConfig = m_dir.filePath(QStringLiteral("sshd_config"));
    QFile sc(sshdConfig);
    QVERIFY(sc.open(QIODevice::WriteOnly));
    sc.write(QStringLiteral("Port 22\nListenAddress %1\nHostKey %2\nAuthorizedKeysFile %3\nPidFile %4\n"
                            "UsePAM no\nPasswordAuthentication no\nKbdInteractiveAuthentication no\n"
                            "PermitRootLogin prohibit-password\nStrictModes no\n")
                 .arg(m_net.address(3), hostKey, m_dir.filePath(QStringLiteral("authorized_keys")),
                      m_dir.filePath(QStringLiteral("sshd.pid")))
                 .toUtf8());
    sc.close();
    const QString sshConfig = m_dir.filePath(QStringLiteral("ssh_config"));
    QFile cc(sshConfig);
    QVERIFY(cc.open(QIODevice::WriteOnly));
    const QString common =
        QStringLiteral("  User root\n  IdentitiesOnly yes\n  StrictHostKeyChecking no\n"
                       "  UserKnownHostsFile /dev/null\n  LogLevel ERROR\n  ConnectTimeout 3\n");
    cc.write(QStringLiteral("Host daq3\n  HostName %1\n  IdentityFile %2\n%3"
                            "Host daq3-badkey\n  HostName %1\n  IdentityFile %4\n%3"
                            "Host daq9-down\n  HostName %5\n  IdentityFile %2\n%3")
                 .arg(m_net.address(3), key, common, otherKey, QStringLiteral("10.213.0.9"))
                 .toUtf8());
    cc.close();
    auto sshdProcess = std::make_unique<QProcess>();
    sshdProcess->setProcessChannelMode(QProcess::ForwardedErrorChannel);
    sshdProcess->start(QStringLiteral("ip"),
                       {QStringLiteral("netns"), QStringLiteral("exec"), m_net.host(3), sshd,
                        QStringLiteral("-D"), QStringLiteral("-e"), QStringLiteral("-f"), sshdConfig});
    QVERIFY(sshdProcess->waitForStarted(5000));
    m_children.push_back(std::move(sshdProcess));
    QTRY_VERIFY_WITH_TIMEOUT(
        [&] {
            QTcpSocket s;
            s.connectToHost(QHostAddress(m_net.address(3)), 22);
            return s.waitForConnected(200);
        }(),
        10000);

    auto partition = [&](const QString &name, const QString &host, const QString &binDir) {
        const QJsonObject p{
            {QStringLiteral("name"), name},
            {QStringLiteral("control_server"), QJsonObject{{QStringLiteral("host"), m_net.address(Hosts)},
                                                           {QStringLiteral("port"), 3425},
                                                           {QStringLiteral("start"), false}}},
            {QStringLiteral("ssh_command"),
             QJsonArray{QStringLiteral("ssh"), QStringLiteral("-F"), sshConfig, QStringLiteral("-o"),
                        QStringLiteral("BatchMode=yes")}},
            {QStringLiteral("bin_dir"), binDir},
            {QStringLiteral("heartbeat_ms"), HeartbeatMs},
            {QStringLiteral("master"),
             QJsonObject{{QStringLiteral("name"), QStringLiteral("Master")},
                         {QStringLiteral("host"), host},
                         {QStringLiteral("args"), QJsonArray{QStringLiteral("--no-is")}}}},
            {QStringLiteral("slaves"),
             QJsonArray{QJsonObject{{QStringLiteral("name"), QStringLiteral("FE1")},
                                    {QStringLiteral("kind"), QStringLiteral("control")},
                                    {QStringLiteral("host"), host},
                                    {QStringLiteral("args"), QJsonArray{QStringLiteral("--no-is")}}}}}};
        const QString path = m_dir.filePath(name + QStringLiteral(".json"));
        QFile f(path);
        f.open(QIODevice::WriteOnly | QIODevice::Truncate);
        f.write(QJsonDocument(p).toJson());
        return path;
    };
    auto dialogTool = [&](const QStringList &args, QByteArray *out) {
        QProcess p;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("DIALOG_CONTROL_SERVER"), m_net.address(Hosts) + QStringLiteral(":3425"));
        p.setProcessEnvironment(env);
        p.start(bin(QStringLiteral("dialogctl")), args);
        if (!p.waitForFinished(90000))
            p.kill();
        p.waitForFinished(5000);
        *out = p.readAllStandardOutput() + p.readAllStandardError();
        return p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
    };

    // The Control Server runs on the operator's host, started here: the launcher starts only a
    // Control Server it may call local, and this one is named by its address.
    start(Hosts, QStringLiteral("dialog-controlserver"),
          QStringList{QStringLiteral("--bind"), QStringLiteral("0.0.0.0"), QStringLiteral("--port"),
                      QStringLiteral("3425"), QStringLiteral("--advertise"), m_net.address(Hosts)} +
              kHeartbeat);
    const QString good =
        partition(QStringLiteral("sshhost"), QStringLiteral("daq3"), QStringLiteral(DIALOG_BIN_DIR));
    const QString runDir = m_dir.filePath(QStringLiteral("run-ssh"));
    QByteArray out;
    QElapsedTimer t;
    t.start();
    const int rc = dialogTool({QStringLiteral("up"), good, QStringLiteral("--run-dir"), runDir}, &out);
    auto down = qScopeGuard([&] {
        QByteArray o;
        dialogTool({QStringLiteral("down"), good, QStringLiteral("--run-dir"), runDir}, &o);
    });
    if (rc != 0) // what the remote processes said
        for (const QFileInfo &log : QDir(runDir + QStringLiteral("/logs")).entryInfoList(QDir::Files)) {
            QFile f(log.filePath());
            f.open(QIODevice::ReadOnly);
            out += "--- " + log.fileName().toUtf8() + "\n" + f.readAll().right(2000);
        }
    QVERIFY2(rc == 0, out.constData());
    qInfo("dialogctl up over ssh to another host: %lld ms", qint64(t.elapsed()));
    // Listed with host 3's address.
    QVERIFY(dialogTool({QStringLiteral("ls"), QStringLiteral("--json")}, &out) == 0);
    const QJsonArray procs = QJsonDocument::fromJson(out.left(out.lastIndexOf('}') + 1))
                                 .object()
                                 .value(QStringLiteral("processes"))
                                 .toArray();
    int onHost3 = 0;
    for (const QJsonValue &v : procs) {
        const QString name = v.toObject().value(QStringLiteral("name")).toString();
        if (name == QLatin1String("FE1") || name == QLatin1String("Master")) {
            QCOMPARE(v.toObject().value(QStringLiteral("host")).toString(), m_net.address(3));
            ++onHost3;
        }
    }
    QCOMPARE(onHost3, 2);
    down.dismiss();
    QVERIFY2(dialogTool({QStringLiteral("down"), good, QStringLiteral("--run-dir"), runDir}, &out) == 0,
             out.constData());

    // The errors a user meets, each with its message (nothing is started locally but the Control Server).
    const struct
    {
        const char *host, *binDir, *message;
    } cases[] = {{"daq3-badkey", DIALOG_BIN_DIR, "cannot reach daq3-badkey over ssh"},
                 {"daq9-down", DIALOG_BIN_DIR, "cannot reach daq9-down over ssh"},
                 {"daq3", "/nonexistent/bin", "/nonexistent/bin/dialog-slave not found (bin_dir"}};
    int i = 0;
    for (const auto &c : cases) {
        const QString bad =
            partition(QStringLiteral("sshbad%1").arg(++i), QLatin1String(c.host), QLatin1String(c.binDir));
        const QString dir = m_dir.filePath(QStringLiteral("run-bad%1").arg(i));
        const int badRc = dialogTool({QStringLiteral("up"), bad, QStringLiteral("--run-dir"), dir}, &out);
        QByteArray ignored;
        dialogTool({QStringLiteral("down"), bad, QStringLiteral("--run-dir"), dir}, &ignored);
        QVERIFY2(badRc == 1, out.constData());
        QVERIFY2(out.contains(c.message), out.constData());
    }
}

QTEST_GUILESS_MAIN(tst_MultiHost)
#include "tst_multihost.moc"
