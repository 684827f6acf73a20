// The run-control tree across hosts (network namespaces, tests/multihost/network.h): the master and
// two segment controllers on host 2, a third segment controller and the front-ends on host 3, the
// removable readout on host 4. Host 4's cable pulled during a run: its readout is removed, the run
// stays Running; plugged back, the readout is recovered into the same run. Run as root; skipped with
// the reason when namespaces cannot be made.
#include "network.h"
#include "processfixture.h"

#include "dialog/client.h"
#include "dialog/rc/protocol.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

using namespace dialog;
using namespace dialog::test;

class tst_RcTreeHosts : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void readoutHostCutIsRemovedAndTheRunGoesOn();

private:
    /// Starts @p program on host @p host (its PID is the daemon's: `ip netns exec` execs it).
    void start(int host, const QString &program, const QStringList &args);
    QString writePartition();
    Reply request(const QString &service, const QByteArray &data, int timeoutMs = 20000);
    /// The node @p name in the master's tree.
    QJsonObject node(const QString &name) const;

    Network m_net;
    QTemporaryDir m_dir;
    std::vector<std::unique_ptr<QProcess>> m_children;
    std::unique_ptr<Client> m_client;
    Subscription *m_master = nullptr;
};

void tst_RcTreeHosts::initTestCase()
{
    if (const QString skip = m_net.setUpAsOperator(); !skip.isEmpty())
        QSKIP(qPrintable(QStringLiteral("multihost: %1").arg(skip)));
}

void tst_RcTreeHosts::cleanupTestCase()
{
    m_master = nullptr;
    m_client.reset();
    for (auto &p : m_children) {
        p->terminate();
        if (!p->waitForFinished(3000)) {
            p->kill();
            p->waitForFinished(3000);
        }
    }
    m_children.clear();
    m_net.tearDown();
}

void tst_RcTreeHosts::start(int host, const QString &program, const QStringList &args)
{
    m_children.push_back(m_net.start(host, program, args));
    QVERIFY(m_children.back()->state() != QProcess::NotRunning);
}

QString tst_RcTreeHosts::writePartition()
{
    const auto slave = [this](const char *name, const char *kind, int host, bool removable) {
        return QJsonObject{{QStringLiteral("name"), QLatin1String(name)},
                           {QStringLiteral("kind"), QLatin1String(kind)},
                           {QStringLiteral("host"), m_net.address(host)},
                           {QStringLiteral("removable"), removable}};
    };
    const auto segment = [this](const char *name, int host, const QStringList &slaves) {
        return QJsonObject{{QStringLiteral("name"), QLatin1String(name)},
                           {QStringLiteral("host"), m_net.address(host)},
                           {QStringLiteral("slaves"), QJsonArray::fromStringList(slaves)}};
    };
    QJsonObject p = m_net.partition(QStringLiteral("treehosts"), m_dir.filePath(QStringLiteral("runnumber")));
    p.insert(QStringLiteral("slaves"),
             QJsonArray{slave("FE1", "control", 3, false), slave("FE2", "control", 3, false),
                        slave("FE3", "control", 3, false), slave("RO1", "readout", 4, true)});
    p.insert(QStringLiteral("segments"),
             QJsonArray{segment("TRK", 2, {QStringLiteral("FE1"), QStringLiteral("FE2")}),
                        segment("CAL", 3, {QStringLiteral("FE3")}),
                        segment("ROS", 2, {QStringLiteral("RO1")})});
    const QString path = m_dir.filePath(QStringLiteral("treehosts.json"));
    QFile f(path);
    f.open(QIODevice::WriteOnly | QIODevice::Truncate);
    f.write(QJsonDocument(p).toJson());
    return path;
}

Reply tst_RcTreeHosts::request(const QString &service, const QByteArray &data, int timeoutMs)
{
    Reply out;
    bool done = false;
    m_client->request(service, data, timeoutMs, this, [&](const Reply &r) {
        out = r;
        done = true;
    });
    waitUntil([&done] { return done; }, timeoutMs + 2000, 5);
    return out;
}

QJsonObject tst_RcTreeHosts::node(const QString &name) const
{
    const std::function<QJsonObject(const QJsonArray &)> find = [&](const QJsonArray &tree) {
        for (const QJsonValue &v : tree) {
            const QJsonObject o = v.toObject();
            if (o.value(QStringLiteral("name")).toString() == name)
                return o;
            if (const QJsonObject below = find(o.value(QStringLiteral("children")).toArray());
                !below.isEmpty())
                return below;
        }
        return QJsonObject();
    };
    return find(QJsonDocument::fromJson(m_master->lastMessage().data())
                    .object()
                    .value(QStringLiteral("tree"))
                    .toArray());
}

