// Unit tests of the service and command payload codec and of zstd compression of their data
// (libdialog/src/payload_p.h). Frames go through the real InboundDecoder, as on the wire.
#include "inbounddecoder_p.h"
#include "payload_p.h"
#include "servicestate_p.h"
#include "wirecodec.h"

#include <QRandomGenerator>
#include <QtEndian>
#include <QtTest>
#include <zstd.h>

using namespace dialog::wire_format;
using dialog::test::feed;
using dialog::test::Frame;

namespace {

constexpr qint64 NoLimit = DefaultMaxMessageSize;

// The receive path's decodeData(), with the parts copied out for comparison.
struct ServicePayload
{
    QByteArray name;
    quint64 sequence = 0;
    QByteArray data;
};

struct CommandPayload
{
    QByteArray name;
    QByteArray origin;
    QByteArray data;
};

bool decodeService(const Frame &f, ServicePayload &out, qint64 maxDataSize, QString *error)
{
    DataParts parts;
    if (!decodeData(f.type, f.flags, f.payload, nullptr, maxDataSize, false, parts, error))
        return false;
    out = ServicePayload{parts.name.toByteArray(), parts.sequence, parts.data};
    return true;
}

bool decodeCommand(const Frame &f, CommandPayload &out, qint64 maxDataSize, QString *error)
{
    DataParts parts;
    if (!decodeData(f.type, f.flags, f.payload, nullptr, maxDataSize, false, parts, error))
        return false;
    out = CommandPayload{parts.name.toByteArray(), parts.origin.toByteArray(), parts.data};
    return true;
}

// Runs an encoded stream through an InboundDecoder; returns its frames (empty on a decoder error).
QList<Frame> decodeFrames(const QByteArray &stream)
{
    InboundDecoder d;
    QList<Frame> out;
    if (!feed(d, stream, out) || d.buffered() != 0)
        return {};
    return out;
}

QByteArray compressibleText(qsizetype size)
{
    QByteArray b;
    b.reserve(size + 64);
    for (int i = 0; b.size() < size; ++i)
        b += "event " + QByteArray::number(i % 113) + " channel " + QByteArray::number(i % 7) + " ok\n";
    b.truncate(size);
    return b;
}

QByteArray randomBytes(qsizetype size, quint32 seed)
{
    QRandomGenerator rng(seed);
    QByteArray b(size, Qt::Uninitialized);
    rng.fillRange(reinterpret_cast<quint32 *>(b.data()), size / 4);
    for (qsizetype i = size / 4 * 4; i < size; ++i)
        b[i] = char(rng.generate());
    return b;
}

QByteArray zstdFrame(const QByteArray &data)
{
    QByteArray out;
    if (!compress(data, out))
        return {};
    return out;
}

// A zstd frame whose header does not carry the content size (as a streaming compressor writes it).
QByteArray zstdFrameWithoutContentSize(const QByteArray &data)
{
    ZSTD_CCtx *cctx = ZSTD_createCCtx();
    ZSTD_CCtx_setParameter(cctx, ZSTD_c_contentSizeFlag, 0);
    QByteArray out(qsizetype(ZSTD_compressBound(size_t(data.size()))), Qt::Uninitialized);
    const size_t n =
        ZSTD_compress2(cctx, out.data(), size_t(out.size()), data.constData(), size_t(data.size()));
    ZSTD_freeCCtx(cctx);
    if (ZSTD_isError(n))
        return {};
    out.truncate(qsizetype(n));
    return out;
}

// Size of a zstd frame header (magic, descriptor, window, dictionary id, content size), from RFC 8878.
qsizetype zstdHeaderSize(const QByteArray &frame)
{
    const quint8 fhd = quint8(frame.at(4));
    const bool singleSegment = fhd & 0x20;
    static const int dictIdSize[] = {0, 1, 2, 4};
    static const int contentSizeSize[] = {0, 2, 4, 8};
    const int fcs = (fhd >> 6) == 0 ? (singleSegment ? 1 : 0) : contentSizeSize[fhd >> 6];
    return 4 + 1 + (singleSegment ? 0 : 1) + dictIdSize[fhd & 3] + fcs;
}

// The content size field is the last one of the header; only 4-byte ones are patched here.
bool setZstdContentSize(QByteArray &frame, quint32 size)
{
    if (quint8(frame.at(4)) >> 6 != 2)
        return false;
    qToLittleEndian<quint32>(size, frame.data() + zstdHeaderSize(frame) - 4);
    return true;
}

QByteArray servicePayload(QByteArrayView name, quint64 seq, QByteArrayView data)
{
    QByteArray f;
    appendServiceFrame(f, name, seq, 0, data);
    return f.mid(HeaderSize);
}

QByteArray u16(quint16 v)
{
    QByteArray b(2, '\0');
    qToLittleEndian(v, b.data());
    return b;
}

QByteArray u64(quint64 v)
{
    QByteArray b(8, '\0');
    qToLittleEndian(v, b.data());
    return b;
}

} // namespace

