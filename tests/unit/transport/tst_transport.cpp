// Unit tests of the transport (libdialog/src/transport_p.h): two endpoints in one process over
// 127.0.0.1. Frames arrive in order and whole, large ones too; a peer that is gone costs the
// sender every queued frame, each counted; bad input closes that one connection and nothing else.
#include "control_p.h"
#include "dialog/handoff.h"
#include "payload_p.h"
#include "servicestate_p.h"
#include "tlsfiles.h"
#include "transport_p.h"
#include "waits.h"
#include "wirecodec.h"

#include <QElapsedTimer>
#include <QSignalSpy>
#include <QTcpServer>
#include <QTcpSocket>
#include <QtEndian>
#include <QtTest>

#include <mutex>

using namespace dialog;
using namespace dialog::net;
using namespace dialog::wire_format;
using dialog::test::expectNothingFor;
using dialog::test::pauseThread;
using dialog::test::pattern;
using dialog::test::pollUntil;
using dialog::test::waitUntil;

namespace {

constexpr int Timeout = 20000;

/// A transport that listens on 127.0.0.1 and keeps what its sinks receive (in the test's thread).
struct Receiver
{
    QObject context;
    std::unique_ptr<Transport> transport;
    InboundBatch data, control;

    explicit Receiver(const TransportOptions &o = TransportOptions())
        : transport(std::make_unique<Transport>(o))
    {
        transport->setDataSink(&context, [this](InboundBatch &b) { data.append(b); });
        transport->setControlSink(&context, [this](InboundBatch &b) { control.append(b); });
    }
    bool listen()
    {
        QString error;
        const bool ok = transport->listen(QHostAddress::LocalHost, 0, &error);
        if (!ok)
            qWarning().noquote() << error;
        return ok;
    }
    Endpoint endpoint() const { return Endpoint{QStringLiteral("127.0.0.1"), transport->serverPort()}; }
};

std::unique_ptr<Transport> makeSender(const QString &name, const TransportOptions &o = TransportOptions())
{
    auto t = std::make_unique<Transport>(o);
    PeerInfo me;
    me.name = name;
    me.endpoint = Endpoint{QStringLiteral("127.0.0.1"), 1};
    me.pid = 1;
    me.incarnation = 7;
    t->setIdentity(me);
    return t;
}

/// Receiver options under which its user's thread (the test's, not running its event loop) soon
/// stops reading: once 64 KiB wait, reading pauses and TCP pushes back on the senders.
TransportOptions pausingReceiver()
{
    TransportOptions o;
    o.readerThreads = 1;
    o.maxPendingDelivery = 64 * 1024;
    return o;
}

QByteArray serviceFrame(QByteArrayView name, quint64 seq, QByteArrayView data, quint8 flags = 0)
{
    QByteArray f;
    appendServiceFrame(f, name, seq, flags, data);
    return f;
}

QByteArray hello(const QString &name)
{
    wire::Hello h;
    h.set_name(name.toStdString());
    h.set_host("127.0.0.1");
    h.set_port(1);
    h.set_pid(2);
    h.set_incarnation(3);
    return controlFrame(Type::Hello, h);
}

/// Counts a signal the transport emits from its own threads (destinationFailed, protocolError) and
/// keeps the first emission's arguments. A QSignalSpy is not for that: it appends in the
/// emitting thread under its own lock while the test reads its list with none (a data race).
class CrossThreadSpy
{
    static inline char connected = 0; // the address only
public:
    template <typename Sender, typename Signal> CrossThreadSpy(Sender *sender, Signal signal)
    {
        // Connected while the transport's threads run: Qt publishes the connection (and our slot
        // object) to them inside libQt6Core, so the order is said for ThreadSanitizer (a global
        // address: the lambda reads nothing of its own before it acquires).
        QObject::connect(
            sender, signal, &m_context,
            [this](const auto &...args) {
                dialog::handoff::tsanAcquire(&connected);
                QMutexLocker l(&m_lock);
                if (m_count++ == 0)
                    m_first = QVariantList{QVariant::fromValue(args)...};
            },
            Qt::DirectConnection);
        dialog::handoff::tsanRelease(&connected);
    }
    int size() const
    {
        QMutexLocker l(&m_lock);
        return m_count;
    }
    bool isEmpty() const { return size() == 0; }
    /// Argument @p i of the first emission.
    QVariant first(int i = 0) const
    {
        QMutexLocker l(&m_lock);
        return m_first.value(i);
    }

private:
    mutable QMutex m_lock;
    int m_count = 0;
    QVariantList m_first;
    QObject m_context; // destroyed first: no call comes in once the rest goes
};

/// A sender that lost a destination still delivers to another one.
bool servesAnotherDestination(Transport &s)
{
    Receiver other;
    if (!other.listen())
        return false;
    s.send(s.outbox(other.endpoint()), serviceFrame("S", 99, "after"));
    return QTest::qWaitFor([&] { return !other.data.isEmpty(); }, Timeout) && other.data.size() == 1 &&
           other.data.first().dataCopy() == QByteArray("after");
}

} // namespace

