// One Control Server after any partition heals (fencing, docs/reliability.md). Four hosts in network
// namespaces: the primary Control Server on host 1 with an IS server and a publisher beside it that
// know only the primary (as the systemd defaults configure the IS servers), the standby on host 2,
// publishers knowing both addresses on hosts 3 and 4, the operator (this process) on host 5. Each
// scenario cuts and heals the network, then requires one serving Control Server with every process
// on it, and every IS write acknowledged meanwhile still there. Run as root; skipped otherwise.
#include "network.h"
#include "processfixture.h"

#include "dialog/client.h"

#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>
#include <csignal>

using namespace dialog;
using namespace dialog::test;

namespace {
const QStringList kExpected{QStringLiteral("IS.Split"), QStringLiteral("Counter.Host1"),
                            QStringLiteral("Counter.Host3"), QStringLiteral("Counter.Host4")};
} // namespace

class tst_SplitBrain : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void cleanup();

    void primaryHostCutAndHealedLeavesOneServer();
    void linkBetweenServersCutLeavesOneServer();
    void cableFlappedTenTimesLeavesOneServer();
    void primaryRestartedAsPrimaryStepsDownForTheStandby();
    void secondCutTheHigherTermServesOn();

private:
    QString primary() const { return m_net.address(1) + QStringLiteral(":3425"); }
    QString standby() const { return m_net.address(2) + QStringLiteral(":3425"); }
    QString both() const { return primary() + QLatin1Char(',') + standby(); }
    /// Starts @p program on @p host; its standard error is forwarded, or appended to @p logFile.
    QProcess *start(int host, const QString &program, const QStringList &args, const QString &controlServers,
                    const QString &logFile = {});
    /// Runs @p program on @p host to completion (at most @p timeoutMs); its exit code, -1 on time-out.
    int run(int host, const QStringList &args, const QString &controlServers, QByteArray *out = nullptr,
            int timeoutMs = 8000);
    QProcess *startPrimary();
    /// The partition of the scenarios, up and every publisher seen by the operator.
    void startPartition();
    /// Why not exactly one of the two Control Servers listens (empty: one does; m_serving says which).
    QString onlyOneListening();
    /// Why the Control Server at @p at does not list every process of the partition (empty: it does).
    QString everyoneAt(const QString &at);
    /// Why the partition is not (yet) served by one Control Server with every process; empty if it is.
    QString oneServerWithEveryone();
    /// Waits (bounded) for every process on @p expected (if given), then for one Control Server
    /// listening, with every process; the milliseconds that took, -1 if it did not happen.
    qint64 settle(const char *scenario, const QString &expected);
    /// An IS write from host 1 beside the IS server (through the primary only); remembered if
    /// acknowledged.
    bool write(int value);
    /// Every acknowledged write is in the IS, read from the operator's host.
    void checkWrites();
    /// Cuts (false) or heals (true) the link between hosts 1 and 2 only.
    QString serversLink(bool up);

    Network m_net;
    QString m_skip;
    std::vector<std::unique_ptr<QProcess>> m_children;
    std::unique_ptr<Client> m_client;
    QList<int> m_acked;
    QString m_serving; // the address that served when oneServerWithEveryone() last said yes
    QProcess *m_primary = nullptr, *m_standby = nullptr; // the two Control Servers
    QString m_primaryLog; // where the primary's standard error goes (empty: forwarded)
    bool m_linkCut = false;
};

void tst_SplitBrain::initTestCase()
{
    m_skip = m_net.setUpAsOperator();
    if (!m_skip.isEmpty())
        QSKIP(qPrintable(QStringLiteral("splitbrain: %1").arg(m_skip)));
}

void tst_SplitBrain::cleanupTestCase()
{
    cleanup();
    m_net.tearDown();
}

void tst_SplitBrain::cleanup()
{
    m_client.reset();
    m_primary = m_standby = nullptr;
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
    m_acked.clear();
    if (m_linkCut)
        serversLink(true);
    for (int i = 1; i < Hosts; ++i)
        m_net.cable(i, true);
}

QProcess *tst_SplitBrain::start(int host, const QString &program, const QStringList &args,
                                const QString &controlServers, const QString &logFile)
{
    auto p = std::make_unique<QProcess>();
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("DIALOG_CONTROL_SERVER"), controlServers);
    p->setProcessEnvironment(env);
    if (logFile.isEmpty())
        p->setProcessChannelMode(QProcess::ForwardedErrorChannel);
    else
        p->setStandardErrorFile(logFile, QIODevice::Append);
    // `ip netns exec` execs the program: the PID is the daemon's.
    p->start(QStringLiteral("ip"),
             QStringList{QStringLiteral("netns"), QStringLiteral("exec"), m_net.host(host), bin(program)} + args);
    p->waitForStarted(5000);
    m_children.push_back(std::move(p));
    return m_children.back().get();
}

