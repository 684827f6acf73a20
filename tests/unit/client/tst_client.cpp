// dialog::Client on its own: errors and state through one funnel, options from arguments,
// services, requests (cancellation, the hidden subscriptions that locate a provider), refusals.
// Two clients in one process against a real Control Server process.
#include "../controlserverprocess.h"
#include "statuscheck.h"

#include "client_p.h"
#include "control_p.h"
#include "transport_p.h"
#include "waits.h"

#include "dialog/client.h"
#include "dialog/directory.h"

#include <QSignalSpy>
#include <QTcpSocket>
#include <QtTest>

#include <atomic>
#include <thread>

using namespace dialog;

class tst_Client : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void fromArgumentsReadsCommonOptions_data();
    void fromArgumentsReadsCommonOptions();
    void fromArgumentsRefusesBadValues_data();
    void fromArgumentsRefusesBadValues();
    void statusNamesEveryCode();
    void reconnectDelayBacksOffWithinBounds();
    void reconnectDelaySpreadsProcessesThatLostTheServerTogether();
    void invalidNameRefused_data();
    void invalidNameRefused();
    void invalidAddressFailsStartOnce();
    void connectsOnceWithStateChanges();
    void subscriberReceivesUpdatesAsSharedValues();
    void keptMessagesStayAsTheyWereDelivered();
    void everySubscriptionGetsEveryMessageAcrossNestedLoops();
    void requestLocatorRemovedAfterReply();
    void cancelledRequestNeverCallsBack();
    void refusedServiceReportedWithoutExit();
    void commandReachesRegistrant();
    void flushReturnsOnceEverythingIsWritten();
    void directSubscriptionRunsInTheReaderThread();
    void directCommandRunsInTheReaderThread();
    void advertiseOption_data();
    void advertiseOption();
    void advertisesTheRouteToTheControlServer();
    void handshakeLimitPerAddressIsAnOption();
    void advertisedAddressIsReachable();
    void staleNotConnectedAnswersAreIgnoredWhileConnecting();

private:
    test::ControlServerProcess m_cs;
};

void tst_Client::initTestCase()
{
    QVERIFY(m_cs.start());
}

void tst_Client::fromArgumentsReadsCommonOptions_data()
{
    QTest::addColumn<QStringList>("arguments");
    QTest::addColumn<QStringList>("servers");
    QTest::addColumn<int>("heartbeatMs");
    QTest::addColumn<int>("retryMs");
    const QStringList defaults = ClientOptions::fromEnvironment().controlServers;
    QTest::newRow("none") << QStringList{QStringLiteral("prog")} << defaults << 1000 << 0;
    QTest::newRow("separate-values") << QStringList{QStringLiteral("prog"),
                                                    QStringLiteral("--control-server"),
                                                    QStringLiteral("h1:1,h2:2"),
                                                    QStringLiteral("--heartbeat-ms"), QStringLiteral("250")}
                                     << QStringList{QStringLiteral("h1:1"), QStringLiteral("h2:2")} << 250
                                     << 0;
    QTest::newRow("equals-form") << QStringList{QStringLiteral("prog"), QStringLiteral("--retry-ms=40"),
                                                QStringLiteral("--control-server=h:9")}
                                 << QStringList{QStringLiteral("h:9")} << 1000 << 40;
    QTest::newRow("program-name-skipped")
        << QStringList{QStringLiteral("--heartbeat-ms=20")} << defaults << 1000 << 0;
    QTest::newRow("unknown-ignored") << QStringList{QStringLiteral("prog"), QStringLiteral("--verbose"),
                                                    QStringLiteral("file.xml")}
                                     << defaults << 1000 << 0;
}

void tst_Client::fromArgumentsReadsCommonOptions()
{
    QFETCH(QStringList, arguments);
    QFETCH(QStringList, servers);
    QFETCH(int, heartbeatMs);
    QFETCH(int, retryMs);
    const ClientOptions o = ClientOptions::fromArguments(arguments, QStringLiteral("Named"));
    QCOMPARE(o.name, QStringLiteral("Named"));
    QCOMPARE(o.controlServers, servers);
    QCOMPARE(o.heartbeatMs, heartbeatMs);
    QCOMPARE(o.retryMs, retryMs);
    QVERIFY(!o.exitOnRefusal); // the library never exits unless asked to
}

void tst_Client::reconnectDelayBacksOffWithinBounds()
{
    // The first try after a loss: anywhere in one retry interval.
    QCOMPARE(reconnectDelayMs(0, 1000, 0.0), qint64(0));
    QCOMPARE(reconnectDelayMs(0, 1000, 0.5), qint64(500));
    QVERIFY(reconnectDelayMs(0, 1000, 0.999) < 1000);
    // Then [c/2, c) with c doubling from 2 x base to 8 x base.
    for (const auto &[attempt, ceiling] : {std::pair{1, 2000}, {2, 4000}, {3, 8000}, {4, 8000}, {40, 8000}}) {
        QCOMPARE(reconnectDelayMs(attempt, 1000, 0.0), qint64(ceiling / 2));
        QVERIFY(reconnectDelayMs(attempt, 1000, 0.999) < ceiling);
        QVERIFY(reconnectDelayMs(attempt, 1000, 0.999) >= ceiling * 99 / 100);
    }
    // Never beyond 30 s, unless the retry interval itself is longer.
    QCOMPARE(reconnectDelayMs(10, 10000, 0.0), qint64(15000));
    QVERIFY(reconnectDelayMs(10, 10000, 0.999) < 30000);
    QCOMPARE(reconnectDelayMs(3, 60000, 0.0), qint64(30000));
    QVERIFY(reconnectDelayMs(3, 60000, 0.999) < 60000);
    // Out-of-range input stays in range.
    QCOMPARE(reconnectDelayMs(1, 1000, -1.0), qint64(1000));
    QVERIFY(reconnectDelayMs(1, 1000, 5.0) <= 2000);
}

