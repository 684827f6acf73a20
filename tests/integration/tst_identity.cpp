// Frames are believed from the connection that may send them, not from the name a HELLO claims:
// a command written straight to a process's data port, a forged INFO_SERVICE or LOST_SENDER from
// any other connection, and a HELLO that names a connected process (its name and incarnation are
// public) are refused and logged, and change nothing. The attacker is a raw socket writing frames
// with the library's own encoders; the processes and the Control Server are real.
#include "processfixture.h"

#include "control_p.h"
#include "dialog/client.h"
#include "dialog/rc/staterecord.h"
#include "dialog/subscription.h"
#include "inbounddecoder_p.h"
#include "payload_p.h"

#include <QFile>
#include <QMutex>
#include <QSignalSpy>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTemporaryDir>
#include <QtTest>

using namespace dialog;
using namespace dialog::test;
using namespace dialog::wire_format;

namespace {
/// Every warning logged in this process, for the tests that wait for a refusal to be logged.
struct LogCapture
{
    static inline QMutex lock;
    static inline QStringList lines;
    static inline QtMessageHandler previous = nullptr;
    static void handler(QtMsgType type, const QMessageLogContext &context, const QString &msg)
    {
        {
            QMutexLocker l(&lock);
            lines.append(msg);
        }
        previous(type, context, msg);
    }
    static bool contains(const QString &text)
    {
        QMutexLocker l(&lock);
        return std::any_of(lines.cbegin(), lines.cend(), [&](const QString &s) { return s.contains(text); });
    }
    static void clear()
    {
        QMutexLocker l(&lock);
        lines.clear();
    }
};

QByteArray helloFrame(const QString &name, quint64 incarnation, quint16 port)
{
    wire::Hello h;
    h.set_name(ss(name));
    h.set_host("127.0.0.1");
    h.set_port(port);
    h.set_pid(1);
    h.set_incarnation(incarnation);
    return controlFrame(Type::Hello, h);
}

/// A process written by hand: it listens, connects to the Control Server as @p name, and collects
/// every frame anyone sends to it (the Control Server's connect-back included).
class RawProcess
{
public:
    explicit RawProcess(const QString &name) : m_name(name) { m_server.listen(QHostAddress::LocalHost, 0); }
    quint16 port() const { return m_server.serverPort(); }

    /// Connects to the Control Server at @p csPort and asks where @p request is.
    bool connect(quint16 csPort, const QString &request)
    {
        m_out.connectToHost(QHostAddress::LocalHost, csPort);
        if (!m_out.waitForConnected(5000))
            return false;
        wire::Connect c;
        c.set_name(ss(m_name));
        c.set_host("127.0.0.1");
        c.set_port(port());
        c.set_pid(2);
        c.set_incarnation(77);
        m_out.write(helloFrame(m_name, 77, port()) + controlFrame(Type::ConnectToControlServer, c) +
                    namesFrame(Type::RequestService, {request}));
        return m_out.flush() || m_out.bytesToWrite() == 0;
    }
    /// Reads what arrived; the first INFO_SERVICE for @p service, if any, in @p info.
    bool infoService(const QString &service, wire::InfoService *info)
    {
        while (QTcpSocket *s = m_server.nextPendingConnection()) {
            m_in.append(s);
            m_decoders.append(std::make_shared<InboundDecoder>(1 << 20));
        }
        for (qsizetype i = 0; i < m_in.size(); ++i)
            m_decoders[i]->feed(
                m_in[i]->readAll(), [&](Type type, quint8, QByteArrayView payload, QByteArray *) {
                    wire::InfoService is;
                    if (type == Type::InfoService && is.ParseFromArray(payload.data(), int(payload.size())) &&
                        qs(is.name()) == service && is.available())
                        m_info = is;
                    return true;
                });
        *info = m_info;
        return !m_info.name().empty();
    }

private:
    QString m_name;
    QTcpServer m_server;
    QTcpSocket m_out;
    QList<QTcpSocket *> m_in; // children of m_server
    QList<std::shared_ptr<InboundDecoder>> m_decoders;
    wire::InfoService m_info;
};

/// Reads @p s until a REFUSED arrives or it closes (bounded: 5 s); the REFUSED's what, or empty.
QByteArray refusal(QTcpSocket &s, QByteArray *reason)
{
    InboundDecoder d(1 << 20);
    QByteArray what;
    QElapsedTimer t;
    t.start();
    while (what.isEmpty() && t.elapsed() < 5000 && s.state() == QAbstractSocket::ConnectedState) {
        s.waitForReadyRead(100);
        d.feed(s.readAll(), [&](Type type, quint8, QByteArrayView payload, QByteArray *) {
            wire::Refused r;
            if (type == Type::Refused && r.ParseFromArray(payload.data(), int(payload.size()))) {
                what = QByteArray::fromStdString(r.what());
                *reason = QByteArray::fromStdString(r.reason());
            }
            return true;
        });
    }
    return what;
}
} // namespace

