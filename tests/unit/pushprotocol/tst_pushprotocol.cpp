// The push-mirror frame codec (isserver/pushprotocol.h): round trip, frames split anywhere, and
// everything that is not this protocol rejected with a reason. No socket.
#include "pushprotocol.h"

#include <QtEndian>
#include <QtTest>

using namespace dialog::isd;

class tst_PushProtocol : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void roundTripSplitAnywhere();
    void rejected_data();
    void rejected();
};

void tst_PushProtocol::roundTripSplitAnywhere()
{
    const QByteArray stream = push::encode(push::Type::Hello, "{\"server\":\"RunParams\"}") +
                              push::encode(push::Type::Records, QByteArray(1000, 'r')) +
                              push::encode(push::Type::Ping) + push::encode(push::Type::Pong);
    // Fed in pieces of every size: the same four frames, in order.
    for (int piece : {1, 3, 9, 10, 11, 100, int(stream.size())}) {
        QByteArray buffer;
        QList<push::Frame> frames;
        for (qsizetype at = 0; at < stream.size(); at += piece) {
            buffer.append(stream.mid(at, piece));
            push::Frame f;
            QString error;
            push::Take t;
            while ((t = push::take(buffer, &f, &error)) == push::Take::Frame)
                frames << f;
            QVERIFY2(t == push::Take::Incomplete, qPrintable(error));
        }
        QCOMPARE(frames.size(), 4);
        QCOMPARE(frames.at(0).type, push::Type::Hello);
        QCOMPARE(frames.at(0).payload, QByteArray("{\"server\":\"RunParams\"}"));
        QCOMPARE(frames.at(1).payload, QByteArray(1000, 'r'));
        QCOMPARE(frames.at(2).type, push::Type::Ping);
        QVERIFY(frames.at(3).payload.isEmpty());
        QVERIFY(buffer.isEmpty());
    }
}

void tst_PushProtocol::rejected_data()
{
    QTest::addColumn<QByteArray>("bytes");
    QTest::addColumn<QString>("reason");
    QByteArray header = push::encode(push::Type::Ping);
    QTest::newRow("http") << QByteArray("GET / HTTP/1.1\r\n") << "bad magic";
    QTest::newRow("one-wrong-byte") << QByteArray("X") << "bad magic";
    QByteArray v = header;
    v[4] = 2;
    QTest::newRow("version") << v << "version 2";
    QByteArray t = header;
    t[5] = 0;
    QTest::newRow("type-0") << t << "unknown push-mirror frame type 0";
    t[5] = char(0x80);
    QTest::newRow("type-128") << t << "unknown push-mirror frame type 128";
    QByteArray big = header;
    qToBigEndian<quint32>(push::MaxPayload + 1, big.data() + 6);
    QTest::newRow("oversized") << big << "at most";
}

void tst_PushProtocol::rejected()
{
    QFETCH(QByteArray, bytes);
    QFETCH(QString, reason);
    push::Frame f;
    QString error;
    QCOMPARE(push::take(bytes, &f, &error), push::Take::Error);
    QVERIFY2(error.contains(reason), qPrintable(error));
}

QTEST_GUILESS_MAIN(tst_PushProtocol)
#include "tst_pushprotocol.moc"
