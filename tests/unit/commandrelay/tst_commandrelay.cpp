// The Control Server's command relay (controlserver/commandrelay.cpp) in one process: a
// Control Server and two transport endpoints on 127.0.0.1 that speak the protocol directly, so
// that the frame the target receives can be looked at byte for byte.
#include "../wireprocess.h"
#include "controlserver.h"

#include "control_p.h"
#include "payload_p.h"
#include "transport_p.h"

#include "waits.h"

#include <QtTest>

using namespace dialog;
using namespace dialog::net;
using namespace dialog::wire_format;

namespace {

constexpr int Timeout = 20000;

/// A process as the Control Server sees it: it listens, says HELLO and CONNECT, and records the
/// control frames and the commands it receives (as they came: a direct route sees them raw).
struct Process : test::WireProcess
{
    QMutex lock;
    QList<Inbound> commands; // guarded by lock (filled in a reader thread)

    bool start(const QString &name, quint64 incarnation)
    {
        transport.setDirectRoute([this](const Inbound &in) {
            QMutexLocker l(&lock);
            commands.append(in);
            return true;
        });
        return WireProcess::start(name, incarnation);
    }
    void connectTo(const Endpoint &server, const QStringList &commandNames)
    {
        const PeerInfo me = transport.identity();
        wire::Connect c;
        c.set_name(me.name.toStdString());
        c.set_host(me.endpoint.host.toStdString());
        c.set_port(me.endpoint.port);
        c.set_pid(me.pid);
        c.set_incarnation(me.incarnation);
        c.set_heartbeat_ms(60000);
        for (const QString &n : commandNames)
            c.add_commands(n.toStdString());
        transport.send(transport.outbox(server), controlFrame(Type::ConnectToControlServer, c));
    }
    qsizetype commandCount()
    {
        QMutexLocker l(&lock);
        return commands.size();
    }
};

QByteArray compressibleText(qsizetype size)
{
    QByteArray text;
    while (text.size() < size)
        text += "set channel " + QByteArray::number(text.size() % 89) + " threshold 12\n";
    text.truncate(size);
    return text;
}

/// A Control Server with two processes connected to it: "target", which registers the command
/// Configure, and "rc", which sends it.
struct Relay
{
    cs::ControlServer server{[] {
        cs::ServerOptions o;
        o.port = 0;
        return o;
    }()};
    Endpoint at;
    Process target, sender;
};

} // namespace

class tst_CommandRelay : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void commandRelayedAsSent_data();
    void commandRelayedAsSent();
    void routesFollowTheProcessesAndTheirCommands();

private:
    /// Starts @p r's server and processes (incarnations @p incarnation, + 1) and waits until both
    /// processes are connected; false (the failure recorded) if they are not.
    bool start(Relay &r, quint64 incarnation);
};

bool tst_CommandRelay::start(Relay &r, quint64 incarnation)
{
    [&] {
        QString error;
        QVERIFY2(r.server.start(&error), qPrintable(error));
        r.at = Endpoint{QStringLiteral("127.0.0.1"), r.server.port()};
        QVERIFY(r.target.start(QStringLiteral("target"), incarnation));
        QVERIFY(r.sender.start(QStringLiteral("rc"), incarnation + 1));
        r.target.connectTo(r.at, {QStringLiteral("Configure")});
        r.sender.connectTo(r.at, {});
        QTRY_VERIFY_WITH_TIMEOUT(r.target.received(Type::SuccessfullyConnected), Timeout);
        QTRY_VERIFY_WITH_TIMEOUT(r.sender.received(Type::SuccessfullyConnected), Timeout);
    }();
    return !QTest::currentTestFailed();
}

void tst_CommandRelay::commandRelayedAsSent_data()
{
    QTest::addColumn<qsizetype>("size");
    QTest::addColumn<int>("threshold");
    // Compressed by the sender below the Control Server's former 64 KiB threshold, and not
    // compressed above it: either way the target gets the sender's bytes and flags.
    QTest::newRow("10 KB compressed") << qsizetype(10000) << 1024;
    QTest::newRow("1 MB compressed") << qsizetype(1024 * 1024) << 1024;
    QTest::newRow("200 KB not compressed") << qsizetype(200 * 1024) << 0;
    QTest::newRow("empty") << qsizetype(0) << 0;
}

void tst_CommandRelay::commandRelayedAsSent()
{
    QFETCH(qsizetype, size);
    QFETCH(int, threshold);
    Relay r;
    QVERIFY(start(r, 11));
    Process &target = r.target, &sender = r.sender;
    QString error;

    const QByteArray text = compressibleText(size);
    quint8 flags = 0;
    const QByteArray prepared = prepareData(text, threshold, flags);
    QCOMPARE(bool(flags & Compressed), threshold > 0);
    sender.transport.send(sender.transport.outbox(r.at),
                          encodeCommandFrame("Configure", "ignored", flags, prepared));

    QTRY_COMPARE_WITH_TIMEOUT(target.commandCount(), 1, Timeout);
    QMutexLocker l(&target.lock);
    const Inbound &in = target.commands.first();
    QCOMPARE(in.name, QByteArray("Configure"));
    QCOMPARE(in.origin, QByteArray("rc")); // the Control Server names the sender
    QCOMPARE(in.flags, flags);
    QVERIFY(in.data == prepared);
    QByteArray unpacked = in.data;
    if (in.flags & Compressed)
        QVERIFY(decompress(in.data, unpacked, DefaultMaxMessageSize, &error));
    QVERIFY(unpacked == text);
}

// The reader threads forward commands with routes the Control Server keeps up to date as processes
// come, register commands and connect again: a command reaches exactly the processes registered for
// it at the time it is sent.
void tst_CommandRelay::routesFollowTheProcessesAndTheirCommands()
{
    Relay r;
    QVERIFY(start(r, 21));
    Process &target = r.target, &sender = r.sender;
    const auto send = [&] {
        sender.transport.send(sender.transport.outbox(r.at),
                              encodeCommandFrame("Configure", "ignored", 0, "go"));
    };
    send();
    QTRY_COMPARE_WITH_TIMEOUT(target.commandCount(), 1, Timeout);

    // Connected again (same incarnation) without the command: it no longer gets it.
    target.control.clear();
    target.connectTo(r.at, {});
    QTRY_VERIFY_WITH_TIMEOUT(target.received(Type::SuccessfullyConnected), Timeout);
    send();
    QVERIFY(dialog::test::expectNothingFor(
        300, [&] { return target.commandCount() != 1; },
        "a command relayed to a process that no longer registers it"));

    // Registered again: it does.
    wire::Names names;
    names.add_names("Configure");
    target.transport.send(target.transport.outbox(r.at), controlFrame(Type::RegisterCommand, names));
    QTRY_VERIFY_WITH_TIMEOUT((send(), target.commandCount() >= 2), Timeout); // sent until it arrives
}

QTEST_GUILESS_MAIN(tst_CommandRelay)
#include "tst_commandrelay.moc"
