// Integration tests of the Control Server, libdialog and the dialogctl tool: real binaries on loopback.
#include "statuscheck.h"
#include "processfixture.h"

#include "control_p.h"
#include "transport_p.h"

#include "dialog/client.h"
#include "dialog/directory.h"

#include <QRandomGenerator>
#include <QSignalSpy>
#include <QTcpSocket>
#include <QtTest>
#include <csignal>

using namespace dialog;
using namespace dialog::test;

namespace {
/// A process speaking the protocol by hand (raw transport, internal API): it listens, records the
/// types of the control frames it receives and sends what a test makes it send to the Control Server.
struct RawPeer
{
    net::Transport transport{net::TransportOptions{}};
    QObject sinkContext;
    QList<wire_format::Type> received;
    net::OutboxPtr controlServer;

    /// Listens on loopback as @p name / @p incarnation; the Control Server is on @p csPort.
    bool start(const QString &name, quint64 incarnation, quint16 csPort, QString *error)
    {
        transport.setControlSink(&sinkContext, [this](net::InboundBatch &b) {
            for (const net::Inbound &in : b)
                received.append(in.type);
        });
        if (!transport.listen(QHostAddress::LocalHost, 0, error))
            return false;
        net::PeerInfo self;
        self.name = name;
        self.endpoint = net::Endpoint{QStringLiteral("127.0.0.1"), transport.serverPort()};
        self.incarnation = incarnation;
        transport.setIdentity(self);
        controlServer = transport.outbox(net::Endpoint{QStringLiteral("127.0.0.1"), csPort});
        return true;
    }
    void send(const QByteArray &frame) { transport.send(controlServer, frame); }
};
} // namespace

class tst_ControlServer : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void init();
    void cleanup();

    void helpAndBadArguments();
    void subscribeBeforeProviderExists();
    void commandToThreeRegistrants();
    void duplicateServiceRefusedAndProcessExits();
    void duplicateServiceReportedWhenExitDisabled();
    void largeMessage16MiBArrivesIntact();
    void compressedMessageIsSmallerOnTheWire();
    void notConnectedSenderIgnoredAndTold();
    void lsJsonShowsWhatExists();
    void malformedFramesCloseOnlyThatConnection();
    void slowSubscriberKeepsMemoryBoundedAndDropsAreCounted();
    void idleSocketReopensWithoutLosingTheMessage();
    void getTimesOutWithReason();
    void invalidNamesAndOversizeMessagesRefusedAtTheSender();
    void statisticsTravelWithHeartbeats();
    void heartbeatWithoutStatisticsStillAccepted();
    void connectionsWithoutHelloTimedOutAndCapped();
    void duplicateProcessNameGivesUpInsteadOfRetryingForEver();
    void registrationsOverTheLimitRefusedWithReason();
    void fullDirectoryIsAskedAgainAndTheIsServerWaitsForRoom();
    void refusedServicesAreLoggedAtPowersOfTwo();
    void reservedRoomKeepsThePartitionsNamesAndNoProcessFillsTheDirectory();
    void commandsAndSubscriptionsOverTheLimitRefused();
    void directoryOverThePageSizeComesInPagesAndLostListStaysBounded();
    void sendExitStatusSaysDeliveredRefusedOrLost();
    void sendFloodEveryConfirmedSendIsReceived();

private:
    std::unique_ptr<ProcessFixture> m_fx;
};

void tst_ControlServer::init()
{
    m_fx = std::make_unique<ProcessFixture>();
    QVERIFY(m_fx->startControlServer());
}

void tst_ControlServer::cleanup()
{
    m_fx.reset(); // reaps every child
}

void tst_ControlServer::helpAndBadArguments()
{
    QByteArray out, err;
    QCOMPARE(m_fx->run(QStringLiteral("dialog-controlserver"), {QStringLiteral("--help")}, &out), 0);
    QVERIFY(out.contains("--port"));
    QCOMPARE(m_fx->run(QStringLiteral("dialog-controlserver"),
                       {QStringLiteral("--port"), QStringLiteral("nope")}, nullptr, &err),
             1);
    QVERIFY2(err.startsWith("dialog-controlserver: invalid --port"), err.constData());
    // The port is taken by the fixture's server: a clear error, not a hang.
    QCOMPARE(m_fx->run(QStringLiteral("dialog-controlserver"),
                       {QStringLiteral("--port"), QString::number(m_fx->port())}, nullptr, &err),
             1);
    QVERIFY2(err.contains("cannot listen"), err.constData());
    QCOMPARE(m_fx->run(QStringLiteral("dialogctl"), {QStringLiteral("frobnicate")}, nullptr, &err), 1);
    QVERIFY(err.contains("unknown verb"));
}

void tst_ControlServer::subscribeBeforeProviderExists()
{
    QProcess *get = m_fx->start(QStringLiteral("dialogctl"),
                                {QStringLiteral("get"), QStringLiteral("Late.Service"),
                                 QStringLiteral("--count"), QStringLiteral("1"), QStringLiteral("--json"),
                                 QStringLiteral("--timeout-ms"), QStringLiteral("20000")});
    // The request is queued by the Control Server before anyone provides the service.
    QTRY_VERIFY_WITH_TIMEOUT(m_fx->directory().value(QStringLiteral("processes")).toArray().size() == 1,
                             10000);
    m_fx->start(QStringLiteral("dialogctl"),
                {QStringLiteral("publish"), QStringLiteral("Late.Service"), QStringLiteral("--data"),
                 QStringLiteral("hello"), QStringLiteral("--name"), QStringLiteral("LateProvider")});
    QVERIFY(get->waitForFinished(20000));
    QCOMPARE(get->exitCode(), 0);
    const QJsonObject msg = QJsonDocument::fromJson(get->readAllStandardOutput()).object();
    QCOMPARE(msg.value(QStringLiteral("service")).toString(), QStringLiteral("Late.Service"));
    QCOMPARE(msg.value(QStringLiteral("data")).toString(), QStringLiteral("hello"));
}

void tst_ControlServer::commandToThreeRegistrants()
{
    QList<QProcess *> echoes;
    for (int i = 0; i < 3; ++i)
        echoes.append(
            m_fx->start(QStringLiteral("dialogctl"),
                        {QStringLiteral("echo"), QStringLiteral("--command"), QStringLiteral("Run.Start"),
                         QStringLiteral("--name"), QStringLiteral("Echo%1").arg(i)}));
    // A bystander that must not receive it.
    QProcess *other =
        m_fx->start(QStringLiteral("dialogctl"),
                    {QStringLiteral("echo"), QStringLiteral("--command"), QStringLiteral("Run.Stop"),
                     QStringLiteral("--name"), QStringLiteral("Bystander")});
    QTRY_VERIFY_WITH_TIMEOUT(
        m_fx->processEntry(QStringLiteral("Echo2")).value(QStringLiteral("commands")).toArray().size() == 1 &&
            m_fx->processEntry(QStringLiteral("Echo0")).value(QStringLiteral("commands")).toArray().size() ==
                1 &&
            m_fx->processEntry(QStringLiteral("Echo1")).value(QStringLiteral("commands")).toArray().size() ==
                1,
        10000);
    QByteArray err;
    QCOMPARE(m_fx->run(QStringLiteral("dialogctl"),
                       {QStringLiteral("send"), QStringLiteral("Run.Start"), QStringLiteral("run 42")},
                       nullptr, &err),
             0);
    for (QProcess *e : echoes) {
        QTRY_VERIFY_WITH_TIMEOUT(e->bytesAvailable() > 0, 5000);
        const QByteArray line = e->readAllStandardOutput();
        QVERIFY2(line.startsWith("Run.Start from dialog-send-") && line.trimmed().endsWith(": run 42"),
                 line.constData());
    }
    QVERIFY(expectNothingFor(
        300, [other] { return other->bytesAvailable() > 0; },
        "a command relayed to a process that did not register it"));
}

