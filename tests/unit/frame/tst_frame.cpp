// Unit tests of the frame codec (frame_p.h, inbounddecoder_p.h): header layout, incremental decoding
// and rejection of malformed headers. No sockets.
#include "frame_p.h"
#include "inbounddecoder_p.h"
#include "wirecodec.h"

#include <QtEndian>
#include <QtTest>

using namespace dialog::wire_format;
using Error = InboundDecoder::Error;
using dialog::test::feed;
using dialog::test::Frame;
using dialog::test::pattern;

Q_DECLARE_METATYPE(dialog::wire_format::Type)
Q_DECLARE_METATYPE(dialog::wire_format::InboundDecoder::Error)

namespace {

// A header written byte by byte, independent of appendHeader(), so that malformed ones can be built.
QByteArray rawHeader(quint16 magic, quint8 version, quint8 type, quint8 flags, quint8 r5, quint16 r6,
                     quint32 length)
{
    QByteArray h(HeaderSize, '\0');
    qToLittleEndian<quint16>(magic, h.data());
    h[2] = char(version);
    h[3] = char(type);
    h[4] = char(flags);
    h[5] = char(r5);
    qToLittleEndian<quint16>(r6, h.data() + 6);
    qToLittleEndian<quint32>(length, h.data() + 8);
    return h;
}

QByteArray validHeader(quint8 type, quint32 length)
{
    return rawHeader(Magic, Version, type, 0, 0, 0, length);
}

struct Expected
{
    Type type;
    quint8 flags;
    QByteArray payload;
};

// A stream of several frames of different types, sizes and flags.
QList<Expected> sampleFrames()
{
    return {{Type::Hello, 0, QByteArrayLiteral("hello")},
            {Type::Heartbeat, 0, QByteArray()},
            {Type::ServiceMessage, Compressed, pattern(3000, 7)},
            {Type::Disconnect, 0, QByteArray()},
            {Type::CommandMessage, 0, QByteArray(HeaderSize, char(0xA1))},
            {Type::Refused, 0, QByteArrayLiteral("no")}};
}

QByteArray encodeAll(const QList<Expected> &frames)
{
    QByteArray out;
    for (const Expected &e : frames)
        appendFrame(out, e.type, e.flags, e.payload);
    return out;
}

void compareFrames(const QList<Frame> &got, const QList<Expected> &want)
{
    QCOMPARE(got.size(), want.size());
    for (qsizetype i = 0; i < want.size(); ++i) {
        QCOMPARE(got[i].type, want[i].type);
        QCOMPARE(got[i].flags, want[i].flags);
        QCOMPARE(got[i].payload, want[i].payload);
    }
}

} // namespace

class tst_Frame : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void headerLayoutIsLittleEndian();
    void typeNameCoversEveryType();
    void roundTripEveryType_data();
    void roundTripEveryType();
    void severalFramesInOneChunk();
    void byteByByteGivesIdenticalFrames();
    void frameSplitAcrossFeeds_data();
    void frameSplitAcrossFeeds();
    void truncatedFrameWaitsForMore();
    void emptyFeedIsHarmless();
    void rawDataChunkIsCopied_data();
    void rawDataChunkIsCopied();
    void payload16MiBRoundTrip_data();
    void payload16MiBRoundTrip();
    void malformedHeaderRejected_data();
    void malformedHeaderRejected();
    void lengthAtSmallMaximumAccepted();
    void defaultMaximumIsMessageSizePlusNameOverhead();
    void errorIsTerminal();
    void framesBeforeBadOneAreKept();
    void framesBeforeBadOneAreKeptWhenBuffered();
    void badHeaderSplitAcrossFeedsRejected();
};

void tst_Frame::headerLayoutIsLittleEndian()
{
    const QByteArray f = encodeFrame(Type::Refused, Compressed, "abc");
    const QByteArray expected("\xA1\xD1\x01\x13\x01\x00\x00\x00\x03\x00\x00\x00"
                              "abc",
                              15);
    QCOMPARE(f, expected);

    QByteArray h;
    appendHeader(h, Type::CommandMessage, 0, 0x01020304u);
    QCOMPARE(h, QByteArray("\xA1\xD1\x01\x0F\x00\x00\x00\x00\x04\x03\x02\x01", 12));

    // appendFrame appends, it does not overwrite.
    QByteArray out("xy");
    appendFrame(out, Type::Hello, 0, QByteArrayView());
    QCOMPARE(out, QByteArray("xy\xA1\xD1\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00", 14));
}