void tst_RcTreeHosts::readoutHostCutIsRemovedAndTheRunGoesOn()
{
    const QString partition = writePartition();
    start(1, QStringLiteral("dialog-controlserver"),
          QStringList{QStringLiteral("--bind"), QStringLiteral("0.0.0.0"), QStringLiteral("--port"),
                      QStringLiteral("3425")} +
              kHeartbeat);
    start(2, QStringLiteral("dialog-master"),
          {QStringLiteral("--config"), partition, QStringLiteral("--no-is")});
    for (const auto &[segment, host] : {std::pair{"TRK", 2}, std::pair{"ROS", 2}, std::pair{"CAL", 3}})
        start(host, QStringLiteral("dialog-master"),
              {QStringLiteral("--config"), partition, QStringLiteral("--no-is"), QStringLiteral("--segment"),
               QLatin1String(segment)});
    for (const auto &[name, controller] :
         {std::pair{"FE1", "TRK"}, std::pair{"FE2", "TRK"}, std::pair{"FE3", "CAL"}})
        start(3, QStringLiteral("dialog-slave"),
              QStringList{QStringLiteral("--kind"), QStringLiteral("control"), QStringLiteral("--name"),
                          QLatin1String(name), QStringLiteral("--no-is"), QStringLiteral("--master"),
                          QLatin1String(controller)} +
                  kHeartbeat);
    start(4, QStringLiteral("dialog-slave"),
          QStringList{QStringLiteral("--kind"), QStringLiteral("readout"), QStringLiteral("--name"),
                      QStringLiteral("RO1"), QStringLiteral("--no-is"), QStringLiteral("--master"),
                      QStringLiteral("ROS"), QStringLiteral("--threads"), QStringLiteral("1"),
                      QStringLiteral("--rate"), QStringLiteral("10000")} +
              kHeartbeat);
    ClientOptions o;
    o.name = QStringLiteral("operator");
    o.controlServers = {m_net.address(1) + QStringLiteral(":3425")};
    o.heartbeatMs = HeartbeatMs;
    m_client = std::make_unique<Client>(o);
    QVERIFY(m_client->start());
    m_master = m_client->subscribe(rc::stateService(QStringLiteral("Master")));
    for (const QString &n : {"TRK", "ROS", "CAL", "FE1", "FE2", "FE3", "RO1"})
        QTRY_VERIFY_WITH_TIMEOUT(node(n).value(QStringLiteral("present")).toBool(), 20000);
    for (const char *t : {"configure", "start"}) {
        const Reply r = request(rc::stateService(QStringLiteral("Master")), t);
        QVERIFY2(r.isOk(), qPrintable(QStringLiteral("%1: %2").arg(QLatin1String(t), r.errorString())));
    }
    const QJsonObject running = QJsonDocument::fromJson(m_master->lastMessage().data()).object();
    const int run = running.value(QStringLiteral("run_number")).toInt();
    for (const QString &n : {"FE1", "FE3", "RO1"})
        QTRY_COMPARE_WITH_TIMEOUT(node(n).value(QStringLiteral("state")).toString(),
                                  QStringLiteral("Running"), 10000);

    // Host 4 cut off: RO1 is lost to ROS on host 2, removed; the run on hosts 2 and 3 goes on.
    QElapsedTimer t;
    t.start();
    QCOMPARE(m_net.cable(4, false), QString());
    QTRY_VERIFY_WITH_TIMEOUT(node(QStringLiteral("RO1")).value(QStringLiteral("removed")).toBool(), 15000);
    qInfo("readout host cut -> RO1 removed by ROS after %lld ms (heartbeat %d ms)", qint64(t.elapsed()),
          HeartbeatMs);
    const QJsonObject state = QJsonDocument::fromJson(m_master->lastMessage().data()).object();
    QCOMPARE(state.value(QStringLiteral("state")).toString(), QStringLiteral("Running"));
    QCOMPARE(node(QStringLiteral("RO1")).value(QStringLiteral("reason")).toString(), QStringLiteral("lost"));
    QCOMPARE(node(QStringLiteral("FE1")).value(QStringLiteral("state")).toString(),
             QStringLiteral("Running"));

    // Back on the network: still Running in its own process, recovered into the same run.
    QCOMPARE(m_net.cable(4, true), QString());
    QTRY_VERIFY_WITH_TIMEOUT(node(QStringLiteral("RO1")).value(QStringLiteral("present")).toBool(), 20000);
    const Reply recovered =
        request(rc::treeService(QStringLiteral("Master")), R"({"action":"recover","node":"RO1"})");
    QVERIFY2(recovered.isOk(), qPrintable(recovered.errorString()));
    QTRY_VERIFY_WITH_TIMEOUT(!node(QStringLiteral("RO1")).value(QStringLiteral("removed")).toBool(), 10000);
    QCOMPARE(node(QStringLiteral("RO1")).value(QStringLiteral("state")).toString(),
             QStringLiteral("Running"));
    const QJsonObject after = QJsonDocument::fromJson(m_master->lastMessage().data()).object();
    QCOMPARE(after.value(QStringLiteral("state")).toString(), QStringLiteral("Running"));
    QCOMPARE(after.value(QStringLiteral("run_number")).toInt(), run);
    QVERIFY(request(rc::stateService(QStringLiteral("Master")), "stop").isOk());
}

QTEST_GUILESS_MAIN(tst_RcTreeHosts)
#include "tst_rctreehosts.moc"
