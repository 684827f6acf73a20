// The push mirror (IS paper §5.1, remote shift): dialog-isserver --push-to on the master opens the
// connection out to a mirror (--mirror-listen) that belongs to another DIALOG system (its own
// Control Server). Snapshot then changes, restarts of either side, write-back refused, bad input
// on the mirror's port. Real binaries on loopback.
#include "isfixture.h"

#include "dialog/client.h"
#include "dialog/is/codec.h"
#include "dialog/is/dictionary.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QTcpSocket>
#include <QtEndian>
#include <QtTest>
#include <csignal>

using namespace dialog;
using namespace dialog::test;

namespace {
struct Copy
{
    QString type;
    qint64 timeUs = 0;
    QByteArray value;
    bool operator==(const Copy &o) const { return type == o.type && timeUs == o.timeUs && value == o.value; }
};
using Content = QMap<QString, Copy>;

const QRegularExpression &mirrorListening()
{
    static const QRegularExpression re(QStringLiteral("push mirror listening on \\S+:(\\d+)"));
    return re;
}

/// A push-mirror frame (isserver/pushprotocol.h), written by hand: what a stranger could send.
QByteArray frame(quint8 type, const QByteArray &payload, quint32 length = 0xffffffff)
{
    QByteArray out(10, Qt::Uninitialized);
    qToBigEndian<quint32>(0x4449504d, out.data());
    out[4] = 1;
    out[5] = char(type);
    qToBigEndian<quint32>(length == 0xffffffff ? quint32(payload.size()) : length, out.data() + 6);
    return out + payload;
}
} // namespace

class tst_PushMirror : public QObject, private IsTestBase
{
    Q_OBJECT

private Q_SLOTS:
    void init();
    void cleanup();
    void badArgumentsAreRefused();
    void snapshotThenChangesAcrossNetworks();
    void mirrorAndMasterRestartsResynchronise();
    void badInputOnTheListeningPort();
    void silentPeerIsDroppedAndResynchronised();
    void criteriaRestrictThePush();
    void stoppedMirrorNeverBlocksTheMaster();
    void heldAndTricklingHandshakesDoNotKeepTheMasterOut();
    void noSecretMeansLoopbackOnly();

private:
    /// The mirror's own DIALOG system: a second Control Server and a client of it.
    bool startRemoteNetwork();
    QProcess *startPushMirror(quint16 port, const QStringList &extra = {});
    QProcess *startPushMaster(quint16 mirrorPort, const QStringList &extra = {});
    Content content(is::Dictionary &dict, const QString &server);
    bool waitForEqual(int timeoutMs);
    is::Object readout(quint64 events, int size = 3);
    bool writeMany(int n, int objects, int offset = 0, int size = 3);

    QProcess *m_remoteCs = nullptr;
    QString m_remoteAddress;
    std::unique_ptr<Client> m_remoteClient;
    std::unique_ptr<is::Dictionary> m_remote;
};

void tst_PushMirror::init()
{
    QVERIFY(setUpIs(QStringLiteral("push-test")));
}

void tst_PushMirror::cleanup()
{
    m_remote.reset();
    m_remoteClient.reset();
    tearDownIs();
    m_remoteCs = nullptr;
}

bool tst_PushMirror::startRemoteNetwork()
{
    m_remoteCs =
        m_fx->start(QStringLiteral("dialog-controlserver"), {QStringLiteral("--port"), QStringLiteral("0")});
    const quint16 port =
        ProcessFixture::waitForListening(m_remoteCs, ProcessFixture::controlServerListening());
    if (port == 0)
        return false;
    m_remoteAddress = QStringLiteral("127.0.0.1:%1").arg(port);
    ClientOptions o = m_fx->clientOptions(QStringLiteral("push-test-remote"));
    o.controlServers = {m_remoteAddress};
    m_remoteClient = std::make_unique<Client>(o);
    if (!m_remoteClient->start())
        return false;
    m_remote = std::make_unique<is::Dictionary>(m_remoteClient.get());
    return m_remote->types().loadDirectory(isTypesDir()).isOk();
}