class tst_Payload : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void serviceLayout();
    void serviceRoundTrip_data();
    void serviceRoundTrip();
    void commandLayout();
    void commandRoundTrip_data();
    void commandRoundTrip();
    void maxNameLengthAccepted();

    void compressedServiceRoundTrip();
    void compressedCommandRoundTrip();
    void prepareDataThreshold_data();
    void prepareDataThreshold();
    void incompressibleDataNotCompressed_data();
    void incompressibleDataNotCompressed();
    void serviceSkipsCompressionAfterIncompressibleData();
    void corruptCompressedDataRejected_data();
    void corruptCompressedDataRejected();
    void everyFlippedByteOfCompressedDataDetected();
    void compressedContentAboveMaximumRejected();

    void truncatedServicePayloadRejected_data();
    void truncatedServicePayloadRejected();
    void truncatedCommandPayloadRejected_data();
    void truncatedCommandPayloadRejected();
    void dataAboveMaximumRejected();
    void errorPointerIsOptional();
};

void tst_Payload::serviceLayout()
{
    QByteArray f;
    appendServiceFrame(f, "ab", 0x0102030405060708ull, Compressed, "Z");
    const QByteArray expected = QByteArray("\xA1\xD1\x01\x0C\x01\x00\x00\x00\x0D\x00\x00\x00", 12) +
                                QByteArray("\x02\x00"
                                           "ab",
                                           4) +
                                QByteArray("\x08\x07\x06\x05\x04\x03\x02\x01", 8) + "Z";
    QCOMPARE(f, expected);
    // The prefix is the same frame without its data; the length still counts the data.
    QCOMPARE(serviceFramePrefix("ab", 0x0102030405060708ull, Compressed, 1), expected.chopped(1));
}

void tst_Payload::serviceRoundTrip_data()
{
    QTest::addColumn<QByteArray>("name");
    QTest::addColumn<quint64>("sequence");
    QTest::addColumn<QByteArray>("data");

    QTest::newRow("ascii") << QByteArray("Detector.Temperature") << quint64(1) << QByteArray("21.5 C");
    QTest::newRow("empty-data") << QByteArray("Run.State") << quint64(0) << QByteArray();
    QTest::newRow("empty-name") << QByteArray() << quint64(7) << QByteArray("x");
    QTest::newRow("utf8-name-max-sequence")
        << QStringLiteral(u"Détecteur.Ström/温度").toUtf8() << quint64(0xFFFFFFFFFFFFFFFFull)
        << QByteArray("\x00\x01\xA1\xD1\xff", 5);
    QTest::newRow("binary-64KiB") << QByteArray("Big") << quint64(0x8000000000000001ull)
                                  << randomBytes(64 * 1024, 11);
}