void tst_ControlServer::duplicateServiceRefusedAndProcessExits()
{
    m_fx->start(QStringLiteral("dialogctl"), {QStringLiteral("publish"), QStringLiteral("Unique.Service"),
                                              QStringLiteral("--name"), QStringLiteral("FirstOwner")});
    QTRY_VERIFY_WITH_TIMEOUT(
        m_fx->processEntry(QStringLiteral("FirstOwner")).value(QStringLiteral("services")).toArray().size() ==
            1,
        10000);
    QByteArray err;
    const int rc = m_fx->run(QStringLiteral("dialogctl"),
                             {QStringLiteral("publish"), QStringLiteral("Unique.Service"),
                              QStringLiteral("--name"), QStringLiteral("Intruder")},
                             nullptr, &err, 10000);
    QVERIFY2(rc != 0 && rc != -1, qPrintable(QStringLiteral("rc %1").arg(rc)));
    QVERIFY2(err.contains("Unique.Service") && err.contains("already provided by FirstOwner"),
             err.constData());
    const QJsonObject owner = m_fx->processEntry(QStringLiteral("FirstOwner"));
    QCOMPARE(owner.value(QStringLiteral("services")).toArray().first().toString(),
             QStringLiteral("Unique.Service"));
}

void tst_ControlServer::duplicateServiceReportedWhenExitDisabled()
{
    Client first(m_fx->clientOptions(QStringLiteral("First")));
    first.publish(QStringLiteral("Shared.Name"))->update("a");
    QVERIFY(first.start());
    QTRY_COMPARE_WITH_TIMEOUT(first.state(), Client::State::Connected, 5000);
    Client second(m_fx->clientOptions(QStringLiteral("Second")));
    QSignalSpy errors(&second, &Client::errorOccurred);
    second.publish(QStringLiteral("Shared.Name"));
    QVERIFY(second.start());
    QTRY_COMPARE_WITH_TIMEOUT(errors.size(), 1, 5000);
    QCOMPARE(errors.first().first().value<Client::Error>(), Client::Error::ServiceRefused);
    QVERIFY(second.errorString().contains(QStringLiteral("already provided by First")));
}

namespace {
QByteArray randomBytes(qsizetype n)
{
    QByteArray b(n, Qt::Uninitialized);
    QRandomGenerator gen(42);
    gen.fillRange(reinterpret_cast<quint32 *>(b.data()), int(n / 4));
    return b;
}
} // namespace

void tst_ControlServer::largeMessage16MiBArrivesIntact()
{
    const QByteArray big = randomBytes(16 * 1024 * 1024);
    Client provider(m_fx->clientOptions(QStringLiteral("BigProvider")));
    Service *svc = provider.publish(QStringLiteral("Big.Data"));
    QVERIFY(provider.start());
    Client subscriber(m_fx->clientOptions(QStringLiteral("BigSubscriber")));
    QVERIFY(subscriber.start());
    Subscription *sub = subscriber.subscribe(QStringLiteral("Big.Data"));
    QSignalSpy spy(sub, &Subscription::messageReceived);
    QTRY_COMPARE_WITH_TIMEOUT(svc->subscriberCount(), 1, 10000);
    // A first small value received: the connection to the subscriber is open and its queue empty
    // (on a loaded machine the subscription's acknowledgement may still wait in it, and a value
    // that does not fit beside it is dropped for now, as below).
    QVERIFY(svc->update(QByteArray("first")));
    QTRY_COMPARE_WITH_TIMEOUT(spy.size(), 1, 10000);
    QVERIFY(svc->update(big));
    // The 16 MiB message fills the 8 MiB queue: this update is dropped for now (Drop policy)...
    QVERIFY(!svc->update(QByteArray("small after big")));
    QCOMPARE(svc->droppedCount(), 1u);
    // ...and still arrives: once the queue drains, the subscriber is sent the latest value.
    QTRY_COMPARE_WITH_TIMEOUT(spy.size(), 3, 20000);
    const Message m = spy.at(1).first().value<Message>();
    QCOMPARE(m.data().size(), big.size());
    QVERIFY(m.data() == big);
    QCOMPARE(spy.at(2).first().value<Message>().data(), QByteArray("small after big"));
    QCOMPARE(sub->lostCount(), 0u);
}

void tst_ControlServer::compressedMessageIsSmallerOnTheWire()
{
    QByteArray text;
    while (text.size() < 4 * 1024 * 1024)
        text += "event 1234 spill 7 run 42 status OK; ";
    Client provider(m_fx->clientOptions(QStringLiteral("ZProvider")));
    Service *svc = provider.publish(QStringLiteral("Z.Data"));
    QVERIFY(provider.start());
    Client subscriber(m_fx->clientOptions(QStringLiteral("ZSubscriber")));
    QVERIFY(subscriber.start());
    Subscription *sub = subscriber.subscribe(QStringLiteral("Z.Data"));
    QSignalSpy spy(sub, &Subscription::messageReceived);
    QTRY_COMPARE_WITH_TIMEOUT(svc->subscriberCount(), 1, 10000);
    const quint64 before = subscriber.statistics().bytesIn;
    QVERIFY(svc->update(text));
    QTRY_COMPARE_WITH_TIMEOUT(spy.size(), 1, 10000);
    QVERIFY(spy.first().first().value<Message>().data() == text);
    const quint64 onWire = subscriber.statistics().bytesIn - before;
    QVERIFY2(onWire < quint64(text.size()) / 10,
             qPrintable(QStringLiteral("%1 bytes on the wire").arg(onWire)));
}

void tst_ControlServer::notConnectedSenderIgnoredAndTold()
{
    // A process speaking the protocol without CONNECT.
    RawPeer raw;
    QString error;
    QVERIFY2(raw.start(QStringLiteral("Intruder"), 7, m_fx->port(), &error), qPrintable(error));
    raw.send(wire_format::namesFrame(wire_format::Type::RegisterService, {QStringLiteral("Stolen.Service")}));
    QTRY_VERIFY_WITH_TIMEOUT(raw.received.contains(wire_format::Type::ConnectionLost), 5000);
    const QJsonArray procs = m_fx->directory().value(QStringLiteral("processes")).toArray();
    for (const QJsonValue &v : procs) {
        QVERIFY(v.toObject().value(QStringLiteral("name")).toString() != QLatin1String("Intruder"));
        QVERIFY(!v.toObject()
                     .value(QStringLiteral("services"))
                     .toArray()
                     .contains(QStringLiteral("Stolen.Service")));
    }
}