QProcess *tst_PushMirror::startPushMirror(quint16 port, const QStringList &extra)
{
    // No types of its own: it takes the master's. Registered with the remote Control Server only.
    QProcess *p = m_fx->start(
        QStringLiteral("dialog-isserver"),
        QStringList{QStringLiteral("--name"), QStringLiteral("RunParams"), QStringLiteral("--threads"),
                    QStringLiteral("2"), QStringLiteral("--control-server"), m_remoteAddress,
                    QStringLiteral("--mirror-listen"), QStringLiteral("127.0.0.1:%1").arg(port)} +
            extra);
    p->setProcessChannelMode(QProcess::SeparateChannels);
    return p;
}

QProcess *tst_PushMirror::startPushMaster(quint16 mirrorPort, const QStringList &extra)
{
    QProcess *p = m_fx->start(
        QStringLiteral("dialog-isserver"),
        QStringList{QStringLiteral("--name"), QStringLiteral("RunParams"), QStringLiteral("--threads"),
                    QStringLiteral("2"), QStringLiteral("--types"), isTypesDir(), QStringLiteral("--push-to"),
                    QStringLiteral("127.0.0.1:%1").arg(mirrorPort)} +
            extra);
    p->setProcessChannelMode(QProcess::SeparateChannels);
    return p;
}

Content tst_PushMirror::content(is::Dictionary &dict, const QString &server)
{
    QList<is::Entry> entries;
    Content out;
    if (!dict.listSync(server, is::Criteria(), &entries, true).isOk())
        return out;
    for (const is::Entry &e : std::as_const(entries)) {
        const QString name = e.name.mid(server.size() + 1);
        if (name != QLatin1String("Statistics")) // every server has its own
            out.insert(name, Copy{e.typeName, e.time.microsecondsSinceEpoch(), is::encode(e.object)});
    }
    return out;
}

bool tst_PushMirror::waitForEqual(int timeoutMs)
{
    Content a, b;
    if (waitUntil(
            [&] {
                a = content(*m_dict, QStringLiteral("RunParams"));
                b = content(*m_remote, QStringLiteral("RunParams"));
                return a == b;
            },
            timeoutMs, 50))
        return true;
    qWarning("master: %lld objects, mirror: %lld objects", qlonglong(a.size()), qlonglong(b.size()));
    return false;
}

is::Object tst_PushMirror::readout(quint64 events, int size)
{
    is::Object o = is::Object::create(m_dict->types(), QStringLiteral("ReadoutStats"));
    o.set<quint64>(QStringLiteral("events"), events);
    o.set<double>(QStringLiteral("rate"), events * 0.5);
    QList<quint32> depths(size, 1);
    depths[0] = quint32(events);
    o.set(QStringLiteral("queueDepths"), depths);
    return o;
}

bool tst_PushMirror::writeMany(int n, int objects, int offset, int size)
{
    int done = 0, failed = 0, sent = 0;
    QElapsedTimer t;
    t.start();
    while (done < n && t.elapsed() < 30000) {
        while (sent < n && sent - done < 256) {
            const int i = sent++;
            m_dict->update(QStringLiteral("RunParams.RO%1").arg((i + offset) % objects),
                           readout(quint64(i + offset), size), is::Dictionary::UpdateMode::CreateIfMissing,
                           [&](const is::Status &st) {
                               ++done;
                               failed += !st.isOk();
                           });
        }
        QCoreApplication::processEvents(QEventLoop::AllEvents, 5);
    }
    return done == n && failed == 0;
}

