// The Control Server and the addresses processes advertise: a claim is checked against the
// connection it came by, every CONNECT is answered (on that connection when the claim cannot be
// used), connect-backs that fail are remembered instead of dialled again, and a refused process
// reports it and retries with back-off.
#include "processfixture.h"

#include "control_p.h"
#include "inbounddecoder_p.h"

#include "dialog/client.h"

#include <QSignalSpy>
#include <QTcpSocket>
#include <QtTest>

using namespace dialog;
using namespace dialog::test;

namespace {

/// A hand-made peer: one TCP connection to the Control Server on which it sends HELLO and CONNECT
/// claiming whatever the test wants, and reads what is written back.
class Claimant
{
public:
    bool open(quint16 csPort)
    {
        m_socket.connectToHost(QHostAddress::LocalHost, csPort);
        return m_socket.waitForConnected(5000);
    }
    void connectAs(const QString &name, const QString &host, quint16 port, quint64 incarnation = 77)
    {
        wire::Hello h;
        h.set_name(name.toStdString());
        h.set_host(host.toStdString());
        h.set_port(port);
        h.set_pid(1);
        h.set_incarnation(incarnation);
        wire::Connect c;
        c.set_name(name.toStdString());
        c.set_host(host.toStdString());
        c.set_port(port);
        c.set_pid(1);
        c.set_incarnation(incarnation);
        c.set_heartbeat_ms(200);
        if (!m_helloSent)
            m_socket.write(wire_format::controlFrame(wire_format::Type::Hello, h));
        m_helloSent = true;
        m_socket.write(wire_format::controlFrame(wire_format::Type::ConnectToControlServer, c));
        m_socket.flush();
    }
    /// The reasons of the REFUSED frames written back so far.
    QStringList refusals()
    {
        const QByteArray bytes = m_socket.readAll();
        m_decoder.feed(bytes, [this](wire_format::Type type, quint8, QByteArrayView payload, QByteArray *) {
            wire::Refused r;
            if (type == wire_format::Type::Refused && r.ParseFromArray(payload.data(), int(payload.size())))
                m_refusals << QString::fromStdString(r.what() + ": " + r.reason());
            return true;
        });
        return m_refusals;
    }

private:
    QTcpSocket m_socket;
    wire_format::InboundDecoder m_decoder;
    QStringList m_refusals;
    bool m_helloSent = false;
};

int countLines(const QByteArray &log, const QByteArray &what)
{
    return int(log.count(what));
}

} // namespace

class tst_ConnectBack : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void init();
    void cleanup();
    void unreachableClaimRefusedOnConnectionWithReason();
    void claimOfAnotherProcessAddressRefused();
    void nameInUseWithPortOneAnsweredWithoutDialling();
    void foreignAddressFromLoopbackRefusedClientBacksOff();
    void advertisedNameIsResolvedAndChecked();
    void claimOfTheControlServersOwnAddressRefused();

private:
    std::unique_ptr<ProcessFixture> m_fx;
};

void tst_ConnectBack::init()
{
    m_fx = std::make_unique<ProcessFixture>();
    QVERIFY(m_fx->startControlServer({QStringLiteral("--heartbeat-ms"), QStringLiteral("200")}));
}

void tst_ConnectBack::cleanup()
{
    m_fx.reset();
}

void tst_ConnectBack::unreachableClaimRefusedOnConnectionWithReason()
{
    // Nobody listens where it claims to: the connect-back fails, and the refusal comes back on the
    // connection the CONNECT came by, once, with the reason a user can act on.
    const quint16 closed = freePort();
    Claimant c;
    QVERIFY(c.open(m_fx->port()));
    c.connectAs(QStringLiteral("Unreachable"), QStringLiteral("127.0.0.1"), closed);
    QTRY_COMPARE_WITH_TIMEOUT(c.refusals().size(), 1, 10000);
    const QString why = c.refusals().first();
    QVERIFY2(
        why.startsWith(
            QStringLiteral("address: cannot connect back to 127.0.0.1:%1: connection refused").arg(closed)),
        qPrintable(why));
    QVERIFY2(why.contains(QLatin1String("check --advertise / firewall")), qPrintable(why));
    QVERIFY(m_fx->processEntry(QStringLiteral("Unreachable")).isEmpty());
    // Asked again at once: answered at once from what failed, not dialled again.
    c.connectAs(QStringLiteral("Unreachable"), QStringLiteral("127.0.0.1"), closed);
    QTRY_COMPARE_WITH_TIMEOUT(c.refusals().size(), 2, 5000);
    QCOMPARE(c.refusals().at(1), why);
}

void tst_ConnectBack::claimOfAnotherProcessAddressRefused()
{
    Client victim(m_fx->clientOptions(QStringLiteral("Victim")));
    QVERIFY(victim.start());
    QTRY_COMPARE_WITH_TIMEOUT(victim.state(), Client::State::Connected, 5000);
    Claimant c;
    QVERIFY(c.open(m_fx->port()));
    c.connectAs(QStringLiteral("Impostor"), QStringLiteral("127.0.0.1"), victim.port());
    QTRY_COMPARE_WITH_TIMEOUT(c.refusals().size(), 1, 5000);
    QVERIFY2(c.refusals().first().contains(QLatin1String("is where process Victim listens")),
             qPrintable(c.refusals().first()));
    QVERIFY(m_fx->processEntry(QStringLiteral("Impostor")).isEmpty());
    QCOMPARE(victim.state(), Client::State::Connected);
}