void tst_Frame::typeNameCoversEveryType()
{
    QSet<QByteArray> names;
    for (int t = 1; t <= MaxType; ++t) {
        const QByteArray n = typeName(Type(t));
        QVERIFY2(n != "UNKNOWN", qPrintable(QString::number(t)));
        names.insert(n);
    }
    QCOMPARE(names.size(), int(MaxType));
    QCOMPARE(QByteArray(typeName(Type::ConnectToControlServer)), QByteArray("CONNECT_TO_CONTROL_SERVER"));
    QCOMPARE(QByteArray(typeName(Type::Disconnect)), QByteArray("DISCONNECT"));
    QCOMPARE(QByteArray(typeName(Type(0))), QByteArray("UNKNOWN"));
    QCOMPARE(QByteArray(typeName(Type(MaxType + 1))), QByteArray("UNKNOWN"));
    QVERIFY(isDataType(Type::ServiceMessage));
    QVERIFY(isDataType(Type::CommandMessage));
    QVERIFY(!isDataType(Type::Hello));
    QVERIFY(!isDataType(Type::RegisterService));
}

void tst_Frame::roundTripEveryType_data()
{
    QTest::addColumn<Type>("type");
    QTest::addColumn<quint8>("flags");
    QTest::addColumn<QByteArray>("payload");

    for (int t = 1; t <= MaxType; ++t) {
        const Type type = Type(t);
        const char *name = typeName(type);
        const quint8 flags = isDataType(type) ? quint8(Compressed) : quint8(0);
        QTest::addRow("%s/empty", name) << type << quint8(0) << QByteArray();
        QTest::addRow("%s/1-byte", name) << type << flags << QByteArray(1, '\0');
        QTest::addRow("%s/binary", name) << type << flags << pattern(1000 + t, quint32(t));
    }
}

void tst_Frame::roundTripEveryType()
{
    QFETCH(Type, type);
    QFETCH(quint8, flags);
    QFETCH(QByteArray, payload);

    const QByteArray encoded = encodeFrame(type, flags, payload);
    QCOMPARE(encoded.size(), HeaderSize + payload.size());
    QCOMPARE(quint8(encoded[3]), quint8(type));
    QCOMPARE(quint8(encoded[4]), flags);
    QCOMPARE(qFromLittleEndian<quint32>(encoded.constData() + 8), quint32(payload.size()));
    QCOMPARE(encoded.mid(HeaderSize), payload);

    InboundDecoder d;
    QList<Frame> out;
    QVERIFY(feed(d, encoded, out));
    QCOMPARE(d.error(), Error::None);
    QVERIFY(d.errorString().isEmpty());
    QCOMPARE(out.size(), 1);
    QCOMPARE(out[0].type, type);
    QCOMPARE(out[0].flags, flags);
    QCOMPARE(out[0].payload, payload);
    QCOMPARE(d.buffered(), 0);
    QCOMPARE(d.pendingFrameRemaining(), 0);
}

void tst_Frame::severalFramesInOneChunk()
{
    const QList<Expected> frames = sampleFrames();
    InboundDecoder d;
    QList<Frame> out;
    out.append(Frame{Type::Heartbeat, 0, "already there"});
    QVERIFY(feed(d, encodeAll(frames), out));
    // feed() appends to what the caller already had.
    QCOMPARE(out.size(), frames.size() + 1);
    QCOMPARE(out.takeFirst().payload, QByteArray("already there"));
    compareFrames(out, frames);
    QCOMPARE(d.buffered(), 0);
    QCOMPARE(d.pendingFrameRemaining(), 0);
}