void tst_PushMirror::badArgumentsAreRefused()
{
    const QList<QPair<QStringList, QByteArray>> cases{
        {{QStringLiteral("--push-to"), QStringLiteral("nohost")}, "invalid --push-to 'nohost' (HOST:PORT)"},
        {{QStringLiteral("--push-to"), QStringLiteral("h:70000")}, "invalid --push-to 'h:70000'"},
        {{QStringLiteral("--mirror-listen"), QStringLiteral("x")}, "invalid --mirror-listen 'x'"},
        {{QStringLiteral("--mirror-listen"), QStringLiteral("not-an-ip:1")}, "invalid --mirror-listen"},
        {{QStringLiteral("--mirror-master"), QStringLiteral("M")}, "--mirror-master needs --mirror-listen"},
        {{QStringLiteral("--push-criteria"), QStringLiteral("R.*")}, "--push-criteria needs --push-to"},
        {{QStringLiteral("--mirror-listen"), QStringLiteral("0"), QStringLiteral("--mirror-of"),
          QStringLiteral("X")},
         "exclude each other"},
        {{QStringLiteral("--push-to"), QStringLiteral("127.0.0.1:1"), QStringLiteral("--push-criteria"),
          QStringLiteral("(")},
         "invalid --push-criteria"},
    };
    for (const auto &c : cases) {
        QByteArray err;
        QCOMPARE(m_fx->run(QStringLiteral("dialog-isserver"),
                           QStringList{QStringLiteral("--name"), QStringLiteral("P")} + c.first, nullptr,
                           &err),
                 1);
        QVERIFY2(err.contains(c.second), err.constData());
    }
}

void tst_PushMirror::snapshotThenChangesAcrossNetworks()
{
    QVERIFY(startRemoteNetwork());
    // The master runs, with content, before its mirror exists: it keeps trying to reach it.
    const quint16 port = freePort();
    QProcess *master = startPushMaster(port);
    QVERIFY(waitForServer(QStringLiteral("RunParams")));
    is::Object run = is::Object::create(m_dict->types(), QStringLiteral("RunInfo"));
    run.set<quint32>(QStringLiteral("runNumber"), 42);
    QVERIFY(m_dict->updateSync(QStringLiteral("RunParams.RunInfo"), run).isOk());
    QVERIFY(m_dict->insertSync(QStringLiteral("RunParams.RO.crate1"), readout(1)).isOk());
    QVERIFY(writeMany(300, 100));
    QElapsedTimer t;
    t.start();
    QProcess *mirror = startPushMirror(port);
    QVERIFY(waitForEqual(10000));
    qInfo("mirror started: equal to the master (102 objects) after %lld ms", t.elapsed());

    // Changes follow, in order: updates, creations, removals.
    QVERIFY(writeMany(5000, 200, 1000));
    for (int i = 0; i < 20; ++i)
        QVERIFY(m_dict->removeSync(QStringLiteral("RunParams.RO%1").arg(i)).isOk());
    QVERIFY(waitForEqual(15000));
    QCOMPARE(content(*m_remote, QStringLiteral("RunParams")).size(), 200 - 20 + 2);
    is::Entry e;
    QVERIFY(m_remote->getSync(QStringLiteral("RunParams.RO199"), &e).isOk());
    QCOMPARE(e.object.get<quint64>(QStringLiteral("events")), quint64(1000 + 4999));

    // Nothing on the mirror side writes: every write is refused with the reason.
    const is::Status w = m_remote->updateSync(QStringLiteral("RunParams.RO1"), readout(7));
    QCOMPARE(w.code(), is::Status::Code::ReadOnly);
    QVERIFY2(w.message().contains(QLatin1String("read-only push mirror of RunParams")),
             qPrintable(w.message()));
    QCOMPARE(m_remote->removeSync(QStringLiteral("RunParams.RunInfo")).code(), is::Status::Code::ReadOnly);
    QVERIFY(!m_remote->getSync(QStringLiteral("RunParams.RO1"), nullptr).isOk());
    is::Entry master1;
    QVERIFY(
        !m_dict->getSync(QStringLiteral("RunParams.RO1"), &master1).isOk()); // removed above, not recreated

    // The master's Control Server never heard of the mirror, nor the mirror's of the master.
    QVERIFY(
        m_fx->processEntry(QStringLiteral("IS.Server.RunParams")).value(QStringLiteral("pid")).toInteger() ==
        master->processId());
    QCOMPARE(mirror->state(), QProcess::Running);
    const QByteArray log = mirror->readAllStandardError();
    QVERIFY2(log.contains("synchronised: 102 objects"), log.constData());
}

