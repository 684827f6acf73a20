// Bounds on what an unauthenticated or idle peer costs a daemon, against the real binaries with the
// attackers as raw sockets: a frame before authentication is at most MaxPreAuthPayload (a larger
// announced length closes the connection before its body is read), connections in their handshake
// make room for newcomers instead of locking them out, and connections past their HELLO are capped
// per address and in total below the descriptor limit.
#include "control_p.h"
#include "dialog/client.h"
#include "frame_p.h"
#include "processfixture.h"

#include <QFile>
#include <QTemporaryDir>
#include <QtTest>

using namespace dialog;
using namespace dialog::test;

namespace {

/// A field of /proc/PID/status in KiB (VmRSS, VmHWM); -1 if unreadable.
qint64 statusKiB(qint64 pid, const char *field)
{
    QFile f(QStringLiteral("/proc/%1/status").arg(pid));
    if (!f.open(QIODevice::ReadOnly))
        return -1;
    for (const QByteArray &line : f.readAll().split('\n'))
        if (line.startsWith(field))
            return line.mid(qstrlen(field) + 1).trimmed().split(' ').value(0).toLongLong();
    return -1;
}

/// The soft and hard descriptor limits of process @p pid ("Max open files"), or {-1, -1}.
std::pair<qint64, qint64> descriptorLimits(qint64 pid)
{
    QFile f(QStringLiteral("/proc/%1/limits").arg(pid));
    if (!f.open(QIODevice::ReadOnly))
        return {-1, -1};
    for (const QByteArray &line : f.readAll().split('\n'))
        if (line.startsWith("Max open files")) {
            const QList<QByteArray> parts = line.simplified().split(' ');
            return {parts.value(3).toLongLong(), parts.value(4).toLongLong()};
        }
    return {-1, -1};
}

/// A frame header announcing a HELLO of @p length bytes.
QByteArray helloHeader(quint32 length)
{
    QByteArray h;
    wire_format::appendHeader(h, wire_format::Type::Hello, 0, length);
    return h;
}

/// A valid HELLO without a proof (a process of a partition without a secret).
QByteArray helloFrame(const QString &name)
{
    wire::Hello h;
    h.set_name(name.toStdString());
    h.set_host("127.0.0.1");
    h.set_port(1);
    h.set_pid(1);
    h.set_incarnation(1);
    return wire_format::controlFrame(wire_format::Type::Hello, h);
}

/// A socket connected to 127.0.0.1:@p port from @p source; null if it could not connect.
std::unique_ptr<QTcpSocket> connectFrom(const QString &source, quint16 port)
{
    auto s = std::make_unique<QTcpSocket>();
    if (!s->bind(QHostAddress(source)))
        return nullptr;
    s->connectToHost(QHostAddress::LocalHost, port);
    if (!s->waitForConnected(5000))
        return nullptr;
    return s;
}

/// A daemon started under prlimit(1) with the descriptor limits @p nofile ("SOFT:HARD"); prlimit
/// executes it in its own process, so the process is the daemon's. Reaped when it goes.
struct LimitedDaemon
{
    QProcess process;
    LimitedDaemon(const QString &nofile, const QString &program, const QStringList &args)
    {
        process.setProcessChannelMode(QProcess::SeparateChannels);
        process.start(QStringLiteral("prlimit"),
                      QStringList{QStringLiteral("--nofile=") + nofile, bin(program)} + args);
        process.waitForStarted(5000);
    }
    ~LimitedDaemon()
    {
        process.terminate();
        if (!process.waitForFinished(5000)) {
            process.kill();
            process.waitForFinished(5000);
        }
    }
};

bool isClosed(const QTcpSocket &s)
{
    return s.state() == QAbstractSocket::UnconnectedState;
}

/// Reads what @p p wrote on stderr so far into @p log; true once it holds @p text.
bool logged(QProcess *p, QByteArray &log, const char *text)
{
    p->setReadChannel(QProcess::StandardError);
    log += p->readAll();
    return log.contains(text);
}

} // namespace

class tst_NetLimits : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void oversizedFrameBeforeAuthenticationClosedUnread_data();
    void oversizedFrameBeforeAuthenticationClosedUnread();
    void handshakeFloodGivesWayToARealProcess();
    void connectionsPastHelloCappedPerAddress();
    void descriptorLimitRaisedAndNeverExhausted();
    void openListenerBeyondLoopbackNeedsSecretOrInsecure();
    void secretsGeneratedAndChecked();

private:
    QTemporaryDir m_dir;
    QString m_secret;
};

