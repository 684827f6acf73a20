// Unit tests of the protobuf control payload helpers (libdialog/src/control_p.h).
#include "control_p.h"
#include "inbounddecoder_p.h"
#include "wirecodec.h"

#include <QtEndian>
#include <QtTest>
#include <google/protobuf/stubs/logging.h>

using namespace dialog;
using namespace dialog::wire_format;
using dialog::test::feed;
using dialog::test::Frame;

Q_DECLARE_METATYPE(dialog::wire_format::Type)

namespace {

struct Sample
{
    Type type;
    QByteArray frame;      // controlFrame(type, msg)
    QByteArray serialized; // msg.SerializeAsString()
};

template <typename Message> Sample sample(Type type, const Message &msg)
{
    const std::string s = msg.SerializeAsString();
    return {type, controlFrame(type, msg), QByteArray(s.data(), qsizetype(s.size()))};
}

// One populated message for every control type (all except the data types and DISCONNECT).
QList<Sample> populatedSamples()
{
    wire::Hello hello;
    hello.set_name("Detector.Reader");
    hello.set_host("pc-daq-01");
    hello.set_port(40123);
    hello.set_pid(4242);
    hello.set_incarnation(0xFEDCBA9876543210ull);
    hello.set_nonce(std::string(32, '\x01'));

    wire::Connect connect;
    connect.set_name("Detector.Reader");
    connect.set_host("pc-daq-01");
    connect.set_port(40123);
    connect.set_pid(4242);
    connect.set_incarnation(77);
    connect.add_services("Reader.Rate");
    connect.add_services("Reader.State");
    connect.add_commands("Reader.Reset");
    connect.add_requests("RunControl.State");
    connect.set_heartbeat_ms(500);

    wire::Connected connected;
    connected.set_server("controlserver@pc-ctl");
    connected.set_heartbeat_ms(1000);
    connected.set_heartbeat_misses(3);

    wire::Heartbeat heartbeat;
    heartbeat.set_incarnation(77);
    heartbeat.set_sequence(123456789);

    wire::Names names;
    names.add_names("Reader.Rate");
    names.add_names(u8"Größe");

    wire::InfoService info;
    info.set_name("Reader.Rate");
    info.set_available(true);
    info.set_provider("Detector.Reader");
    info.set_host("pc-daq-01");
    info.set_port(40123);
    info.set_incarnation(77);

    wire::Subscribe subscribe;
    subscribe.set_name("Reader.Rate");

    wire::ConnectionLost lost;
    lost.set_reason("not connected");

    wire::LostProcess lostProcess;
    lostProcess.set_name("Detector.Reader");
    lostProcess.set_host("pc-daq-01");
    lostProcess.set_port(40123);
    lostProcess.set_incarnation(77);
    lostProcess.add_services("Reader.Rate");

    wire::Refused refused;
    refused.set_what("service");
    refused.set_name("Reader.Rate");
    refused.set_reason("provided by Other.Process");

    wire::Auth auth;
    auth.set_nonce(std::string(32, '\x5a'));
    auth.set_proof(std::string(32, '\xa5'));

    return {sample(Type::Hello, hello),
            sample(Type::ConnectToControlServer, connect),
            sample(Type::SuccessfullyConnected, connected),
            sample(Type::Heartbeat, heartbeat),
            sample(Type::RegisterService, names),
            sample(Type::UnregisterService, names),
            sample(Type::RequestService, names),
            sample(Type::CancelRequest, names),
            sample(Type::InfoService, info),
            sample(Type::SubscribeService, subscribe),
            sample(Type::UnsubscribeService, subscribe),
            sample(Type::RegisterCommand, names),
            sample(Type::UnregisterCommand, names),
            sample(Type::ConnectionLost, lost),
            sample(Type::LostSender, lostProcess),
            sample(Type::LostReceiver, lostProcess),
            sample(Type::Refused, refused),
            sample(Type::Auth, auth)};
}

bool isProtobufType(Type t)
{
    return !isDataType(t) && t != Type::Disconnect;
}

// Types whose field 1 is a string (all protobuf control types but HEARTBEAT and AUTH).
bool fieldOneIsString(Type t)
{
    return isProtobufType(t) && t != Type::Heartbeat && t != Type::Auth;
}

} // namespace