void tst_PushMirror::mirrorAndMasterRestartsResynchronise()
{
    QVERIFY(startRemoteNetwork());
    QProcess *mirror = startPushMirror(0);
    const quint16 port = ProcessFixture::waitForListening(mirror, mirrorListening());
    QVERIFY(port != 0);
    QProcess *master = startPushMaster(port);
    QVERIFY(waitForServer(QStringLiteral("RunParams")));
    QVERIFY(writeMany(200, 80));
    QVERIFY(waitForEqual(10000));

    // The mirror dies; the master keeps changing; the mirror comes back on its port.
    ::kill(pid_t(mirror->processId()), SIGKILL);
    QVERIFY(mirror->waitForFinished(5000));
    QVERIFY(writeMany(300, 100, 500));
    for (int i = 0; i < 10; ++i)
        QVERIFY(m_dict->removeSync(QStringLiteral("RunParams.RO%1").arg(i)).isOk());
    QElapsedTimer t;
    t.start();
    mirror = startPushMirror(port);
    QByteArray log;
    QTRY_VERIFY_WITH_TIMEOUT((log += mirror->readAllStandardError()).contains("synchronised: 90 objects"),
                             10000);
    qInfo("mirror restarted: holds the master's content again after %lld ms", t.elapsed());
    QVERIFY(waitForEqual(15000)); // read through the mirror's Control Server, once it saw the old one go
    QCOMPARE(content(*m_remote, QStringLiteral("RunParams")).size(), 90);

    // The master dies and comes back empty (no persistence): the copy follows it.
    ::kill(pid_t(master->processId()), SIGKILL);
    QVERIFY(master->waitForFinished(5000));
    t.restart();
    master = startPushMaster(port);
    log.clear();
    QTRY_VERIFY_WITH_TIMEOUT(
        (log += mirror->readAllStandardError())
            .contains("resynchronised: 0 objects, 90 removed that the master no longer has"),
        10000);
    qInfo("master restarted (empty): the mirror followed it after %lld ms", t.elapsed());
    QVERIFY(waitForServer(QStringLiteral("RunParams")));
    QVERIFY(writeMany(30, 10, 900));
    QVERIFY(waitForEqual(15000));
    QCOMPARE(content(*m_remote, QStringLiteral("RunParams")).size(), 10);
    QVERIFY2(log.contains("the master 127.0.0.1:"), log.constData());
}