void tst_ControlServer::lsJsonShowsWhatExists()
{
    m_fx->start(QStringLiteral("dialogctl"), {QStringLiteral("publish"), QStringLiteral("Ls.A"),
                                              QStringLiteral("--name"), QStringLiteral("ProcA")});
    m_fx->start(QStringLiteral("dialogctl"),
                {QStringLiteral("echo"), QStringLiteral("--command"), QStringLiteral("Ls.C"),
                 QStringLiteral("--name"), QStringLiteral("ProcB")});
    Client c(m_fx->clientOptions(QStringLiteral("ProcC")));
    c.subscribe(QStringLiteral("Ls.A"));
    QVERIFY(c.start());
    QJsonObject a, b, cc;
    QTRY_VERIFY_WITH_TIMEOUT((a = m_fx->processEntry(QStringLiteral("ProcA")),
                              b = m_fx->processEntry(QStringLiteral("ProcB")),
                              cc = m_fx->processEntry(QStringLiteral("ProcC")),
                              !a.isEmpty() && !b.isEmpty() && !cc.isEmpty() &&
                                  !cc.value(QStringLiteral("subscriptions")).toArray().isEmpty() &&
                                  !b.value(QStringLiteral("commands")).toArray().isEmpty()),
                             10000);
    QCOMPARE(a.value(QStringLiteral("services")).toArray(), QJsonArray{QStringLiteral("Ls.A")});
    QCOMPARE(b.value(QStringLiteral("commands")).toArray(), QJsonArray{QStringLiteral("Ls.C")});
    QCOMPARE(cc.value(QStringLiteral("subscriptions")).toArray(), QJsonArray{QStringLiteral("Ls.A")});
    QCOMPARE(cc.value(QStringLiteral("pid")).toInteger(), QCoreApplication::applicationPid());
    QCOMPARE(cc.value(QStringLiteral("host")).toString(), QStringLiteral("127.0.0.1"));
    QCOMPARE(cc.value(QStringLiteral("port")).toInt(), int(c.port()));
    // The human table shows the same.
    QByteArray out;
    QCOMPARE(m_fx->run(QStringLiteral("dialogctl"), {QStringLiteral("ls")}, &out), 0);
    QVERIFY2(out.contains("ProcA") && out.contains("provides   Ls.A") && out.contains("command    Ls.C"),
             out.constData());
}

void tst_ControlServer::malformedFramesCloseOnlyThatConnection()
{
    const QList<QByteArray> garbage{
        QByteArray("GET / HTTP/1.0\r\n\r\n"),
        // HELLO header with an absurd length (2 GiB).
        QByteArray::fromHex("a1d1"
                            "01"
                            "01"
                            "00"
                            "000000"
                            "00000080"),
        // Unknown protocol version.
        QByteArray::fromHex("a1d1"
                            "09"
                            "01"
                            "00"
                            "000000"
                            "00000000"),
    };
    for (const QByteArray &g : garbage) {
        QTcpSocket s;
        s.connectToHost(QHostAddress::LocalHost, m_fx->port());
        QVERIFY(s.waitForConnected(3000));
        s.write(g);
        QVERIFY(s.waitForDisconnected(5000)); // the server closed it
    }
    // A client process receiving garbage on its own port reports it and keeps working.
    Client c(m_fx->clientOptions(QStringLiteral("Victim")));
    Service *svc = c.publish(QStringLiteral("Victim.State"));
    QVERIFY(c.start());
    QSignalSpy errors(&c, &Client::errorOccurred);
    {
        QTcpSocket s;
        s.connectToHost(QHostAddress::LocalHost, c.port());
        QVERIFY(s.waitForConnected(3000));
        s.write(QByteArray(64, '\xee'));
        QVERIFY(s.waitForDisconnected(5000));
    }
    QTRY_COMPARE_WITH_TIMEOUT(errors.size(), 1, 5000);
    QCOMPARE(errors.first().first().value<Client::Error>(), Client::Error::ProtocolError);
    svc->update("still alive");
    QByteArray out;
    QCOMPARE(m_fx->run(QStringLiteral("dialogctl"),
                       {QStringLiteral("get"), QStringLiteral("Victim.State"), QStringLiteral("--count"),
                        QStringLiteral("1"), QStringLiteral("--timeout-ms"), QStringLiteral("10000")},
                       &out),
             0);
    QVERIFY2(out.contains("still alive"), out.constData());
}

void tst_ControlServer::slowSubscriberKeepsMemoryBoundedAndDropsAreCounted()
{
    ClientOptions o = m_fx->clientOptions(QStringLiteral("FastProvider"));
    o.maxQueueBytes = 1024 * 1024;
    Client provider(o);
    Service *svc = provider.publish(QStringLiteral("Fast.Data"));
    QVERIFY(provider.start());
    QSignalSpy dropped(svc, &Service::messagesDropped);
    QProcess *slow =
        m_fx->start(QStringLiteral("dialogctl"), {QStringLiteral("get"), QStringLiteral("Fast.Data")});
    QTRY_COMPARE_WITH_TIMEOUT(svc->subscriberCount(), 1, 10000);
    ::kill(pid_t(slow->processId()), SIGSTOP); // a subscriber that stops reading
    const QByteArray chunk = randomBytes(64 * 1024);
    qint64 maxQueued = 0;
    for (int i = 0; i < 4000; ++i) { // 250 MiB offered
        svc->update(chunk);
        if (i % 100 == 0) {
            QCoreApplication::processEvents();
            maxQueued = qMax(maxQueued, provider.statistics().queuedBytes);
        }
    }
    QVERIFY2(svc->droppedCount() > 0, "a stopped subscriber must cause counted drops");
    QVERIFY2(maxQueued <= o.maxQueueBytes + 2 * chunk.size(), qPrintable(QString::number(maxQueued)));
    QTRY_VERIFY_WITH_TIMEOUT(!dropped.isEmpty(), 2000);
    ::kill(pid_t(slow->processId()), SIGCONT);
}

