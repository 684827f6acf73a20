// dialog::Stream: a one-way channel opened from a Request to the requesting process. Order,
// results of send() (Ok, QueueFull, Broken) and whenRoom() called back in its context's thread.
// Two clients in one process against a real Control Server process.
#include "../controlserverprocess.h"

#include "dialog/client.h"

#include <QSignalSpy>
#include <QThread>
#include <QtTest>

using namespace dialog;

class tst_Stream : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void messagesArriveInOrder_data();
    void messagesArriveInOrder();
    void fullQueueThenRoomInContextThread();
    void whenRoomSkipsDestroyedContext();
    void brokenOnceReceiverIsGone();

private:
    /// @p receiver asks @p sender (which publishes "Stream.Source") for a stream on @p channel.
    StreamPtr open(Client &sender, Client &receiver, const QString &channel);

    test::ControlServerProcess m_cs;
};

void tst_Stream::initTestCase()
{
    QVERIFY(m_cs.start());
}

StreamPtr tst_Stream::open(Client &sender, Client &receiver, const QString &channel)
{
    StreamPtr stream;
    if (!sender.service(QStringLiteral("Stream.Source")))
        sender.publish(QStringLiteral("Stream.Source"));
    const QMetaObject::Connection c = connect(&sender, &Client::requestReceived, this, [&](const Request &r) {
        stream = sender.openStream(r, QString::fromUtf8(r.data()));
        sender.reply(r, stream ? "ok" : "no");
    });
    bool answered = false;
    receiver.request(QStringLiteral("Stream.Source"), channel.toUtf8(), 10000, this,
                     [&answered](const Reply &) { answered = true; });
    if (!QTest::qWaitFor([&answered] { return answered; }, 15000))
        qWarning("no answer to the stream request within 15 s");
    disconnect(c);
    return stream;
}

void tst_Stream::messagesArriveInOrder_data()
{
    QTest::addColumn<int>("count");
    QTest::addColumn<int>("size");
    QTest::newRow("small") << 500 << 16;
    QTest::newRow("large") << 20 << 300000;
}

void tst_Stream::messagesArriveInOrder()
{
    QFETCH(int, count);
    QFETCH(int, size);
    Client sender(m_cs.options(QStringLiteral("Stream.Sender")));
    Client receiver(m_cs.options(QStringLiteral("Stream.Receiver")));
    QVERIFY(sender.start() && receiver.start());
    const QString channel = QStringLiteral("Stream.Receiver/order");
    Subscription *in = receiver.attach(channel);
    QVERIFY(in);
    QList<QByteArray> got;
    connect(in, &Subscription::messageReceived, this, [&got](const Message &m) { got << m.data(); });
    const StreamPtr out = open(sender, receiver, channel);
    QVERIFY(out);
    QCOMPARE(out->channel(), channel);
    QCOMPARE(out->peer(), QStringLiteral("Stream.Receiver"));
    for (int i = 0; i < count; ++i) {
        QByteArray data(size, char('a' + i % 26));
        data.replace(0, 8, QByteArray::number(i).rightJustified(8, '0'));
        // Never blocks: retry after whenRoom() is the contract, here a bounded poll.
        QVERIFY(QTest::qWaitFor([&] { return out->send(data) == Status::Code::Ok; }, 10000));
    }
    QCOMPARE(out->sentCount(), quint64(count));
    QTRY_COMPARE_WITH_TIMEOUT(got.size(), count, 20000);
    for (int i = 0; i < count; ++i)
        QCOMPARE(got.at(i).left(8).toInt(), i);
    QCOMPARE(in->lostCount(), quint64(0));
    QVERIFY(!out->isBroken());
}

void tst_Stream::fullQueueThenRoomInContextThread()
{
    ClientOptions so = m_cs.options(QStringLiteral("Stream.Fast"));
    so.maxQueueBytes = 256 * 1024;
    ClientOptions ro = m_cs.options(QStringLiteral("Stream.Slow"));
    ro.maxPendingBytes = 64 * 1024; // the receiver stops reading while its deliveries wait
    Client sender(so);
    Client receiver(ro);
    QVERIFY(sender.start() && receiver.start());
    const QString channel = QStringLiteral("Stream.Slow/bulk");
    Subscription *in = receiver.attach(channel);
    QVERIFY(in);
    const StreamPtr out = open(sender, receiver, channel);
    QVERIFY(out);

    // Without the event loop the receiver delivers nothing: socket buffers and then the queue fill.
    const QByteArray chunk(64 * 1024, 'x');
    Status::Code r = Status::Code::Ok;
    quint64 queued = 0;
    for (int i = 0; i < 4096 && r == Status::Code::Ok; ++i) {
        r = out->send(chunk);
        if (r == Status::Code::Ok)
            ++queued;
        else if (r == Status::Code::QueueFull)
            break;
        QThread::yieldCurrentThread();
    }
    QCOMPARE(r, Status::Code::QueueFull);
    QCOMPARE(out->sentCount(), queued); // a refused message is not counted

    QObject context; // in this thread
    QThread *calledIn = nullptr;
    int calls = 0;
    out->whenRoom(&context, [&] {
        calledIn = QThread::currentThread();
        ++calls;
    });
    QTRY_COMPARE_WITH_TIMEOUT(calls, 1, 20000); // the event loop runs: the receiver drains
    QCOMPARE(calledIn, QThread::currentThread());
    QCOMPARE(out->send(chunk), Status::Code::Ok);
    QTRY_COMPARE_WITH_TIMEOUT(in->receivedCount(), queued + 1, 30000);
    QCOMPARE(calls, 1); // exactly once
}

void tst_Stream::whenRoomSkipsDestroyedContext()
{
    Client sender(m_cs.options(QStringLiteral("Stream.Sender2")));
    Client receiver(m_cs.options(QStringLiteral("Stream.Receiver2")));
    QVERIFY(sender.start() && receiver.start());
    const QString channel = QStringLiteral("Stream.Receiver2/ctx");
    QVERIFY(receiver.attach(channel));
    const StreamPtr out = open(sender, receiver, channel);
    QVERIFY(out);
    int gone = 0, kept = 0;
    auto *context = new QObject;
    out->whenRoom(context, [&gone] { ++gone; }); // room now: queued to the context's thread
    delete context;
    QObject alive;
    out->whenRoom(&alive, [&kept] { ++kept; });
    QTRY_COMPARE_WITH_TIMEOUT(kept, 1, 10000);
    QCOMPARE(gone, 0);
}

void tst_Stream::brokenOnceReceiverIsGone()
{
    Client sender(m_cs.options(QStringLiteral("Stream.Sender3")));
    auto receiver = std::make_unique<Client>(m_cs.options(QStringLiteral("Stream.Receiver3")));
    QVERIFY(sender.start() && receiver->start());
    const QString channel = QStringLiteral("Stream.Receiver3/gone");
    QVERIFY(receiver->attach(channel));
    const StreamPtr out = open(sender, *receiver, channel);
    QVERIFY(out);
    QCOMPARE(out->send("hello"), Status::Code::Ok);
    receiver.reset(); // its sockets close: the stream's destination is gone
    QTRY_VERIFY_WITH_TIMEOUT(out->send("anyone?") == Status::Code::Broken, 20000);
    QVERIFY(out->isBroken());
    int calls = 0;
    QObject context;
    out->whenRoom(&context, [&calls] { ++calls; });
    QVERIFY(dialog::test::expectNothingFor(
        50, [&calls] { return calls > 0; }, "a broken stream called back"));
}

QTEST_GUILESS_MAIN(tst_Stream)
#include "tst_stream.moc"