class tst_Transport : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void framesDeliveredInOrder();
    void pagedValueLargerThanTheQueueArrivesInOrder();
    void largePayloadsArriveWhole_data();
    void largePayloadsArriveWhole();
    void everyDiscardedFrameIsCounted();
    void peerThatDisappearsCostsItsFramesOnly();
    void connectionThatFailsAtOnceCostsItsFramesOnly();
    void badInputClosesOnlyThatConnection_data();
    void badInputClosesOnlyThatConnection();
    void routerSeesCommandsAsSent();
    void routerNeverSeesBadCompressedCommands();
    void framesBeforeTheSinkIsSetReachItOnceSet();
    void smallReceiveBufferIsWarnedAbout();
    void newSenderIsHeardWhileDeliveryIsPaused();
    void heapIsHandedBackAfterABurst();
    void readerSpinsAfterReceivingWhenAsked();
    void directAndQueuedWritesKeepTheOrder();
    void partialDirectWriteIsFinishedBySenderThread();
    void corkedFramesWaitBehindAPartialWrite();
    void directWritesFollowTheSecretsHandshake();
    void tlsConnectionsNeverWriteDirect();
    void noDirectWritesWhenTurnedOff();
    void corkedFramesLeaveTogether();
    void heldFramesGoOutWhenTheEventLoopTurns();
    void heldFramesKeepTheirPlaceAmongOtherThreadsFrames();
    void heldFramesAreNotHeldLong();
    void waitingUntilWrittenWritesHeldFrames();
};

void tst_Transport::framesDeliveredInOrder()
{
    Receiver r;
    QVERIFY(r.listen());
    auto s = makeSender(QStringLiteral("sender"));
    const OutboxPtr box = s->outbox(r.endpoint());
    constexpr int N = 20000;
    for (int i = 1; i <= N; ++i) {
        const QByteArray data = QByteArray::number(i);
        const qint64 size = HeaderSize + 2 + 4 + 8 + data.size();
        QCOMPARE(s->sendSmall(
                     box, size, [&](QByteArray &out) { appendServiceFrame(out, "S.1", quint64(i), 0, data); },
                     5000),
                 Transport::SendResult::Queued);
    }
    QTRY_COMPARE_WITH_TIMEOUT(r.data.size(), N, Timeout);
    for (int i = 0; i < N; ++i) {
        const Inbound &in = r.data.at(i);
        QCOMPARE(in.type, Type::ServiceMessage);
        QCOMPARE(in.name, QByteArray("S.1"));
        QCOMPARE(in.sequence, quint64(i + 1));
        QCOMPARE(in.dataCopy(), QByteArray::number(i + 1));
        QCOMPARE(in.incarnation, quint64(7));
    }
    QCOMPARE(r.transport->stats().framesIn, quint64(N));
    QCOMPARE(r.transport->stats().protocolErrors, quint64(0));
    QCOMPARE(s->stats().framesDropped, quint64(0));
}

void tst_Transport::pagedValueLargerThanTheQueueArrivesInOrder()
{
    // DIALOG.Directory in pages: 6 pages of 50 KB to a subscriber whose queue holds 64 KiB. Each
    // catch-up resumes at the first page not queued and waits until that page fits: every page
    // arrives once, in order (before: the catch-up started again at page 0 and came back at once
    // while the queue was half empty).
    Receiver r;
    QVERIFY(r.listen());
    TransportOptions o;
    o.maxQueueBytes = 64 * 1024;
    // The catch-up needs a full queue: once connected, pages written from this thread would go to
    // the kernel's buffer, not to the queue, whenever the sender thread drained it in time.
    o.directWrites = false;
    Transport sender(o);
    PeerInfo me;
    me.name = QStringLiteral("pager");
    me.endpoint = Endpoint{QStringLiteral("127.0.0.1"), 1};
    me.incarnation = 9;
    sender.setIdentity(me);
    auto st = std::make_shared<ServiceState>();
    st->name = QStringLiteral("S.Paged");
    st->key = st->name.toUtf8();
    st->transport = &sender;
    st->addSubscriber(Subscriber{sender.outbox(r.endpoint()), QStringLiteral("reader"), 1});
    QList<QByteArray> pages;
    for (int i = 0; i < 6; ++i)
        pages << pattern(50000, quint32(i + 1));
    QVERIFY(!st->publishPages(pages)); // the second page does not fit at once
    QTRY_COMPARE_WITH_TIMEOUT(r.data.size(), 6, Timeout);
    for (int i = 0; i < 6; ++i) {
        QCOMPARE(r.data.at(i).sequence, quint64(i + 1));
        QVERIFY(r.data.at(i).dataCopy() == pages.at(i));
    }
    // A new subscriber gets every page too.
    Receiver late;
    QVERIFY(late.listen());
    st->addSubscriber(Subscriber{sender.outbox(late.endpoint()), QStringLiteral("late"), 1});
    QTRY_COMPARE_WITH_TIMEOUT(late.data.size(), 6, Timeout);
    for (int i = 0; i < 6; ++i)
        QCOMPARE(late.data.at(i).sequence, quint64(i + 1));
    QVERIFY(expectNothingFor(
        100, [&] { return r.data.size() > 6 || late.data.size() > 6; }, "a page delivered twice"));
    QCOMPARE(r.data.size(), 6);
    QCOMPARE(late.data.size(), 6);
}

void tst_Transport::largePayloadsArriveWhole_data()
{
    QTest::addColumn<qsizetype>("size");
    QTest::addColumn<bool>("compress");
    QTest::newRow("1 MiB") << qsizetype(1024 * 1024) << false;
    QTest::newRow("16 MiB") << qsizetype(16 * 1024 * 1024) << false;
    QTest::newRow("8 MiB compressed") << qsizetype(8 * 1024 * 1024) << true;
}

void tst_Transport::largePayloadsArriveWhole()
{
    QFETCH(qsizetype, size);
    QFETCH(bool, compress);
    Receiver r;
    QVERIFY(r.listen());
    auto s = makeSender(QStringLiteral("big"));
    const OutboxPtr box = s->outbox(r.endpoint());
    QList<QByteArray> sent;
    for (quint32 i = 0; i < 3; ++i) {
        QByteArray data = compress ? QByteArray(size, char('a' + i)) : pattern(size, i + 1);
        quint8 flags = 0;
        const QByteArray prepared = prepareData(data, compress ? 1024 : 0, flags);
        QCOMPARE(bool(flags & Compressed), compress);
        QCOMPARE(s->send(box, {serviceFramePrefix("Big", i, flags, prepared.size()), prepared}, 10000),
                 Transport::SendResult::Queued);
        sent.append(data);
    }
    QTRY_COMPARE_WITH_TIMEOUT(r.data.size(), 3, Timeout);
    for (int i = 0; i < 3; ++i) {
        QCOMPARE(r.data.at(i).sequence, quint64(i));
        QCOMPARE(r.data.at(i).dataCopy().size(), size);
        QVERIFY(r.data.at(i).dataCopy() == sent.at(i));
    }
}

