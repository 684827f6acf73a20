// Unit tests of the receive-side codec (libdialog/src/inbounddecoder_p.h) fed from a QBuffer, as a
// reader thread feeds it from a socket: small frames out of the batch buffer, large ones in a
// buffer of their exact size read straight into, data taken out without a copy, bad input
// rejected through one error. No sockets.
#include "inbounddecoder_p.h"
#include "payload_p.h"
#include "wirecodec.h"

#include <QBuffer>
#include <QRandomGenerator>
#include <QtTest>

using namespace dialog::wire_format;
using dialog::test::pattern;

namespace {

struct Received
{
    Type type;
    quint8 flags;
    QByteArray payload;
    bool owned;
};

QByteArray mixedStream(QList<Received> &expected)
{
    const qint64 sizes[] = {0,
                            1,
                            100,
                            InboundDecoder::DirectThreshold - 1,
                            InboundDecoder::DirectThreshold,
                            100 * 1024,
                            3,
                            InboundDecoder::BatchSize + 7,
                            1024 * 1024,
                            12};
    QByteArray stream;
    quint32 seed = 1;
    for (qint64 size : sizes) {
        const QByteArray payload = pattern(size, seed++);
        appendFrame(stream, Type::Heartbeat, 0, payload);
        expected.append({Type::Heartbeat, 0, payload, false});
    }
    return stream;
}

auto collect(QList<Received> &out)
{
    return [&out](Type type, quint8 flags, QByteArrayView payload, QByteArray *owned) {
        out.append({type, flags, payload.toByteArray(), owned != nullptr});
        return true;
    };
}

} // namespace

class tst_InboundDecoder : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void framesFromQBufferInOrder();
    void largeBodyReadStraightIntoExactBuffer();
    void afterALargeFrameTheNextHeaderIsReadAlone();
    void sharedBatchBufferIsLeftAlone();
    void serviceDataTakenWithoutCopy();
    void compressedCommandKeptAsSent();
    void randomSplitsGiveIdenticalFrames();
    void refusedFrameFailsTheDecoder();
    void oversizeHeaderRejectedBeforeAllocation();
    void garbageIsRejectedWithoutHarm();
};

void tst_InboundDecoder::framesFromQBufferInOrder()
{
    QList<Received> expected;
    QByteArray stream = mixedStream(expected);
    QBuffer device(&stream);
    QVERIFY(device.open(QIODevice::ReadOnly));
    InboundDecoder d;
    QList<Received> got;
    qint64 read = 0;
    QVERIFY(d.readFrom(&device, collect(got), &read));
    QCOMPARE(read, stream.size());
    QCOMPARE(got.size(), expected.size());
    for (qsizetype i = 0; i < got.size(); ++i) {
        QCOMPARE(got[i].type, expected[i].type);
        QCOMPARE(got[i].payload.size(), expected[i].payload.size());
        QVERIFY2(got[i].payload == expected[i].payload, qPrintable(QString::number(i)));
    }
    QCOMPARE(d.buffered(), 0);
    QCOMPARE(d.error(), InboundDecoder::Error::None);
}

void tst_InboundDecoder::largeBodyReadStraightIntoExactBuffer()
{
    const QByteArray payload = pattern(1024 * 1024, 9);
    const QByteArray frame = encodeFrame(Type::ServiceMessage, 0, payload);
    InboundDecoder d;
    QList<const char *> bodyBuffers;
    const char *ownedData = nullptr;
    qsizetype ownedSize = 0;
    int frames = 0;
    qint64 pos = 0;
    while (pos < frame.size()) {
        const InboundDecoder::Buffer b = d.buffer();
        QVERIFY(b.size > 0);
        const qint64 n = qMin<qint64>(b.size, qMin<qint64>(frame.size() - pos, 50000));
        std::memcpy(b.data, frame.constData() + pos, size_t(n));
        bodyBuffers.append(b.data);
        pos += n;
        QVERIFY(d.decode(n, [&](Type, quint8, QByteArrayView view, QByteArray *owned) {
            ++frames;
            if (!owned)
                return false;
            ownedData = owned->constData();
            ownedSize = owned->size();
            return view.data() == owned->constData() && *owned == payload;
        }));
    }
    QCOMPARE(frames, 1);
    QCOMPARE(ownedSize, payload.size());
    // After the first read the decoder hands out the frame's own buffer, at the next free byte.
    QCOMPARE(bodyBuffers.size(), 21);
    for (qsizetype i = 1; i < bodyBuffers.size(); ++i)
        QVERIFY(bodyBuffers[i] >= ownedData && bodyBuffers[i] < ownedData + ownedSize);
}