void tst_Payload::serviceRoundTrip()
{
    QFETCH(QByteArray, name);
    QFETCH(quint64, sequence);
    QFETCH(QByteArray, data);

    QByteArray whole("leading bytes stay");
    appendServiceFrame(whole, name, sequence, 0, data);
    QVERIFY(whole.startsWith("leading bytes stay"));
    whole.remove(0, 18);
    const QByteArray prefixed = serviceFramePrefix(name, sequence, 0, data.size()) + data;
    QCOMPARE(prefixed, whole);

    for (const QByteArray &stream : {whole, prefixed}) {
        const QList<Frame> frames = decodeFrames(stream);
        QCOMPARE(frames.size(), 1);
        QCOMPARE(frames[0].type, Type::ServiceMessage);
        QCOMPARE(frames[0].flags, quint8(0));
        ServicePayload p;
        QString error = QStringLiteral("untouched");
        QVERIFY(decodeService(frames[0], p, NoLimit, &error));
        QCOMPARE(error, QStringLiteral("untouched"));
        QCOMPARE(p.name, name);
        QCOMPARE(p.sequence, sequence);
        QCOMPARE(p.data, data);
    }
}

void tst_Payload::commandLayout()
{
    const QByteArray f = encodeCommandFrame("go", "rc", 0, "now");
    const QByteArray expected =
        QByteArray("\xA1\xD1\x01\x0F\x00\x00\x00\x00\x0B\x00\x00\x00", 12) + QByteArray("\x02\x00"
                                                                                        "go"
                                                                                        "\x02\x00"
                                                                                        "rc"
                                                                                        "now",
                                                                                        11);
    QCOMPARE(f, expected);
}

void tst_Payload::commandRoundTrip_data()
{
    QTest::addColumn<QByteArray>("name");
    QTest::addColumn<QByteArray>("origin");
    QTest::addColumn<QByteArray>("data");

    QTest::newRow("ascii") << QByteArray("RunControl.Start") << QByteArray("dialog-runcontrol")
                           << QByteArray("run=42");
    QTest::newRow("empty-origin") << QByteArray("Stop") << QByteArray() << QByteArray("now");
    QTest::newRow("empty-data") << QByteArray("Ping") << QByteArray("tool") << QByteArray();
    QTest::newRow("utf8") << QStringLiteral(u"Kommando.Größe").toUtf8()
                          << QStringLiteral(u"Prozeß-π").toUtf8() << QByteArray("\x00\xff\x00", 3);
    QTest::newRow("binary-64KiB") << QByteArray("Load") << QByteArray("o") << randomBytes(64 * 1024, 12);
}

void tst_Payload::commandRoundTrip()
{
    QFETCH(QByteArray, name);
    QFETCH(QByteArray, origin);
    QFETCH(QByteArray, data);

    const QByteArray encoded = encodeCommandFrame(name, origin, 0, data);
    QCOMPARE(encoded.size(), HeaderSize + 4 + name.size() + origin.size() + data.size());
    const QList<Frame> frames = decodeFrames(encoded);
    QCOMPARE(frames.size(), 1);
    QCOMPARE(frames[0].type, Type::CommandMessage);
    QCOMPARE(frames[0].flags, quint8(0));
    CommandPayload p;
    QString error;
    QVERIFY(decodeCommand(frames[0], p, NoLimit, &error));
    QVERIFY(error.isEmpty());
    QCOMPARE(p.name, name);
    QCOMPARE(p.origin, origin);
    QCOMPARE(p.data, data);
}

void tst_Payload::maxNameLengthAccepted()
{
    const QByteArray name(MaxNameLength, 'n');
    ServicePayload s;
    QString error;
    QVERIFY(decodeService(Frame{Type::ServiceMessage, 0, servicePayload(name, 5, "d")}, s, NoLimit, &error));
    QCOMPARE(s.name, name);
    QCOMPARE(s.data, QByteArray("d"));

    CommandPayload c;
    QVERIFY(decodeCommand(decodeFrames(encodeCommandFrame(name, name, 0, "d")).value(0), c, NoLimit, &error));
    QCOMPARE(c.name, name);
    QCOMPARE(c.origin, name);
}