void tst_Transport::everyDiscardedFrameIsCounted()
{
    // A destination where nobody listens: the connection is refused and everything queued for it
    // is discarded. Each frame is a drop, not each connection.
    quint16 port = 0;
    {
        Receiver gone;
        QVERIFY(gone.listen());
        port = gone.transport->serverPort();
    }
    auto s = makeSender(QStringLiteral("lonely"));
    CrossThreadSpy failed(s.get(), &Transport::destinationFailed);
    const OutboxPtr box = s->outbox(Endpoint{QStringLiteral("127.0.0.1"), port});
    constexpr int Small = 40, Large = 3;
    for (int i = 0; i < Small; ++i)
        s->send(box, serviceFrame("S", quint64(i), "small"));
    const QByteArray big = pattern(2 * 1024 * 1024, 3);
    for (int i = 0; i < Large; ++i)
        s->send(box, {serviceFramePrefix("S", quint64(i), 0, big.size()), big});
    QTRY_VERIFY_WITH_TIMEOUT(!failed.isEmpty(), Timeout);
    QTRY_COMPARE_WITH_TIMEOUT(s->stats().framesDropped, quint64(Small + Large), Timeout);
    QCOMPARE(box->framesSent.load(), quint64(Small + Large));
    QCOMPARE(box->queuedBytes(), 0);
    s.reset(); // its threads stop before the spy on it goes
}

void tst_Transport::connectionThatFailsAtOnceCostsItsFramesOnly()
{
    // TCP to a multicast address fails inside connect() ("Network unreachable", nothing is sent),
    // as a connect does when the host's cable is pulled: the socket reports the error before
    // connectToHost() returns. Once, the sender then wrote the HELLO and the frames into the
    // connection that error had just deleted.
    auto s = makeSender(QStringLiteral("unplugged"));
    CrossThreadSpy failed(s.get(), &Transport::destinationFailed);
    const OutboxPtr box = s->outbox(Endpoint{QStringLiteral("224.0.0.1"), 9});
    constexpr int Frames = 5;
    for (int i = 0; i < Frames; ++i)
        s->send(box, serviceFrame("S", quint64(i), "lost"));
    QTRY_VERIFY_WITH_TIMEOUT(!failed.isEmpty(), Timeout);
    QCOMPARE(failed.first().toString(), QStringLiteral("224.0.0.1"));
    QTRY_COMPARE_WITH_TIMEOUT(s->stats().framesDropped, quint64(Frames), Timeout);
    QCOMPARE(box->queuedBytes(), 0);

    // Again (a new connection each time), and the sender still serves another destination.
    s->send(box, serviceFrame("S", 9, "lost too"));
    QTRY_COMPARE_WITH_TIMEOUT(s->stats().framesDropped, quint64(Frames + 1), Timeout);
    QVERIFY(servesAnotherDestination(*s));
    s.reset(); // its threads stop before the spy on it goes
}

void tst_Transport::peerThatDisappearsCostsItsFramesOnly()
{
    auto r = std::make_unique<Receiver>();
    QVERIFY(r->listen());
    auto s = makeSender(QStringLiteral("steady"));
    CrossThreadSpy failed(s.get(), &Transport::destinationFailed);
    const OutboxPtr box = s->outbox(r->endpoint());
    s->send(box, serviceFrame("S", 1, "before"));
    QTRY_COMPARE_WITH_TIMEOUT(r->data.size(), 1, Timeout);
    const Endpoint goneAt = r->endpoint();
    r.reset();

    // Keep sending: the broken connection, then the refused reconnections, discard what was
    // queued, and every such frame is counted.
    const QByteArray chunk = pattern(256 * 1024, 5);
    quint64 seq = 2;
    QTRY_VERIFY_WITH_TIMEOUT((s->send(box, {serviceFramePrefix("S", seq, 0, chunk.size()), chunk}), ++seq,
                              s->stats().framesDropped > 0),
                             Timeout);
    QVERIFY(!failed.isEmpty());
    QCOMPARE(failed.first().toString(), goneAt.host);
    QCOMPARE(failed.first(1).value<quint16>(), goneAt.port);
    QVERIFY(s->stats().framesDropped <= seq - 2);

    // The sender itself is unharmed: another destination gets its frames.
    QVERIFY(servesAnotherDestination(*s));
    s.reset(); // its threads stop before the spy on it goes
}

void tst_Transport::badInputClosesOnlyThatConnection_data()
{
    QTest::addColumn<QByteArray>("bytes");
    QByteArray oversize = hello(QStringLiteral("liar"));
    appendHeader(oversize, Type::ServiceMessage, 0, 64 * 1024 + 1);
    QTest::newRow("oversize frame") << oversize;
    QTest::newRow("bad magic") << QByteArray(hello(QStringLiteral("noise")) + QByteArray(40, '\x5a'));
    QTest::newRow("no hello") << serviceFrame("S", 1, "x");
    QTest::newRow("unknown type") << QByteArray(
        hello(QStringLiteral("future")) + QByteArray("\xA1\xD1\x01\x63\x00\x00\x00\x00\x00\x00\x00\x00", 12));
    QTest::newRow("unknown version") << QByteArray(
        hello(QStringLiteral("v2")) + QByteArray("\xA1\xD1\x02\x04\x00\x00\x00\x00\x00\x00\x00\x00", 12));
    QTest::newRow("truncated service payload")
        << QByteArray(hello(QStringLiteral("short")) + encodeFrame(Type::ServiceMessage, 0,
                                                                   "\x05\x00"
                                                                   "ab"));
    QTest::newRow("corrupt zstd") << QByteArray(hello(QStringLiteral("zstd")) +
                                                serviceFrame("S", 1, "not zstd at all", Compressed));
}