void tst_ControlServer::idleSocketReopensWithoutLosingTheMessage()
{
    ClientOptions o = m_fx->clientOptions(QStringLiteral("IdleProvider"));
    o.idleTimeoutMs = 200;
    Client provider(o);
    Service *svc = provider.publish(QStringLiteral("Idle.Data"));
    QVERIFY(provider.start());
    Client subscriber(m_fx->clientOptions(QStringLiteral("IdleSubscriber")));
    QVERIFY(subscriber.start());
    Subscription *sub = subscriber.subscribe(QStringLiteral("Idle.Data"));
    QSignalSpy spy(sub, &Subscription::messageReceived);
    QTRY_COMPARE_WITH_TIMEOUT(svc->subscriberCount(), 1, 10000);
    svc->update("one");
    QTRY_COMPARE_WITH_TIMEOUT(spy.size(), 1, 5000);
    const quint64 opened = provider.statistics().reconnects;
    // The socket to the subscriber idles out (200 ms). Time must pass: the statistics cannot tell
    // this socket's close from that of the one to the Control Server, which idles out as well.
    letTimePass(800, "the idle time-out (200 ms) of the socket to the subscriber runs out");
    svc->update("two");
    QTRY_COMPARE_WITH_TIMEOUT(spy.size(), 2, 5000);
    QCOMPARE(spy.at(1).first().value<Message>().data(), QByteArray("two"));
    QVERIFY2(provider.statistics().reconnects > opened,
             "the idle socket should have been closed and reopened");
    QCOMPARE(sub->lostCount(), 0u);
}

void tst_ControlServer::getTimesOutWithReason()
{
    QByteArray err;
    QCOMPARE(m_fx->run(QStringLiteral("dialogctl"),
                       {QStringLiteral("get"), QStringLiteral("Nobody.Provides"), QStringLiteral("--count"),
                        QStringLiteral("1"), QStringLiteral("--timeout-ms"), QStringLiteral("700")},
                       nullptr, &err),
             1);
    QVERIFY2(err.contains("0 of 1 update(s) of 'Nobody.Provides'") && err.contains("waiting"),
             err.constData());
}

void tst_ControlServer::invalidNamesAndOversizeMessagesRefusedAtTheSender()
{
    ClientOptions o = m_fx->clientOptions(QStringLiteral("Careful"));
    o.maxMessageSize = 1024 * 1024;
    Client c(o);
    QSignalSpy errors(&c, &Client::errorOccurred);
    QCOMPARE(c.publish(QString()), nullptr);
    QCOMPARE(c.publish(QString(1025, QLatin1Char('x'))), nullptr);
    QCOMPARE(c.subscribe(QString()), nullptr);
    c.registerCommand(QString());
    QCOMPARE(errors.size(), 4);
    for (const auto &e : std::as_const(errors))
        QCOMPARE(e.first().value<Client::Error>(), Client::Error::InvalidName);
    QVERIFY(Client::isValidName(QString(1024, QLatin1Char('x'))));

    Service *svc = c.publish(QStringLiteral("Careful.Data"));
    QVERIFY(svc);
    QVERIFY(c.start());
    Client sub(m_fx->clientOptions(QStringLiteral("CarefulReader")));
    QVERIFY(sub.start());
    Subscription *s = sub.subscribe(QStringLiteral("Careful.Data"));
    QSignalSpy received(s, &Subscription::messageReceived);
    QSignalSpy readerErrors(&sub, &Client::errorOccurred);
    QTRY_COMPARE_WITH_TIMEOUT(svc->subscriberCount(), 1, 10000);
    QVERIFY(!svc->update(QByteArray(2 * 1024 * 1024, 'x'))); // refused here, never sent
    QVERIFY(svc->update("fits"));
    QTRY_COMPARE_WITH_TIMEOUT(received.size(), 1, 5000);
    QCOMPARE(received.first().first().value<Message>().data(), QByteArray("fits"));
    QCOMPARE(readerErrors.size(), 0); // no connection was closed for a protocol error
    QTRY_COMPARE_WITH_TIMEOUT(c.state(), Client::State::Connected, 5000);
    QVERIFY(!c.sendCommand(QStringLiteral("Careful.Cmd"), QByteArray(2 * 1024 * 1024, 'y')));
    QCOMPARE(c.error(), Client::Error::MessageTooLarge);
}

namespace {
/// The process entry named @p name in a DIALOG.Statistics snapshot (empty if absent).
QJsonObject statisticsOf(const QByteArray &json, const QString &name)
{
    const QJsonArray procs =
        QJsonDocument::fromJson(json).object().value(QStringLiteral("processes")).toArray();
    for (const QJsonValue &v : procs)
        if (v.toObject().value(QStringLiteral("name")).toString() == name)
            return v.toObject();
    return {};
}
} // namespace

void tst_ControlServer::statisticsTravelWithHeartbeats()
{
    // A publisher's communication figures reach another process through the Control Server.
    ClientOptions po = m_fx->clientOptions(QStringLiteral("Counted"));
    po.heartbeatMs = 100;
    auto pub = std::make_unique<Client>(po);
    Service *svc = pub->publish(QStringLiteral("Counted.Data"));
    QVERIFY(pub->start());
    ClientOptions wo = m_fx->clientOptions(QStringLiteral("Watcher"));
    wo.heartbeatMs = 100;
    Client watcher(wo);
    int received = 0;
    watcher.subscribe(QStringLiteral("Counted.Data"), &watcher, [&](const Message &) { ++received; });
    QByteArray latest;
    QList<qint64> stamps; // when the Control Server made each snapshot (its own clock)
    watcher.subscribe(QStringLiteral("DIALOG.Statistics"), &watcher, [&](const Message &m) {
        latest = m.data();
        if (StatisticsSnapshot s; StatisticsSnapshot::fromJson(m.data(), &s).isOk())
            stamps << s.timeMs;
    });
    QVERIFY(watcher.start());
    // The subscriber is known once the first update reaches it.
    QTRY_VERIFY_WITH_TIMEOUT((svc->update(QByteArray(100, 'x')), received > 0), 10000);
    constexpr int N = 200;
    const int before = received;
    for (int i = 0; i < N; ++i)
        svc->update(QByteArray(100, 'y'));
    QTRY_VERIFY_WITH_TIMEOUT(received >= before + N, 10000);
    const quint64 sentOut = pub->statistics().messagesOut;
    QVERIFY(sentOut >= N);
    // Figures taken after the N messages were written arrive within a heartbeat and a publication.
    QTRY_VERIFY_WITH_TIMEOUT(
        statisticsOf(latest, QStringLiteral("Counted")).value(QStringLiteral("messages_out")).toDouble() >=
            double(sentOut),
        5000);
    const QJsonObject c = statisticsOf(latest, QStringLiteral("Counted"));
    QVERIFY(c.value(QStringLiteral("bytes_out")).toDouble() >= N * 100.0);
    QVERIFY(c.value(QStringLiteral("messages_in")).toDouble() > 0); // the Control Server's answers
    QCOMPARE(c.value(QStringLiteral("dropped")).toDouble(), 0.0);
    QVERIFY(c.value(QStringLiteral("outgoing_connections")).toInt() >= 2); // Control Server, Watcher
    QVERIFY(c.value(QStringLiteral("at_ms")).toInteger() > 0);
    QVERIFY(!statisticsOf(latest, QStringLiteral("Watcher")).isEmpty());
    // Published at most once per interval however many heartbeats arrive (two processes at 10/s):
    // the snapshots' own stamps, taken by the Control Server, are an interval apart (less the 5 % a
    // coarse timer may fire early). A loaded machine only makes the gaps longer.
    constexpr qint64 IntervalMs = 1000; // the Control Server's statistics interval
    const qsizetype first = stamps.size();
    QTRY_VERIFY_WITH_TIMEOUT(stamps.size() - first >= 3, 10000);
    for (qsizetype i = first + 1; i < stamps.size(); ++i)
        QVERIFY2(stamps.at(i) - stamps.at(i - 1) >= IntervalMs * 95 / 100,
                 qPrintable(QStringLiteral("snapshots %1 ms apart").arg(stamps.at(i) - stamps.at(i - 1))));
    // A process that leaves leaves the snapshot.
    pub.reset();
    QTRY_VERIFY_WITH_TIMEOUT(statisticsOf(latest, QStringLiteral("Counted")).isEmpty(), 5000);
}