void tst_Client::reconnectDelaySpreadsProcessesThatLostTheServerTogether()
{
    // 5,000 processes lose the Control Server at once: their first tries spread over the whole retry
    // interval (no second of it gets more than a small share), not all in the same instant.
    QRandomGenerator random(16);
    QList<int> perBin(10, 0);
    for (int i = 0; i < 5000; ++i) {
        const qint64 d = reconnectDelayMs(0, 1000, random.generateDouble());
        QVERIFY(d >= 0 && d < 1000);
        ++perBin[int(d / 100)];
    }
    for (int n : std::as_const(perBin))
        QVERIFY2(n > 350 && n < 650, qPrintable(QString::number(n)));
}

void tst_Client::fromArgumentsRefusesBadValues_data()
{
    QTest::addColumn<QStringList>("arguments");
    QTest::addColumn<QString>("refusal");
    QTest::addColumn<int>("heartbeatMs");
    QTest::addColumn<int>("retryMs");
    QTest::newRow("heartbeat-below-range")
        << QStringList{QStringLiteral("prog"), QStringLiteral("--heartbeat-ms"), QStringLiteral("5")}
        << QStringLiteral("invalid --heartbeat-ms '5' (out of range 10..3600000 milliseconds)") << 1000 << 0;
    QTest::newRow("retry-not-a-number")
        << QStringList{QStringLiteral("prog"), QStringLiteral("--retry-ms=soon")}
        << QStringLiteral("invalid --retry-ms 'soon' (expected a duration in 10..3600000 milliseconds; a bare "
                          "number is in milliseconds, or add us, ms, s, min, h or d)")
        << 1000 << 0;
    // The first refusal is told; the good values around it are still read.
    QTest::newRow("first-of-two-told")
        << QStringList{QStringLiteral("prog"),          QStringLiteral("--retry-ms"),
                       QStringLiteral("250"),           QStringLiteral("--heartbeat-ms=0"),
                       QStringLiteral("--retry-ms=-1"), QStringLiteral("--heartbeat-ms=2s")}
        << QStringLiteral("invalid --heartbeat-ms '0' (out of range 10..3600000 milliseconds)") << 2000 << 250;
    QTest::newRow("advertise-with-port")
        << QStringList{QStringLiteral("prog"), QStringLiteral("--advertise"), QStringLiteral("host:9")}
        << QStringLiteral("invalid --advertise 'host:9' (expected a host name or an IPv4 address)") << 1000 << 0;
}

void tst_Client::fromArgumentsRefusesBadValues()
{
    QFETCH(QStringList, arguments);
    QFETCH(QString, refusal);
    QFETCH(int, heartbeatMs);
    QFETCH(int, retryMs);
    // A refused value keeps its default, with the option table's line in dialog.client.
    QTest::ignoreMessage(QtWarningMsg, qPrintable(refusal + QStringLiteral(" (the default is kept)")));
    const ClientOptions o = ClientOptions::fromArguments(arguments, QStringLiteral("Named"));
    QCOMPARE(o.heartbeatMs, heartbeatMs);
    QCOMPARE(o.retryMs, retryMs);
    QCOMPARE(o.host, ClientOptions::fromEnvironment().host); // a refused --advertise is not taken either
}

void tst_Client::statusNamesEveryCode()
{
    const QMetaEnum e = QMetaEnum::fromType<Status::Code>();
    QSet<QString> names;
    for (int i = 0; i < e.keyCount(); ++i) {
        const QString name = Status::codeName(Status::Code(e.value(i)));
        QVERIFY2(name != QLatin1String("error"), e.key(i)); // every code has its own name
        names.insert(name);
    }
    QCOMPARE(names.size(), e.keyCount());
    QCOMPARE(Status().toString(), QStringLiteral("ok"));
    QVERIFY(Status().isOk());
    const Status s(Status::Code::NotFound, QStringLiteral("DAQ.X"));
    QVERIFY(!s.isOk());
    QCOMPARE(s.toString(), QStringLiteral("not found: DAQ.X"));
    // The IS codes travel on the wire: their numbers never change.
    QCOMPARE(int(Status::Code::NotFound), 1);
    QCOMPARE(int(Status::Code::ServerError), 11);
    QCOMPARE(int(Status::Code::QuotaExceeded), 25);
    QCOMPARE(int(Status::Code::PermissionDenied), 26);
}

void tst_Client::invalidNameRefused_data()
{
    QTest::addColumn<QString>("name");
    QTest::newRow("empty") << QString();
    QTest::newRow("over-1024-bytes") << QString(513, QChar(0x00e9)); // 2 bytes each in UTF-8
}

void tst_Client::invalidNameRefused()
{
    QFETCH(QString, name);
    Client c(m_cs.options(QStringLiteral("Namer")));
    QSignalSpy errors(&c, &Client::errorOccurred);
    QCOMPARE(c.publish(name), nullptr);
    QCOMPARE(c.subscribe(name), nullptr);
    QCOMPARE(c.attach(name), nullptr);
    QVERIFY(!c.sendCommand(name));
    QCOMPARE(errors.size(), 4);
    for (const QList<QVariant> &e : std::as_const(errors))
        QCOMPARE(e.first().value<Status::Code>(), Status::Code::InvalidName);
    QCOMPARE(c.error(), Status::Code::InvalidName);
    QVERIFY(!c.errorString().isEmpty());
}

void tst_Client::invalidAddressFailsStartOnce()
{
    ClientOptions o = m_cs.options(QStringLiteral("Lost"));
    o.controlServers = {QStringLiteral("no-port-here")};
    Client c(o);
    QSignalSpy errors(&c, &Client::errorOccurred);
    QSignalSpy states(&c, &Client::stateChanged);
    QVERIFY(!c.start());
    QVERIFY(!c.start()); // a second call reports the same failure without a second signal
    QCOMPARE(errors.size(), 1);
    QCOMPARE(errors.first().first().value<Status::Code>(), Status::Code::InvalidAddress);
    QCOMPARE(c.error(), Status::Code::InvalidAddress);
    QCOMPARE(c.state(), Client::State::Unconnected);
    QCOMPARE(states.size(), 0); // never left Unconnected
}