void tst_Transport::badInputClosesOnlyThatConnection()
{
    QFETCH(QByteArray, bytes);
    TransportOptions o;
    o.maxMessageSize = 64 * 1024 - NameOverhead; // frames up to 64 KiB
    Receiver r(o);
    QVERIFY(r.listen());
    CrossThreadSpy errors(r.transport.get(), &Transport::protocolError);

    QTcpSocket raw;
    raw.connectToHost(QHostAddress::LocalHost, r.transport->serverPort());
    QVERIFY(raw.waitForConnected(Timeout));
    raw.write(bytes);
    QTRY_COMPARE_WITH_TIMEOUT(errors.size(), 1, Timeout);
    QTRY_COMPARE_WITH_TIMEOUT(raw.state(), QAbstractSocket::UnconnectedState, Timeout);
    QVERIFY(r.data.isEmpty());
    QCOMPARE(r.transport->stats().protocolErrors, quint64(1));

    // A well-behaved sender on another connection is served as before.
    auto s = makeSender(QStringLiteral("good"));
    s->send(s->outbox(r.endpoint()), serviceFrame("S", 1, "fine"));
    QTRY_COMPARE_WITH_TIMEOUT(r.data.size(), 1, Timeout);
    QCOMPARE(r.data.first().dataCopy(), QByteArray("fine"));
    QCOMPARE(errors.size(), 1);
    r.transport.reset(); // its threads stop before the spy on it goes
}

void tst_Transport::routerSeesCommandsAsSent()
{
    // A router (the Control Server) relays commands: it gets them as the sender compressed them.
    Receiver r;
    QMutex lock;
    QList<Inbound> routed;
    r.transport->setDirectRoute([&](const Inbound &in) {
        QMutexLocker l(&lock);
        routed.append(in);
        return true;
    });
    QVERIFY(r.listen());
    QByteArray text;
    while (text.size() < 100000)
        text += "channel " + QByteArray::number(text.size() % 89) + " on\n";
    quint8 flags = 0;
    const QByteArray packed = prepareData(text, 1024, flags);
    QCOMPARE(flags, quint8(Compressed));
    auto s = makeSender(QStringLiteral("rc"));
    const OutboxPtr box = s->outbox(r.endpoint());
    s->send(box, encodeCommandFrame("Configure", "rc", flags, packed));
    s->send(box, encodeCommandFrame("Start", "rc", 0, "now"));
    QTRY_COMPARE_WITH_TIMEOUT((QMutexLocker(&lock), routed.size()), 2, Timeout);
    QMutexLocker l(&lock);
    QCOMPARE(routed[0].name, QByteArray("Configure"));
    QCOMPARE(routed[0].flags, quint8(Compressed));
    QVERIFY(routed[0].dataCopy() == packed);
    QCOMPARE(routed[1].flags, quint8(0));
    QCOMPARE(routed[1].dataCopy(), QByteArray("now"));
    QVERIFY(r.data.isEmpty());
}

void tst_Transport::routerNeverSeesBadCompressedCommands()
{
    // Relayed compressed, but checked first: the sender of a bad one is cut off, not the target.
    TransportOptions o;
    o.maxMessageSize = 100000;
    Receiver r(o);
    std::atomic<int> routed{0};
    r.transport->setDirectRoute([&](const Inbound &) { return ++routed, true; });
    QVERIFY(r.listen());
    CrossThreadSpy errors(r.transport.get(), &Transport::protocolError);
    quint8 flags = 0;
    const QByteArray tooLarge = prepareData(QByteArray(200000, 'x'), 1024, flags);
    QCOMPARE(flags, quint8(Compressed));
    QByteArray corrupt = prepareData(QByteArray(50000, 'y'), 1024, flags);
    corrupt[corrupt.size() / 2] = char(corrupt[corrupt.size() / 2] ^ 0x55);
    const QList<QByteArray> bad{tooLarge, corrupt};
    for (qsizetype i = 0; i < bad.size(); ++i) {
        auto s = makeSender(QStringLiteral("bad"));
        s->send(s->outbox(r.endpoint()), encodeCommandFrame("Configure", "bad", Compressed, bad[i]));
        QTRY_COMPARE_WITH_TIMEOUT(errors.size(), int(i + 1), Timeout);
    }
    QCOMPARE(routed.load(), 0);
    r.transport.reset(); // its threads stop before the spy on it goes
}

void tst_Transport::framesBeforeTheSinkIsSetReachItOnceSet()
{
    // Client::start() sets its control sink after listen(): a frame may come first. It waits and
    // reaches the sink with the next delivery (before: the queue stayed marked as posted with
    // nobody to drain it, and nothing was ever delivered again).
    QObject context;
    Transport receiver{TransportOptions()};
    QString error;
    QVERIFY2(receiver.listen(QHostAddress::LocalHost, 0, &error), qPrintable(error));
    auto s = makeSender(QStringLiteral("early"));
    const OutboxPtr box = s->outbox(Endpoint{QStringLiteral("127.0.0.1"), receiver.serverPort()});
    s->send(box, serviceFrame("S", 1, "early"));
    QTRY_COMPARE_WITH_TIMEOUT(receiver.stats().framesIn, quint64(1), Timeout);
    InboundBatch got;
    receiver.setDataSink(&context, [&got](InboundBatch &b) { got.append(b); });
    s->send(box, serviceFrame("S", 2, "late"));
    QTRY_COMPARE_WITH_TIMEOUT(got.size(), 2, Timeout);
    QCOMPARE(got.at(0).dataCopy(), QByteArray("early"));
    QCOMPARE(got.at(1).dataCopy(), QByteArray("late"));
}