void tst_ControlServer::heartbeatWithoutStatisticsStillAccepted()
{
    // A process of an older release sends bare heartbeats: it stays connected and is simply absent
    // from DIALOG.Statistics.
    RawPeer raw;
    QString error;
    QVERIFY2(raw.start(QStringLiteral("OldRelease"), 11, m_fx->port(), &error), qPrintable(error));
    wire::Connect c;
    c.set_name("OldRelease");
    c.set_host("127.0.0.1");
    c.set_port(raw.transport.serverPort());
    c.set_pid(1);
    c.set_incarnation(11);
    c.set_heartbeat_ms(200);
    raw.send(wire_format::controlFrame(wire_format::Type::ConnectToControlServer, c));
    QTRY_VERIFY_WITH_TIMEOUT(raw.received.contains(wire_format::Type::SuccessfullyConnected), 5000);

    ClientOptions wo = m_fx->clientOptions(QStringLiteral("Watcher"));
    wo.heartbeatMs = 100;
    Client watcher(wo);
    QByteArray latest;
    watcher.subscribe(QStringLiteral("DIALOG.Statistics"), &watcher,
                      [&](const Message &m) { latest = m.data(); });
    QVERIFY(watcher.start());
    QElapsedTimer t;
    t.start();
    int answers = 0;
    while (t.elapsed() < 1500) { // several heartbeat intervals: it would be lost after three
        wire::Heartbeat hb;
        hb.set_incarnation(11);
        hb.set_sequence(quint64(t.elapsed()));
        raw.send(wire_format::controlFrame(wire_format::Type::Heartbeat, hb));
        letTimePass(100, "the heartbeat interval: time must pass for the process to count as lost");
        answers = int(raw.received.count(wire_format::Type::Heartbeat));
    }
    QVERIFY(answers >= 5);
    QVERIFY(!m_fx->processEntry(QStringLiteral("OldRelease")).isEmpty());
    QTRY_VERIFY_WITH_TIMEOUT(!statisticsOf(latest, QStringLiteral("Watcher")).isEmpty(), 5000);
    QVERIFY(statisticsOf(latest, QStringLiteral("OldRelease")).isEmpty());
}

// Connections that never sent HELLO used to be kept for ever, without a cap (8,800 held by one
// attacker); now they are capped per address (past the cap the oldest makes room, so that they
// cannot lock out that address's real processes) and closed after the handshake time-out.
void tst_ControlServer::connectionsWithoutHelloTimedOutAndCapped()
{
    ProcessFixture fx;
    QVERIFY(fx.startControlServer({QStringLiteral("--handshake-timeout-ms"), QStringLiteral("3000"),
                                   QStringLiteral("--max-handshaking-per-address"), QStringLiteral("3")}));
    std::vector<std::unique_ptr<QTcpSocket>> silent;
    for (int i = 0; i < 3; ++i) {
        silent.push_back(std::make_unique<QTcpSocket>());
        silent.back()->connectToHost(QHostAddress::LocalHost, fx.port());
        QVERIFY(silent.back()->waitForConnected(3000));
    }
    // Over the per-address cap: the oldest is closed at once, the newcomer and the others wait.
    QTcpSocket over;
    over.connectToHost(QHostAddress::LocalHost, fx.port());
    QVERIFY(over.waitForConnected(3000));
    QVERIFY(silent.front()->waitForDisconnected(5000));
    QCOMPARE(over.state(), QAbstractSocket::ConnectedState);
    QCOMPARE(silent.back()->state(), QAbstractSocket::ConnectedState);
    // Another address is not held back by this one's share.
    {
        QTcpSocket other;
        QVERIFY(other.bind(QHostAddress(QStringLiteral("127.0.0.2"))));
        other.connectToHost(QHostAddress::LocalHost, fx.port());
        QVERIFY(other.waitForConnected(3000));
        QVERIFY(!other.waitForDisconnected(300));
    }
    // The silent ones are closed after the time-out.
    for (auto &s : silent)
        QVERIFY(s->state() == QAbstractSocket::UnconnectedState || s->waitForDisconnected(5000));
    // Room again: a real process registers and is listed.
    Client c(fx.clientOptions(QStringLiteral("AfterFlood")));
    c.publish(QStringLiteral("AfterFlood.State"));
    QVERIFY(c.start());
    QByteArray out;
    QCOMPARE(fx.run(QStringLiteral("dialogctl"), {QStringLiteral("ls")}, &out), 0);
    QVERIFY2(out.contains("AfterFlood.State"), out.constData());
}

// A process refused for its name used to ask again every heartbeat for ever, and the Control Server
// logged each refusal. Now it backs off and, with exitOnRefusal (the tools), exits with the reason.
void tst_ControlServer::duplicateProcessNameGivesUpInsteadOfRetryingForEver()
{
    m_fx->start(QStringLiteral("dialogctl"), {QStringLiteral("publish"), QStringLiteral("Held.Service"),
                                              QStringLiteral("--name"), QStringLiteral("TakenName")});
    QTRY_VERIFY_WITH_TIMEOUT(!m_fx->processEntry(QStringLiteral("TakenName")).isEmpty(), 10000);
    QByteArray err;
    const int rc =
        m_fx->run(QStringLiteral("dialogctl"),
                  {QStringLiteral("publish"), QStringLiteral("Other.Service"), QStringLiteral("--name"),
                   QStringLiteral("TakenName"), QStringLiteral("--heartbeat-ms"), QStringLiteral("200")},
                  nullptr, &err, 15000);
    QCOMPARE(rc, 1);
    QVERIFY2(err.contains("TakenName") && err.contains("refused") && err.contains("3 times"),
             err.constData());
    // The holder is untouched; the server said it in two lines (first and second refusal), not three.
    QCOMPARE(
        m_fx->processEntry(QStringLiteral("TakenName")).value(QStringLiteral("services")).toArray().size(),
        1);
    QProcess *cs = m_fx->controlServerProcess();
    cs->setReadChannel(QProcess::StandardError);
    QByteArray log;
    QTRY_COMPARE_WITH_TIMEOUT((log += cs->readAll()).count("refused connection of TakenName"), 2, 5000);
}