void tst_Client::connectsOnceWithStateChanges()
{
    Client c(m_cs.options(QStringLiteral("Connector")));
    QSignalSpy states(&c, &Client::stateChanged);
    QSignalSpy connected(&c, &Client::connected);
    QVERIFY(c.start());
    QTRY_COMPARE_WITH_TIMEOUT(connected.size(), 1, 10000);
    QCOMPARE(c.state(), Client::State::Connected);
    QCOMPARE(c.error(), Status::Code::Ok);
    QVERIFY(states.size() >= 2);
    QCOMPARE(states.first().first().value<Client::State>(), Client::State::Connecting);
    QCOMPARE(states.last().first().value<Client::State>(), Client::State::Connected);
    for (qsizetype i = 1; i < states.size(); ++i) // never twice the same state in a row
        QVERIFY(states.at(i).first() != states.at(i - 1).first());
}

void tst_Client::subscriberReceivesUpdatesAsSharedValues()
{
    Client provider(m_cs.options(QStringLiteral("Provider.Values")));
    Client subscriber(m_cs.options(QStringLiteral("Subscriber.Values")));
    Service *svc = provider.publish(QStringLiteral("Values.Counter"));
    QVERIFY(svc);
    QVERIFY(provider.start() && subscriber.start());
    Subscription *sub = subscriber.subscribe(QStringLiteral("Values.Counter"));
    QVERIFY(sub);
    QSignalSpy received(sub, &Subscription::messageReceived);
    QTRY_COMPARE_WITH_TIMEOUT(svc->subscriberCount(), 1, 10000);
    for (int i = 1; i <= 3; ++i)
        QVERIFY(svc->update(QByteArray::number(i)));
    QTRY_COMPARE_WITH_TIMEOUT(sub->receivedCount(), quint64(3), 10000);
    QCOMPARE(sub->state(), Subscription::State::Active);
    QCOMPARE(sub->provider(), QStringLiteral("Provider.Values"));
    QCOMPARE(sub->lostCount(), quint64(0));
    const Message last = sub->lastMessage();
    Message copy = last; // shares, stays valid on its own
    QCOMPARE(copy.data(), QByteArray("3"));
    QCOMPARE(copy.sequence(), quint64(3));
    QCOMPARE(copy.service(), QStringLiteral("Values.Counter"));
    QCOMPARE(received.size(), 3);
    QCOMPARE(received.at(0).first().value<Message>().data(), QByteArray("1"));
}

namespace {
/// A provider of one service that drops nothing (Block flow control) and a subscriber process,
/// both started.
struct BlockingService
{
    Client provider, subscriber;
    Service *svc = nullptr;
    BlockingService(const ClientOptions &providerOptions, const ClientOptions &subscriberOptions,
                    const QString &service)
        : provider(providerOptions), subscriber(subscriberOptions), svc(provider.publish(service))
    {
        if (svc)
            svc->setFlowControl(Service::FlowControl::Block, 10000);
    }
    bool start() { return svc && provider.start() && subscriber.start(); }
};

/// Runs a nested event loop in a slot, as a modal dialog or a blocking is::Dictionary call does,
/// until @p s receives another message (at most 300 ms). True if one came during it.
bool nestedLoopUntilNextMessage(const Subscription *s)
{
    const quint64 received = s->receivedCount();
    QElapsedTimer t;
    t.start();
    while (s->receivedCount() == received && t.elapsed() < 300)
        QCoreApplication::processEvents(QEventLoop::AllEvents, 5);
    return s->receivedCount() != received;
}
} // namespace

void tst_Client::keptMessagesStayAsTheyWereDelivered()
{
    // A subscription reuses its last message's storage for the next one when nothing else holds
    // it: what a slot keeps (the Message, or only its data) must never change under it, nor the
    // message a slot looks at while a nested event loop in it delivers newer ones (as a modal
    // dialog or a blocking is::Dictionary call does).
    BlockingService bs(m_cs.options(QStringLiteral("Provider.Kept")),
                       m_cs.options(QStringLiteral("Subscriber.Kept")), QStringLiteral("Kept.Values"));
    QVERIFY(bs.start());
    Client &subscriber = bs.subscriber;
    Service *svc = bs.svc;
    Subscription *sub = subscriber.subscribe(QStringLiteral("Kept.Values"));
    QVERIFY(sub);
    QTRY_COMPARE_WITH_TIMEOUT(svc->subscriberCount(), 1, 10000);
    const auto content = [](quint64 seq) {
        // 100 bytes, different for every message; several share one read (and receive buffer).
        QByteArray d = QByteArray::number(seq).rightJustified(10, '0');
        while (d.size() < 100)
            d += char('a' + (seq + quint64(d.size())) % 26);
        return d;
    };
    QList<Message> keptMessages;
    QList<QPair<quint64, QByteArray>> keptData;
    quint64 previous = 0;
    int backwards = 0, deliveredInside = 0, changedUnderSlot = 0;
    bool inSlot = false;
    QObject::connect(sub, &Subscription::messageReceived, &subscriber, [&](const Message &m) {
        const quint64 seq = m.sequence();
        if (seq <= previous)
            ++backwards;
        previous = seq;
        if (seq % 10 == 0)
            keptMessages.append(m);
        else if (seq % 7 == 0)
            keptData.append({seq, m.data()});
        if (seq % 2000 == 1 && !inSlot) {
            // A nested event loop while this slot still looks at m, the publisher still at work.
            inSlot = true;
            const QByteArray before(m.data().constData(), m.data().size()); // a deep copy
            if (nestedLoopUntilNextMessage(sub))
                ++deliveredInside;
            if (m.data() != before || m.sequence() != seq)
                ++changedUnderSlot;
            inSlot = false;
        }
    });
    constexpr int N = 20000;
    // Published from another thread (Service::update is thread-safe), so that this one delivers.
    std::atomic<int> refused{0};
    std::thread publisher([&] {
        for (int i = 1; i <= N; ++i)
            if (!svc->update(content(quint64(i))))
                ++refused;
    });
    const auto joinPublisher = qScopeGuard([&] { publisher.join(); }); // also when a check fails
    QTRY_COMPARE_WITH_TIMEOUT(sub->lastMessage().sequence(), quint64(N), 30000);
    QCOMPARE(refused.load(), 0);
    // What the nested loops delivered came after the rest of the batch they interrupted: nothing
    // was skipped or lost, nothing went back.
    QCOMPARE(sub->receivedCount(), quint64(N));
    QCOMPARE(sub->lostCount(), quint64(0));
    QCOMPARE(backwards, 0);
    QVERIFY2(deliveredInside > 0, "no message came during a nested event loop: the case was not exercised");
    QCOMPARE(changedUnderSlot, 0);
    QCOMPARE(keptMessages.size(), N / 10);
    for (const Message &m : std::as_const(keptMessages)) {
        QCOMPARE(m.data(), content(m.sequence()));
        QCOMPARE(m.service(), QStringLiteral("Kept.Values"));
    }
    QVERIFY(keptData.size() > N / 20);
    for (const auto &[seq, data] : std::as_const(keptData))
        QCOMPARE(data, content(seq));
    QCOMPARE(sub->lastMessage().data(), content(N));
}