class tst_Control : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void everyControlTypeHasASample();
    void validPayloadForEveryControlType_data();
    void validPayloadForEveryControlType();
    void emptyPayloadValidForEveryType();
    void malformedPayloadRejected_data();
    void malformedPayloadRejected();
    void disconnectRequiresEmptyPayload_data();
    void disconnectRequiresEmptyPayload();
    void dataTypesAreNotParsedAsProtobuf();
    void unknownTypeRejected();
    void connectFieldsSurviveRoundTrip();
    void heartbeatStatisticsAreOptional();
    void namesFrameRoundTrip_data();
    void namesFrameRoundTrip();
};

void tst_Control::everyControlTypeHasASample()
{
    QSet<int> types;
    for (const Sample &s : populatedSamples())
        types.insert(int(s.type));
    for (int t = 1; t <= MaxType; ++t)
        QCOMPARE(types.contains(t), isProtobufType(Type(t)));
}

void tst_Control::validPayloadForEveryControlType_data()
{
    QTest::addColumn<Type>("type");
    QTest::addColumn<QByteArray>("frame");
    QTest::addColumn<QByteArray>("serialized");
    for (const Sample &s : populatedSamples())
        QTest::newRow(typeName(s.type)) << s.type << s.frame << s.serialized;
}

void tst_Control::validPayloadForEveryControlType()
{
    QFETCH(Type, type);
    QFETCH(QByteArray, frame);
    QFETCH(QByteArray, serialized);

    QVERIFY(!serialized.isEmpty());
    QCOMPARE(frame.size(), HeaderSize + serialized.size());
    QCOMPARE(frame.left(HeaderSize), encodeFrame(type, 0, serialized).left(HeaderSize));
    const QByteArray payload = frame.mid(HeaderSize);
    QCOMPARE(payload, serialized);
    QVERIFY(validControlPayload(type, payload));

    // And through the decoder, as it arrives from a socket.
    InboundDecoder d;
    QList<Frame> out;
    QVERIFY(feed(d, frame, out));
    QCOMPARE(out.size(), 1);
    QCOMPARE(out[0].type, type);
    QVERIFY(validControlPayload(out[0].type, out[0].payload));
}

void tst_Control::emptyPayloadValidForEveryType()
{
    // proto3: every field at its default is an empty message.
    for (int t = 1; t <= MaxType; ++t)
        QVERIFY2(validControlPayload(Type(t), QByteArray()), typeName(Type(t)));
    QCOMPARE(controlFrame(Type::Heartbeat, wire::Heartbeat()), encodeFrame(Type::Heartbeat, 0, {}));
}

void tst_Control::malformedPayloadRejected_data()
{
    QTest::addColumn<Type>("type");
    QTest::addColumn<QByteArray>("payload");

    // Each of these was checked to be refused by protobuf-lite for every control message.
    const QList<QPair<const char *, QByteArray>> garbage = {
        {"ff-ff-ff-ff", QByteArray("\xff\xff\xff\xff", 4)},    // tag varint never ends
        {"tag-varint-11-bytes", QByteArray(11, '\xff')},       // longer than any varint
        {"varint-value-missing", QByteArray("\x08", 1)},       // field 1, varint, no value
        {"varint-value-truncated", QByteArray("\x08\x80", 2)}, // continuation bit on the last byte
        {"length-beyond-end", QByteArray("\x0a\x05"
                                         "ab",
                                         4)}, // 5 bytes announced, 2 present
        {"length-huge", QByteArray("\x7a\xff\xff\xff\xff\x0f", 6)},
        {"wire-type-6", QByteArray("\x0e", 1)},
        {"wire-type-7", QByteArray("\x0f", 1)},
        {"field-number-0", QByteArray("\x00\x01", 2)},
        {"end-group-without-start", QByteArray("\x0c", 1)},
        {"start-group-unterminated", QByteArray("\x0b", 1)},
        {"fixed64-truncated", QByteArray("\x09\x01\x02", 3)},
        {"fixed32-truncated", QByteArray("\x0d\x01", 2)},
    };
    for (int t = 1; t <= MaxType; ++t) {
        const Type type = Type(t);
        if (!isProtobufType(type))
            continue;
        for (const auto &g : garbage)
            QTest::addRow("%s/%s", typeName(type), g.first) << type << g.second;
        if (fieldOneIsString(type))
            QTest::addRow("%s/invalid-utf8-string", typeName(type)) << type << QByteArray("\x0a\x01\xff", 3);
    }
}