// Five processes registering 60,000 names each used to push DIALOG.Directory over the message limit.
void tst_ControlServer::registrationsOverTheLimitRefusedWithReason()
{
    ProcessFixture fx;
    QVERIFY(fx.startControlServer({QStringLiteral("--max-services-per-process"), QStringLiteral("3")}));
    Client c(fx.clientOptions(QStringLiteral("Greedy")));
    for (int i = 0; i < 4; ++i)
        c.publish(QStringLiteral("Greedy.S%1").arg(i));
    QSignalSpy errors(&c, &Client::errorOccurred);
    QVERIFY(c.start());
    QTRY_COMPARE_WITH_TIMEOUT(errors.size(), 1, 10000);
    QCOMPARE(errors.first().first().value<Client::Error>(), Client::Error::ServiceRefused);
    QVERIFY2(c.errorString().contains(QLatin1String("the most one process may")),
             qPrintable(c.errorString()));
    QCOMPARE(fx.processEntry(QStringLiteral("Greedy")).value(QStringLiteral("services")).toArray().size(), 3);
}

// Ten processes filled --max-services in 11 s; a new IS server then exited, and a refused
// service never asked again.
void tst_ControlServer::fullDirectoryIsAskedAgainAndTheIsServerWaitsForRoom()
{
    ProcessFixture fx;
    QVERIFY(fx.startControlServer({QStringLiteral("--max-services"), QStringLiteral("6"),
                                   QStringLiteral("--reserved-services"), QStringLiteral("0")}));
    const auto services = [&](const QString &process) {
        return fx.processEntry(process).value(QStringLiteral("services")).toArray().size();
    };
    // Three processes fill the directory (each may hold less than what is left for the others).
    auto first = std::make_unique<Client>(fx.clientOptions(QStringLiteral("Fill1")));
    for (int i = 0; i < 3; ++i)
        first->publish(QStringLiteral("Fill1.S%1").arg(i));
    QVERIFY(first->start());
    QTRY_COMPARE_WITH_TIMEOUT(services(QStringLiteral("Fill1")), 3, 10000);
    Client second(fx.clientOptions(QStringLiteral("Fill2")));
    second.publish(QStringLiteral("Fill2.S0"));
    second.publish(QStringLiteral("Fill2.S1"));
    QVERIFY(second.start());
    QTRY_COMPARE_WITH_TIMEOUT(services(QStringLiteral("Fill2")), 2, 10000);
    Client third(fx.clientOptions(QStringLiteral("Fill3")));
    third.publish(QStringLiteral("Fill3.S0"));
    QVERIFY(third.start());
    QTRY_COMPARE_WITH_TIMEOUT(services(QStringLiteral("Fill3")), 1, 10000);

    // A process refused for now is told so, and keeps running.
    Client late(fx.clientOptions(QStringLiteral("Late")));
    late.publish(QStringLiteral("Late.S0"));
    QSignalSpy errors(&late, &Client::errorOccurred);
    QVERIFY(late.start());
    QTRY_VERIFY_WITH_TIMEOUT(!errors.isEmpty(), 10000);
    QVERIFY2(late.errorString().contains(QLatin1String("refused for now")) &&
                 late.errorString().contains(QLatin1String("the directory holds 6 services, its limit")) &&
                 late.errorString().contains(QLatin1String("asking again in")),
             qPrintable(late.errorString()));
    // The IS server (which exits when its name is refused as another's) waits for room.
    QProcess *is = fx.start(QStringLiteral("dialog-isserver"),
                            {QStringLiteral("--name"), QStringLiteral("RunParams"), QStringLiteral("--types"),
                             QStringLiteral(DIALOG_SOURCE_DIR "/resources/is-types")});
    is->setReadChannel(QProcess::StandardError);
    QByteArray isLog;
    QTRY_VERIFY_WITH_TIMEOUT((isLog += is->readAll()).contains("refused for now"), 10000);
    QVERIFY2(isLog.contains("asking again in"), isLog.constData());
    QCOMPARE(is->state(), QProcess::Running);

    // Room appears: both get in, without being restarted.
    first.reset();
    QTRY_VERIFY_WITH_TIMEOUT(fx.processEntry(QStringLiteral("IS.Server.RunParams"))
                                 .value(QStringLiteral("services"))
                                 .toArray()
                                 .contains(QStringLiteral("IS.RunParams")),
                             40000);
    QTRY_COMPARE_WITH_TIMEOUT(services(QStringLiteral("Late")), 1, 40000);
    QCOMPARE(is->state(), QProcess::Running);
}

// One frame of 90,000 services over the limit made 90,000 lines in the message log.
void tst_ControlServer::refusedServicesAreLoggedAtPowersOfTwo()
{
    ProcessFixture fx;
    QVERIFY(fx.startControlServer({QStringLiteral("--max-services-per-process"), QStringLiteral("3")}));
    Client c(fx.clientOptions(QStringLiteral("Greedy")));
    for (int i = 0; i < 100; ++i)
        c.publish(QStringLiteral("Greedy.S%1").arg(i));
    QSignalSpy errors(&c, &Client::errorOccurred);
    QVERIFY(c.start());
    QTRY_COMPARE_WITH_TIMEOUT(errors.size(), 97, 10000); // each refusal still reaches the process
    QCOMPARE(fx.processEntry(QStringLiteral("Greedy")).value(QStringLiteral("services")).toArray().size(), 3);
    QProcess *cs = fx.controlServerProcess();
    cs->setReadChannel(QProcess::StandardError);
    QByteArray log;
    QTRY_VERIFY_WITH_TIMEOUT((log += cs->readAll()).contains("(64 refusals)"), 5000);
    // The 1st, 2nd, 4th … 64th of 97: 7 lines.
    QVERIFY(expectNothingFor(
        300, [&] { return (log += cs->readAll()).count("refused service") != 7; },
        "not one line per power of two"));
    QVERIFY2(log.contains("of Greedy - Greedy provides 3 services, the most one process may"),
             log.constData());
}

void tst_ControlServer::reservedRoomKeepsThePartitionsNamesAndNoProcessFillsTheDirectory()
{
    ProcessFixture fx;
    QVERIFY(fx.startControlServer({QStringLiteral("--max-services"), QStringLiteral("10"),
                                   QStringLiteral("--reserved-services"), QStringLiteral("4")}));
    const auto services = [&](const QString &process) {
        return fx.processEntry(process).value(QStringLiteral("services")).toArray().size();
    };
    // 6 places for anyone: one process holds fewer than what it leaves to the others (3 of 6).
    Client greedy(fx.clientOptions(QStringLiteral("Greedy")));
    for (int i = 0; i < 20; ++i)
        greedy.publish(QStringLiteral("Greedy.S%1").arg(i));
    QSignalSpy greedyErrors(&greedy, &Client::errorOccurred);
    QVERIFY(greedy.start());
    QTRY_COMPARE_WITH_TIMEOUT(services(QStringLiteral("Greedy")), 3, 10000);
    QTRY_VERIFY_WITH_TIMEOUT(!greedyErrors.isEmpty(), 10000);
    QVERIFY2(greedy.errorString().contains(
                 QLatin1String("as many as the directory has room left for all other processes")),
             qPrintable(greedy.errorString()));
    Client other(fx.clientOptions(QStringLiteral("Other")));
    for (int i = 0; i < 3; ++i)
        other.publish(QStringLiteral("Other.S%1").arg(i));
    QVERIFY(other.start());
    QTRY_COMPARE_WITH_TIMEOUT(services(QStringLiteral("Other")), 2, 10000);
    Client third(fx.clientOptions(QStringLiteral("Third")));
    third.publish(QStringLiteral("Third.S0"));
    third.publish(QStringLiteral("Third.S1"));
    QSignalSpy thirdErrors(&third, &Client::errorOccurred);
    QVERIFY(third.start());
    QTRY_COMPARE_WITH_TIMEOUT(services(QStringLiteral("Third")), 1, 10000);
    QTRY_VERIFY_WITH_TIMEOUT(!thirdErrors.isEmpty(), 10000);
    QVERIFY2(third.errorString().contains(QLatin1String("are kept for the partition's own names")),
             qPrintable(third.errorString()));

    // The master's names still find room.
    Client master(fx.clientOptions(QStringLiteral("Master")));
    master.publish(QStringLiteral("RunCtrl.Master.State"));
    master.publish(QStringLiteral("RunCtrl.Master.Log"));
    master.publish(QStringLiteral("RunCtrl.Master.Status"));
    QVERIFY(master.start());
    QTRY_COMPARE_WITH_TIMEOUT(services(QStringLiteral("Master")), 3, 10000);
    QCOMPARE(services(QStringLiteral("Greedy")), 3);
}