void tst_NetLimits::initTestCase()
{
    QVERIFY(m_dir.isValid());
    m_secret = m_dir.filePath(QStringLiteral("secret"));
    QFile f(m_secret);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("cQh2V8xk0yJm3sTz9LwR4bNf7GdPa1Ue6HiOvXcK5Ys=\n");
    f.setPermissions(QFile::ReadOwner | QFile::WriteOwner);
}

void tst_NetLimits::oversizedFrameBeforeAuthenticationClosedUnread_data()
{
    QTest::addColumn<QString>("daemon");
    QTest::addColumn<bool>("secret");
    QTest::newRow("controlserver") << QStringLiteral("controlserver") << false;
    QTest::newRow("controlserver+secret") << QStringLiteral("controlserver") << true;
    QTest::newRow("isserver") << QStringLiteral("isserver") << false;
}

// The first frame could announce 64 MiB and was read whole before it was looked at: 80 such
// connections took the Control Server to 3.4 GB. Now a frame before authentication is at most 4 KiB.
void tst_NetLimits::oversizedFrameBeforeAuthenticationClosedUnread()
{
    QFETCH(QString, daemon);
    QFETCH(bool, secret);
    ProcessFixture fx;
    QStringList args;
    if (secret)
        args << QStringLiteral("--secret-file") << m_secret;
    QVERIFY(fx.startControlServer(args));
    QProcess *target = fx.controlServerProcess();
    quint16 port = fx.port();
    if (daemon == QLatin1String("isserver")) {
        target =
            fx.start(QStringLiteral("dialog-isserver"), {QStringLiteral("--name"), QStringLiteral("Flood")});
        QJsonObject entry;
        QVERIFY(
            waitUntil([&] { return !(entry = fx.processEntry(QStringLiteral("IS.Server.Flood"))).isEmpty(); },
                      15000, 100));
        port = quint16(entry.value(QStringLiteral("port")).toInt());
        QVERIFY(port != 0);
    }
    const qint64 pid = target->processId();
    const qint64 before = statusKiB(pid, "VmRSS:");
    QVERIFY(before > 0);

    // 80 connections announce a 64 MiB HELLO and send 2 MiB of it: read into buffers of the announced
    // size, that is 160 MiB of resident memory at least.
    const QByteArray body(2 * 1024 * 1024, 'x');
    std::vector<std::unique_ptr<QTcpSocket>> attackers;
    for (int i = 0; i < 80; ++i) {
        auto s = std::make_unique<QTcpSocket>();
        s->connectToHost(QHostAddress::LocalHost, port);
        QVERIFY(s->waitForConnected(5000));
        s->write(helloHeader(64u << 20) + body);
        attackers.push_back(std::move(s));
    }
    // Every one is closed by the daemon (at once; the handshake time-out would close them in 5 s
    // too, so this alone proves nothing: the memory below does).
    QVERIFY(waitUntil(
        [&] {
            return std::all_of(attackers.begin(), attackers.end(),
                               [](const auto &s) { return isClosed(*s); });
        },
        30000));
    const qint64 peak = statusKiB(pid, "VmHWM:");
    qInfo("%s: RSS %lld KiB before the flood, peak %lld KiB", qPrintable(daemon), before, peak);
    QVERIFY2(peak - before < 64 * 1024,
             qPrintable(QStringLiteral("RSS %1 KiB before, peak %2 KiB").arg(before).arg(peak)));
    QByteArray log;
    QVERIFY2(waitUntil([&] { return logged(target, log, "before authentication: frame of 67108864 bytes"); },
                       5000),
             log.right(2000).constData());
    // The daemon is unharmed: a real process connects (with the secret if there is one).
    ClientOptions o = fx.clientOptions(QStringLiteral("AfterFlood"));
    if (secret)
        o.secretFile = m_secret;
    Client c(o);
    c.publish(QStringLiteral("AfterFlood.State"));
    QVERIFY(c.start());
    QVERIFY(waitUntil([&] { return c.state() == Client::State::Connected; }, 15000));
}