void tst_Control::malformedPayloadRejected()
{
    QFETCH(Type, type);
    QFETCH(QByteArray, payload);
    // protobuf logs invalid UTF-8 to stderr: keep the test output readable.
    auto *previous = google::protobuf::SetLogHandler(
        [](google::protobuf::LogLevel, const char *, int, const std::string &) {});
    const bool valid = validControlPayload(type, payload);
    google::protobuf::SetLogHandler(previous);
    QVERIFY(!valid);
}

void tst_Control::disconnectRequiresEmptyPayload_data()
{
    QTest::addColumn<QByteArray>("payload");
    QTest::addColumn<bool>("valid");
    QTest::newRow("empty") << QByteArray() << true;
    QTest::newRow("one-zero-byte") << QByteArray(1, '\0') << false;
    QTest::newRow("text") << QByteArray("bye") << false;
    QTest::newRow("valid-names-message")
        << namesFrame(Type::RegisterService, {QStringLiteral("x")}).mid(HeaderSize) << false;
}

void tst_Control::disconnectRequiresEmptyPayload()
{
    QFETCH(QByteArray, payload);
    QFETCH(bool, valid);
    QCOMPARE(validControlPayload(Type::Disconnect, payload), valid);
}

void tst_Control::dataTypesAreNotParsedAsProtobuf()
{
    const QByteArray garbage("\xff\xff\xff\xff", 4);
    QVERIFY(validControlPayload(Type::ServiceMessage, garbage));
    QVERIFY(validControlPayload(Type::CommandMessage, garbage));
}

void tst_Control::unknownTypeRejected()
{
    QVERIFY(!validControlPayload(Type(0), QByteArray()));
    QVERIFY(!validControlPayload(Type(MaxType + 1), QByteArray()));
    QVERIFY(!validControlPayload(Type(255), QByteArray()));
}

void tst_Control::connectFieldsSurviveRoundTrip()
{
    const QList<Sample> samples = populatedSamples();
    const Sample &s = samples[1];
    QCOMPARE(s.type, Type::ConnectToControlServer);
    wire::Connect c;
    QVERIFY(parseControl(s.frame.mid(HeaderSize), c));
    QCOMPARE(qs(c.name()), QStringLiteral("Detector.Reader"));
    QCOMPARE(qs(c.host()), QStringLiteral("pc-daq-01"));
    QCOMPARE(c.port(), 40123u);
    QCOMPARE(c.pid(), 4242u);
    QCOMPARE(c.incarnation(), quint64(77));
    QCOMPARE(c.services_size(), 2);
    QCOMPARE(qs(c.services(0)), QStringLiteral("Reader.Rate"));
    QCOMPARE(qs(c.services(1)), QStringLiteral("Reader.State"));
    QCOMPARE(c.commands_size(), 1);
    QCOMPARE(qs(c.commands(0)), QStringLiteral("Reader.Reset"));
    QCOMPARE(c.requests_size(), 1);
    QCOMPARE(qs(c.requests(0)), QStringLiteral("RunControl.State"));
    QCOMPARE(c.heartbeat_ms(), 500u);

    // 64-bit values and UTF-8 text come back exactly.
    wire::Hello h;
    QVERIFY(parseControl(samples[0].frame.mid(HeaderSize), h));
    QCOMPARE(h.incarnation(), 0xFEDCBA9876543210ull);
    QCOMPARE(qs(ss(QStringLiteral(u"Größe/温度"))), QStringLiteral(u"Größe/温度"));
}