void tst_ControlServer::commandsAndSubscriptionsOverTheLimitRefused()
{
    ProcessFixture fx;
    QVERIFY(fx.startControlServer({QStringLiteral("--max-names-per-process"), QStringLiteral("3"),
                                   QStringLiteral("--max-names"), QStringLiteral("8")}));
    // The reader's own subscription is the first of the 8.
    Client reader(fx.clientOptions(QStringLiteral("Reader")));
    DirectoryAssembler pages;
    std::optional<DirectorySnapshot> dir;
    reader.subscribe(directoryServiceName(), &reader, [&](const Message &m) {
        if (std::optional<DirectorySnapshot> d; pages.add(m.data(), &d).isOk() && d)
            dir = std::move(d);
    });
    QVERIFY(reader.start());
    QTRY_VERIFY_WITH_TIMEOUT(dir && dir->process(QStringLiteral("Reader")), 10000);
    const auto count = [&](const QString &process, QStringList ProcessEntry::*list) {
        const ProcessEntry *e = dir ? dir->process(process) : nullptr;
        return e ? int((e->*list).size()) : -1;
    };
    Client a(fx.clientOptions(QStringLiteral("Greedy")));
    for (int i = 0; i < 5; ++i) {
        a.registerCommand(QStringLiteral("Greedy.C%1").arg(i));
        a.subscribe(QStringLiteral("Greedy.Wants%1").arg(i));
    }
    QVERIFY(a.start());
    QTRY_VERIFY_WITH_TIMEOUT(count(QStringLiteral("Greedy"), &ProcessEntry::commands) == 3 &&
                                 count(QStringLiteral("Greedy"), &ProcessEntry::subscriptions) == 3,
                             10000);
    // 1 + 6 held: one more command fits in the total of 8, not two.
    Client b(fx.clientOptions(QStringLiteral("Second")));
    for (int i = 0; i < 3; ++i)
        b.registerCommand(QStringLiteral("Second.C%1").arg(i));
    QVERIFY(b.start());
    QTRY_COMPARE_WITH_TIMEOUT(count(QStringLiteral("Second"), &ProcessEntry::commands), 1, 10000);
    QVERIFY(expectNothingFor(
        300,
        [&] {
            return count(QStringLiteral("Second"), &ProcessEntry::commands) != 1 ||
                   count(QStringLiteral("Greedy"), &ProcessEntry::commands) != 3;
        },
        "a command registered beyond the total"));
}

void tst_ControlServer::directoryOverThePageSizeComesInPagesAndLostListStaysBounded()
{
    // Finding 2 of issue 14, scaled down: registrants whose names add up to far more than the
    // directory's page size (64 KiB here, the message limit of the reader below is 128 KiB).
    ProcessFixture fx;
    constexpr int PageBytes = 65536;
    QVERIFY(fx.startControlServer({QStringLiteral("--directory-page-bytes"), QString::number(PageBytes),
                                   QStringLiteral("--max-lost"), QStringLiteral("3"),
                                   QStringLiteral("--lost-max-names"), QStringLiteral("5"),
                                   QStringLiteral("--lost-max-age-s"), QStringLiteral("12")}));
    constexpr int Registrants = 5, Names = 60, NameBytes = 1000; // ~300 KB of names
    QList<QProcess *> registrants;
    for (int r = 0; r < Registrants; ++r) {
        QStringList args{QStringLiteral("echo"), QStringLiteral("--quiet"), QStringLiteral("--name"),
                         QStringLiteral("Hog%1").arg(r)};
        for (int n = 0; n < Names; ++n)
            args << QStringLiteral("--command")
                 << QStringLiteral("Hog%1.C%2.")
                        .arg(r)
                        .arg(n, 3, 10, QLatin1Char('0'))
                        .leftJustified(NameBytes, QLatin1Char('x'));
        registrants << fx.start(QStringLiteral("dialogctl"), args);
    }
    // A reader that takes no message over 128 KiB gets the whole directory, page by page.
    ClientOptions o = fx.clientOptions(QStringLiteral("Reader"));
    o.maxMessageSize = 2 * PageBytes;
    Client reader(o);
    DirectoryAssembler pages;
    std::optional<DirectorySnapshot> whole;
    qsizetype largest = 0, messages = 0;
    reader.subscribe(directoryServiceName(), &reader, [&](const Message &m) {
        largest = qMax(largest, m.data().size());
        ++messages;
        if (std::optional<DirectorySnapshot> d; pages.add(m.data(), &d).isOk() && d)
            whole = std::move(d);
    });
    QVERIFY(reader.start());
    const auto allThere = [&](const DirectorySnapshot &d) {
        for (int r = 0; r < Registrants; ++r) {
            const ProcessEntry *e = d.process(QStringLiteral("Hog%1").arg(r));
            if (!e || e->commands.size() != Names)
                return false;
        }
        return true;
    };
    QTRY_VERIFY_WITH_TIMEOUT(whole && allThere(*whole), 30000);
    QVERIFY2(largest <= PageBytes, qPrintable(QString::number(largest)));
    QVERIFY2(messages > Registrants * Names * NameBytes / PageBytes, qPrintable(QString::number(messages)));
    QCOMPARE(whole->process(QStringLiteral("Hog3"))->commands.first(),
             QStringLiteral("Hog3.C000.").leftJustified(NameBytes, QLatin1Char('x')));
    // `dialogctl ls` reads it too.
    QByteArray out;
    QCOMPARE(fx.run(QStringLiteral("dialogctl"), {QStringLiteral("ls"), QStringLiteral("--json")}, &out,
                    nullptr, 30000),
             0);
    const auto listed = dialog::test::fromJson<DirectorySnapshot>(out);
    QVERIFY(listed);
    QVERIFY(allThere(*listed));

    // The registrants die: the lost list keeps at most 3 of them, 5 names each, then forgets them.
    for (QProcess *p : registrants)
        ::kill(pid_t(p->processId()), SIGKILL);
    for (QProcess *p : registrants)
        QVERIFY(p->waitForFinished(10000));
    QTRY_VERIFY_WITH_TIMEOUT(whole && !whole->process(QStringLiteral("Hog0")) &&
                                 !whole->process(QStringLiteral("Hog4")) && whole->lost.size() == 3,
                             15000);
    for (const ProcessEntry &l : whole->lost) {
        QVERIFY2(l.name.startsWith(QLatin1String("Hog")), qPrintable(l.name));
        QCOMPARE(l.commands.size(), 5);
        QCOMPARE(l.omittedNames, Names - 5);
        QVERIFY(!l.lostReason.isEmpty());
    }
    QCOMPARE(fx.run(QStringLiteral("dialogctl"), {QStringLiteral("ls")}, &out, nullptr, 30000), 0);
    QVERIFY2(out.count(" lost: ") == 3, out.constData());
    // --lost-max-age-s 12: the history empties by itself.
    QTRY_VERIFY_WITH_TIMEOUT(whole && whole->lost.isEmpty(), 40000);
}