class tst_Identity : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void init();
    void cleanup();
    void commandWrittenToADataPortIsIgnored();
    void forgedInfoServiceAndLostSenderRedirectNothing();
    void helloNamingAConnectedProcessIsRefused();
    void reservedNamesAreRefusedToOtherProcesses();
    void slaveTakesTransitionsOnlyFromItsMaster();
    void serviceDataFromAnotherConnectionIsIgnored();
    void serviceDataFollowsItsProviderToANewConnection();

private:
    /// Where the connected process @p name listens (from the directory).
    quint16 dataPort(const QString &name)
    {
        return quint16(m_fx->processEntry(name).value(QStringLiteral("port")).toInt());
    }
    /// A raw connection to @p port that says it is the Control Server.
    bool posingAsControlServer(QTcpSocket &s, quint16 port)
    {
        s.connectToHost(QHostAddress::LocalHost, port);
        if (!s.waitForConnected(5000))
            return false;
        s.write(helloFrame(QStringLiteral("DIALOG.ControlServer"), 1, m_fx->port()));
        return true;
    }

    std::unique_ptr<ProcessFixture> m_fx;
    QTemporaryDir m_dir;
};

void tst_Identity::initTestCase()
{
    QVERIFY(m_dir.isValid());
    LogCapture::previous = qInstallMessageHandler(&LogCapture::handler);
}

void tst_Identity::init()
{
    LogCapture::clear();
    m_fx = std::make_unique<ProcessFixture>();
    QVERIFY(m_fx->startControlServer(
        {QStringLiteral("--audit-file"), m_dir.filePath(QStringLiteral("audit/controlserver.audit"))}));
}

void tst_Identity::cleanup()
{
    m_fx.reset();
}

void tst_Identity::commandWrittenToADataPortIsIgnored()
{
    Client victim(m_fx->clientOptions(QStringLiteral("Victim")));
    victim.registerCommand(QStringLiteral("Victim.Configure"));
    QSignalSpy commands(&victim, &Client::commandReceived);
    QVERIFY(victim.start());
    QTRY_COMPARE_WITH_TIMEOUT(victim.state(), Client::State::Connected, 10000);
    const quint16 port = dataPort(QStringLiteral("Victim"));
    QVERIFY(port != 0);

    QTcpSocket attacker;
    QVERIFY(posingAsControlServer(attacker, port));
    attacker.write(encodeCommandFrame("Victim.Configure", "RunControl", 0, "forged"));
    QVERIFY(attacker.waitForBytesWritten(5000));
    QVERIFY2(waitUntil([] { return LogCapture::contains(QStringLiteral("ignored COMMAND_MESSAGE")); }, 10000),
             "the victim did not log the command it refused");
    QCOMPARE(commands.size(), 0);

    // The Control Server's path still works, and is the only one that did.
    Client sender(m_fx->clientOptions(QStringLiteral("Sender")));
    QVERIFY(sender.start());
    QTRY_COMPARE_WITH_TIMEOUT(sender.state(), Client::State::Connected, 10000);
    sender.sendCommand(QStringLiteral("Victim.Configure"), "genuine");
    QTRY_COMPARE_WITH_TIMEOUT(commands.size(), 1, 10000);
    const auto c = commands.first().first().value<Command>();
    QCOMPARE(c.data(), QByteArray("genuine"));
    QCOMPARE(c.origin(), QStringLiteral("Sender"));
}