int tst_SplitBrain::run(int host, const QStringList &args, const QString &controlServers, QByteArray *out,
                        int timeoutMs)
{
    QProcess *p = start(host, QStringLiteral("dialogctl"), args + kHeartbeat, controlServers);
    p->setProcessChannelMode(QProcess::SeparateChannels);
    if (!waitUntil([p] { return p->state() == QProcess::NotRunning; }, timeoutMs)) {
        p->kill();
        p->waitForFinished(3000);
        return -1;
    }
    if (out)
        *out = p->readAllStandardOutput();
    return p->exitStatus() == QProcess::NormalExit ? p->exitCode() : -2;
}

QProcess *tst_SplitBrain::startPrimary()
{
    return start(1, QStringLiteral("dialog-controlserver"),
                 QStringList{QStringLiteral("--bind"), QStringLiteral("0.0.0.0"), QStringLiteral("--port"),
                             QStringLiteral("3425"), QStringLiteral("--advertise"), m_net.address(1)} +
                     kHeartbeat,
                 {}, m_primaryLog);
}

void tst_SplitBrain::startPartition()
{
    m_primary = startPrimary();
    // A standby that finds no primary at its start takes over at once: start it once the primary listens.
    QTRY_VERIFY_WITH_TIMEOUT(listening(m_net.address(1), 3425), 15000);
    m_standby = start(2, QStringLiteral("dialog-controlserver"),
                      QStringList{QStringLiteral("--bind"), QStringLiteral("0.0.0.0"), QStringLiteral("--port"),
                                  QStringLiteral("3425"), QStringLiteral("--advertise"), m_net.address(2),
                                  QStringLiteral("--standby-of"), primary()} +
                          kHeartbeat,
                      {});
    // Beside the primary, configured with its address only.
    start(1, QStringLiteral("dialog-isserver"),
          QStringList{QStringLiteral("--name"), QStringLiteral("Split"), QStringLiteral("--types"),
                      QStringLiteral(DIALOG_SOURCE_DIR "/resources/is-types")} +
              kHeartbeat,
          primary());
    start(1, QStringLiteral("dialogctl"),
          QStringList{QStringLiteral("publish"), QStringLiteral("Counter.Host1"), QStringLiteral("--rate"),
                      QStringLiteral("20")} +
              kHeartbeat,
          primary());
    for (int host : {3, 4})
        start(host, QStringLiteral("dialogctl"),
              QStringList{QStringLiteral("publish"), QStringLiteral("Counter.Host%1").arg(host),
                          QStringLiteral("--rate"), QStringLiteral("20")} +
                  kHeartbeat,
              both());
    ClientOptions o;
    o.name = QStringLiteral("operator");
    o.controlServers = both().split(QLatin1Char(','));
    o.heartbeatMs = HeartbeatMs;
    m_client = std::make_unique<Client>(o);
    QList<Subscription *> subs;
    for (const QString &s : kExpected)
        subs << m_client->subscribe(s);
    QVERIFY(m_client->start());
    for (Subscription *s : std::as_const(subs))
        QTRY_COMPARE_WITH_TIMEOUT(s->state(), Subscription::State::Active, 20000);
    QCOMPARE(oneServerWithEveryone(), QString());
    QCOMPARE(m_serving, primary());
}

QString tst_SplitBrain::onlyOneListening()
{
    const bool first = listening(m_net.address(1), 3425), second = listening(m_net.address(2), 3425);
    if (first == second)
        return first ? QStringLiteral("both Control Servers listen") : QStringLiteral("no Control Server listens");
    m_serving = first ? primary() : standby();
    return {};
}

QString tst_SplitBrain::everyoneAt(const QString &at)
{
    QByteArray out;
    if (run(Hosts, {QStringLiteral("ls"), QStringLiteral("--json"), QStringLiteral("--timeout-ms"),
                    QStringLiteral("3000")},
            at, &out) != 0)
        return QStringLiteral("dialogctl ls at %1 failed").arg(at);
    QStringList provided;
    QStringList names;
    for (const QJsonValue &v : QJsonDocument::fromJson(out).object().value(QStringLiteral("processes")).toArray()) {
        names << v.toObject().value(QStringLiteral("name")).toString();
        for (const QJsonValue &s : v.toObject().value(QStringLiteral("services")).toArray())
            provided << s.toString();
    }
    for (const QString &s : kExpected)
        if (!provided.contains(s))
            return QStringLiteral("%1 serves without %2's provider (processes: %3)")
                .arg(at, s, names.join(QStringLiteral(", ")));
    if (!names.contains(QStringLiteral("operator")))
        return QStringLiteral("%1 serves without the operator").arg(at);
    return {};
}