void tst_Payload::compressedServiceRoundTrip()
{
    const QByteArray data = compressibleText(256 * 1024);
    quint8 flags = 0;
    const QByteArray packed = prepareData(data, 1024, flags);
    QCOMPARE(flags, quint8(Compressed));
    QVERIFY2(packed.size() < data.size() / 10, QByteArray::number(packed.size()).constData());

    QByteArray stream;
    appendServiceFrame(stream, "Compressed.Service", 99, flags, packed);
    QCOMPARE(stream, serviceFramePrefix("Compressed.Service", 99, flags, packed.size()) + packed);
    const QList<Frame> frames = decodeFrames(stream);
    QCOMPARE(frames.size(), 1);
    QCOMPARE(frames[0].flags, quint8(Compressed));
    ServicePayload p;
    QString error;
    QVERIFY2(decodeService(frames[0], p, NoLimit, &error), qPrintable(error));
    QCOMPARE(p.name, QByteArray("Compressed.Service"));
    QCOMPARE(p.sequence, quint64(99));
    QCOMPARE(p.data.size(), data.size());
    QCOMPARE(p.data, data);
}

void tst_Payload::compressedCommandRoundTrip()
{
    const QByteArray data = compressibleText(10000);
    quint8 flags = 0;
    const QByteArray packed = prepareData(data, 10000, flags);
    QCOMPARE(flags, quint8(Compressed));
    QVERIFY(packed.size() < data.size());

    const QList<Frame> frames = decodeFrames(encodeCommandFrame("Configure", "runcontrol", flags, packed));
    QCOMPARE(frames.size(), 1);
    QCOMPARE(frames[0].flags, quint8(Compressed));
    CommandPayload p;
    QString error;
    QVERIFY2(decodeCommand(frames[0], p, NoLimit, &error), qPrintable(error));
    QCOMPARE(p.name, QByteArray("Configure"));
    QCOMPARE(p.origin, QByteArray("runcontrol"));
    QCOMPARE(p.data, data);
}

void tst_Payload::prepareDataThreshold_data()
{
    QTest::addColumn<int>("size");
    QTest::addColumn<int>("threshold");
    QTest::addColumn<bool>("compressed");

    QTest::newRow("threshold-0-never") << 64 * 1024 << 0 << false;
    QTest::newRow("threshold-negative-never") << 64 * 1024 << -1 << false;
    QTest::newRow("size-equals-threshold") << 4096 << 4096 << true;
    QTest::newRow("size-above-threshold") << 300 * 1024 << 1 << true;
    QTest::newRow("size-below-threshold") << 4095 << 4096 << false;
    QTest::newRow("empty-data") << 0 << 1 << false;
}

void tst_Payload::prepareDataThreshold()
{
    QFETCH(int, size);
    QFETCH(int, threshold);
    QFETCH(bool, compressed);

    const QByteArray data = compressibleText(size);
    quint8 flags = 0xFF; // must be reset
    const QByteArray prepared = prepareData(data, threshold, flags);
    if (!compressed) {
        QCOMPARE(flags, quint8(0));
        QCOMPARE(prepared, data);
        return;
    }
    QCOMPARE(flags, quint8(Compressed));
    QVERIFY(prepared.size() < data.size());
    QByteArray back;
    QString error;
    QVERIFY2(decompress(prepared, back, size, &error), qPrintable(error));
    QCOMPARE(back, data);
}

void tst_Payload::incompressibleDataNotCompressed_data()
{
    QTest::addColumn<int>("size");
    QTest::newRow("1MiB-sampled") << 1024 * 1024;
    QTest::newRow("32KiB-full-pass") << 32 * 1024;
}