void tst_Identity::forgedInfoServiceAndLostSenderRedirectNothing()
{
    Client provider(m_fx->clientOptions(QStringLiteral("Provider")));
    Service *state = provider.publish(QStringLiteral("Provider.State"));
    state->update("genuine");
    QVERIFY(provider.start());
    Client victim(m_fx->clientOptions(QStringLiteral("Gui")));
    QVERIFY(victim.start());
    Subscription *sub = victim.subscribe(QStringLiteral("Provider.State"));
    QTRY_COMPARE_WITH_TIMEOUT(sub->lastMessage().data(), QByteArray("genuine"), 10000);
    const quint16 port = dataPort(QStringLiteral("Gui"));
    QVERIFY(port != 0);

    // Where the attacker wants the subscription to go.
    QTcpServer evil;
    QVERIFY(evil.listen(QHostAddress::LocalHost, 0));
    QTcpSocket attacker;
    QVERIFY(posingAsControlServer(attacker, port));
    wire::InfoService info;
    info.set_name("Provider.State");
    info.set_available(true);
    info.set_provider("Evil");
    info.set_host("127.0.0.1");
    info.set_port(evil.serverPort());
    info.set_incarnation(5);
    wire::LostProcess lost;
    lost.set_name("Provider");
    attacker.write(controlFrame(Type::InfoService, info) + controlFrame(Type::LostSender, lost));
    QVERIFY(attacker.waitForBytesWritten(5000));
    QVERIFY2(waitUntil([] { return LogCapture::contains(QStringLiteral("ignored INFO_SERVICE")); }, 10000),
             "the victim did not log the INFO_SERVICE it refused");
    QVERIFY2(waitUntil([] { return LogCapture::contains(QStringLiteral("(2 such frames)")); }, 10000),
             "the victim did not log the LOST_SENDER it refused");
    QVERIFY(expectNothingFor(
        300, [&] { return evil.hasPendingConnections() || sub->state() != Subscription::State::Active; },
        "the subscription was redirected or declared lost"));

    state->update("after");
    QTRY_COMPARE_WITH_TIMEOUT(sub->lastMessage().data(), QByteArray("after"), 10000);
    QVERIFY(!evil.hasPendingConnections());
}

void tst_Identity::helloNamingAConnectedProcessIsRefused()
{
    Client victim(m_fx->clientOptions(QStringLiteral("Victim")));
    victim.publish(QStringLiteral("Victim.State"))->update("on");
    victim.registerCommand(QStringLiteral("Victim.Go"));
    QSignalSpy commands(&victim, &Client::commandReceived);
    QVERIFY(victim.start());
    QTRY_COMPARE_WITH_TIMEOUT(victim.state(), Client::State::Connected, 10000);

    // The victim's incarnation is public: any subscriber is told it in INFO_SERVICE.
    RawProcess spy(QStringLiteral("Spy"));
    QVERIFY(spy.connect(m_fx->port(), QStringLiteral("Victim.State")));
    wire::InfoService info;
    QVERIFY(waitUntil([&] { return spy.infoService(QStringLiteral("Victim.State"), &info); }, 10000));
    QCOMPARE(info.provider(), std::string("Victim"));
    const quint64 incarnation = info.incarnation();

    // Frames on a connection whose HELLO names (Victim, its incarnation): a registration and a command.
    QTcpSocket attacker;
    attacker.connectToHost(QHostAddress::LocalHost, m_fx->port());
    QVERIFY(attacker.waitForConnected(5000));
    attacker.write(helloFrame(QStringLiteral("Victim"), incarnation, quint16(info.port())) +
                   namesFrame(Type::RegisterService, {QStringLiteral("Victim.Fake")}) +
                   encodeCommandFrame("Victim.Go", "Victim", 0, "forged"));
    QByteArray reason;
    QCOMPARE(refusal(attacker, &reason), QByteArray("session"));
    QVERIFY2(reason.contains("another connection"), reason.constData());

    // A CONNECT of the same name and incarnation without the victim's session is refused as well.
    QTcpSocket again;
    again.connectToHost(QHostAddress::LocalHost, m_fx->port());
    QVERIFY(again.waitForConnected(5000));
    wire::Connect c;
    c.set_name("Victim");
    c.set_host("127.0.0.1");
    c.set_port(info.port());
    c.set_incarnation(incarnation);
    again.write(helloFrame(QStringLiteral("Victim"), incarnation, quint16(info.port())) +
                controlFrame(Type::ConnectToControlServer, c));
    QCOMPARE(refusal(again, &reason), QByteArray("connect"));
    QVERIFY2(reason.contains("session"), reason.constData());

    const QJsonObject entry = m_fx->processEntry(QStringLiteral("Victim"));
    QCOMPARE(entry.value(QStringLiteral("services")).toArray().size(), 1);
    QCOMPARE(commands.size(), 0);
    QVERIFY(victim.state() == Client::State::Connected);
    // Nothing of the attacker's reached the audit trail in the victim's name.
    QFile audit(m_dir.filePath(QStringLiteral("audit/controlserver.audit")));
    if (audit.open(QIODevice::ReadOnly))
        QVERIFY2(!audit.readAll().contains("Victim.Go"), "the audit names the victim for a forged command");
}