// 64 idle sockets from one address locked out every process of that host: connections in their
// handshake were refused past the per-address cap. Now the oldest of them makes room.
void tst_NetLimits::handshakeFloodGivesWayToARealProcess()
{
    ProcessFixture fx;
    QVERIFY(fx.startControlServer({QStringLiteral("--secret-file"), m_secret,
                                   QStringLiteral("--handshake-timeout-ms"), QStringLiteral("120000"),
                                   QStringLiteral("--max-handshaking-per-address"), QStringLiteral("8")}));
    std::vector<std::unique_ptr<QTcpSocket>> idle;
    for (int i = 0; i < 8; ++i) {
        idle.push_back(connectFrom(QStringLiteral("127.0.0.1"), fx.port()));
        QVERIFY(idle.back());
    }
    // A trickling one: a byte now and then does not keep it (nor does anything: age, not silence).
    idle.front()->write(helloHeader(100).left(1));
    ClientOptions o = fx.clientOptions(QStringLiteral("RealProcess"));
    o.secretFile = m_secret;
    Client c(o);
    c.publish(QStringLiteral("RealProcess.State"));
    QVERIFY(c.start());
    QVERIFY(waitUntil([&] { return c.state() == Client::State::Connected; }, 15000));
    // Its place was the oldest idle one's.
    QVERIFY(waitUntil([&] { return isClosed(*idle.front()); }, 5000));
    QVERIFY(std::none_of(idle.begin() + 1, idle.end(), [](const auto &s) { return isClosed(*s); }));
}

// Past its HELLO a connection had no cap: one address could hold any number. Now they are capped per
// address (and in total), and another address is not held back by it.
void tst_NetLimits::connectionsPastHelloCappedPerAddress()
{
    ProcessFixture fx;
    QVERIFY(fx.startControlServer({QStringLiteral("--max-connections-per-address"), QStringLiteral("8")}));
    std::vector<std::unique_ptr<QTcpSocket>> held;
    for (int i = 0; i < 9; ++i) {
        held.push_back(connectFrom(QStringLiteral("127.0.0.2"), fx.port()));
        QVERIFY(held.back());
        held.back()->write(helloFrame(QStringLiteral("Held%1").arg(i)));
        QVERIFY(held.back()->waitForBytesWritten(5000));
    }
    // One of them (the reader threads take them in any order) is closed; the other eight stay.
    const auto closed = [&] {
        return std::count_if(held.begin(), held.end(), [](const auto &s) { return isClosed(*s); });
    };
    QVERIFY(waitUntil([&] { return closed() >= 1; }, 10000));
    QVERIFY(expectNothingFor(
        300, [&] { return closed() > 1; }, "more than one connection closed"));
    QByteArray log;
    QVERIFY2(
        waitUntil([&] { return logged(fx.controlServerProcess(), log, "the most one address may hold"); },
                  5000),
        log.right(2000).constData());
    Client c(fx.clientOptions(QStringLiteral("OtherAddress")));
    c.publish(QStringLiteral("OtherAddress.State"));
    QVERIFY(c.start());
    QVERIFY(waitUntil([&] { return c.state() == Client::State::Connected; }, 15000));
}

// 1,200 connections exhausted a Control Server at systemd's 1,024 descriptors: Qt stopped
// accepting for good. Now the descriptor limit is raised to the hard limit at start, and the caps
// stay below it.
void tst_NetLimits::descriptorLimitRaisedAndNeverExhausted()
{
    ProcessFixture fx;
    // Soft 1024, hard 1024: nothing to raise, so the caps must keep it from running out.
    LimitedDaemon daemon(QStringLiteral("1024:1024"), QStringLiteral("dialog-controlserver"),
                         {QStringLiteral("--port"), QStringLiteral("0")});
    QProcess *cs = &daemon.process;
    const quint16 port = ProcessFixture::waitForListening(cs, ProcessFixture::controlServerListening());
    QVERIFY(port != 0);
    const QString address = QStringLiteral("127.0.0.1:%1").arg(port);
    ClientOptions o = fx.clientOptions(QStringLiteral("Before"));
    o.controlServers = {address};
    Client before(o);
    before.publish(QStringLiteral("Before.State"));
    QVERIFY(before.start());
    QVERIFY(waitUntil([&] { return before.state() == Client::State::Connected; }, 15000));

    // 1,200 connections past their HELLO from 16 addresses.
    std::vector<std::unique_ptr<QTcpSocket>> flood;
    for (int i = 0; i < 1200; ++i) {
        auto s = connectFrom(QStringLiteral("127.0.0.%1").arg(2 + i % 16), port);
        if (!s)
            continue; // the kernel's backlog is full for a moment: the flood is what it is
        s->write(helloFrame(QStringLiteral("Flood%1").arg(i)));
        s->flush(); // now: the HELLO completes the handshake while the next ones connect
        flood.push_back(std::move(s));
    }
    QByteArray log;
    QVERIFY2(waitUntil([&] { return logged(cs, log, "the most this process takes"); }, 20000),
             log.right(2000).constData());
    QVERIFY(!log.contains("Too many open files"));
    // The process connected before is still served.
    QCOMPARE(before.state(), Client::State::Connected);
    flood.clear();
    // Room again: a newcomer gets in (Qt had stopped accepting for good).
    o.name = QStringLiteral("After");
    Client after(o);
    after.publish(QStringLiteral("After.State"));
    QVERIFY(after.start());
    QVERIFY(waitUntil([&] { return after.state() == Client::State::Connected; }, 20000));

    // A soft limit below the hard one is raised to it.
    LimitedDaemon raised(QStringLiteral("1024:4096"), QStringLiteral("dialog-controlserver"),
                         {QStringLiteral("--port"), QStringLiteral("0")});
    QProcess *cs2 = &raised.process;
    QVERIFY(ProcessFixture::waitForListening(cs2, ProcessFixture::controlServerListening()) != 0);
    const auto limits = descriptorLimits(cs2->processId());
    QCOMPARE(limits.first, 4096);
}