void tst_Transport::readerSpinsAfterReceivingWhenAsked()
{
    // receiveSpinUs: after a frame the reader stays awake (polling) before it sleeps, so that a
    // frame soon after finds it awake; so does the sink's thread (this one) after a delivery. 1 s
    // here (a slow, sanitized build too), the second frame 50 ms after the first has been read.
    TransportOptions o;
    o.readerThreads = 1;
    o.receiveSpinUs = 1000000;
    Receiver r(o);
    QVERIFY(r.listen());
    auto s = makeSender(QStringLiteral("spin"));
    const OutboxPtr box = s->outbox(r.endpoint());
    s->send(box, serviceFrame("S", 1, "first"));
    // Without running this thread's event loop (its spin would hold it here): the frame read.
    QVERIFY(pollUntil([&] { return r.transport->stats().framesIn >= 1; }, Timeout));
    QCOMPARE(r.transport->stats().framesIn, quint64(1));
    pauseThread(50, "the second frame 50 ms after the first, the reader spinning");
    s->send(box, serviceFrame("S", 2, "second"));
    QTRY_COMPARE_WITH_TIMEOUT(r.data.size(), 2, Timeout);
    QTRY_VERIFY_WITH_TIMEOUT(r.transport->stats().receiveSpinHits >= 1, Timeout);
    QVERIFY(r.transport->stats().receiveSpins >= r.transport->stats().receiveSpinHits);
    // The sink's thread spins when its event loop is about to block (QTest's waits never block).
    QEventLoop loop;
    QTimer::singleShot(100, &loop, &QEventLoop::quit);
    loop.exec();
    QVERIFY(r.transport->stats().sinkSpins >= 1);
    // Without it, never.
    Receiver quiet;
    QVERIFY(quiet.listen());
    const OutboxPtr box2 = s->outbox(quiet.endpoint());
    s->send(box2, serviceFrame("S", 1, "first"));
    QTRY_COMPARE_WITH_TIMEOUT(quiet.data.size(), 1, Timeout);
    QCOMPARE(quiet.transport->stats().receiveSpins, quint64(0));
    QCOMPARE(quiet.transport->stats().sinkSpins, quint64(0));
}

void tst_Transport::heapIsHandedBackAfterABurst()
{
    // malloc_trim is glibc's: elsewhere nothing is ever trimmed (and that is checked too).
#if defined(__GLIBC__)
    constexpr quint64 Trimmed = 1;
#else
    constexpr quint64 Trimmed = 0;
#endif
    // The test's thread takes nothing until it runs its event loop: the frames wait for delivery.
    Receiver r;
    QVERIFY(r.listen());
    auto s = makeSender(QStringLiteral("burst"));
    const OutboxPtr box = s->outbox(r.endpoint());
    const QByteArray payload(64 * 1024, 'b');
    const auto burst = [&](int frames) {
        const quint64 before = r.transport->stats().framesIn;
        for (int i = 0; i < frames; ++i)
            s->send(box, serviceFrame("S", quint64(i), payload), 5000);
        pollUntil([&] { return r.transport->stats().framesIn >= before + quint64(frames); }, Timeout, 5);
        QCOMPARE(r.transport->stats().framesIn, before + quint64(frames));
    };
    // A small burst (640 KiB waiting) is not worth it: nothing is trimmed.
    burst(10);
    QTRY_COMPARE_WITH_TIMEOUT(r.data.size(), 10, Timeout);
    QVERIFY(expectNothingFor(
        Transport::TrimQuietMs + 500, [&] { return r.transport->stats().heapTrims > 0; },
        "a heap trim after a burst too small for it"));
    // 12.5 MiB waiting, then delivered: once delivery stays low, the heap is trimmed, once.
    burst(200);
    QCOMPARE(r.transport->stats().heapTrims, quint64(0));
    QTRY_COMPARE_WITH_TIMEOUT(r.data.size(), 210, Timeout);
    QTRY_COMPARE_WITH_TIMEOUT(r.transport->stats().heapTrims, Trimmed, Timeout);
    QVERIFY(expectNothingFor(
        Transport::TrimQuietMs + 500, [&] { return r.transport->stats().heapTrims != Trimmed; },
        "a second heap trim with nothing new delivered"));
}

void tst_Transport::newSenderIsHeardWhileDeliveryIsPaused()
{
    // The user's thread (this one, not running its event loop) takes nothing: once 64 KiB wait,
    // reading pauses and TCP pushes back on the first sender. A second sender that connects then is
    // still heard (its HELLO and what came with it): before, its connection was not read until the
    // backlog drained, and it was closed for sending no HELLO. Then everything arrives, in order.
    Receiver r(pausingReceiver());
    QVERIFY(r.listen());
    // Settled: no frame read for 200 ms (or, bounded, where it stood after Timeout).
    const auto framesInSettled = [&] {
        quint64 last = ~quint64(0);
        pollUntil(
            [&] {
                const quint64 now = r.transport->stats().framesIn;
                const bool still = now == last;
                last = now;
                return still;
            },
            Timeout, 200);
        return last;
    };
    auto first = makeSender(QStringLiteral("first"));
    const OutboxPtr a = first->outbox(r.endpoint());
    constexpr int Frames = 400;
    for (int i = 1; i <= Frames; ++i)
        QCOMPARE(first->send(a, serviceFrame("A", quint64(i), pattern(1024, i)), Timeout),
                 Transport::SendResult::Queued);
    const quint64 paused = framesInSettled();
    QVERIFY2(paused < quint64(Frames), "reading did not pause");
    auto second = makeSender(QStringLiteral("second"));
    second->send(second->outbox(r.endpoint()), serviceFrame("B", 1, "late"));
    // B 1 (HELLO is not counted)
    QVERIFY2(pollUntil([&] { return r.transport->stats().framesIn >= paused + 1; }, Timeout, 20),
             "the second sender was not read");
    QTRY_COMPARE_WITH_TIMEOUT(r.data.size(), Frames + 1, Timeout);
    quint64 next = 1;
    for (const Inbound &in : std::as_const(r.data))
        if (in.name == "A")
            QCOMPARE(in.sequence, next++);
    QCOMPARE(r.transport->stats().protocolErrors, quint64(0));
}