void tst_Identity::reservedNamesAreRefusedToOtherProcesses()
{
    // A rogue that registers the master's names before the master starts.
    Client rogue(m_fx->clientOptions(QStringLiteral("Rogue")));
    rogue.publish(QStringLiteral("RunCtrl.Master.State"))->update("fake");
    rogue.publish(QStringLiteral("IS.RunParams"))->update("fake");
    rogue.registerCommand(QStringLiteral("RunCtrl.Master.Command"));
    QVERIFY(rogue.start());
    QTRY_VERIFY_WITH_TIMEOUT(rogue.errorString().contains(QStringLiteral("is reserved to")), 10000);

    Client master(m_fx->clientOptions(QStringLiteral("Master")));
    master.publish(QStringLiteral("RunCtrl.Master.State"))->update("real");
    master.registerCommand(QStringLiteral("RunCtrl.Master.Command"));
    QVERIFY(master.start());
    Client gui(m_fx->clientOptions(QStringLiteral("Gui")));
    QVERIFY(gui.start());
    Subscription *state = gui.subscribe(QStringLiteral("RunCtrl.Master.State"));
    QTRY_COMPARE_WITH_TIMEOUT(state->lastMessage().data(), QByteArray("real"), 10000);
    QCOMPARE(state->provider(), QStringLiteral("Master"));
    const QJsonObject entry = m_fx->processEntry(QStringLiteral("Rogue"));
    QVERIFY(entry.value(QStringLiteral("services")).toArray().isEmpty());
    QVERIFY(entry.value(QStringLiteral("commands")).toArray().isEmpty());
    QCOMPARE(m_fx->processEntry(QStringLiteral("Master")).value(QStringLiteral("commands")).toArray().size(),
             1);
    QVERIFY(master.state() == Client::State::Connected);
    const QByteArray log = m_fx->controlServerProcess()->readAllStandardError();
    QVERIFY2(log.contains("'RunCtrl.Master.State' is reserved to Master") &&
                 log.contains("'IS.RunParams' is reserved to IS.Server.RunParams") &&
                 log.contains("'RunCtrl.Master.Command' is reserved to Master"),
             log.constData());
}

void tst_Identity::slaveTakesTransitionsOnlyFromItsMaster()
{
    QProcess *slave = m_fx->start(QStringLiteral("dialog-slave"),
                                  {QStringLiteral("--kind"), QStringLiteral("control"),
                                   QStringLiteral("--name"), QStringLiteral("FE1"), QStringLiteral("--no-is"),
                                   QStringLiteral("--master"), QStringLiteral("Master")});
    QVERIFY(slave->state() == QProcess::Running);
    rc::TransitionRequest configure;
    configure.transition = rc::Transition::Configure;
    const auto ask = [&](Client &from) {
        Reply answer;
        bool answered = false;
        from.request(QStringLiteral("RunCtrl.FE1.State"), configure.toJson(), 10000, &from,
                     [&](const Reply &r) {
                         answer = r;
                         answered = true;
                     });
        return waitUntil([&] { return answered; }, 15000) ? answer : Reply();
    };
    // Behind the master's back: refused, with the reason.
    Client intruder(m_fx->clientOptions(QStringLiteral("Intruder")));
    QVERIFY(intruder.start());
    const Reply refused = ask(intruder);
    QVERIFY(!refused.isOk());
    QVERIFY2(refused.errorString().contains(
                 QStringLiteral("transitions are taken from Master only, not from Intruder")),
             qPrintable(refused.errorString()));
    // From the master: done.
    Client master(m_fx->clientOptions(QStringLiteral("Master")));
    QVERIFY(master.start());
    const Reply done = ask(master);
    QVERIFY2(done.isOk(), qPrintable(done.errorString()));
    QVERIFY(done.data().contains("Configured"));
}

