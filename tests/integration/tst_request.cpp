// Request/reply between processes: addressed to the provider of a service, answered once.
#include "processfixture.h"

#include "dialog/client.h"

#include <QRandomGenerator>
#include <QSignalSpy>
#include <QtTest>
#include <atomic>
#include <csignal>
#include <mutex>

using namespace dialog;
using namespace dialog::test;

class tst_Request : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void init();
    void cleanup();
    void requestAnsweredByProvider();
    void repliesBeyondTheQueueBoundAreNotLost();
    void directHandlerAnswersInTheReaderThread();
    void requestWaitsForAProviderThatStartsLater();
    void errorRepliesAndNotAccepted();
    void unansweredRequestTimesOut();
    void lostProviderFailsPendingRequests();
    void requestToAProviderThatRestartedDoesNotWaitOutItsTimeout();
    void invalidRequestsRefusedAtOnce();
    void callbackSkippedWhenContextIsGone();
    void echoAnswersRequestsWithTheirData();
    void benchRoundTripOfRequests();

private:
    std::unique_ptr<ProcessFixture> m_fx;
};

namespace {
struct Collector
{
    QList<Reply> replies;
    std::function<void(const Reply &)> fn()
    {
        return [this](const Reply &r) { replies << r; };
    }
};

/// A provider of @p service that upper-cases requests ("fail:..." gives an error reply; "ignore" no reply).
void serveUpperCase(Client &c)
{
    QObject::connect(&c, &Client::requestReceived, &c, [&c](const Request &r) {
        if (r.data().startsWith("fail:"))
            c.replyError(r, QString::fromUtf8(r.data().mid(5)));
        else if (r.data() != "ignore")
            c.reply(r, r.data().toUpper() + " for " + r.origin().toUtf8());
    });
}
} // namespace

void tst_Request::echoAnswersRequestsWithTheirData()
{
    // dialogctl echo --reply: the provider side of dialogctl bench rtt --mode request.
    m_fx->start(QStringLiteral("dialogctl"),
                {QStringLiteral("echo"), QStringLiteral("--name"), QStringLiteral("Echo"),
                 QStringLiteral("--reply"), QStringLiteral("Echo.rr"), QStringLiteral("--quiet")});
    Client client(m_fx->clientOptions(QStringLiteral("EchoAsker")));
    QVERIFY(client.start());
    QList<Reply> replies;
    for (const QByteArray &d : {QByteArray("one"), QByteArray(100000, 'x')})
        client.request(QStringLiteral("Echo.rr"), d, 10000, this, [&](const Reply &r) { replies << r; });
    QTRY_COMPARE_WITH_TIMEOUT(replies.size(), 2, 15000);
    // Each reply carries its own request's data (the order of the two is not fixed).
    std::sort(replies.begin(), replies.end(),
              [](const Reply &a, const Reply &b) { return a.data().size() < b.data().size(); });
    QVERIFY2(replies.at(0).isOk(), qPrintable(replies.at(0).errorString()));
    QCOMPARE(replies.at(0).data(), QByteArray("one"));
    QCOMPARE(replies.at(1).data(), QByteArray(100000, 'x'));
}