namespace {
/// A sender whose every frame to an empty queue is written from the calling thread (no gap).
TransportOptions eagerDirect()
{
    TransportOptions o;
    o.directWriteGapNs = 0;
    return o;
}

/// Sends service frames S/1..@p n alternating small ones, written directly when the queue is
/// empty, and ones over the direct bound (always queued), waiting now and then for the queue to
/// drain so that direct writes and queued ones mix.
void sendMixed(Transport &s, const OutboxPtr &box, int n)
{
    const QByteArray big = pattern(s.options().directWriteMaxBytes + 1000, 11);
    for (int i = 1; i <= n; ++i) {
        const QByteArray data = i % 3 == 0 ? big : QByteArray::number(i);
        if (i % 2 == 0)
            QCOMPARE(s.send(box, {serviceFramePrefix("S", quint64(i), 0, data.size()), data}, Timeout),
                     Transport::SendResult::Queued);
        else {
            const QByteArray frame = serviceFrame("S", quint64(i), data);
            QCOMPARE(s.sendSmall(
                         box, frame.size(), [&](QByteArray &out) { out.append(frame); }, Timeout),
                     Transport::SendResult::Queued);
        }
        if (i % 7 == 0)
            QTRY_COMPARE_WITH_TIMEOUT(box->queuedBytes(), 0, Timeout);
    }
}

/// A receiver with @p ro, a sender with @p so: sendMixed(@p n), then every frame must arrive whole
/// and in the order of the calls. Returns the sender's outbox and figures in @p box and @p stats.
void mixedRun(const TransportOptions &ro, const TransportOptions &so, int n, OutboxPtr *box,
              Transport::Stats *stats)
{
    Receiver r(ro);
    QVERIFY(r.listen());
    auto s = makeSender(QStringLiteral("mixed"), so);
    *box = s->outbox(r.endpoint());
    sendMixed(*s, *box, n);
    if (QTest::currentTestFailed())
        return;
    QTRY_COMPARE_WITH_TIMEOUT(r.data.size(), n, Timeout);
    const qint64 bigSize = so.directWriteMaxBytes + 1000;
    for (int i = 1; i <= n; ++i) {
        const Inbound &in = r.data.at(i - 1);
        QCOMPARE(in.sequence, quint64(i));
        if (i % 3 == 0) {
            QCOMPARE(in.dataCopy().size(), bigSize);
            QCOMPARE(in.dataCopy(), pattern(bigSize, 11));
        } else {
            QCOMPARE(in.dataCopy(), QByteArray::number(i));
        }
    }
    *stats = s->stats();
}

} // namespace

void tst_Transport::directAndQueuedWritesKeepTheOrder()
{
    // Frames written from the calling thread (queue empty) and frames queued for the sender
    // thread (behind a large one, or in a burst) reach the receiver in the order of the calls.
    OutboxPtr box;
    Transport::Stats stats;
    constexpr int N = 400;
    mixedRun(TransportOptions(), eagerDirect(), N, &box, &stats);
    if (QTest::currentTestFailed())
        return;
    // Both paths were taken: some frames went directly, the large ones (and those behind them)
    // through the sender thread.
    QVERIFY(box->directWrites.load() > 0);
    QVERIFY(box->directWrites.load() < quint64(N));
    QCOMPARE(stats.framesDropped, quint64(0));
}

namespace {
/// A receiver that stops reading (its user's thread, this one, takes nothing: reading pauses and
/// the kernel's buffers fill), and a sender that writes large frames from the calling thread.
struct StuffedSetup
{
    StuffedSetup() : r(pausingReceiver())
    {
        TransportOptions so = eagerDirect();
        so.directWriteMaxBytes = 1024 * 1024;
        so.maxQueueBytes = 64 * 1024 * 1024;
        s = makeSender(QStringLiteral("stuffed"), so);
    }
    Receiver r;
    std::unique_ptr<Transport> s;
    OutboxPtr box;
    const QByteArray data = pattern(50001, 4); // odd: the socket is unlikely to fill on a frame's end
    quint64 seq = 0;
    void sendOne()
    {
        QCOMPARE(s->send(box, {serviceFramePrefix("S", ++seq, 0, data.size()), data}),
                 Transport::SendResult::Queued);
    }
    /// Frames written directly, without running this thread's event loop (nothing is delivered
    /// meanwhile), until the socket takes only part of one: the rest of it is the sender thread's.
    bool stuffUntilPartial()
    {
        if (!r.listen())
            return false;
        box = s->outbox(r.endpoint());
        sendOne();
        if (!QTest::qWaitFor([&] { return box->queuedBytes() == 0; }, Timeout))
            return false; // connected; the next go directly
        for (int round = 0; round < 3 && box->directPartial.load() == 0; ++round) {
            while (box->queuedBytes() == 0 && seq < 4000)
                sendOne();
            if (box->directPartial.load() == 0 && // the socket filled on a frame's end: drain, try again
                !QTest::qWaitFor([&] { return box->queuedBytes() == 0; }, Timeout))
                return false;
        }
        return box->directPartial.load() > 0;
    }
    /// Once the receiver reads again, every frame arrives whole and in order.
    void checkAllArrived()
    {
        QTRY_COMPARE_WITH_TIMEOUT(r.data.size(), qsizetype(seq), Timeout);
        for (quint64 i = 1; i <= seq; ++i) {
            QCOMPARE(r.data.at(qsizetype(i - 1)).sequence, i);
            QCOMPARE(r.data.at(qsizetype(i - 1)).dataCopy(), data);
        }
        QCOMPARE(s->stats().framesDropped, quint64(0));
        QCOMPARE(r.transport->stats().protocolErrors, quint64(0));
    }
};
} // namespace