void tst_ConnectBack::nameInUseWithPortOneAnsweredWithoutDialling()
{
    // A CONNECT naming a live process, claiming port 1: answered on its connection (name in use);
    // the Control Server does not connect to port 1.
    Client live(m_fx->clientOptions(QStringLiteral("Live")));
    QVERIFY(live.start());
    QTRY_COMPARE_WITH_TIMEOUT(live.state(), Client::State::Connected, 5000);
    Claimant c;
    QVERIFY(c.open(m_fx->port()));
    c.connectAs(QStringLiteral("Live"), QStringLiteral("127.0.0.1"), 1);
    QTRY_COMPARE_WITH_TIMEOUT(c.refusals().size(), 1, 5000);
    QVERIFY2(c.refusals().first().startsWith(QLatin1String("connect: ")), qPrintable(c.refusals().first()));
    QByteArray log;
    QVERIFY2(expectNothingFor(
                 300,
                 [&] {
                     log += m_fx->controlServerProcess()->readAllStandardError();
                     return log.contains("127.0.0.1:1 ") || live.state() != Client::State::Connected;
                 },
                 "a connection to port 1, or the live process disturbed"),
             log.constData());
}

void tst_ConnectBack::foreignAddressFromLoopbackRefusedClientBacksOff()
{
    // A process on this host advertising another host's address (192.0.2.1, never dialled): it is
    // refused with the reason, reports it through errorOccurred, and asks again with back-off, not
    // at every retry interval.
    ClientOptions o = m_fx->clientOptions(QStringLiteral("Misadvertised"));
    o.host = QStringLiteral("192.0.2.1");
    o.heartbeatMs = 100;
    o.retryMs = 100;
    Client client(o);
    QSignalSpy errors(&client, &Client::errorOccurred);
    QVERIFY(client.start());
    QTRY_VERIFY_WITH_TIMEOUT(!errors.isEmpty(), 5000);
    QCOMPARE(errors.first().first().value<Status::Code>(), Status::Code::Broken);
    QVERIFY2(
        client.errorString().contains(QLatin1String("advertises 192.0.2.1 but connected from 127.0.0.1")),
        qPrintable(client.errorString()));
    QVERIFY2(client.errorString().contains(QLatin1String("next attempt within 2 s")),
             qPrintable(client.errorString()));
    QByteArray log;
    const auto refused = [&] {
        log += m_fx->controlServerProcess()->readAllStandardError();
        return countLines(log, "refused connection of Misadvertised");
    };
    // Connected, not merely not Unconnected: each attempt of the back-off is Connecting until its
    // refusal comes back, which a poll catches now and then (more often on a loaded machine).
    QVERIFY(expectNothingFor(
        2500,
        [&] { return client.state() == Client::State::Connected || refused() > 3; }, // 25 retry intervals
        "a refused process connected, or tried again faster than its back-off"));
    const int refusedTimes = refused();
    qInfo("refused %d times in 2.5 s with a 100 ms retry interval", refusedTimes);
    QVERIFY2(refusedTimes >= 2 && refusedTimes <= 3, qPrintable(QString::number(refusedTimes)));
    QVERIFY(errors.size() >= 2);
}

void tst_ConnectBack::advertisedNameIsResolvedAndChecked()
{
    // A name is resolved by the Control Server and checked like an address: "localhost" from this
    // host is accepted; a name that does not resolve is refused with the reason.
    ClientOptions o = m_fx->clientOptions(QStringLiteral("ByName"));
    o.host = QStringLiteral("localhost");
    Client byName(o);
    QVERIFY(byName.start());
    QTRY_COMPARE_WITH_TIMEOUT(byName.state(), Client::State::Connected, 10000);
    QCOMPARE(m_fx->processEntry(QStringLiteral("ByName")).value(QStringLiteral("host")).toString(),
             QStringLiteral("localhost"));

    Claimant c;
    QVERIFY(c.open(m_fx->port()));
    c.connectAs(QStringLiteral("Nowhere"), QStringLiteral("no-such-host.invalid"), 4000);
    QTRY_COMPARE_WITH_TIMEOUT(c.refusals().size(), 1, 15000);
    QVERIFY2(c.refusals().first().contains(
                 QLatin1String("cannot resolve the advertised host 'no-such-host.invalid'")),
             qPrintable(c.refusals().first()));
}

void tst_ConnectBack::claimOfTheControlServersOwnAddressRefused()
{
    // Dialled back, its own listener would answer: refused with the reason, before any dialling.
    Claimant c;
    QVERIFY(c.open(m_fx->port()));
    c.connectAs(QStringLiteral("Mirror"), QStringLiteral("127.0.0.1"), m_fx->port());
    QTRY_COMPARE_WITH_TIMEOUT(c.refusals().size(), 1, 5000);
    QCOMPARE(c.refusals().first(),
             QStringLiteral("address: 127.0.0.1:%1 is where the Control Server itself listens — advertise "
                            "the process's own port")
                 .arg(m_fx->port()));
    QVERIFY(m_fx->processEntry(QStringLiteral("Mirror")).isEmpty());
    // Still serving: a real process is admitted.
    Client after(m_fx->clientOptions(QStringLiteral("After")));
    QVERIFY(after.start());
    QTRY_COMPARE_WITH_TIMEOUT(after.state(), Client::State::Connected, 5000);
}

QTEST_GUILESS_MAIN(tst_ConnectBack)
#include "tst_connectback.moc"