void tst_Request::benchRoundTripOfRequests()
{
    QProcess *bench = m_fx->start(QStringLiteral("dialogctl"),
                                  {QStringLiteral("bench"), QStringLiteral("rtt"), QStringLiteral("--mode"),
                                   QStringLiteral("request"), QStringLiteral("--count"),
                                   QStringLiteral("200"), QStringLiteral("--json")});
    QVERIFY(bench->waitForFinished(60000));
    const QByteArray out = bench->readAllStandardOutput();
    QVERIFY2(bench->exitCode() == 0, bench->readAllStandardError().constData());
    const QJsonObject j = QJsonDocument::fromJson(out).object();
    QCOMPARE(j.value(QStringLiteral("mode")).toString(), QStringLiteral("request"));
    QCOMPARE(j.value(QStringLiteral("count")).toInt(), 200);
    QVERIFY(j.value(QStringLiteral("p50_us")).toDouble() > 0);
    QVERIFY(j.value(QStringLiteral("p99_us")).toDouble() >= j.value(QStringLiteral("p50_us")).toDouble());

    // --direct: the echo answers in its reader thread (Client::setRequestHandlerDirect).
    QProcess *direct =
        m_fx->start(QStringLiteral("dialogctl"),
                    {QStringLiteral("bench"), QStringLiteral("rtt"), QStringLiteral("--mode"),
                     QStringLiteral("request"), QStringLiteral("--direct"), QStringLiteral("--count"),
                     QStringLiteral("200"), QStringLiteral("--json")});
    QVERIFY(direct->waitForFinished(60000));
    QVERIFY2(direct->exitCode() == 0, direct->readAllStandardError().constData());
    const QJsonObject dj = QJsonDocument::fromJson(direct->readAllStandardOutput()).object();
    QCOMPARE(dj.value(QStringLiteral("direct")).toBool(), true);
    QCOMPARE(dj.value(QStringLiteral("count")).toInt(), 200);

    // --receive-spin-us: every process of the round trip (the Control Server, the echo and the
    // bench) keeps its readers awake after receiving; the figures are the README's, not asserted.
    for (const QString &mode : {QStringLiteral("request"), QStringLiteral("command")}) {
        QProcess *spin =
            m_fx->start(QStringLiteral("dialogctl"),
                        {QStringLiteral("bench"), QStringLiteral("rtt"), QStringLiteral("--mode"), mode,
                         QStringLiteral("--receive-spin-us"), QStringLiteral("50"), QStringLiteral("--count"),
                         QStringLiteral("200"), QStringLiteral("--json")});
        QVERIFY(spin->waitForFinished(60000));
        QVERIFY2(spin->exitCode() == 0, spin->readAllStandardError().constData());
        const QJsonObject sj = QJsonDocument::fromJson(spin->readAllStandardOutput()).object();
        QCOMPARE(sj.value(QStringLiteral("receive_spin_us")).toInt(), 50);
        QCOMPARE(sj.value(QStringLiteral("count")).toInt(), 200);
    }
    // The Control Server checks the value.
    QProcess *badSpin = m_fx->start(QStringLiteral("dialog-controlserver"),
                                    {QStringLiteral("--port"), QStringLiteral("0"), QStringLiteral("--receive-spin-us"),
                                     QStringLiteral("forever")});
    QVERIFY(badSpin->waitForFinished(10000));
    QVERIFY(badSpin->exitCode() != 0);
    QVERIFY(badSpin->readAllStandardError().contains("invalid --receive-spin-us 'forever'"));

    QProcess *bad = m_fx->start(QStringLiteral("dialogctl"),
                                {QStringLiteral("bench"), QStringLiteral("rtt"), QStringLiteral("--mode"),
                                 QStringLiteral("carrier-pigeon")});
    QVERIFY(bad->waitForFinished(10000));
    QCOMPARE(bad->exitCode(), 1);
    QVERIFY(bad->readAllStandardError().contains("unknown --mode 'carrier-pigeon'"));
}

void tst_Request::init()
{
    m_fx = std::make_unique<ProcessFixture>();
    QVERIFY(m_fx->startControlServer());
}

void tst_Request::cleanup()
{
    m_fx.reset();
}

void tst_Request::requestAnsweredByProvider()
{
    Client server(m_fx->clientOptions(QStringLiteral("Upper")));
    server.publish(QStringLiteral("Upper.Service"));
    serveUpperCase(server);
    QVERIFY(server.start());
    Client client(m_fx->clientOptions(QStringLiteral("Asker")));
    QVERIFY(client.start());
    Collector got;
    const quint64 a = client.request(QStringLiteral("Upper.Service"), "abc", 5000, this, got.fn()).id();
    const quint64 b =
        client.request(QStringLiteral("Upper.Service"), QByteArray(200000, 'z'), 5000, this, got.fn()).id();
    QVERIFY(a != b);
    QTRY_COMPARE_WITH_TIMEOUT(got.replies.size(), 2, 10000);
    QVERIFY(expectNothingFor(
        100, [&] { return got.replies.size() != 2; }, "a reply delivered twice"));
    for (const Reply &r : std::as_const(got.replies)) {
        QVERIFY2(r.isOk(), qPrintable(r.errorString()));
        if (r.id() == a)
            QCOMPARE(r.data(), QByteArray("ABC for Asker"));
        else
            QCOMPARE(r.data(), QByteArray(200000, 'Z') + " for Asker");
    }
}