void tst_ControlServer::sendExitStatusSaysDeliveredRefusedOrLost()
{
    // Finding 5 of issue 14: the exit status of `dialogctl send` says what became of the command.
    QByteArray out, err;
    QCOMPARE(m_fx->run(QStringLiteral("dialogctl"), {QStringLiteral("send"), QStringLiteral("--help")}, &out),
             0);
    QVERIFY2(out.contains("2 refused") && out.contains("3 lost"), out.constData());
    QCOMPARE(m_fx->run(QStringLiteral("dialogctl"),
                       {QStringLiteral("send"), QStringLiteral("Nobody.Listens")}, nullptr, &err),
             2);
    QVERIFY2(err.startsWith("dialogctl send: refused: no process registered command 'Nobody.Listens'"),
             err.constData());
    QProcess *echo =
        m_fx->start(QStringLiteral("dialogctl"),
                    {QStringLiteral("echo"), QStringLiteral("--command"), QStringLiteral("Some.Listens"),
                     QStringLiteral("--name"), QStringLiteral("Listener")});
    QTRY_VERIFY_WITH_TIMEOUT(
        m_fx->processEntry(QStringLiteral("Listener")).value(QStringLiteral("commands")).toArray().size() ==
            1,
        10000);
    QCOMPARE(m_fx->run(QStringLiteral("dialogctl"),
                       {QStringLiteral("send"), QStringLiteral("Some.Listens"), QStringLiteral("hello")},
                       nullptr, &err),
             0);
    QVERIFY2(err.isEmpty(), err.constData());
    QTRY_VERIFY_WITH_TIMEOUT(echo->bytesAvailable() > 0, 5000);
    const QByteArray line = echo->readAllStandardOutput();
    QVERIFY2(line.startsWith("Some.Listens from dialog-send-") && line.trimmed().endsWith(": hello"),
             line.constData());
    // No Control Server there: nothing was sent, and it says so.
    QTcpServer closed;
    QVERIFY(closed.listen(QHostAddress::LocalHost, 0));
    const quint16 nobody = closed.serverPort();
    closed.close();
    QCOMPARE(m_fx->run(QStringLiteral("dialogctl"),
                       {QStringLiteral("send"), QStringLiteral("Some.Listens"),
                        QStringLiteral("--control-server"), QStringLiteral("127.0.0.1:%1").arg(nobody),
                        QStringLiteral("--timeout-ms"), QStringLiteral("1000")},
                       nullptr, &err),
             3);
    QVERIFY2(err.startsWith("dialogctl send: lost: not connected to the Control Server"), err.constData());
    // Bad arguments: 1, nothing sent.
    QCOMPARE(m_fx->run(QStringLiteral("dialogctl"), {QStringLiteral("send")}, nullptr, &err), 1);
}

void tst_ControlServer::sendFloodEveryConfirmedSendIsReceived()
{
    // Short-lived senders, 8 at a time, against one registrant: every send that exited 0 arrived.
    QProcess *sink =
        m_fx->start(QStringLiteral("dialogctl"),
                    {QStringLiteral("echo"), QStringLiteral("--command"), QStringLiteral("Flood.Cmd"),
                     QStringLiteral("--name"), QStringLiteral("Sink")});
    QTRY_VERIFY_WITH_TIMEOUT(
        m_fx->processEntry(QStringLiteral("Sink")).value(QStringLiteral("commands")).toArray().size() == 1,
        10000);
    constexpr int Sends = 160, Parallel = 8;
    QHash<QProcess *, int> running;
    QSet<int> confirmed;
    QMap<int, int> codes; // exit code -> how many
    QByteArray received;
    int next = 0;
    const QDeadlineTimer deadline(240000);
    while ((next < Sends || !running.isEmpty()) && !deadline.hasExpired()) {
        while (next < Sends && running.size() < Parallel) {
            auto *p = new QProcess(this);
            p->start(bin(QStringLiteral("dialogctl")),
                     {QStringLiteral("send"), QStringLiteral("Flood.Cmd"), QStringLiteral("m%1").arg(next),
                      QStringLiteral("--control-server"), m_fx->controlServer(),
                      QStringLiteral("--timeout-ms"), QStringLiteral("20000")});
            running.insert(p, next++);
        }
        letTimePass(5, "the senders run: collect their output and exit codes every 5 ms");
        received += sink->readAllStandardOutput();
        for (auto it = running.begin(); it != running.end();) {
            QProcess *p = it.key();
            if (p->state() != QProcess::NotRunning) {
                ++it;
                continue;
            }
            const int code = p->exitStatus() == QProcess::NormalExit ? p->exitCode() : -1;
            ++codes[code];
            if (code == 0)
                confirmed.insert(it.value());
            else
                qWarning() << "send" << it.value() << "exited" << code << p->readAllStandardError();
            p->deleteLater();
            it = running.erase(it);
        }
    }
    QVERIFY2(running.isEmpty(), "the flood did not finish in time");
    qInfo() << "exit codes of" << Sends << "sends:" << codes;
    QVERIFY(!confirmed.isEmpty());
    const auto missing = [&] {
        received += sink->readAllStandardOutput();
        QSet<int> got;
        for (const QByteArray &l : received.split('\n'))
            if (const qsizetype at = l.lastIndexOf(": m"); at >= 0)
                got.insert(l.mid(at + 3).toInt());
        QList<int> m;
        for (int i : std::as_const(confirmed))
            if (!got.contains(i))
                m << i;
        return m;
    };
    QTRY_VERIFY_WITH_TIMEOUT(missing().isEmpty(), 10000);
    // Nothing is refused while the registrant is there.
    QCOMPARE(codes.value(2), 0);
}

QTEST_GUILESS_MAIN(tst_ControlServer)
#include "tst_controlserver.moc"