void tst_Frame::byteByByteGivesIdenticalFrames()
{
    const QList<Expected> frames = sampleFrames();
    const QByteArray stream = encodeAll(frames);

    InboundDecoder whole;
    QList<Frame> wholeOut;
    QVERIFY(feed(whole, stream, wholeOut));

    InboundDecoder d;
    QList<Frame> out;
    qint64 frameStart = 0; // offset in stream of the frame being assembled
    for (qsizetype i = 0; i < stream.size(); ++i) {
        QVERIFY(feed(d, stream.mid(i, 1), out));
        const qint64 fed = i + 1;
        qint64 frameEnd =
            frameStart + HeaderSize + qFromLittleEndian<quint32>(stream.constData() + frameStart + 8);
        if (fed == frameEnd) {
            frameStart = frameEnd;
            QCOMPARE(d.buffered(), 0);
            QCOMPARE(d.pendingFrameRemaining(), 0);
        } else {
            QCOMPARE(d.buffered(), fed - frameStart);
            QCOMPARE(d.pendingFrameRemaining(), d.buffered() < HeaderSize ? 0 : frameEnd - fed);
        }
    }
    compareFrames(out, frames);
    QCOMPARE(out.size(), wholeOut.size());
    for (qsizetype i = 0; i < out.size(); ++i) {
        QCOMPARE(out[i].type, wholeOut[i].type);
        QCOMPARE(out[i].flags, wholeOut[i].flags);
        QCOMPARE(out[i].payload, wholeOut[i].payload);
    }
}

void tst_Frame::frameSplitAcrossFeeds_data()
{
    QTest::addColumn<int>("split");
    // The frame has a 12-byte header and a 100-byte payload.
    QTest::newRow("inside-magic") << 1;
    QTest::newRow("inside-type") << 4;
    QTest::newRow("inside-length") << 9;
    QTest::newRow("header-minus-1") << 11;
    QTest::newRow("header-exactly") << 12;
    QTest::newRow("header-plus-1") << 13;
    QTest::newRow("mid-payload") << 62;
    QTest::newRow("last-byte-missing") << 111;
}

void tst_Frame::frameSplitAcrossFeeds()
{
    QFETCH(int, split);
    const QByteArray payload = pattern(100, 3);
    const QByteArray frame = encodeFrame(Type::InfoService, 0, payload);
    QCOMPARE(frame.size(), 112);

    InboundDecoder d;
    QList<Frame> out;
    QVERIFY(feed(d, frame.left(split), out));
    QVERIFY(out.isEmpty());
    QCOMPARE(d.buffered(), split);
    QCOMPARE(d.pendingFrameRemaining(), split < HeaderSize ? 0 : 112 - split);

    QVERIFY(feed(d, frame.mid(split), out));
    QCOMPARE(out.size(), 1);
    QCOMPARE(out[0].type, Type::InfoService);
    QCOMPARE(out[0].flags, quint8(0));
    QCOMPARE(out[0].payload, payload);
    QCOMPARE(d.buffered(), 0);
    QCOMPARE(d.pendingFrameRemaining(), 0);
}

void tst_Frame::truncatedFrameWaitsForMore()
{
    // One complete frame followed by the first 20 bytes of a 12 + 50 byte frame.
    const QByteArray first = encodeFrame(Type::Heartbeat, 0, "hb");
    const QByteArray second = encodeFrame(Type::ServiceMessage, 0, pattern(50, 9));
    InboundDecoder d;
    QList<Frame> out;
    QVERIFY(feed(d, first + second.left(20), out));
    QCOMPARE(out.size(), 1);
    QCOMPARE(out[0].payload, QByteArray("hb"));
    QCOMPARE(d.buffered(), 20);
    QCOMPARE(d.pendingFrameRemaining(), 42);

    // The rest of the second frame and the start of a third.
    const QByteArray third = encodeFrame(Type::Disconnect, 0, {});
    QVERIFY(feed(d, second.mid(20) + third.left(5), out));
    QCOMPARE(out.size(), 2);
    QCOMPARE(out[1].type, Type::ServiceMessage);
    QCOMPARE(out[1].payload, pattern(50, 9));
    QCOMPARE(d.buffered(), 5);
    QCOMPARE(d.pendingFrameRemaining(), 0); // header not complete: unknown

    QVERIFY(feed(d, third.mid(5), out));
    QCOMPARE(out.size(), 3);
    QCOMPARE(out[2].type, Type::Disconnect);
    QVERIFY(out[2].payload.isEmpty());
    QCOMPARE(d.buffered(), 0);
}