// The queue to a requester is bounded (ClientOptions::maxQueueBytes), but a reply answers a request
// the requester is waiting for: replies may fill it to 16 times its bound, and a burst of them is not
// lost while the requester is not reading.
void tst_Request::repliesBeyondTheQueueBoundAreNotLost()
{
    ClientOptions options = m_fx->clientOptions(QStringLiteral("SmallQueue"));
    options.maxQueueBytes = 1024 * 1024;
    Client server(options);
    server.publish(QStringLiteral("SmallQueue.Service"));
    // Answered in the reader thread while this thread waits: the requester takes nothing meanwhile.
    std::atomic<int> answered{0};
    server.setRequestHandlerDirect(QStringLiteral("SmallQueue.Service"),
                                   [&server, &answered](const Request &r) {
                                       server.reply(r, r.data().toUpper());
                                       ++answered;
                                   });
    QVERIFY(server.start());
    ClientOptions askerOptions = m_fx->clientOptions(QStringLiteral("ManyAsks"));
    askerOptions.maxPendingBytes = 64 * 1024;
    askerOptions.receiveBufferBytes = 256 * 1024; // smaller stalls on loopback (zero-window probes)
    // The 10 MB of requests are queued at once: the asker's own queue must hold them all, or those
    // beyond it are refused (QueueFull) whenever its sender thread has not written enough meanwhile.
    askerOptions.maxQueueBytes = 32 * 1024 * 1024;
    Client client(askerOptions);
    QVERIFY(client.start());
    Collector got;
    QVERIFY(client.request(QStringLiteral("SmallQueue.Service"), "first", 20000, this, got.fn()).id() != 0);
    QTRY_COMPARE_WITH_TIMEOUT(got.replies.size(), 1, 20000); // connected both ways
    const int count = 40;
    QByteArray noise(256 * 1024, Qt::Uninitialized); // not compressible
    for (qsizetype i = 0; i < noise.size(); ++i)
        noise[i] = char(QRandomGenerator::global()->bounded(256));
    for (int i = 0; i < count; ++i) // 40 replies of 256 KB: 10 MB, beyond the sockets' buffers
        client.request(QStringLiteral("SmallQueue.Service"), noise, 20000, this, got.fn());
    QVERIFY2(pollUntil([&answered] { return answered.load() == 1 + count; }, 20000, 10),
             "the provider did not answer every request while the requester took nothing");
    QTRY_COMPARE_WITH_TIMEOUT(got.replies.size(), 1 + count, 30000);
    for (const Reply &r : std::as_const(got.replies))
        QVERIFY2(r.isOk(), qPrintable(r.errorString()));
    QCOMPARE(server.statistics().dropped, quint64(0));
    QCOMPARE(client.statistics().dropped, quint64(0));
}

// Client::setRequestHandlerDirect: requests go to the handler in a reader thread, in the requester's
// order, and requestReceived() is not emitted for them; replies sent from there arrive; the handler
// removed, requests are emitted in the Client's thread again.
void tst_Request::directHandlerAnswersInTheReaderThread()
{
    Client server(m_fx->clientOptions(QStringLiteral("DirectUpper")));
    server.publish(QStringLiteral("DirectUpper.Service"));
    std::mutex lock;
    QList<QByteArray> seen;
    QSet<QThread *> threads;
    server.setRequestHandlerDirect(QStringLiteral("DirectUpper.Service"), [&](const Request &r) {
        {
            std::lock_guard<std::mutex> l(lock);
            seen << r.data();
            threads << QThread::currentThread();
        }
        server.reply(r, r.data().toUpper() + " for " + r.origin().toUtf8());
    });
    int queued = 0;
    connect(&server, &Client::requestReceived, &server, [&](const Request &r) {
        ++queued;
        server.reply(r, "queued " + r.data());
    });
    QVERIFY(server.start());
    Client client(m_fx->clientOptions(QStringLiteral("DirectAsker")));
    QVERIFY(client.start());
    Collector got;
    QList<quint64> ids;
    for (int i = 0; i < 20; ++i)
        ids << client.request(QStringLiteral("DirectUpper.Service"), "req" + QByteArray::number(i), 10000, this,
                              got.fn())
                   .id();
    QTRY_COMPARE_WITH_TIMEOUT(got.replies.size(), 20, 15000);
    for (const Reply &r : std::as_const(got.replies)) {
        QVERIFY2(r.isOk(), qPrintable(r.errorString()));
        QCOMPARE(r.data(), "REQ" + QByteArray::number(ids.indexOf(r.id())) + " for DirectAsker");
    }
    {
        std::lock_guard<std::mutex> l(lock);
        QCOMPARE(seen.size(), 20);
        for (int i = 0; i < 20; ++i)
            QCOMPARE(seen.at(i), "req" + QByteArray::number(i)); // the requester's order
        QVERIFY(!threads.contains(server.thread()));
    }
    QCOMPARE(queued, 0);

    server.setRequestHandlerDirect(QStringLiteral("DirectUpper.Service"), nullptr);
    got.replies.clear();
    client.request(QStringLiteral("DirectUpper.Service"), "again", 10000, this, got.fn());
    QTRY_COMPARE_WITH_TIMEOUT(got.replies.size(), 1, 10000);
    QCOMPARE(got.replies.first().data(), QByteArray("queued again"));
    QCOMPARE(queued, 1);
}