void tst_Client::everySubscriptionGetsEveryMessageAcrossNestedLoops()
{
    // Several subscriptions to one service in one process get each message in turn. When the first
    // one's slot runs a nested event loop (a modal dialog, a blocking is::Dictionary call), the
    // loop delivers newer messages: the others must get the interrupted message before those, not
    // skip it as already seen.
    BlockingService bs(m_cs.options(QStringLiteral("Provider.Fan")),
                       m_cs.options(QStringLiteral("Subscriber.Fan")), QStringLiteral("Fan.Values"));
    QVERIFY(bs.start());
    Client &subscriber = bs.subscriber;
    Service *svc = bs.svc;
    QList<Subscription *> subs;
    for (int i = 0; i < 3; ++i) {
        subs << subscriber.subscribe(QStringLiteral("Fan.Values"));
        QVERIFY(subs.last());
    }
    QTRY_COMPARE_WITH_TIMEOUT(svc->subscriberCount(), 1, 10000);
    QList<quint64> previous(subs.size(), 0);
    QList<int> backwards(subs.size(), 0);
    int loops = 0, deliveredInside = 0;
    bool inSlot = false;
    for (int i = 0; i < subs.size(); ++i) {
        QObject::connect(subs[i], &Subscription::messageReceived, &subscriber, [&, i](const Message &m) {
            const quint64 seq = m.sequence();
            if (seq <= previous[i])
                ++backwards[i];
            previous[i] = seq;
            if (i != 0 || seq % 2000 != 1 || inSlot)
                return;
            inSlot = true;
            ++loops;
            if (nestedLoopUntilNextMessage(subs[0]))
                ++deliveredInside;
            inSlot = false;
        });
    }
    constexpr int N = 20000;
    std::atomic<int> refused{0};
    std::thread publisher([&] {
        // Paced (about 1 ms every 100 messages), so that messages are still coming while the
        // nested loops run.
        for (int i = 1; i <= N; ++i) {
            if (!svc->update(QByteArray::number(i).rightJustified(100, '.')))
                ++refused;
            if (i % 100 == 0)
                dialog::test::pauseThread(1, "paced: messages still come while the nested loops run");
        }
    });
    const auto joinPublisher = qScopeGuard([&] { publisher.join(); }); // also when a check fails
    for (Subscription *s : std::as_const(subs))
        QTRY_COMPARE_WITH_TIMEOUT(s->lastMessage().sequence(), quint64(N), 30000);
    QCOMPARE(refused.load(), 0);
    qInfo("%d nested loops, %d of them with deliveries", loops, deliveredInside);
    QVERIFY2(deliveredInside > 0, "no message came during a nested event loop: the case was not exercised");
    for (int i = 0; i < subs.size(); ++i) {
        QCOMPARE(subs[i]->receivedCount(), quint64(N));
        QCOMPARE(subs[i]->lostCount(), quint64(0));
        QCOMPARE(backwards[i], 0);
    }
}