void tst_Transport::partialDirectWriteIsFinishedBySenderThread()
{
    // The rest of the frame the socket took in part goes first to the sender thread, later frames
    // queue behind it.
    StuffedSetup c;
    QVERIFY2(c.stuffUntilPartial(), "no direct write was partial");
    for (int i = 0; i < 20; ++i)
        c.sendOne();
    QVERIFY(c.box->directWrites.load() > 0);
    c.checkAllArrived();
}

void tst_Transport::corkedFramesWaitBehindAPartialWrite()
{
    // The sender thread owns the rest of a frame the socket took in part: a corked thread's frames
    // are not held for it to write itself (they would cut into that frame), they queue behind.
    StuffedSetup c;
    QVERIFY2(c.stuffUntilPartial(), "no direct write was partial");
    QObject context;
    const quint64 heldBefore = c.s->stats().heldFrames;
    c.s->cork(&context);
    for (int i = 0; i < 5; ++i)
        c.sendOne();
    QCOMPARE(c.s->stats().heldFrames, heldBefore);
    c.s->uncork();
    c.checkAllArrived();
}

void tst_Transport::directWritesFollowTheSecretsHandshake()
{
    // With a shared secret frames wait for the destination's proof; direct writes start after it
    // (never ahead of the held frames) and the order holds.
    TransportOptions o = eagerDirect();
    o.secret = QByteArray(32, 's');
    OutboxPtr box;
    Transport::Stats stats;
    mixedRun(o, o, 200, &box, &stats);
    if (QTest::currentTestFailed())
        return;
    QVERIFY(box->directWrites.load() > 0);
    QCOMPARE(stats.authFailures, quint64(0));
}

void tst_Transport::tlsConnectionsNeverWriteDirect()
{
    // A QSslSocket encrypts in the sender thread: with TLS nothing is written from the calling
    // thread, and everything arrives.
    test::TlsFiles files;
    QString error;
    QVERIFY2(test::makeTlsFiles(QStringLiteral(DIALOG_BIN_DIR "/../tls-tst_transport"),
                                QStringLiteral("peer"), &files, &error),
             qPrintable(error));
    TransportOptions o = eagerDirect();
    QVERIFY2(applySecurity(QString(), {files.cert, files.key, files.ca}, o, &error), qPrintable(error));
    OutboxPtr box;
    Transport::Stats stats;
    mixedRun(o, o, 100, &box, &stats);
    if (QTest::currentTestFailed())
        return;
    QCOMPARE(box->directWrites.load(), quint64(0));
}

void tst_Transport::noDirectWritesWhenTurnedOff()
{
    TransportOptions o = eagerDirect();
    o.directWrites = false;
    OutboxPtr box;
    Transport::Stats stats;
    mixedRun(TransportOptions(), o, 100, &box, &stats);
    if (QTest::currentTestFailed())
        return;
    QCOMPARE(box->directWrites.load(), quint64(0));
}

QTEST_GUILESS_MAIN(tst_Transport)
// A receive buffer below 256 KiB stalls on loopback (the zero-window probe): it is warned about,
// once, when the transport is made; the default (the system's) and 256 KiB are not.
void tst_Transport::smallReceiveBufferIsWarnedAbout()
{
    TransportOptions o;
    o.receiveBufferBytes = 64 * 1024;
    QTest::ignoreMessage(QtWarningMsg,
                         QRegularExpression(QStringLiteral("receive buffer of 65536 bytes: below 262144")));
    {
        Transport small(o);
    }
    QTest::failOnWarning(QRegularExpression(QStringLiteral("receive buffer of")));
    o.receiveBufferBytes = SmallReceiveBufferBytes;
    Transport enough(o);
    o.receiveBufferBytes = 0;
    Transport systems(o);
}

namespace {
/// A receiver and a sender whose connection writes from the calling thread (its descriptor is
/// shared once connected and authenticated): frames S/1.. sent, now and then, until one was.
struct CorkSetup
{
    explicit CorkSetup(qint64 holdNs = 10LL * 1000 * 1000 * 1000) // held until uncork() by default
    {
        TransportOptions o;
        o.corkHoldNs = holdNs;
        s = makeSender(QStringLiteral("cork"), o);
    }
    Receiver r;
    std::unique_ptr<Transport> s;
    QObject context; // the corking thread's (this one's): gone before the sender
    OutboxPtr box;
    quint64 next = 1;
    /// Connects, then corks this thread.
    bool startCorked()
    {
        if (!r.listen())
            return false;
        box = s->outbox(r.endpoint());
        const bool direct = waitUntil(
            [&] {
                if (box->directWrites.load() > 0)
                    return true;
                s->send(box, serviceFrame("S", next++, "warm-up")); // until one is written directly
                return false;
            },
            Timeout, 20);
        if (!direct || !QTest::qWaitFor([&] { return r.data.size() == qsizetype(next - 1); }, Timeout))
            return false;
        s->cork(&context);
        return true;
    }
    /// Sends S/next, alternately through send() and sendSmall().
    void sendOne(int blockMs = 0)
    {
        const quint64 seq = next++;
        const QByteArray frame = serviceFrame("S", seq, QByteArray::number(seq));
        if (seq % 2)
            QCOMPARE(s->send(box, frame, blockMs), Transport::SendResult::Queued);
        else
            QCOMPARE(s->sendSmall(
                         box, frame.size(), [&](QByteArray &out) { out.append(frame); }, blockMs),
                     Transport::SendResult::Queued);
    }
    /// Every frame sent so far arrived, once, in the order of the calls.
    void checkAllArrived()
    {
        QTRY_COMPARE_WITH_TIMEOUT(r.data.size(), qsizetype(next - 1), Timeout);
        for (qsizetype i = 0; i < r.data.size(); ++i)
            QCOMPARE(r.data.at(i).sequence, quint64(i + 1));
    }
};
} // namespace