QString tst_SplitBrain::oneServerWithEveryone()
{
    const QString why = onlyOneListening();
    return why.isEmpty() ? everyoneAt(m_serving) : why;
}

qint64 tst_SplitBrain::settle(const char *scenario, const QString &expected)
{
    QElapsedTimer t;
    t.start();
    QString why;
    qint64 everyone = -1;
    if (!expected.isEmpty()) {
        // Every process on the server that serves now (the other one accepts nobody: it redirects).
        if (!waitUntil(
                [&] {
                    why = everyoneAt(expected);
                    return why.isEmpty();
                },
                30000, 50)) {
            qWarning("%s: not every process on %s: %s", scenario, qPrintable(expected), qPrintable(why));
            return -1;
        }
        everyone = t.elapsed();
    }
    // Then the other one stops listening: it redirected for its last intervals, and is a standby now.
    const bool settled = waitUntil(
        [&] {
            why = oneServerWithEveryone();
            return why.isEmpty();
        },
        30000, 50);
    const qint64 one = t.elapsed();
    qInfo("%s: every process on %s %lld ms after the heal; the other server a standby after %lld ms", scenario,
          qPrintable(m_serving), everyone, one);
    if (!settled)
        qWarning("%s: not settled: %s", scenario, qPrintable(why));
    else if (!expected.isEmpty() && m_serving != expected)
        qWarning("%s: %s serves, not %s", scenario, qPrintable(m_serving), qPrintable(expected));
    return settled && (expected.isEmpty() || m_serving == expected) ? one : -1;
}

bool tst_SplitBrain::write(int value)
{
    const int rc = run(1,
                       {QStringLiteral("is"), QStringLiteral("put"), QStringLiteral("Split.W%1").arg(value),
                        QStringLiteral("--type"), QStringLiteral("RunInfo"),
                        QStringLiteral("runNumber=%1").arg(value)},
                       primary(), nullptr, 5000);
    if (rc == 0)
        m_acked << value;
    return rc == 0;
}

void tst_SplitBrain::checkWrites()
{
    // Neither Control Server crashed (the one that stepped down executed itself: the same process).
    for (QProcess *cs : {m_primary, m_standby})
        QVERIFY2(cs && cs->state() == QProcess::Running,
                 qPrintable(QStringLiteral("a Control Server exited (status %1)").arg(cs ? cs->exitCode() : -1)));
    QVERIFY(!m_acked.isEmpty());
    for (int v : std::as_const(m_acked)) {
        QByteArray out;
        QCOMPARE(run(Hosts, {QStringLiteral("is"), QStringLiteral("get"), QStringLiteral("Split.W%1").arg(v),
                             QStringLiteral("--json")},
                     m_serving, &out),
                 0);
        QVERIFY2(out.contains(QStringLiteral("%1").arg(v).toUtf8()), out.constData());
    }
    qInfo("%lld acknowledged IS writes, all found", qint64(m_acked.size()));
}

QString tst_SplitBrain::serversLink(bool up)
{
    // A route that drops what goes to the other server, on both: the link between them is cut
    // while both still reach every process.
    m_linkCut = !up;
    const QString verb = up ? QStringLiteral("del") : QStringLiteral("add");
    return Network::ip({QStringLiteral("-n"), m_net.host(1), QStringLiteral("route"), verb,
                        QStringLiteral("blackhole"), m_net.address(2) + QStringLiteral("/32")}) +
           Network::ip({QStringLiteral("-n"), m_net.host(2), QStringLiteral("route"), verb,
                        QStringLiteral("blackhole"), m_net.address(1) + QStringLiteral("/32")});
}

void tst_SplitBrain::primaryHostCutAndHealedLeavesOneServer()
{
    startPartition();
    QVERIFY(write(1));
    QCOMPARE(m_net.cable(1, false), QString());
    // The standby takes over for hosts 3-5, while the primary keeps serving host 1.
    QTRY_VERIFY_WITH_TIMEOUT(listening(m_net.address(2), 3425), 15000);
    QVERIFY(write(2)); // beside the cut-off primary: acknowledged there
    letTimePass(4000 - 1000, "the cable stays out for about 4 s in all");
    QCOMPARE(m_net.cable(1, true), QString());
    QVERIFY(settle("primary's host cut and healed", standby()) >= 0);
    checkWrites();
}