// Without a secret a Control Server bound beyond loopback believed whoever reached it, with a
// warning only. Now it refuses to start, saying how to proceed, unless told --insecure.
void tst_NetLimits::openListenerBeyondLoopbackNeedsSecretOrInsecure()
{
    ProcessFixture fx;
    QByteArray err;
    const QStringList open{QStringLiteral("--bind"), QStringLiteral("0.0.0.0"), QStringLiteral("--port"),
                           QStringLiteral("0")};
    QCOMPARE(fx.run(QStringLiteral("dialog-controlserver"), open, nullptr, &err), 1);
    QVERIFY2(err.contains("refusing to listen on 0.0.0.0") && err.contains("--secret-file") &&
                 err.contains("--insecure"),
             err.constData());
    for (const QStringList &extra : {QStringList{QStringLiteral("--insecure")},
                                     QStringList{QStringLiteral("--secret-file"), m_secret}}) {
        QProcess *cs = fx.start(QStringLiteral("dialog-controlserver"), open + extra);
        QVERIFY2(ProcessFixture::waitForListening(cs, ProcessFixture::controlServerListening()) != 0,
                 qPrintable(extra.join(QLatin1Char(' '))));
    }
}

// daqpartition2026 was recovered offline in 37 guesses from one handshake, and nothing said it was
// weak. Now `dialogctl secret generate` makes a strong one (0600), and a weak one is told at start.
void tst_NetLimits::secretsGeneratedAndChecked()
{
    ProcessFixture fx;
    const QString path = m_dir.filePath(QStringLiteral("generated"));
    QByteArray out, err;
    QCOMPARE(
        fx.run(QStringLiteral("dialogctl"), {QStringLiteral("secret"), QStringLiteral("generate"), path}), 0);
    // 0600: nobody but its owner reads it (Qt adds the User bits when the owner is this user).
    QCOMPARE(QFile::permissions(path) & (QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner |
                                         QFile::ReadGroup | QFile::WriteGroup | QFile::ExeGroup |
                                         QFile::ReadOther | QFile::WriteOther | QFile::ExeOther),
             QFile::ReadOwner | QFile::WriteOwner);
    QCOMPARE(
        fx.run(QStringLiteral("dialogctl"), {QStringLiteral("secret"), QStringLiteral("check"), path}, &out),
        0);
    QVERIFY2(out.contains("strong enough"), out.constData());
    // Never over an existing one: it is a partition's secret.
    QCOMPARE(fx.run(QStringLiteral("dialogctl"), {QStringLiteral("secret"), QStringLiteral("generate"), path},
                    nullptr, &err),
             1);
    QVERIFY2(err.contains("exists"), err.constData());

    const QString weak = m_dir.filePath(QStringLiteral("weak"));
    QFile f(weak);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("daqpartition2026\n");
    f.close();
    QCOMPARE(fx.run(QStringLiteral("dialogctl"), {QStringLiteral("secret"), QStringLiteral("check"), weak},
                    nullptr, &err),
             2);
    QVERIFY2(err.contains("looks weak") && err.contains("dialogctl secret generate"), err.constData());
    QVERIFY(fx.startControlServer({QStringLiteral("--secret-file"), weak}));
    QByteArray log;
    QVERIFY2(waitUntil([&] { return logged(fx.controlServerProcess(), log, "the secret looks weak"); }, 5000),
             log.constData());
    fx.stopAll();
    log.clear();
    QVERIFY(fx.startControlServer({QStringLiteral("--secret-file"), path}));
    QVERIFY(expectNothingFor(
        300, [&] { return logged(fx.controlServerProcess(), log, "the secret looks weak"); },
        "a generated secret called weak"));
}

QTEST_GUILESS_MAIN(tst_NetLimits)
#include "tst_netlimits.moc"