void tst_Frame::emptyFeedIsHarmless()
{
    InboundDecoder d;
    QList<Frame> out;
    QVERIFY(feed(d, QByteArray(), out));
    QVERIFY(out.isEmpty());
    QCOMPARE(d.buffered(), 0);

    const QByteArray frame = encodeFrame(Type::Hello, 0, "abcdef");
    QVERIFY(feed(d, frame.left(14), out));
    QVERIFY(feed(d, QByteArray(), out));
    QVERIFY(out.isEmpty());
    QCOMPARE(d.buffered(), 14);
    QCOMPARE(d.pendingFrameRemaining(), 4);
    QVERIFY(feed(d, frame.mid(14), out));
    QCOMPARE(out.size(), 1);
    QCOMPARE(out[0].payload, QByteArray("abcdef"));
    QCOMPARE(d.error(), Error::None);
}

void tst_Frame::rawDataChunkIsCopied_data()
{
    QTest::addColumn<int>("partialBytes");
    QTest::newRow("partial-header") << 5;
    QTest::newRow("partial-payload") << HeaderSize + 3;
}

void tst_Frame::rawDataChunkIsCopied()
{
    QFETCH(int, partialBytes);
    // A chunk that only views someone else's memory: the decoder must not keep pointers into it.
    const QByteArray complete = encodeFrame(Type::SubscribeService, 0, "first");
    const QByteArray partial = encodeFrame(Type::SubscribeService, 0, "second-payload");
    QByteArray storage = complete + partial.left(partialBytes);

    InboundDecoder d;
    QList<Frame> out;
    QVERIFY(feed(d, QByteArray::fromRawData(storage.constData(), storage.size()), out));
    QCOMPARE(out.size(), 1);
    QCOMPARE(out[0].payload, QByteArray("first"));
    storage.fill('\xEE'); // the reader reuses its buffer
    QCOMPARE(out[0].payload, QByteArray("first"));

    QVERIFY(feed(d, partial.mid(partialBytes), out));
    QCOMPARE(out.size(), 2);
    QCOMPARE(out[1].type, Type::SubscribeService);
    QCOMPARE(out[1].payload, QByteArray("second-payload"));
}

void tst_Frame::payload16MiBRoundTrip_data()
{
    QTest::addColumn<int>("chunkSize");
    QTest::newRow("one-chunk") << 0;
    QTest::newRow("64KiB-chunks") << 64 * 1024;
    QTest::newRow("odd-chunks") << 100003;
}

void tst_Frame::payload16MiBRoundTrip()
{
    QFETCH(int, chunkSize);
    const QByteArray payload = pattern(16 * 1024 * 1024, 42);
    // Followed by a small frame, so the big one is not the last thing in the stream.
    const QByteArray stream =
        encodeFrame(Type::ServiceMessage, Compressed, payload) + encodeFrame(Type::Heartbeat, 0, "after");

    InboundDecoder d;
    QList<Frame> out;
    if (chunkSize == 0) {
        QVERIFY(feed(d, stream, out));
    } else {
        for (qsizetype pos = 0; pos < stream.size(); pos += chunkSize)
            QVERIFY(feed(d, stream.mid(pos, chunkSize), out));
    }
    QCOMPARE(out.size(), 2);
    QCOMPARE(out[0].type, Type::ServiceMessage);
    QCOMPARE(out[0].flags, quint8(Compressed));
    QCOMPARE(out[0].payload.size(), payload.size());
    QVERIFY(out[0].payload == payload);
    QCOMPARE(out[1].type, Type::Heartbeat);
    QCOMPARE(out[1].payload, QByteArray("after"));
    QCOMPARE(d.buffered(), 0);
    QCOMPARE(d.error(), Error::None);
}