void tst_Client::requestLocatorRemovedAfterReply()
{
    // Regression: request() subscribed to the service to locate its provider and never
    // unsubscribed, so one request kept the process subscribed for ever. Now the hidden subscription
    // lingers for requestLocatorLingerMs after the last reply (periodic requesters do not subscribe
    // and unsubscribe each time), then goes.
    Client provider(m_cs.options(QStringLiteral("Provider.Echo")));
    ClientOptions askerOptions = m_cs.options(QStringLiteral("Asker.Echo"));
    QCOMPARE(askerOptions.requestLocatorLingerMs, 30000);
    askerOptions.requestLocatorLingerMs = 1500;
    Client asker(askerOptions);
    Service *svc = provider.publish(QStringLiteral("Echo.Service"));
    QVERIFY(svc);
    connect(&provider, &Client::requestReceived, this,
            [&provider](const Request &r) { provider.reply(r, r.data().toUpper()); });
    QVERIFY(provider.start() && asker.start());
    QTRY_VERIFY_WITH_TIMEOUT(provider.state() == Client::State::Connected, 10000);

    for (int round = 0; round < 2; ++round) {
        QList<Reply> replies;
        const PendingReply handle = asker.request(QStringLiteral("Echo.Service"), "abc", 10000, this,
                                                  [&replies](const Reply &r) { replies << r; });
        QVERIFY(handle.id() != 0);
        QVERIFY(handle.isPending());
        QTRY_COMPARE_WITH_TIMEOUT(replies.size(), 1, 10000);
        QVERIFY2(replies.first().isOk(), qPrintable(replies.first().status().toString()));
        QCOMPARE(replies.first().data(), QByteArray("ABC"));
        QCOMPARE(replies.first().id(), handle.id());
        QVERIFY(!handle.isPending());
        // No request pending: the hidden subscription lingers, and a request now uses it again.
        QTRY_COMPARE_WITH_TIMEOUT(svc->subscriberCount(), 1, 5000);
        QCOMPARE(asker.providerOf(QStringLiteral("Echo.Service")), QStringLiteral("Provider.Echo"));
        QList<Reply> again;
        asker.request(QStringLiteral("Echo.Service"), "x", 10000, this,
                      [&again](const Reply &r) { again << r; });
        QTRY_COMPARE_WITH_TIMEOUT(again.size(), 1, 10000);
        QVERIFY(again.first().isOk());
        QCOMPARE(svc->subscriberCount(), 1);
        // After the linger, it is gone at the provider too.
        QVERIFY(dialog::test::expectNothingFor(
            500, [&] { return svc->subscriberCount() != 1; },
            "the hidden subscription dropped before its linger"));
        QTRY_COMPARE_WITH_TIMEOUT(svc->subscriberCount(), 0, 10000);
        QVERIFY(asker.providerOf(QStringLiteral("Echo.Service")).isEmpty());
    }
}

void tst_Client::cancelledRequestNeverCallsBack()
{
    Client provider(m_cs.options(QStringLiteral("Provider.Silent")));
    ClientOptions askerOptions = m_cs.options(QStringLiteral("Asker.Silent"));
    askerOptions.requestLocatorLingerMs = 300; // the hidden subscription goes soon after the last request
    Client asker(askerOptions);
    Service *svc = provider.publish(QStringLiteral("Silent.Service"));
    QVERIFY(svc);
    QList<Request> held; // accepted, never answered
    connect(&provider, &Client::requestReceived, this, [&held](const Request &r) { held << r; });
    QVERIFY(provider.start() && asker.start());

    int cancelledCalls = 0;
    PendingReply cancelled = asker.request(QStringLiteral("Silent.Service"), "1", 300, this,
                                           [&cancelledCalls](const Reply &) { ++cancelledCalls; });
    QList<Reply> marker;
    asker.request(QStringLiteral("Silent.Service"), "2", 600, this,
                  [&marker](const Reply &r) { marker << r; });
    QTRY_COMPARE_WITH_TIMEOUT(held.size(), 2, 10000);
    QVERIFY(cancelled.isPending());
    QVERIFY(cancelled.cancel());
    QVERIFY(!cancelled.isPending());
    QVERIFY(!cancelled.cancel()); // only once
    // The marker times out after the cancelled request would have: by then it would have been called.
    QTRY_COMPARE_WITH_TIMEOUT(marker.size(), 1, 10000);
    QCOMPARE(marker.first().error(), Status::Code::Timeout);
    QCOMPARE(cancelledCalls, 0);
    // A late answer to the cancelled request is ignored.
    QVERIFY(provider.reply(held.first(), "late"));
    QTRY_COMPARE_WITH_TIMEOUT(svc->subscriberCount(), 0, 10000);
    QCOMPARE(cancelledCalls, 0);
    QVERIFY(!PendingReply().cancel());
}

void tst_Client::refusedServiceReportedWithoutExit()
{
    Client first(m_cs.options(QStringLiteral("First.Owner")));
    QVERIFY(first.publish(QStringLiteral("Unique.Name")));
    QVERIFY(first.start());
    QTRY_VERIFY_WITH_TIMEOUT(first.state() == Client::State::Connected, 10000);
    Client second(m_cs.options(QStringLiteral("Second.Owner"))); // exitOnRefusal is off by default
    QSignalSpy errors(&second, &Client::errorOccurred);
    QVERIFY(second.publish(QStringLiteral("Unique.Name")));
    QVERIFY(second.start());
    QTRY_COMPARE_WITH_TIMEOUT(errors.size(), 1, 10000);
    QCOMPARE(errors.first().first().value<Status::Code>(), Status::Code::ServiceRefused);
    QCOMPARE(second.error(), Status::Code::ServiceRefused);
    QVERIFY(second.errorString().contains(QStringLiteral("Unique.Name")));
    QCOMPARE(second.state(), Client::State::Connected); // a refusal is not a disconnection
}

void tst_Client::commandReachesRegistrant()
{
    Client receiver(m_cs.options(QStringLiteral("Command.Receiver")));
    Client sender(m_cs.options(QStringLiteral("Command.Sender")));
    receiver.registerCommand(QStringLiteral("Do.It"));
    QSignalSpy commands(&receiver, &Client::commandReceived);
    QVERIFY(receiver.start() && sender.start());
    QTRY_VERIFY_WITH_TIMEOUT(sender.state() == Client::State::Connected, 10000);
    // The registration may reach the Control Server after our first try: send until it arrives.
    QTRY_VERIFY_WITH_TIMEOUT((sender.sendCommand(QStringLiteral("Do.It"), "now"), !commands.isEmpty()),
                             10000);
    const Command c = commands.first().first().value<Command>();
    QCOMPARE(c.name(), QStringLiteral("Do.It"));
    QCOMPARE(c.data(), QByteArray("now"));
    QCOMPARE(c.origin(), QStringLiteral("Command.Sender"));
}