// A stream of large messages: once a large frame was read, the next read takes only the next
// header, so that each body goes into its own buffer from its first byte (no part of it is read
// into the batch buffer and copied); after a small frame, reads fill the batch buffer again.
void tst_InboundDecoder::afterALargeFrameTheNextHeaderIsReadAlone()
{
    QList<QByteArray> payloads;
    QByteArray stream;
    for (int i = 0; i < 4; ++i) {
        payloads.append(pattern(100 * 1000, quint32(20 + i)));
        appendFrame(stream, Type::ServiceMessage, 0, payloads.last());
    }
    payloads.append(pattern(10, 30)); // small frames after the large ones
    appendFrame(stream, Type::ServiceMessage, 0, payloads.last());
    payloads.append(pattern(20, 31));
    appendFrame(stream, Type::ServiceMessage, 0, payloads.last());
    InboundDecoder d;
    QList<qint64> offered;
    int frames = 0, ownedLarge = 0;
    qint64 pos = 0;
    while (pos < stream.size()) {
        const InboundDecoder::Buffer b = d.buffer();
        QVERIFY(b.size > 0);
        offered.append(b.size);
        const qint64 n = qMin<qint64>(b.size, stream.size() - pos); // as much as offered: a busy socket
        std::memcpy(b.data, stream.constData() + pos, size_t(n));
        pos += n;
        QVERIFY(d.decode(n, [&](Type, quint8, QByteArrayView view, QByteArray *owned) {
            if (frames >= payloads.size() || view != QByteArrayView(payloads[frames]))
                return false;
            ownedLarge += owned != nullptr && view.size() >= InboundDecoder::DirectThreshold;
            ++frames;
            return true;
        }));
    }
    QCOMPARE(frames, payloads.size());
    // The first body starts in the batch buffer (nothing was known yet); the three after it are
    // read whole into their own buffers, each after a read of its header alone.
    QCOMPARE(ownedLarge, 4);
    QCOMPARE(offered.count(qint64(HeaderSize)), 4);
    QCOMPARE(offered.first(), InboundDecoder::BatchSize);
    QVERIFY(offered.last() > HeaderSize); // after the small frame: the batch buffer again
}

// A reader shares the batch buffer with the frames it hands on (their data is copied out later, in
// the thread that takes them): the decoder must then never write into it again. The next read goes
// into a new buffer, which starts with what was left of an incomplete frame.
void tst_InboundDecoder::sharedBatchBufferIsLeftAlone()
{
    QList<QByteArray> payloads;
    QByteArray stream;
    for (int i = 0; i < 50; ++i) {
        payloads.append(pattern(100 + i, quint32(40 + i)));
        appendFrame(stream, Type::ServiceMessage, 0, payloads.last());
    }
    InboundDecoder d;
    QList<QByteArray> held;       // shared buffers, as Inbound::chunk holds them
    QList<QByteArray> heldCopies; // their content when shared
    QList<QByteArrayView> views;
    qint64 pos = 0;
    while (pos < stream.size()) {
        const InboundDecoder::Buffer b = d.buffer();
        for (qsizetype i = 0; i < held.size(); ++i)
            QVERIFY(b.data < held[i].constData() || b.data >= held[i].constData() + held[i].size());
        const qint64 n = qMin<qint64>(qMin<qint64>(b.size, 1000), stream.size() - pos); // splits frames
        std::memcpy(b.data, stream.constData() + pos, size_t(n));
        pos += n;
        QVERIFY(d.decode(n, [&](Type, quint8, QByteArrayView view, QByteArray *owned) {
            if (owned)
                return false;
            if (held.isEmpty() || held.last().constData() != d.batchBuffer().constData()) {
                held.append(d.batchBuffer());
                heldCopies.append(QByteArray(d.batchBuffer().constData(), d.batchBuffer().size()));
            }
            views.append(view);
            return true;
        }));
    }
    QCOMPARE(views.size(), payloads.size());
    QVERIFY(held.size() > 1);
    for (qsizetype i = 0; i < held.size(); ++i) // untouched since they were shared
        QVERIFY(held[i] == heldCopies[i]);
    for (qsizetype i = 0; i < views.size(); ++i)
        QCOMPARE(views[i].toByteArray(), payloads[i]);
}

void tst_InboundDecoder::serviceDataTakenWithoutCopy()
{
    const QByteArray data = pattern(300 * 1024, 4);
    QByteArray stream;
    appendServiceFrame(stream, "Big.Service", 42, 0, data);
    QBuffer device(&stream);
    QVERIFY(device.open(QIODevice::ReadOnly));
    InboundDecoder d;
    DataParts parts;
    const char *frameBuffer = nullptr;
    QString error;
    QVERIFY(d.readFrom(&device, [&](Type type, quint8 flags, QByteArrayView payload, QByteArray *owned) {
        if (!owned)
            return false;
        frameBuffer = owned->constData();
        return decodeData(type, flags, payload, owned, DefaultMaxMessageSize, false, parts, &error);
    }));
    QVERIFY2(error.isEmpty(), qPrintable(error));
    QCOMPARE(parts.sequence, quint64(42));
    QCOMPARE(parts.data.size(), data.size());
    QVERIFY(parts.data == data);
    // The data is the tail of the buffer the body was read into: no copy was made.
    QCOMPARE(parts.data.constData(), frameBuffer + 2 + 11 + 8);
}