void tst_PushMirror::badInputOnTheListeningPort()
{
    QVERIFY(startRemoteNetwork());
    QProcess *mirror = startPushMirror(0);
    const quint16 port = ProcessFixture::waitForListening(mirror, mirrorListening());
    QVERIFY(port != 0);
    startPushMaster(port);
    QVERIFY(waitForServer(QStringLiteral("RunParams")));
    QVERIFY(writeMany(50, 10));
    QVERIFY(waitForEqual(10000));

    auto send = [port](const QByteArray &bytes, QByteArray *answer = nullptr) {
        QTcpSocket s;
        s.connectToHost(QHostAddress::LocalHost, port);
        if (!s.waitForConnected(3000))
            return false;
        s.write(bytes);
        s.waitForBytesWritten(3000);
        // The mirror closes the connection (after its refusal, if any).
        const bool closed = waitUntil(
            [&] {
                s.waitForReadyRead(20);
                if (answer)
                    *answer += s.readAll();
                return s.state() == QAbstractSocket::UnconnectedState;
            },
            5000);
        return closed;
    };
    QByteArray answer;
    QVERIFY(send("GET / HTTP/1.1\r\nHost: x\r\n\r\n"));
    QVERIFY(send(frame(1, "{\"server\": \"Other\", \"ping_ms\": 1000, \"types\": []}"), &answer));
    QVERIFY2(answer.contains("this mirror copies the IS server RunParams, not Other"), answer.constData());
    QVERIFY(send(frame(1, "not json")));
    QVERIFY(send(frame(5, QByteArray(40, 'x')))); // records before any hello
    QVERIFY(send(frame(5, {}, 0x7fffffff)));      // a frame of 2 GiB announced
    QVERIFY(send(frame(9, {})));                  // unknown type
    // An accepted stranger claiming the master's name, then sending malformed records: closed, the
    // copy is kept, and the real master reconnects and resynchronises.
    QVERIFY(send(frame(1, "{\"server\": \"RunParams\", \"ping_ms\": 1000, \"types\": []}") +
                 frame(5, QByteArray("\x01\xff\xff", 3))));

    // A master of another name is refused, and told why.
    QProcess *other = m_fx->start(QStringLiteral("dialog-isserver"),
                                  {QStringLiteral("--name"), QStringLiteral("Other"),
                                   QStringLiteral("--push-to"), QStringLiteral("127.0.0.1:%1").arg(port)});
    QByteArray otherLog;
    QTRY_VERIFY_WITH_TIMEOUT(
        (otherLog += other->readAllStandardError())
            .contains("refused by the mirror: this mirror copies the IS server RunParams, not Other"),
        5000);

    QCOMPARE(mirror->state(), QProcess::Running);
    QVERIFY(writeMany(100, 20, 300));
    QVERIFY(waitForEqual(15000));
    const QByteArray log = mirror->readAllStandardError();
    for (const char *reason :
         {"bad magic", "not Other", "malformed hello", "Records before the hello",
          "push-mirror frame of 2147483647", "unknown push-mirror frame type 9", "malformed records"})
        QVERIFY2(log.contains(reason), qPrintable(QStringLiteral("%1 not in:\n%2").arg(reason, log)));
}

void tst_PushMirror::silentPeerIsDroppedAndResynchronised()
{
    // A stopped process answers nothing, as a cut link would: each side notices by itself.
    QVERIFY(startRemoteNetwork());
    QProcess *mirror = startPushMirror(0);
    const quint16 port = ProcessFixture::waitForListening(mirror, mirrorListening());
    QVERIFY(port != 0);
    QProcess *master = startPushMaster(port, {QStringLiteral("--push-ping-ms"), QStringLiteral("200")});
    QVERIFY(waitForServer(QStringLiteral("RunParams")));
    QVERIFY(writeMany(40, 10));
    QVERIFY(waitForEqual(10000));

    // The mirror stops: the master drops the connection after 3 silent intervals.
    QElapsedTimer t;
    t.start();
    ::kill(pid_t(mirror->processId()), SIGSTOP);
    QByteArray masterLog;
    QTRY_VERIFY_WITH_TIMEOUT(
        (masterLog += master->readAllStandardError()).contains("connection lost (no answer for"), 5000);
    qInfo("stopped mirror: dropped by the master after %lld ms", t.elapsed());
    QVERIFY(writeMany(40, 20, 100)); // the master is not held up meanwhile
    ::kill(pid_t(mirror->processId()), SIGCONT);
    QByteArray mirrorLog;
    QTRY_VERIFY_WITH_TIMEOUT(
        (mirrorLog += mirror->readAllStandardError()).contains("resynchronised: 20 objects"), 10000);
    QVERIFY(waitForEqual(15000));
    QVERIFY2(!mirrorLog.contains("silent"),
             mirrorLog.constData()); // its own stop is not the master's silence

    // The master stops: the mirror drops it; resumed, the master reconnects and resynchronises.
    mirrorLog.clear();
    t.restart();
    ::kill(pid_t(master->processId()), SIGSTOP);
    QTRY_VERIFY_WITH_TIMEOUT(
        (mirrorLog += mirror->readAllStandardError()).contains("the master has been silent for"), 5000);
    qInfo("stopped master: dropped by the mirror after %lld ms", t.elapsed());
    mirrorLog.clear();
    ::kill(pid_t(master->processId()), SIGCONT);
    t.restart();
    QTRY_VERIFY_WITH_TIMEOUT(
        (mirrorLog += mirror->readAllStandardError()).contains("resynchronised: 20 objects"), 10000);
    qInfo("master resumed: mirror resynchronised after %lld ms", t.elapsed());
    QVERIFY(writeMany(10, 20, 300));
    QVERIFY(waitForEqual(10000));
}