void tst_Frame::malformedHeaderRejected_data()
{
    QTest::addColumn<QByteArray>("header");
    QTest::addColumn<qint64>("maxPayload");
    QTest::addColumn<Error>("error");

    const qint64 dflt = DefaultMaxMessageSize + NameOverhead;
    const quint8 hello = quint8(Type::Hello);
    QTest::newRow("magic-zero") << rawHeader(0, Version, hello, 0, 0, 0, 0) << dflt << Error::BadMagic;
    QTest::newRow("magic-big-endian")
        << rawHeader(0xA1D1, Version, hello, 0, 0, 0, 0) << dflt << Error::BadMagic;
    QTest::newRow("magic-ascii") << QByteArray("GET / HTTP/1.1\r\n") << dflt << Error::BadMagic;
    QTest::newRow("version-0") << rawHeader(Magic, 0, hello, 0, 0, 0, 0) << dflt << Error::BadVersion;
    QTest::newRow("version-2") << rawHeader(Magic, 2, hello, 0, 0, 0, 0) << dflt << Error::BadVersion;
    QTest::newRow("version-255") << rawHeader(Magic, 255, hello, 0, 0, 0, 0) << dflt << Error::BadVersion;
    QTest::newRow("type-0") << rawHeader(Magic, Version, 0, 0, 0, 0, 0) << dflt << Error::UnknownType;
    QTest::newRow("type-max+1") << rawHeader(Magic, Version, MaxType + 1, 0, 0, 0, 0) << dflt
                                << Error::UnknownType;
    QTest::newRow("type-255") << rawHeader(Magic, Version, 255, 0, 0, 0, 0) << dflt << Error::UnknownType;
    QTest::newRow("flag-0x02") << rawHeader(Magic, Version, hello, 0x02, 0, 0, 0) << dflt << Error::BadFlags;
    QTest::newRow("flag-0x80") << rawHeader(Magic, Version, hello, 0x80, 0, 0, 0) << dflt << Error::BadFlags;
    QTest::newRow("flag-0xff") << rawHeader(Magic, Version, hello, 0xff, 0, 0, 0) << dflt << Error::BadFlags;
    QTest::newRow("reserved-byte-5") << rawHeader(Magic, Version, hello, 0, 1, 0, 0) << dflt
                                     << Error::BadFlags;
    QTest::newRow("reserved-byte-6") << rawHeader(Magic, Version, hello, 0, 0, 0x0001, 0) << dflt
                                     << Error::BadFlags;
    QTest::newRow("reserved-byte-7") << rawHeader(Magic, Version, hello, 0, 0, 0x8000, 0) << dflt
                                     << Error::BadFlags;
    QTest::newRow("compressed-and-reserved")
        << rawHeader(Magic, Version, quint8(Type::ServiceMessage), Compressed, 0x10, 0, 0) << dflt
        << Error::BadFlags;
    QTest::newRow("length-max+1") << validHeader(hello, 17) << qint64(16) << Error::TooLarge;
    QTest::newRow("length-max-zero") << validHeader(hello, 1) << qint64(0) << Error::TooLarge;
    QTest::newRow("length-0xffffffff") << validHeader(hello, 0xffffffffu) << dflt << Error::TooLarge;
}

void tst_Frame::malformedHeaderRejected()
{
    QFETCH(QByteArray, header);
    QFETCH(qint64, maxPayload);
    QFETCH(Error, error);

    InboundDecoder d(maxPayload);
    QCOMPARE(d.maxPayload(), maxPayload);
    QList<Frame> out;
    QVERIFY(!feed(d, header, out));
    QCOMPARE(d.error(), error);
    QVERIFY(!d.errorString().isEmpty());
    QVERIFY(out.isEmpty());
    QCOMPARE(d.buffered(), 0);
    QCOMPARE(d.pendingFrameRemaining(), 0);
}