void tst_InboundDecoder::compressedCommandKeptAsSent()
{
    QByteArray text;
    while (text.size() < 200000)
        text += "set channel " + QByteArray::number(text.size() % 97) + " threshold 12\n";
    quint8 flags = 0;
    const QByteArray packed = prepareData(text, 1024, flags);
    QCOMPARE(flags, quint8(Compressed));
    const QByteArray frame = encodeCommandFrame("Configure", "rc", flags, packed);
    for (bool keep : {true, false}) {
        InboundDecoder d;
        DataParts parts;
        quint8 seenFlags = 0;
        QString error;
        QVERIFY(d.feed(frame, [&](Type type, quint8 f, QByteArrayView payload, QByteArray *owned) {
            seenFlags = f;
            return decodeData(type, f, payload, owned, DefaultMaxMessageSize, keep, parts, &error);
        }));
        QCOMPARE(seenFlags, quint8(Compressed));
        QCOMPARE(parts.name, QByteArrayView("Configure"));
        QCOMPARE(parts.origin, QByteArrayView("rc"));
        QVERIFY(parts.data == (keep ? packed : text));
    }
}

void tst_InboundDecoder::randomSplitsGiveIdenticalFrames()
{
    QList<Received> expected;
    const QByteArray stream = mixedStream(expected);
    for (quint32 seed = 1; seed <= 20; ++seed) {
        QRandomGenerator rng(seed);
        InboundDecoder d;
        QList<Received> got;
        qint64 pos = 0;
        while (pos < stream.size()) {
            const qint64 n = qMin<qint64>(stream.size() - pos, rng.bounded(1, 70000));
            QVERIFY(d.feed(QByteArrayView(stream).sliced(pos, n), collect(got)));
            pos += n;
        }
        QCOMPARE(got.size(), expected.size());
        for (qsizetype i = 0; i < got.size(); ++i)
            QVERIFY2(got[i].payload == expected[i].payload,
                     qPrintable(QStringLiteral("seed %1 frame %2").arg(seed).arg(i)));
        QCOMPARE(d.buffered(), 0);
    }
}

void tst_InboundDecoder::refusedFrameFailsTheDecoder()
{
    QByteArray stream = encodeFrame(Type::Heartbeat, 0, "a") + encodeFrame(Type::Disconnect, 0, "b") +
                        encodeFrame(Type::Heartbeat, 0, "c");
    InboundDecoder d;
    QList<Type> seen;
    QVERIFY(!d.feed(stream, [&](Type type, quint8, QByteArrayView, QByteArray *) {
        seen.append(type);
        return type != Type::Disconnect;
    }));
    QCOMPARE(seen, (QList<Type>{Type::Heartbeat, Type::Disconnect}));
    QCOMPARE(d.error(), InboundDecoder::Error::Rejected);
    QCOMPARE(d.buffer().size, 0);
    QVERIFY(!d.feed(encodeFrame(Type::Heartbeat, 0, "d"),
                    [](Type, quint8, QByteArrayView, QByteArray *) { return true; }));
}

void tst_InboundDecoder::oversizeHeaderRejectedBeforeAllocation()
{
    // A header announcing 4 GiB - 1: refused on the header alone, nothing is allocated for it.
    QByteArray header;
    appendHeader(header, Type::ServiceMessage, 0, 0xFFFFFFFFu);
    InboundDecoder d(1024 * 1024);
    bool called = false;
    QVERIFY(
        !d.feed(header + "xyz", [&](Type, quint8, QByteArrayView, QByteArray *) { return called = true; }));
    QVERIFY(!called);
    QCOMPARE(d.error(), InboundDecoder::Error::TooLarge);
    QCOMPARE(d.buffered(), 0);
    QCOMPARE(d.pendingFrameRemaining(), 0);
}

void tst_InboundDecoder::garbageIsRejectedWithoutHarm()
{
    // What a fuzzer would do: random bytes, with and without a valid first header. The decoder
    // either fails with an error string or keeps waiting within its bound; it never crashes.
    for (quint32 seed = 1; seed <= 200; ++seed) {
        QRandomGenerator rng(seed);
        QByteArray bytes = pattern(rng.bounded(1, 20000), seed);
        if (seed % 2)
            bytes.prepend(encodeFrame(Type::Heartbeat, 0, pattern(seed, seed)));
        InboundDecoder d(64 * 1024);
        const bool ok =
            d.feed(bytes, [](Type, quint8, QByteArrayView p, QByteArray *) { return p.size() >= 0; });
        if (ok) {
            QCOMPARE(d.error(), InboundDecoder::Error::None);
            QVERIFY(d.buffered() <= HeaderSize + d.maxPayload());
        } else {
            QVERIFY(d.error() != InboundDecoder::Error::None);
            QVERIFY(!d.errorString().isEmpty());
        }
    }
}

QTEST_GUILESS_MAIN(tst_InboundDecoder)
#include "tst_inbounddecoder.moc"