void tst_Control::heartbeatStatisticsAreOptional()
{
    // A heartbeat of an older process (no statistics) and one with them are both valid, and the
    // figures come back exactly.
    wire::Heartbeat bare;
    bare.set_incarnation(5);
    bare.set_sequence(9);
    const QByteArray bareFrame = controlFrame(Type::Heartbeat, bare);
    QVERIFY(validControlPayload(Type::Heartbeat, bareFrame.mid(HeaderSize)));
    wire::Heartbeat parsed;
    QVERIFY(parseControl(bareFrame.mid(HeaderSize), parsed));
    QVERIFY(!parsed.has_statistics());
    QCOMPARE(parsed.sequence(), quint64(9));

    wire::Heartbeat full = bare;
    wire::Statistics *st = full.mutable_statistics();
    st->set_messages_out(0xFFFFFFFFFFull);
    st->set_bytes_out(1);
    st->set_queued_bytes(-1); // a signed field: kept as sent
    st->set_incoming_connections(3);
    const QByteArray fullFrame = controlFrame(Type::Heartbeat, full);
    QVERIFY(validControlPayload(Type::Heartbeat, fullFrame.mid(HeaderSize)));
    QVERIFY(parseControl(fullFrame.mid(HeaderSize), parsed));
    QVERIFY(parsed.has_statistics());
    QCOMPARE(parsed.statistics().messages_out(), 0xFFFFFFFFFFull);
    QCOMPARE(parsed.statistics().queued_bytes(), qint64(-1));
    QCOMPARE(parsed.statistics().incoming_connections(), 3u);
    QCOMPARE(parsed.incarnation(), quint64(5));

    // The old schema's fields are a prefix: a reader that does not know field 3 still gets 1 and 2.
    QVERIFY(fullFrame.mid(HeaderSize).startsWith(bareFrame.mid(HeaderSize)));
    // Truncated statistics are rejected, not misread.
    QVERIFY(
        !validControlPayload(Type::Heartbeat, bareFrame.mid(HeaderSize) + QByteArray::fromHex("1a050801")));
}

void tst_Control::namesFrameRoundTrip_data()
{
    QTest::addColumn<Type>("type");
    QTest::addColumn<QStringList>("names");
    QTest::newRow("empty-list") << Type::RegisterService << QStringList();
    QTest::newRow("one") << Type::UnregisterService << QStringList{QStringLiteral("Reader.Rate")};
    QTest::newRow("order-and-duplicates-kept")
        << Type::RequestService
        << QStringList{QStringLiteral("b"), QStringLiteral("a"), QStringLiteral("b"), QStringLiteral("c")};
    QTest::newRow("empty-string-and-utf8")
        << Type::RegisterCommand
        << QStringList{QString(), QStringLiteral(u"Größe"), QStringLiteral(u"温度.Δ"), QStringLiteral("x y")};
    QStringList many;
    for (int i = 0; i < 1000; ++i)
        many.append(QStringLiteral("Service.%1").arg(i));
    QTest::newRow("thousand") << Type::CancelRequest << many;
}

void tst_Control::namesFrameRoundTrip()
{
    QFETCH(Type, type);
    QFETCH(QStringList, names);

    const QByteArray frame = namesFrame(type, names);
    InboundDecoder d;
    QList<Frame> out;
    QVERIFY(feed(d, frame, out));
    QCOMPARE(out.size(), 1);
    QCOMPARE(out[0].type, type);
    QCOMPARE(out[0].flags, quint8(0));
    QCOMPARE(qsizetype(qFromLittleEndian<quint32>(frame.constData() + 8)), frame.size() - HeaderSize);
    QVERIFY(validControlPayload(type, out[0].payload));
    wire::Names n;
    QVERIFY(parseControl(out[0].payload, n));
    QCOMPARE(n.names_size(), names.size());
    QCOMPARE(namesOf(n), names);
}

QTEST_GUILESS_MAIN(tst_Control)
#include "tst_control.moc"