void tst_Client::flushReturnsOnceEverythingIsWritten()
{
    Client provider(m_cs.options(QStringLiteral("Provider.Bulk")));
    Client subscriber(m_cs.options(QStringLiteral("Subscriber.Bulk")));
    Service *svc = provider.publish(QStringLiteral("Bulk.Data"));
    QVERIFY(svc);
    QVERIFY(provider.start() && subscriber.start());
    Subscription *sub = subscriber.subscribe(QStringLiteral("Bulk.Data"));
    QTRY_COMPARE_WITH_TIMEOUT(svc->subscriberCount(), 1, 10000);
    QByteArray data(4 * 1024 * 1024, Qt::Uninitialized);
    for (qsizetype i = 0; i < data.size(); ++i)
        data[i] = char(i * 7919 % 251);
    QVERIFY(svc->update(data));
    QVERIFY(provider.flush(20000)); // blocks this thread; the receiver reads in its own threads
    QCOMPARE(provider.statistics().queuedBytes, qint64(0));
    QTRY_COMPARE_WITH_TIMEOUT(sub->receivedCount(), quint64(1), 20000);
    QCOMPARE(sub->lastMessage().data(), data);
}

namespace {
/// What a direct handler saw, kept under a lock (it runs in a reader thread).
struct DirectLog
{
    mutable QMutex lock;
    QList<QByteArray> data;
    QList<quint64> sequences;
    QSet<QThread *> threads;
    void add(const QByteArray &d, quint64 seq = 0)
    {
        QMutexLocker l(&lock);
        data.append(d);
        sequences.append(seq);
        threads.insert(QThread::currentThread());
    }
    qsizetype size() const
    {
        QMutexLocker l(&lock);
        return data.size();
    }
    /// Every call ran in one of the transport's reader threads, never in the Client's.
    bool inReaderThreads() const
    {
        QMutexLocker l(&lock);
        for (QThread *t : threads)
            if (t == qApp->thread() || !t->objectName().startsWith(QLatin1String("dialog-reader-")))
                return false;
        return !threads.isEmpty();
    }
};
} // namespace

void tst_Client::directSubscriptionRunsInTheReaderThread()
{
    Client provider(m_cs.options(QStringLiteral("Provider.Direct")));
    Client subscriber(m_cs.options(QStringLiteral("Subscriber.Direct")));
    Service *svc = provider.publish(QStringLiteral("Direct.Counter"));
    QVERIFY(svc);
    QVERIFY(provider.start() && subscriber.start());
    DirectLog log;
    Subscription *direct = subscriber.subscribeDirect(
        QStringLiteral("Direct.Counter"), [&log](const Message &m) { log.add(m.data(), m.sequence()); });
    QVERIFY(direct);
    // A second, ordinary subscription of the same service in the same process gets it too.
    Subscription *queued = subscriber.subscribe(QStringLiteral("Direct.Counter"));
    QSignalSpy queuedReceived(queued, &Subscription::messageReceived);
    QSignalSpy directEmitted(direct, &Subscription::messageReceived);
    QTRY_COMPARE_WITH_TIMEOUT(svc->subscriberCount(), 1, 10000);
    constexpr int N = 200;
    for (int i = 1; i <= N; ++i)
        QVERIFY(svc->update(QByteArray::number(i)));
    QTRY_COMPARE_WITH_TIMEOUT(log.size(), qsizetype(N), 10000);
    QTRY_COMPARE_WITH_TIMEOUT(queued->receivedCount(), quint64(N), 10000);
    QVERIFY(log.inReaderThreads());
    for (int i = 1; i <= N; ++i) {
        QCOMPARE(log.data.at(i - 1), QByteArray::number(i));
        QCOMPARE(log.sequences.at(i - 1), quint64(i));
    }
    QTRY_COMPARE_WITH_TIMEOUT(direct->state(), Subscription::State::Active, 10000);
    QCOMPARE(directEmitted.size(), 0); // its messages went to the handler only
    QCOMPARE(queuedReceived.size(), N);

    // Once the direct subscription is gone its handler is never called again.
    subscriber.unsubscribe(direct);
    QVERIFY(svc->update("after"));
    QTRY_COMPARE_WITH_TIMEOUT(queued->receivedCount(), quint64(N + 1), 10000);
    QCOMPARE(log.size(), qsizetype(N));
}

void tst_Client::directCommandRunsInTheReaderThread()
{
    // The command is taken in the receiver's reader thread, which answers with a service update
    // from there (Service::update is thread-safe); commandReceived() is not emitted for it.
    Client receiver(m_cs.options(QStringLiteral("Direct.Receiver")));
    Client sender(m_cs.options(QStringLiteral("Direct.Sender")));
    Service *answer = receiver.publish(QStringLiteral("Direct.Answer"));
    QVERIFY(answer);
    DirectLog log;
    receiver.registerCommandDirect(QStringLiteral("Direct.Do"), [&](const Command &c) {
        log.add(c.data() + '@' + c.origin().toUtf8());
        answer->update(c.data());
    });
    QSignalSpy queuedCommands(&receiver, &Client::commandReceived);
    QVERIFY(receiver.start() && sender.start());
    Subscription *sub = sender.subscribe(QStringLiteral("Direct.Answer"));
    QTRY_VERIFY_WITH_TIMEOUT(sender.state() == Client::State::Connected, 10000);
    // The registration may reach the Control Server after our first try: send until it arrives.
    QTRY_VERIFY_WITH_TIMEOUT((sender.sendCommand(QStringLiteral("Direct.Do"), "first"), log.size() > 0),
                             10000);
    QTRY_VERIFY_WITH_TIMEOUT(sub->receivedCount() > 0, 10000);
    for (int i = 1; i <= 50; ++i)
        QVERIFY(sender.sendCommand(QStringLiteral("Direct.Do"), QByteArray::number(i)));
    const auto numbered = [&log] {
        QMutexLocker l(&log.lock);
        QList<QByteArray> n;
        for (const QByteArray &d : std::as_const(log.data))
            if (!d.startsWith("first"))
                n.append(d);
        return n;
    };
    QTRY_COMPARE_WITH_TIMEOUT(numbered().size(), 50, 10000);
    for (int i = 1; i <= 50; ++i) // in the order they were sent
        QCOMPARE(numbered().at(i - 1), QByteArray::number(i) + "@Direct.Sender");
    const qsizetype before = log.size();
    QVERIFY(log.inReaderThreads());
    QTRY_COMPARE_WITH_TIMEOUT(sub->lastMessage().data(), QByteArray("50"), 10000);
    QCOMPARE(queuedCommands.size(), 0);

    // Unregistered: the handler is gone with the name.
    receiver.unregisterCommand(QStringLiteral("Direct.Do"));
    sender.sendCommand(QStringLiteral("Direct.Do"), "late");
    QVERIFY(dialog::test::expectNothingFor(
        200, [&] { return log.size() != before; }, "a command delivered after its name was unregistered"));
}