void tst_PushMirror::criteriaRestrictThePush()
{
    QVERIFY(startRemoteNetwork());
    QProcess *mirror = startPushMirror(0);
    const quint16 port = ProcessFixture::waitForListening(mirror, mirrorListening());
    QVERIFY(port != 0);
    startPushMaster(port, {QStringLiteral("--push-criteria"), QStringLiteral("RO1.*")});
    QVERIFY(waitForServer(QStringLiteral("RunParams")));
    QVERIFY(writeMany(100, 30));
    is::Object run = is::Object::create(m_dict->types(), QStringLiteral("RunInfo"));
    QVERIFY(m_dict->insertSync(QStringLiteral("RunParams.RunInfo"), run).isOk());
    QVERIFY(m_dict->removeSync(QStringLiteral("RunParams.RO12")).isOk());
    Content expected = content(*m_dict, QStringLiteral("RunParams"));
    for (auto it = expected.begin(); it != expected.end();)
        it = it.key().startsWith(QLatin1String("RO1")) ? std::next(it) : expected.erase(it);
    QCOMPARE(expected.size(), 10); // RO1, RO10..RO19 but RO12
    QTRY_COMPARE_WITH_TIMEOUT(content(*m_remote, QStringLiteral("RunParams")), expected, 10000);
}

void tst_PushMirror::stoppedMirrorNeverBlocksTheMaster()
{
    QVERIFY(startRemoteNetwork());
    QProcess *mirror = startPushMirror(0);
    const quint16 port = ProcessFixture::waitForListening(mirror, mirrorListening());
    QVERIFY(port != 0);
    // Pings far apart: the connection stays up while the mirror reads nothing.
    QProcess *master = startPushMaster(port, {QStringLiteral("--push-ping-ms"), QStringLiteral("60000")});
    QVERIFY(waitForServer(QStringLiteral("RunParams")));
    const int n = 3000, objects = 500, size = 1024; // updates of ~4 KB
    QVERIFY(writeMany(n, objects, 0, size));
    QVERIFY(waitForEqual(20000));
    ::kill(pid_t(mirror->processId()), SIGSTOP);

    // Three rounds of 12 MB: more than the socket buffers and the master's 8 MiB bound. Every update
    // is answered, and the master's memory stops growing once the bound is reached.
    qint64 rssFirst = -1;
    for (int round = 1; round <= 3; ++round) {
        QVERIFY2(writeMany(n, objects, round * n, size),
                 qPrintable(QStringLiteral("round %1: the master did not answer every update").arg(round)));
        if (round == 1)
            rssFirst = rssKb(master->processId());
    }
    const qint64 rssLast = rssKb(master->processId());
    qInfo("stopped push mirror: master RSS %lld KiB after the first round, %lld KiB after the last", rssFirst,
          rssLast);
    QVERIFY(rssFirst > 0 && rssLast > 0);
    QVERIFY2(rssLast - rssFirst < rssGrowthBoundKb(24 * 1024),
             qPrintable(QStringLiteral("the master grew by %1 KiB").arg(rssLast - rssFirst)));

    // Running again, the mirror gets the newest value of everything it missed.
    ::kill(pid_t(mirror->processId()), SIGCONT);
    QVERIFY(waitForEqual(30000));
    QByteArray log;
    QVERIFY2(
        waitUntil([&] { return (log += master->readAllStandardError()).contains("the mirror caught up"); },
                  5000),
        log.constData());
    QVERIFY2(log.contains("the mirror is slow ("), log.constData());
    QCOMPARE(mirror->state(), QProcess::Running);
}