void tst_Payload::incompressibleDataNotCompressed()
{
    QFETCH(int, size);
    const QByteArray data = randomBytes(size, 2024);
    quint8 flags = 0xFF;
    const QByteArray prepared = prepareData(data, 1, flags);
    QCOMPARE(flags, quint8(0));
    QCOMPARE(prepared.size(), data.size());
    QVERIFY(prepared == data);
}

void tst_Payload::serviceSkipsCompressionAfterIncompressibleData()
{
    // A service's update that did not compress makes its next IncompressibleSkip updates go as
    // they are without a try; compressible data keeps being compressed, and after the skip a
    // compressible update is compressed again.
    dialog::ServiceState state;
    state.compressionThreshold = 64 * 1024;
    const QByteArray text = compressibleText(100000);
    const QByteArray noise = randomBytes(100000, 7);
    quint8 flags = 0xFF;
    for (int i = 0; i < 3; ++i) {
        state.prepare(text, flags);
        QCOMPARE(flags, quint8(Compressed));
    }
    QCOMPARE(state.prepare(noise, flags), noise);
    QCOMPARE(flags, quint8(0));
    for (int i = 0; i < dialog::ServiceState::IncompressibleSkip; ++i) {
        QCOMPARE(state.prepare(text, flags), text); // not tried
        QCOMPARE(flags, quint8(0));
    }
    const QByteArray packed = state.prepare(text, flags);
    QCOMPARE(flags, quint8(Compressed));
    QVERIFY(packed.size() < text.size() / 2);
    // Below the threshold nothing is tried and the count is left alone.
    QCOMPARE(state.prepare(noise, flags), noise);
    QCOMPARE(state.prepare(text.left(1000), flags), text.left(1000));
    QCOMPARE(flags, quint8(0));
    QCOMPARE(state.skipCompression.load(), dialog::ServiceState::IncompressibleSkip);
}

void tst_Payload::corruptCompressedDataRejected_data()
{
    QTest::addColumn<QByteArray>("zstd");

    const QByteArray valid = zstdFrame(compressibleText(100000));
    QVERIFY(!valid.isEmpty());
    const qsizetype headerSize = zstdHeaderSize(valid);
    QCOMPARE(ZSTD_getFrameContentSize(valid.constData(), size_t(valid.size())), 100000ull);

    QTest::newRow("garbage") << QByteArray("this is not a zstd frame at all, just text");
    QTest::newRow("empty") << QByteArray();
    QTest::newRow("magic-only") << valid.left(4);
    QTest::newRow("header-only") << valid.left(headerSize);
    QTest::newRow("truncated-body") << valid.chopped(3);

    QByteArray reservedBlock = valid;
    reservedBlock[headerSize] = char(reservedBlock[headerSize] | 0x06); // block type 3 is reserved
    QTest::newRow("reserved-block-type") << reservedBlock;

    QByteArray flippedBody = valid;
    for (qsizetype i = headerSize; i < flippedBody.size(); ++i)
        flippedBody[i] = char(flippedBody[i] ^ 0xFF);
    QTest::newRow("every-body-byte-flipped") << flippedBody;

    QByteArray sizeTooSmall = valid; // content size field says 99999: the data does not fit
    QCOMPARE(ZSTD_getFrameContentSize(sizeTooSmall.constData(), size_t(sizeTooSmall.size())), 100000ull);
    QVERIFY(setZstdContentSize(sizeTooSmall, 99999));
    QCOMPARE(ZSTD_getFrameContentSize(sizeTooSmall.constData(), size_t(sizeTooSmall.size())), 99999ull);
    QTest::newRow("content-size-understated") << sizeTooSmall;

    QByteArray sizeTooLarge = valid;
    QVERIFY(setZstdContentSize(sizeTooLarge, 100001));
    QCOMPARE(ZSTD_getFrameContentSize(sizeTooLarge.constData(), size_t(sizeTooLarge.size())), 100001ull);
    QTest::newRow("content-size-overstated") << sizeTooLarge;

    QTest::newRow("no-content-size") << zstdFrameWithoutContentSize(compressibleText(1000));
    QTest::newRow("two-frames") << valid + valid;
}