void tst_Client::advertiseOption_data()
{
    QTest::addColumn<QString>("environment");
    QTest::addColumn<QStringList>("arguments");
    QTest::addColumn<QString>("host"); // empty: refused
    QTest::newRow("default") << QString() << QStringList{} << QString();
    QTest::newRow("environment") << QStringLiteral("10.1.0.2") << QStringList{} << QStringLiteral("10.1.0.2");
    QTest::newRow("option over environment")
        << QStringLiteral("10.1.0.2") << QStringList{QStringLiteral("--advertise"), QStringLiteral("daq-pc2")}
        << QStringLiteral("daq-pc2");
    QTest::newRow("with a port") << QString() << QStringList{QStringLiteral("--advertise=h:1")} << QString();
    QTest::newRow("with a space") << QString() << QStringList{QStringLiteral("--advertise=a b")} << QString();
}

void tst_Client::advertiseOption()
{
    QFETCH(QString, environment);
    QFETCH(QStringList, arguments);
    QFETCH(QString, host);
    const QByteArray before = qgetenv("DIALOG_ADVERTISE");
    auto restore = qScopeGuard([&] { qputenv("DIALOG_ADVERTISE", before); });
    qputenv("DIALOG_ADVERTISE", environment.toUtf8());
    QCommandLineParser p;
    ClientOptions::addParserOptions(p);
    QVERIFY(p.parse(QStringList{QStringLiteral("prog")} + arguments));
    ClientOptions o = ClientOptions::fromEnvironment(QStringLiteral("Advertiser"));
    const Status st = o.applyParser(p);
    if (host.isEmpty() && !arguments.isEmpty()) {
        QCOMPARE(st.code(), Status::Code::BadRequest);
        QVERIFY2(st.message().startsWith(QStringLiteral("invalid --advertise")), qPrintable(st.message()));
        return;
    }
    QVERIFY2(st.isOk(), qPrintable(st.toString()));
    QCOMPARE(o.host, host);
    // The light scan of fromArguments() knows it too.
    QCOMPARE(
        ClientOptions::fromArguments(QStringList{QStringLiteral("prog")} + arguments, QStringLiteral("A"))
            .host,
        host);
}

// Many processes of one host starting at once against one process (a big node, NAT, a bench) need
// more than the 64 inbound connections per address that may wait for their HELLO at once.
void tst_Client::handshakeLimitPerAddressIsAnOption()
{
    {
        QCommandLineParser p;
        ClientOptions::addParserOptions(p);
        QVERIFY(p.parse(
            {QStringLiteral("prog"), QStringLiteral("--max-handshaking-per-address"), QStringLiteral("0")}));
        ClientOptions o;
        const Status st = o.applyParser(p);
        QCOMPARE(st.code(), Status::Code::BadRequest);
        QVERIFY2(st.message().startsWith(QStringLiteral("invalid --max-handshaking-per-address")),
                 qPrintable(st.message()));
    }
    {
        // Its neighbour, --receive-spin-us (0 to 100,000 µs), and $DIALOG_RECEIVE_SPIN_US.
        QCommandLineParser p;
        ClientOptions::addParserOptions(p);
        QVERIFY(p.parse({QStringLiteral("prog"), QStringLiteral("--receive-spin-us"), QStringLiteral("50")}));
        ClientOptions o;
        QCOMPARE(o.receiveSpinUs, 0);
        const Status st = o.applyParser(p);
        QVERIFY2(st.isOk(), qPrintable(st.toString()));
        QCOMPARE(o.receiveSpinUs, 50);
        QCommandLineParser bad;
        ClientOptions::addParserOptions(bad);
        QVERIFY(
            bad.parse({QStringLiteral("prog"), QStringLiteral("--receive-spin-us"), QStringLiteral("-1")}));
        const Status refused = o.applyParser(bad);
        QVERIFY2(refused.message().startsWith(QStringLiteral("invalid --receive-spin-us")),
                 qPrintable(refused.toString()));
        qputenv("DIALOG_RECEIVE_SPIN_US", "20");
        const int fromEnv = ClientOptions::fromEnvironment().receiveSpinUs;
        qunsetenv("DIALOG_RECEIVE_SPIN_US");
        QCOMPARE(fromEnv, 20);
    }
    QCommandLineParser p;
    ClientOptions::addParserOptions(p);
    QVERIFY(p.parse(
        {QStringLiteral("prog"), QStringLiteral("--max-handshaking-per-address"), QStringLiteral("2")}));
    ClientOptions o = m_cs.options(QStringLiteral("Handshaker"));
    QCOMPARE(o.maxHandshakingPerAddress, 64);
    const Status st = o.applyParser(p);
    QVERIFY2(st.isOk(), qPrintable(st.toString()));
    QCOMPARE(o.maxHandshakingPerAddress, 2);
    Client c(o);
    QVERIFY(c.start());
    // The Control Server's connection to the new process (from 127.0.0.1 too) has said HELLO.
    QTRY_VERIFY_WITH_TIMEOUT(c.state() == Client::State::Connected, 10000);
    // Three silent connections: two may wait for their HELLO, one is closed at once (which one
    // depends on the order the reader threads take them).
    std::vector<std::unique_ptr<QTcpSocket>> silent;
    for (int i = 0; i < 3; ++i) {
        silent.push_back(std::make_unique<QTcpSocket>());
        silent.back()->connectToHost(QHostAddress::LocalHost, c.port());
        QVERIFY(silent.back()->waitForConnected(3000));
    }
    const auto closed = [&silent] {
        return std::count_if(silent.cbegin(), silent.cend(),
                             [](const auto &s) { return s->state() == QAbstractSocket::UnconnectedState; });
    };
    QTRY_COMPARE_WITH_TIMEOUT(closed(), 1, 4000);
    // The two within the limit still wait (the handshake time-out is 5 s).
    QVERIFY(dialog::test::expectNothingFor(
        300, [&] { return closed() != 1; }, "a connection within the limit closed before its time-out"));
}