void tst_Request::requestWaitsForAProviderThatStartsLater()
{
    Client client(m_fx->clientOptions(QStringLiteral("EarlyAsker")));
    QVERIFY(client.start());
    Collector got;
    client.request(QStringLiteral("Late.Upper"), "late", 10000, this, got.fn());
    QVERIFY(expectNothingFor(
        300, [&] { return !got.replies.isEmpty(); }, "an answer while there is no provider"));
    Client server(m_fx->clientOptions(QStringLiteral("LateUpper")));
    server.publish(QStringLiteral("Late.Upper"));
    serveUpperCase(server);
    QVERIFY(server.start());
    QTRY_COMPARE_WITH_TIMEOUT(got.replies.size(), 1, 10000);
    QCOMPARE(got.replies.first().data(), QByteArray("LATE for EarlyAsker"));
}

void tst_Request::errorRepliesAndNotAccepted()
{
    Client server(m_fx->clientOptions(QStringLiteral("Picky")));
    server.publish(QStringLiteral("Picky.Service"));
    serveUpperCase(server);
    QVERIFY(server.start());
    Client mute(m_fx->clientOptions(QStringLiteral("Mute")));
    mute.publish(QStringLiteral("Mute.Service")); // publishes, but takes no requests
    QVERIFY(mute.start());
    Client client(m_fx->clientOptions(QStringLiteral("Asker2")));
    QVERIFY(client.start());
    Collector failed, refused;
    client.request(QStringLiteral("Picky.Service"), "fail:no such object", 5000, this, failed.fn());
    client.request(QStringLiteral("Mute.Service"), "hello", 5000, this, refused.fn());
    QTRY_COMPARE_WITH_TIMEOUT(failed.replies.size(), 1, 10000);
    QCOMPARE(failed.replies.first().error(), Status::Code::Failed);
    QCOMPARE(failed.replies.first().errorString(), QStringLiteral("no such object"));
    QTRY_COMPARE_WITH_TIMEOUT(refused.replies.size(), 1, 10000);
    QCOMPARE(refused.replies.first().error(), Status::Code::NotAccepted);
    QVERIFY(refused.replies.first().errorString().contains(QStringLiteral("takes no requests")));
}

void tst_Request::unansweredRequestTimesOut()
{
    Client server(m_fx->clientOptions(QStringLiteral("Slowpoke")));
    server.publish(QStringLiteral("Slow.Service"));
    serveUpperCase(server);
    QVERIFY(server.start());
    Client client(m_fx->clientOptions(QStringLiteral("Impatient")));
    QVERIFY(client.start());
    Collector got;
    QElapsedTimer t;
    t.start();
    client.request(QStringLiteral("Slow.Service"), "ignore", 400, this, got.fn());
    QTRY_COMPARE_WITH_TIMEOUT(got.replies.size(), 1, 5000);
    QCOMPARE(got.replies.first().error(), Status::Code::Timeout);
    QVERIFY(t.elapsed() >= 390);
}

void tst_Request::lostProviderFailsPendingRequests()
{
    QProcess *provider =
        m_fx->start(QStringLiteral("dialogctl"),
                    {QStringLiteral("publish"), QStringLiteral("Doomed.Service"), QStringLiteral("--name"),
                     QStringLiteral("Doomed"), QStringLiteral("--heartbeat-ms"), QStringLiteral("200")});
    ClientOptions o = m_fx->clientOptions(QStringLiteral("Waiter"));
    o.heartbeatMs = 200;
    Client client(o);
    QVERIFY(client.start());
    Subscription *where = client.subscribe(QStringLiteral("Doomed.Service"));
    QTRY_COMPARE_WITH_TIMEOUT(where->state(), Subscription::State::Active, 10000);
    ::kill(pid_t(provider->processId()), SIGSTOP); // it will never answer
    Collector got;
    client.request(QStringLiteral("Doomed.Service"), "anyone?", 20000, this, got.fn());
    QTRY_COMPARE_WITH_TIMEOUT(got.replies.size(), 1, 5000);
    QCOMPARE(got.replies.first().error(), Status::Code::ProviderLost);
    ::kill(pid_t(provider->processId()), SIGKILL);
}