void tst_Payload::corruptCompressedDataRejected()
{
    QFETCH(QByteArray, zstd);

    {
        const QList<Frame> frames = decodeFrames(serviceFramePrefix("S", 1, Compressed, zstd.size()) + zstd);
        QCOMPARE(frames.size(), 1);
        ServicePayload p;
        QString error;
        QVERIFY(!decodeService(frames[0], p, NoLimit, &error));
        QVERIFY(!error.isEmpty());
    }
    {
        const QList<Frame> frames = decodeFrames(encodeCommandFrame("C", "o", Compressed, zstd));
        QCOMPARE(frames.size(), 1);
        CommandPayload p;
        QString error;
        QVERIFY(!decodeCommand(frames[0], p, NoLimit, &error));
        QVERIFY(!error.isEmpty());
    }
    QByteArray out("stale");
    QString error;
    QVERIFY(!decompress(zstd, out, NoLimit, &error));
    QVERIFY(!error.isEmpty());
}

void tst_Payload::everyFlippedByteOfCompressedDataDetected()
{
    // "decompress() returns false on corrupt input": flip each byte of the frame after its header
    // in turn. Without a content checksum in the frame, some flips (in literals) decode "fine".
    const QByteArray original = compressibleText(100000);
    const QByteArray valid = zstdFrame(original);
    QVERIFY(!valid.isEmpty());
    const qsizetype headerSize = zstdHeaderSize(valid);
    QStringList silentlyWrong;
    for (qsizetype i = headerSize; i < valid.size(); ++i) {
        QByteArray corrupt = valid;
        corrupt[i] = char(corrupt[i] ^ 0xFF);
        QByteArray out;
        QString error;
        if (decompress(corrupt, out, NoLimit, &error) && out != original)
            silentlyWrong.append(QString::number(i));
    }
    const QString what =
        QStringLiteral("%1 of %2 single-byte corruptions decoded without error (first at offsets %3)")
            .arg(silentlyWrong.size())
            .arg(valid.size() - headerSize)
            .arg(silentlyWrong.mid(0, 8).join(QLatin1Char(',')));
    if (!silentlyWrong.isEmpty())
        qInfo("%s", qPrintable(what));
    QVERIFY2(silentlyWrong.isEmpty(), qPrintable(what));
}

void tst_Payload::compressedContentAboveMaximumRejected()
{
    const QByteArray data = compressibleText(100000);
    const QByteArray packed = zstdFrame(data);
    QVERIFY(!packed.isEmpty());
    const QList<Frame> frames = decodeFrames(serviceFramePrefix("S", 1, Compressed, packed.size()) + packed);
    QCOMPARE(frames.size(), 1);

    ServicePayload p;
    QString error;
    QVERIFY(!decodeService(frames[0], p, 99999, &error));
    QVERIFY2(error.contains(QLatin1String("100000")), qPrintable(error));

    error.clear();
    QVERIFY2(decodeService(frames[0], p, 100000, &error), qPrintable(error));
    QCOMPARE(p.data, data);

    CommandPayload c;
    error.clear();
    QVERIFY(!decodeCommand(Frame{Type::CommandMessage, Compressed,
                                 encodeCommandFrame("C", "", Compressed, packed).mid(HeaderSize)},
                           c, 99999, &error));
    QVERIFY(!error.isEmpty());
}