void tst_Identity::serviceDataFromAnotherConnectionIsIgnored()
{
    Client master(m_fx->clientOptions(QStringLiteral("Master")));
    Service *state = master.publish(QStringLiteral("RunCtrl.Master.State"));
    state->update("real");
    QVERIFY(master.start());
    Client gui(m_fx->clientOptions(QStringLiteral("RunControl.GUI")));
    QVERIFY(gui.start());
    Subscription *sub = gui.subscribe(QStringLiteral("RunCtrl.Master.State"));
    QTRY_COMPARE_WITH_TIMEOUT(sub->lastMessage().data(), QByteArray("real"), 10000);

    // Everything the directory tells about the master is public: its name, address, incarnation.
    RawProcess spy(QStringLiteral("Spy"));
    QVERIFY(spy.connect(m_fx->port(), QStringLiteral("RunCtrl.Master.State")));
    wire::InfoService info;
    QVERIFY(waitUntil([&] { return spy.infoService(QStringLiteral("RunCtrl.Master.State"), &info); }, 10000));
    const quint16 port = dataPort(QStringLiteral("RunControl.GUI"));
    QVERIFY(port != 0);

    // A rogue that says it is the master (its incarnation too) writes states to the GUI's data port,
    // with sequence numbers ahead of the master's and a guessed acknowledgement.
    QTcpSocket rogue;
    rogue.connectToHost(QHostAddress::LocalHost, port);
    QVERIFY(rogue.waitForConnected(5000));
    QByteArray frames = helloFrame(QStringLiteral("Master"), info.incarnation(), quint16(info.port()));
    appendServiceFrame(frames, "RunCtrl.Master.State", 0, 0, QByteArray(16, 'x'));
    for (quint64 seq = 1000; seq < 1005; ++seq)
        appendServiceFrame(frames, "RunCtrl.Master.State", seq, 0, "FORGED");
    rogue.write(frames);
    QVERIFY(rogue.waitForBytesWritten(5000));
    QVERIFY2(waitUntil(
                 [] {
                     return LogCapture::contains(QStringLiteral("ignored SERVICE_MESSAGE for "
                                                                "RunCtrl.Master.State"));
                 },
                 10000),
             "the GUI did not log the data it refused");
    QVERIFY2(waitUntil([] { return LogCapture::contains(QStringLiteral("(4 such frames)")); }, 10000),
             "the GUI did not count the frames it refused");
    QVERIFY(expectNothingFor(
        300, [&] { return sub->lastMessage().data() != QByteArray("real"); },
        "the GUI took the rogue's state"));

    // The master's own values still arrive, and only they.
    state->update("after");
    QTRY_COMPARE_WITH_TIMEOUT(sub->lastMessage().data(), QByteArray("after"), 10000);
    QCOMPARE(sub->provider(), QStringLiteral("Master"));
}

void tst_Identity::serviceDataFollowsItsProviderToANewConnection()
{
    // The provider closes its idle connections at once: each value goes by a new connection, which
    // the subscriber believes once the provider has acknowledged the subscription on it again.
    ClientOptions o = m_fx->clientOptions(QStringLiteral("Provider"));
    o.idleTimeoutMs = 100;
    Client provider(o);
    Service *state = provider.publish(QStringLiteral("Provider.State"));
    state->update("0");
    QVERIFY(provider.start());
    Client gui(m_fx->clientOptions(QStringLiteral("Gui")));
    QVERIFY(gui.start());
    Subscription *sub = gui.subscribe(QStringLiteral("Provider.State"));
    QTRY_COMPARE_WITH_TIMEOUT(sub->lastMessage().data(), QByteArray("0"), 10000);
    const quint64 reconnectsBefore = provider.statistics().reconnects;
    for (int i = 1; i <= 3; ++i) {
        // Idle past the time-out (the scenario's pause): the provider's connection to the GUI closes.
        QVERIFY(expectNothingFor(
            500, [&] { return sub->lastMessage().data() != QByteArray::number(i - 1); },
            "a value arrived unsent"));
        state->update(QByteArray::number(i));
        QTRY_COMPARE_WITH_TIMEOUT(sub->lastMessage().data(), QByteArray::number(i), 10000);
    }
    // Each value did go by a connection opened again.
    QVERIFY2(provider.statistics().reconnects >= reconnectsBefore + 3,
             qPrintable(QString::number(provider.statistics().reconnects - reconnectsBefore)));
    QCOMPARE(sub->provider(), QStringLiteral("Provider"));
}

QTEST_GUILESS_MAIN(tst_Identity)
#include "tst_identity.moc"