void tst_Request::requestToAProviderThatRestartedDoesNotWaitOutItsTimeout()
{
    auto server = std::make_unique<Client>(m_fx->clientOptions(QStringLiteral("Phoenix")));
    server->publish(QStringLiteral("Phoenix.Service"));
    serveUpperCase(*server);
    QVERIFY(server->start());
    Client client(m_fx->clientOptions(QStringLiteral("Caller")));
    QVERIFY(client.start());
    Collector first;
    client.request(QStringLiteral("Phoenix.Service"), "one", 10000, this, first.fn());
    QTRY_COMPARE_WITH_TIMEOUT(first.replies.size(), 1, 10000);
    QVERIFY(first.replies.first().isOk());
    // The provider goes away cleanly and a new one starts on another port. A request sent at once
    // may still go to the old address (the connection is refused): it must fail as ProviderLost or
    // reach the new provider, not wait for its 60 s time-out.
    server.reset();
    Collector got;
    client.request(QStringLiteral("Phoenix.Service"), "two", 60000, this, got.fn());
    Client again(m_fx->clientOptions(QStringLiteral("Phoenix")));
    again.publish(QStringLiteral("Phoenix.Service"));
    serveUpperCase(again);
    QVERIFY(again.start());
    QTRY_COMPARE_WITH_TIMEOUT(got.replies.size(), 1, 20000);
    const Reply &r = got.replies.first();
    QVERIFY2(r.isOk() || r.error() == Status::Code::ProviderLost, qPrintable(r.errorString()));
    // And the service works again once the new provider is known (a request that still went to the
    // old address fails at once; asking again is what a caller does).
    QByteArray answer;
    for (int attempt = 0; attempt < 100 && answer.isEmpty(); ++attempt) {
        Collector third;
        client.request(QStringLiteral("Phoenix.Service"), "three", 10000, this, third.fn());
        QTRY_COMPARE_WITH_TIMEOUT(third.replies.size(), 1, 10000);
        const Reply &t = third.replies.first();
        QVERIFY2(t.isOk() || t.error() == Status::Code::ProviderLost, qPrintable(t.errorString()));
        if (t.isOk())
            answer = t.data();
        else
            letTimePass(50, "the provider's new incarnation registers: ask again after 50 ms");
    }
    QCOMPARE(answer, QByteArray("THREE for Caller"));
}

void tst_Request::invalidRequestsRefusedAtOnce()
{
    ClientOptions o = m_fx->clientOptions(QStringLiteral("Sloppy"));
    o.maxMessageSize = 1024;
    Client client(o);
    Collector got;
    client.request(QStringLiteral("X"), "not started", 1000, this, got.fn());
    QVERIFY(client.start());
    client.request(QString(), "no name", 1000, this, got.fn());
    client.request(QStringLiteral("X"), QByteArray(2048, 'x'), 1000, this, got.fn());
    QTRY_COMPARE_WITH_TIMEOUT(got.replies.size(), 3, 1000);
    QCOMPARE(got.replies.at(0).error(), Status::Code::NotConnected);
    QCOMPARE(got.replies.at(1).error(), Status::Code::InvalidName);
    QCOMPARE(got.replies.at(2).error(), Status::Code::MessageTooLarge);
}

void tst_Request::callbackSkippedWhenContextIsGone()
{
    Client client(m_fx->clientOptions(QStringLiteral("Forgetful")));
    QVERIFY(client.start());
    bool called = false;
    {
        QObject context;
        client.request(QStringLiteral("Nobody.Home"), "x", 200, &context,
                       [&](const Reply &) { called = true; });
    }
    // Past the request's 200 ms time-out, when the callback would have run.
    QVERIFY(expectNothingFor(
        400, [&called] { return called; }, "a callback whose context is gone"));
}

QTEST_GUILESS_MAIN(tst_Request)
#include "tst_request.moc"