void tst_Payload::truncatedServicePayloadRejected_data()
{
    QTest::addColumn<QByteArray>("payload");

    const QByteArray valid = servicePayload("name", 42, QByteArray()); // 2 + 4 + 8 bytes
    QCOMPARE(valid.size(), 14);
    QTest::newRow("empty") << QByteArray();
    QTest::newRow("one-byte") << QByteArray(1, '\0');
    QTest::newRow("name-length-only") << u16(0);
    QTest::newRow("sequence-7-bytes") << valid.chopped(1);
    QTest::newRow("name-but-no-sequence") << valid.left(6);
    QTest::newRow("name-length-beyond-payload") << u16(5) + "abc";
    QTest::newRow("name-length-0xffff") << u16(0xFFFF) + QByteArray(100, 'x');
    QTest::newRow("name-length-above-max") << u16(MaxNameLength + 1) + QByteArray(MaxNameLength + 1 + 8, 'x');
}

void tst_Payload::truncatedServicePayloadRejected()
{
    QFETCH(QByteArray, payload);
    ServicePayload p;
    QString error;
    QVERIFY(!decodeService(Frame{Type::ServiceMessage, 0, payload}, p, NoLimit, &error));
    QVERIFY2(error.contains(QLatin1String("SERVICE_MESSAGE")), qPrintable(error));
}

void tst_Payload::truncatedCommandPayloadRejected_data()
{
    QTest::addColumn<QByteArray>("payload");

    QTest::newRow("empty") << QByteArray();
    QTest::newRow("name-length-only") << u16(0);
    QTest::newRow("name-without-origin-length") << u16(2) + "ab";
    QTest::newRow("origin-length-truncated") << u16(2) + "ab" + QByteArray(1, '\0');
    QTest::newRow("name-length-beyond-payload") << u16(50) + "abc" + u16(0);
    QTest::newRow("origin-length-beyond-payload") << u16(1) + "a" + u16(9) + "12345678";
    QTest::newRow("origin-length-above-max") << u16(0) + u16(MaxNameLength + 1) + QByteArray(2000, 'o');
}

void tst_Payload::truncatedCommandPayloadRejected()
{
    QFETCH(QByteArray, payload);
    CommandPayload p;
    QString error;
    QVERIFY(!decodeCommand(Frame{Type::CommandMessage, 0, payload}, p, NoLimit, &error));
    QVERIFY2(error.contains(QLatin1String("COMMAND_MESSAGE")), qPrintable(error));
}

void tst_Payload::dataAboveMaximumRejected()
{
    const QByteArray data(1000, 'd');
    const Frame service{Type::ServiceMessage, 0, servicePayload("S", 3, data)};
    ServicePayload s;
    QString error;
    QVERIFY(decodeService(service, s, 1000, &error));
    QCOMPARE(s.data, data);
    QVERIFY(!decodeService(service, s, 999, &error));
    QVERIFY2(error.contains(QLatin1String("1000")) && error.contains(QLatin1String("999")),
             qPrintable(error));

    const Frame command{Type::CommandMessage, 0, encodeCommandFrame("C", "o", 0, data).mid(HeaderSize)};
    CommandPayload c;
    error.clear();
    QVERIFY(decodeCommand(command, c, 1000, &error));
    QCOMPARE(c.data, data);
    QVERIFY(!decodeCommand(command, c, 999, &error));
    QVERIFY(!error.isEmpty());
}

void tst_Payload::errorPointerIsOptional()
{
    ServicePayload s;
    QVERIFY(!decodeService(Frame{Type::ServiceMessage, 0, u16(9)}, s, NoLimit, nullptr));
    QVERIFY(!decodeService(Frame{Type::ServiceMessage, 0, servicePayload("S", 1, "abc")}, s, 2, nullptr));
    QVERIFY(!decodeService(Frame{Type::ServiceMessage, Compressed, servicePayload("S", 1, "not zstd")}, s,
                           NoLimit, nullptr));
    CommandPayload c;
    QVERIFY(!decodeCommand(Frame{Type::CommandMessage, 0, QByteArray()}, c, NoLimit, nullptr));
    QByteArray out;
    QVERIFY(!decompress("garbage", out, NoLimit, nullptr));
}

QTEST_GUILESS_MAIN(tst_Payload)
#include "tst_payload.moc"