void tst_Client::advertisesTheRouteToTheControlServer()
{
    // No host name that may not resolve elsewhere: the local address of the route to the Control
    // Server, here the loopback one.
    Client c(m_cs.options(QStringLiteral("Router.Default")));
    QVERIFY(c.start());
    Client reader(m_cs.options(QStringLiteral("Router.Reader")));
    QVERIFY(reader.start());
    Subscription *dir = reader.subscribe(directoryServiceName());
    QTRY_VERIFY_WITH_TIMEOUT(
        [&] {
            const auto d = dialog::test::fromJson<DirectorySnapshot>(dir->lastMessage().data());
            return d && d->process(QStringLiteral("Router.Default")) &&
                   d->process(QStringLiteral("Router.Default"))->host == QLatin1String("127.0.0.1");
        }(),
        10000);
}

void tst_Client::advertisedAddressIsReachable()
{
    // Another loopback address: the directory says it, and subscribers reach the provider there.
    ClientOptions o = m_cs.options(QStringLiteral("Provider.Advertised"));
    o.host = QStringLiteral("127.0.0.2");
    Client provider(o);
    Service *svc = provider.publish(QStringLiteral("Advertised.Value"));
    QVERIFY(svc);
    QVERIFY(provider.start());
    Client subscriber(m_cs.options(QStringLiteral("Subscriber.Advertised")));
    QVERIFY(subscriber.start());
    Subscription *dir = subscriber.subscribe(directoryServiceName());
    QTRY_VERIFY_WITH_TIMEOUT(
        [&] {
            const auto d = dialog::test::fromJson<DirectorySnapshot>(dir->lastMessage().data());
            return d && d->process(QStringLiteral("Provider.Advertised")) &&
                   d->process(QStringLiteral("Provider.Advertised"))->host == QLatin1String("127.0.0.2");
        }(),
        10000);
    Subscription *sub = subscriber.subscribe(QStringLiteral("Advertised.Value"));
    QTRY_COMPARE_WITH_TIMEOUT(svc->subscriberCount(), 1, 10000);
    QVERIFY(svc->update("over 127.0.0.2"));
    QTRY_COMPARE_WITH_TIMEOUT(sub->lastMessage().data(), QByteArray("over 127.0.0.2"), 10000);
}

void tst_Client::staleNotConnectedAnswersAreIgnoredWhileConnecting()
{
    // After a pulled cable, the Control Server reads the heartbeats a process sent into the cut
    // before its CONNECT; it has declared the process lost and answers each of them with
    // CONNECTION_LOST, then the CONNECT with SUCCESSFULLY_CONNECTED. A server that does exactly that
    // (three stale answers ahead of every acceptance): the process connects once and stays. Before,
    // each stale answer made it connect again, each new CONNECT drew new stale answers, and it
    // registered over and over.
    net::Transport server{net::TransportOptions{}};
    QObject context;
    int connects = 0;
    server.setControlSink(&context, [&](net::InboundBatch &batch) {
        for (const net::Inbound &in : std::as_const(batch)) {
            if (in.type != wire_format::Type::ConnectToControlServer || !in.peer)
                continue;
            ++connects;
            wire::Connect connect;
            wire_format::parseControl(in.data, connect);
            const net::OutboxPtr box = server.outbox(in.peer->endpoint);
            wire::ConnectionLost stale;
            stale.set_reason("not connected: send CONNECT_TO_CONTROL_SERVER first");
            for (int i = 0; i < 3; ++i)
                server.send(box, wire_format::controlFrame(wire_format::Type::ConnectionLost, stale));
            wire::Connected ok;
            ok.set_server("127.0.0.1");
            ok.set_heartbeat_ms(1000);
            ok.set_heartbeat_misses(3);
            ok.set_session(connect.session()); // what tells the process this is its Control Server
            server.send(box, wire_format::controlFrame(wire_format::Type::SuccessfullyConnected, ok));
        }
    });
    QString error;
    QVERIFY2(server.listen(QHostAddress::LocalHost, 0, &error), qPrintable(error));
    net::PeerInfo self;
    self.name = QStringLiteral("DIALOG.ControlServer");
    self.endpoint = net::Endpoint{QStringLiteral("127.0.0.1"), server.serverPort()};
    self.incarnation = 1;
    server.setIdentity(self);

    ClientOptions o;
    o.name = QStringLiteral("StaleAnswers");
    o.controlServers = {QStringLiteral("127.0.0.1:%1").arg(server.serverPort())};
    Client c(o);
    QVERIFY(c.start());
    QTRY_COMPARE_WITH_TIMEOUT(c.state(), Client::State::Connected, 10000);
    // The stale answers came before the acceptance, on the same connection: any CONNECT they
    // drew would come now.
    QVERIFY(dialog::test::expectNothingFor(
        500, [&] { return connects != 1 || c.state() != Client::State::Connected; },
        "a CONNECT again after a stale CONNECTION_LOST"));
}

QTEST_GUILESS_MAIN(tst_Client)
#include "tst_client.moc"