void tst_SplitBrain::linkBetweenServersCutLeavesOneServer()
{
    startPartition();
    QVERIFY(write(1));
    QCOMPARE(serversLink(false), QString());
    // The standby no longer hears the primary and takes over; every process still reaches both.
    QTRY_VERIFY_WITH_TIMEOUT(listening(m_net.address(2), 3425), 15000);
    QVERIFY(write(2));
    letTimePass(3000, "both serve for a while");
    QCOMPARE(serversLink(true), QString());
    QVERIFY(settle("link between the servers cut and healed", standby()) >= 0); // the higher term
    checkWrites();
}

void tst_SplitBrain::cableFlappedTenTimesLeavesOneServer()
{
    startPartition();
    // Ten flaps in 45 s: cuts shorter than the takeover time and longer ones, in one sequence
    // (`./run.sh soak --faults flap` flaps at length).
    const int downMs[] = {300, 1500, 800, 2500, 400, 1200, 3000, 500, 2000, 1000};
    int value = 0;
    for (int down : downMs) {
        QCOMPARE(m_net.cable(1, false), QString());
        letTimePass(down, "the flap itself: the cable out");
        QCOMPARE(m_net.cable(1, true), QString());
        write(++value); // acknowledged or not, as the moment allows; acknowledged ones are checked
        letTimePass(qMax(0, 4500 - down - 1000), "the cable in until the next flap");
    }
    QVERIFY(settle("cable flapped ten times", QString()) >= 0);
    qInfo("flaps: %lld of %d writes acknowledged", qint64(m_acked.size()), value);
    checkWrites();
}

void tst_SplitBrain::primaryRestartedAsPrimaryStepsDownForTheStandby()
{
    startPartition();
    QVERIFY(write(1));
    m_primary->kill();
    m_primary->waitForFinished(3000);
    QTRY_VERIFY_WITH_TIMEOUT(listening(m_net.address(2), 3425), 15000);
    // systemd starts it again, as the primary: it finds the standby serving and steps down.
    m_primary = startPrimary();
    QVERIFY(settle("primary restarted as a primary", standby()) >= 0);
    checkWrites();
}

void tst_SplitBrain::secondCutTheHigherTermServesOn()
{
    // Cut and heal twice: the standby takes over (term 2), the primary becomes its standby; cut
    // again, the old primary takes over for its own host (term 3). After the heal the server of
    // term 2 steps down, listening for a moment to redirect its processes: the server of term 3
    // must not take that for a standby that took over and step down too (it did: both stepped down,
    // and nobody served until one of the two standbys took over again).
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString log = dir.filePath(QStringLiteral("primary.log"));
    m_primaryLog = log;
    startPartition();
    m_primaryLog.clear();
    QVERIFY(write(1));
    QCOMPARE(m_net.cable(1, false), QString());
    QTRY_VERIFY_WITH_TIMEOUT(listening(m_net.address(2), 3425), 15000);
    letTimePass(2000, "the cable stays out for a while");
    QCOMPARE(m_net.cable(1, true), QString());
    QVERIFY(settle("first cut healed", standby()) >= 0);
    // The old primary is the standby of host 2 now: its watch is there before the second cut.
    const auto standbyWatches = [this] {
        QByteArray out;
        return run(Hosts, {QStringLiteral("ls"), QStringLiteral("--json")}, standby(), &out) == 0 &&
               out.contains("\"DIALOG.Standby.3425\"");
    };
    QVERIFY(waitUntil(standbyWatches, 15000, 200));
    QCOMPARE(m_net.cable(1, false), QString());
    // The old primary takes over for its own host (seen from there: this host cannot reach it).
    QVERIFY(waitUntil([this] { return write(2); }, 20000, 200));
    letTimePass(2000, "the cable stays out for a while");
    const qint64 before = QFileInfo(log).size(); // what the old primary said up to the second heal
    QCOMPARE(m_net.cable(1, true), QString());
    QString why;
    const bool settled = waitUntil(
        [&] {
            why = oneServerWithEveryone();
            return why.isEmpty() && m_serving == primary();
        },
        30000, 50);
    QFile f(log);
    QVERIFY(f.open(QIODevice::ReadOnly));
    f.seek(before);
    const QByteArray since = f.readAll();
    QVERIFY2(!since.contains("stepping down"), since.constData()); // the higher term never steps down
    QVERIFY2(settled, qPrintable(why.isEmpty() ? QStringLiteral("%1 serves").arg(m_serving) : why));
    checkWrites();
}

QTEST_GUILESS_MAIN(tst_SplitBrain)
#include "tst_splitbrain.moc"