void tst_Frame::lengthAtSmallMaximumAccepted()
{
    InboundDecoder d(16);
    QList<Frame> out;
    QVERIFY(feed(d, encodeFrame(Type::Hello, 0, QByteArray(16, 'x')), out));
    QCOMPARE(out.size(), 1);
    QCOMPARE(out[0].payload, QByteArray(16, 'x'));
    QVERIFY(!feed(d, encodeFrame(Type::Hello, 0, QByteArray(17, 'x')), out));
    QCOMPARE(d.error(), Error::TooLarge);
    QVERIFY(d.errorString().contains(QLatin1String("17")));
    QCOMPARE(out.size(), 1);
}

void tst_Frame::defaultMaximumIsMessageSizePlusNameOverhead()
{
    const qint64 limit = 64 * 1024 * 1024 + 4096;
    {
        InboundDecoder d;
        QCOMPARE(d.maxPayload(), limit);
        QList<Frame> out;
        // Header only: the frame is accepted and waits for its payload.
        QVERIFY(feed(d, validHeader(quint8(Type::ServiceMessage), quint32(limit)), out));
        QVERIFY(out.isEmpty());
        QCOMPARE(d.error(), Error::None);
        QCOMPARE(d.buffered(), HeaderSize);
        QCOMPARE(d.pendingFrameRemaining(), limit);
    }
    {
        InboundDecoder d;
        QList<Frame> out;
        QVERIFY(!feed(d, validHeader(quint8(Type::ServiceMessage), quint32(limit + 1)), out));
        QCOMPARE(d.error(), Error::TooLarge);
        QVERIFY(out.isEmpty());
        QCOMPARE(d.buffered(), 0);
    }
}

void tst_Frame::errorIsTerminal()
{
    InboundDecoder d;
    QList<Frame> out;
    QVERIFY(!feed(d, rawHeader(Magic, 9, 1, 0, 0, 0, 0), out));
    QCOMPARE(d.error(), Error::BadVersion);
    const QString why = d.errorString();
    QVERIFY(why.contains(QLatin1String("9")));

    // A perfectly valid frame afterwards is not decoded, and the first error is kept.
    QVERIFY(!feed(d, encodeFrame(Type::Hello, 0, "valid"), out));
    QVERIFY(!feed(d, QByteArray(), out));
    QVERIFY(out.isEmpty());
    QCOMPARE(d.error(), Error::BadVersion);
    QCOMPARE(d.errorString(), why);
    QCOMPARE(d.buffered(), 0);
}

void tst_Frame::framesBeforeBadOneAreKept()
{
    const QList<Expected> frames = sampleFrames();
    InboundDecoder d;
    QList<Frame> out;
    QVERIFY(!feed(
        d, encodeAll(frames) + rawHeader(Magic, Version, 0, 0, 0, 0, 0) + encodeFrame(Type::Hello, 0, "x"),
        out));
    QCOMPARE(d.error(), Error::UnknownType);
    compareFrames(out, frames);
    QCOMPARE(d.buffered(), 0);
}

void tst_Frame::framesBeforeBadOneAreKeptWhenBuffered()
{
    const QByteArray good = encodeFrame(Type::RegisterService, 0, "names");
    InboundDecoder d;
    QList<Frame> out;
    QVERIFY(feed(d, good.left(7), out));
    QVERIFY(!feed(d, good.mid(7) + rawHeader(Magic, Version, 1, 0x40, 0, 0, 0), out));
    QCOMPARE(d.error(), Error::BadFlags);
    QCOMPARE(out.size(), 1);
    QCOMPARE(out[0].type, Type::RegisterService);
    QCOMPARE(out[0].payload, QByteArray("names"));
    QCOMPARE(d.buffered(), 0);
}

void tst_Frame::badHeaderSplitAcrossFeedsRejected()
{
    const QByteArray bad = rawHeader(0xBEEF, Version, 1, 0, 0, 0, 4) + "abcd";
    InboundDecoder d;
    QList<Frame> out;
    feed(d, bad.left(3), out); // too short to judge either way
    QVERIFY(!feed(d, bad.mid(3), out));
    QCOMPARE(d.error(), Error::BadMagic);
    QVERIFY(d.errorString().contains(QLatin1String("beef"), Qt::CaseInsensitive));
    QVERIFY(out.isEmpty());
}

QTEST_GUILESS_MAIN(tst_Frame)
#include "tst_frame.moc"