void tst_Transport::corkedFramesLeaveTogether()
{
    // Frames a corked thread sends to an idle destination wait (nothing goes to the socket, the
    // sender thread is not woken) and leave together at uncork(), in far fewer system calls than
    // frames, in order.
    CorkSetup c;
    QVERIFY(c.startCorked());
    const Transport::Stats before = c.s->stats();
    constexpr int N = 200;
    for (int i = 0; i < N; ++i)
        c.sendOne();
    // Held: queued, none written yet (no event of this thread was processed meanwhile).
    const Transport::Stats held = c.s->stats();
    QCOMPARE(held.heldFrames - before.heldFrames, quint64(N));
    QCOMPARE(held.heldWrites, before.heldWrites);
    QVERIFY(c.box->queuedBytes() > 0);
    c.s->uncork();
    const Transport::Stats after = c.s->stats();
    QCOMPARE(c.box->queuedBytes(), 0); // all written by this thread, at once
    const quint64 writes = after.heldWrites - before.heldWrites;
    QVERIFY2(writes >= 1 && writes * 10 <= quint64(N), qPrintable(QString::number(writes)));
    c.checkAllArrived();
}

void tst_Transport::heldFramesGoOutWhenTheEventLoopTurns()
{
    // A slot that sends a request and waits for the answer in a nested event loop while its thread
    // is corked (a batch of deliveries): the request leaves as soon as the loop turns, not at the
    // end of the batch it would wait for.
    CorkSetup c;
    QVERIFY(c.startCorked());
    c.sendOne();
    c.checkAllArrived(); // QTRY turns the event loop
    c.sendOne();         // and a later frame is held again, and goes the same way
    c.checkAllArrived();
    c.s->uncork();
    QCOMPARE(c.box->queuedBytes(), 0);
}

void tst_Transport::heldFramesKeepTheirPlaceAmongOtherThreadsFrames()
{
    // Frames held by a cork, then frames from another thread to the same destination (they find
    // the queue taken: the sender thread writes everything, held frames first), then a blocking
    // send from the corked thread (never held): all arrive in the order of the calls, before any
    // uncork.
    CorkSetup c;
    QVERIFY(c.startCorked());
    for (int i = 0; i < 10; ++i)
        c.sendOne();
    std::atomic<int> refused{0};
    std::thread other([&] {
        for (int i = 0; i < 10; ++i) {
            const quint64 seq = c.next++; // in turn with this thread: it waits for the join
            if (c.s->send(c.box, serviceFrame("S", seq, QByteArray::number(seq))) !=
                Transport::SendResult::Queued)
                ++refused;
        }
    });
    other.join();
    QCOMPARE(refused.load(), 0);
    for (int i = 0; i < 5; ++i)
        c.sendOne();
    for (int i = 0; i < 5; ++i)
        c.sendOne(Timeout);
    // Not waiting for uncork: the sender thread took the queue.
    QTRY_COMPARE_WITH_TIMEOUT(c.r.data.size(), qsizetype(c.next - 1), Timeout);
    c.s->uncork();
    c.checkAllArrived();
}

void tst_Transport::heldFramesAreNotHeldLong()
{
    // A thread that stays corked (a long batch) writes what it holds once it has held a frame for
    // corkHoldNs: the next frame it sends takes everything out, without uncork() and without the
    // event loop turning.
    constexpr qint64 HoldNs = 1000 * 1000;
    CorkSetup c(HoldNs);
    QVERIFY(c.startCorked());
    c.sendOne();
    QVERIFY(c.box->queuedBytes() > 0);
    const qint64 until = steadyNowNs() + 2 * HoldNs;
    while (steadyNowNs() < until) {
    }
    c.sendOne();
    QCOMPARE(c.box->queuedBytes(), 0);
    c.s->uncork();
    c.checkAllArrived();
}

void tst_Transport::waitingUntilWrittenWritesHeldFrames()
{
    // Client::flush() from a slot while its thread is corked, or from another thread meanwhile:
    // the frames the cork holds are written, not waited for until the deadline.
    CorkSetup c;
    QVERIFY(c.startCorked());
    c.sendOne();
    QVERIFY(c.box->queuedBytes() > 0);
    QVERIFY(c.s->waitUntilWritten(QDeadlineTimer(Timeout)));
    QCOMPARE(c.box->queuedBytes(), 0);
    c.sendOne(); // held again; now another thread waits
    QVERIFY(c.box->queuedBytes() > 0);
    bool written = false;
    std::thread other([&] { written = c.s->waitUntilWritten(QDeadlineTimer(Timeout)); });
    other.join();
    QVERIFY(written); // returned true: written, not given up at the deadline
    c.s->uncork();
    c.checkAllArrived();
}

#include "tst_transport.moc"