// 16 connections that trickle their handshake kept the real master out: the cap of connections in
// their handshake refused it, and the 10 s check measured silence. Now a newcomer takes the oldest
// one's place, and the deadline counts from the connection.
void tst_PushMirror::heldAndTricklingHandshakesDoNotKeepTheMasterOut()
{
    QVERIFY(startRemoteNetwork());
    QProcess *mirror = startPushMirror(0);
    const quint16 port = ProcessFixture::waitForListening(mirror, mirrorListening());
    QVERIFY(port != 0);
    // A hello header announcing 100 bytes, trickled a byte at a time: never complete in the test.
    const QByteArray hello = frame(1, {}, 100);
    std::vector<std::unique_ptr<QTcpSocket>> held;
    for (int i = 0; i < 16; ++i) {
        held.push_back(std::make_unique<QTcpSocket>());
        held.back()->connectToHost(QHostAddress::LocalHost, port);
        QVERIFY(held.back()->waitForConnected(3000));
        held.back()->write(hello.left(1));
    }
    QTimer trickle;
    int sent = 1;
    connect(&trickle, &QTimer::timeout, this, [&] {
        if (sent >= hello.size())
            return;
        for (auto &s : held)
            if (s->state() == QAbstractSocket::ConnectedState)
                s->write(hello.mid(sent, 1));
        ++sent;
    });
    trickle.start(500);
    startPushMaster(port);
    QVERIFY(waitForServer(QStringLiteral("RunParams")));
    QVERIFY(writeMany(20, 5));
    QVERIFY(waitForEqual(15000));
    // However they trickle, all are closed once 10 s have passed since they connected.
    QVERIFY(waitUntil(
        [&] {
            return std::all_of(held.begin(), held.end(),
                               [](const auto &s) { return s->state() == QAbstractSocket::UnconnectedState; });
        },
        20000));
    const QByteArray log = mirror->readAllStandardError();
    QVERIFY2(log.contains("handshake not completed within 10 s of connecting"), log.constData());
    QVERIFY2(log.contains("still in its handshake when a newer connection needed its place"),
             log.constData());
}

// Without a secret, whoever said the master's name became the master, and the mirror listened on
// 0.0.0.0 by default. Now it listens on loopback by default, and elsewhere only with the secret (or
// when told --insecure).
void tst_PushMirror::noSecretMeansLoopbackOnly()
{
    QVERIFY(startRemoteNetwork());
    auto run = [&](const QString &listen, const QStringList &extra) {
        QProcess *p = m_fx->start(QStringLiteral("dialog-isserver"),
                                  QStringList{QStringLiteral("--name"), QStringLiteral("RunParams"),
                                              QStringLiteral("--control-server"), m_remoteAddress,
                                              QStringLiteral("--mirror-listen"), listen} +
                                      extra);
        p->setProcessChannelMode(QProcess::SeparateChannels);
        return p;
    };
    QProcess *refused = run(QStringLiteral("0.0.0.0:0"), {});
    QVERIFY(refused->waitForFinished(10000));
    QVERIFY(refused->exitCode() != 0);
    const QByteArray err = refused->readAllStandardError();
    QVERIFY2(err.contains("refusing to listen for the master on 0.0.0.0 without a shared secret"),
             err.constData());
    QProcess *open = run(QStringLiteral("0.0.0.0:0"), {QStringLiteral("--insecure")});
    QVERIFY(ProcessFixture::waitForListening(open, mirrorListening()) != 0);
    open->terminate();
    QVERIFY(open->waitForFinished(5000));
    QProcess *local = run(QStringLiteral("0"), {});
    QVERIFY(ProcessFixture::waitForListening(local, mirrorListening()) != 0);
    QByteArray said = local->readAllStandardError();
    QVERIFY2(said.contains("push mirror listening on 127.0.0.1:"), said.constData());
}

QTEST_GUILESS_MAIN(tst_PushMirror)
#include "tst_pushmirror.moc"
