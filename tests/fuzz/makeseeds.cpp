// Writes the seed corpora of the fuzz targets (tests/fuzz/corpus/<target>/) from the library's own
// encoders, so the seeds follow the formats as they change: `makeseeds <corpus dir>`. The corpora
// are checked in; run it again after a format change and commit what changed.
#include "fuzzcommon.h"

#include "control_p.h"
#include "is/checkpointformat_p.h"
#include "is/journal_p.h"
#include "is/protocol_p.h"
#include "payload_p.h"
#include "zstdcodec_p.h"

#include "pushprotocol.h"

#include <dialog/is/codec.h>
#include <dialog/is/evolution.h>
#include <dialog/is/object.h>
#include <dialog/is/typeregistry.h>

#include <QJsonArray>
#include <QJsonDocument>

#include <QDir>
#include <QFile>
#include <QtEndian>

using namespace dialog;
using namespace dialog::wire_format;

namespace {

QString root;

void write(const QString &target, const QString &name, const QByteArray &bytes)
{
    QDir().mkpath(root + u'/' + target);
    QFile f(root + u'/' + target + u'/' + name);
    if (!f.open(QIODevice::WriteOnly) || f.write(bytes) != bytes.size()) {
        fprintf(stderr, "makeseeds: cannot write %s\n", qPrintable(f.fileName()));
        exit(1);
    }
}

QByteArray prefixed(quint8 first, const QByteArray &rest)
{
    return QByteArray(1, char(first)) + rest;
}

QByteArray readFile(const QString &path)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) {
        fprintf(stderr, "makeseeds: cannot read %s\n", qPrintable(path));
        exit(1);
    }
    return f.readAll();
}

is::Object sample(const QString &type)
{
    is::Object o = is::Object::create(fuzz::registry(), type);
    if (type == QLatin1String("AllTypes")) {
        o.set<QString>(QStringLiteral("s"), QStringLiteral("héllo"));
        o.set<qint32>(QStringLiteral("i32"), -7);
        o.set<double>(QStringLiteral("d"), 2.5);
        o.set<QList<QString>>(QStringLiteral("vs"), {QStringLiteral("a"), QStringLiteral("bc")});
        o.set<QList<quint64>>(QStringLiteral("vu64"), {1, 2, 3});
    } else if (type == QLatin1String("OneString")) {
        o.set<QString>(QStringLiteral("s"), QStringLiteral("value"));
    }
    return o;
}

void frames()
{
    wire::Hello h;
    h.set_name("RO1");
    h.set_host("127.0.0.1");
    h.set_port(4000);
    h.set_pid(42);
    h.set_incarnation(7);
    const QByteArray hello = controlFrame(Type::Hello, h);
    QByteArray service;
    appendServiceFrame(service, "RunCtrl.RO1.Status", 3, 0, "some data");
    quint8 flags = 0;
    const QByteArray big = prepareData(QByteArray(20000, 'x'), 64, flags);
    QByteArray compressed;
    appendServiceFrame(compressed, "DAQ.big", 4, flags, big);
    const QByteArray names = namesFrame(Type::SubscribeService, {QStringLiteral("a"), QStringLiteral("b.c")});
    const QByteArray command = encodeCommandFrame("RunCtrl.Master.Command", "cli", 0, "configure");
    const QByteArray request = encodeRequestFrame("IS.DAQ", 9, 0, "req");
    const QByteArray reply = encodeReplyFrame(9, 0, 0, "ok");
    write("fuzz_frames", "hello_service", prefixed(0x80, QByteArray(1, char(200)) + hello + service));
    write("fuzz_frames", "compressed_bytewise",
          prefixed(0x00, QByteArray(1, char(200)) + hello + compressed));
    write("fuzz_frames", "control_and_data",
          prefixed(0x13, QByteArray(1, char(4)) + hello + names + command + request + reply +
                             encodeFrame(Type::Disconnect, 0, {})));
    write("fuzz_frames", "direct_mode",
          prefixed(0x7f, QByteArray(1, char(255)) + hello + compressed + service));

    write("fuzz_payload", "service", prefixed(0x00, service.mid(HeaderSize)));
    write("fuzz_payload", "service_zstd", prefixed(0x04 | 0x20, compressed.mid(HeaderSize)));
    write("fuzz_payload", "command", prefixed(0x01, command.mid(HeaderSize)));
    write("fuzz_payload", "request", prefixed(0x02, request.mid(HeaderSize)));
    write("fuzz_payload", "reply", prefixed(0x03, reply.mid(HeaderSize)));
    QByteArray z;
    zstd::compress(QByteArray("zstd data zstd data zstd data"), 3, z);
    write("fuzz_payload", "zstd_frame", prefixed(0x00, z));

    write("fuzz_control", "hello", prefixed(quint8(Type::Hello), hello.mid(HeaderSize)));
    wire::Connect c;
    c.set_name("RO1");
    c.set_host("127.0.0.1");
    c.set_port(4000);
    c.add_services("RunCtrl.RO1.Status");
    c.add_commands("RunCtrl.RO1.Command");
    c.set_heartbeat_ms(1000);
    write("fuzz_control", "connect",
          prefixed(quint8(Type::ConnectToControlServer),
                   controlFrame(Type::ConnectToControlServer, c).mid(HeaderSize)));
    wire::LostProcess l;
    l.set_name("RO1");
    l.add_services("x");
    write("fuzz_control", "lost",
          prefixed(quint8(Type::LostSender), controlFrame(Type::LostSender, l).mid(HeaderSize)));
    write("fuzz_control", "names", prefixed(quint8(Type::SubscribeService), names.mid(HeaderSize)));
    write(
        "fuzz_control", "directory_json",
        prefixed(
            0x80,
            R"({"server":"cs","processes":[{"name":"RO1","host":"127.0.0.1","port":4000,"services":["a"],"commands":[]}],"lost":[]})"));
    write("fuzz_control", "state_json",
          prefixed(0x82, R"({"state":"Running","run":12,"slaves":{"RO1":"Running"}})"));
}

void isvalues()
{
    QByteArray records;
    for (const QString &type :
         {QStringLiteral("AllTypes"), QStringLiteral("OneString"), QStringLiteral("Tree")}) {
        const QByteArray encoded = is::encode(sample(type));
        write("fuzz_isvalue", type.toLower(), prefixed(0, encoded));
        is::protocol::appendRecord(records, is::protocol::Updated, type.toUtf8() + "Object", type.toUtf8(),
                                   1700000000000000, encoded);
    }
    is::protocol::appendRecord(records, is::protocol::Removed, "Gone", "OneString", 1, {});
    write("fuzz_isvalue", "records", prefixed(1, records));

    QList<is::StoredObject> objects;
    for (const QString &type : {QStringLiteral("AllTypes"), QStringLiteral("OneString")})
        objects.append({type + QStringLiteral("Object"), sample(type), is::Time::currentTime(), 3});
    QString error;
    const QByteArray file = is::checkpointformat::encode(QStringLiteral("Fuzz"), objects, &error);
    write("fuzz_checkpoint", "file", prefixed(0, QByteArray(1, 0) + file));
    // The object list alone, as checkpoint.h lays it out (the target wraps it in a header).
    QByteArray list;
    const auto put = [&list](auto v) {
        char b[sizeof v];
        qToLittleEndian(v, b);
        list.append(b, sizeof v);
    };
    for (const is::StoredObject &o : objects) {
        const QByteArray name = o.name.toUtf8(), encoded = is::encode(o.object);
        put(quint32(name.size()));
        list += name;
        put(o.time.microsecondsSinceEpoch());
        put(o.updateCount);
        put(quint32(encoded.size()));
        list += encoded;
    }
    write("fuzz_checkpoint", "objects", prefixed(1, QByteArray(1, char(objects.size())) + list));
    // Format 2: the type layouts, then the objects; and the same objects under layouts in which
    // AllTypes lacks its last attribute, so the fuzzer starts on the paths of type evolution.
    is::Layouts layouts;
    for (const is::StoredObject &o : objects)
        layouts.add(o.object);
    QList<is::AttributeInfo> older = layouts.attributes(QStringLiteral("AllTypes"));
    older.removeLast();
    is::Layouts evolved = layouts;
    evolved.add(QStringLiteral("AllTypes"), older);
    const auto withLength = [](const QByteArray &bytes) {
        char b[4];
        qToLittleEndian(quint32(bytes.size()), b);
        return QByteArray(b, 4) + bytes;
    };
    const QByteArray count(1, char(objects.size()));
    write("fuzz_checkpoint", "objects_v2", prefixed(3, count + withLength(layouts.encode()) + list));
    write("fuzz_checkpoint", "objects_evolved", prefixed(3, count + withLength(evolved.encode()) + list));

    // A journal segment of format 2: the layout record, then a record of the type.
    const is::Object all = is::Object::create(fuzz::registry(), QStringLiteral("AllTypes"));
    is::Layouts allLayouts;
    allLayouts.add(all);
    QByteArray segment = is::journalformat::encodeHeader(QStringLiteral("Fuzz"), 1);
    is::journalformat::appendLayoutRecord(segment, allLayouts);
    is::Change created;
    created.kind = is::Change::Kind::Created;
    created.name = QStringLiteral("a");
    created.object = all;
    created.time = is::Time(1700000000000000);
    is::journalformat::appendRecord(segment, created);
    write("fuzz_journal", "segment_v2", prefixed(0, segment));
}

/// A push master's stream after the hello: a snapshot, changes, types declared since, a ping.
void pushes()
{
    namespace push = isd::push;
    QByteArray snapshot;
    is::protocol::appendRecord(snapshot, is::protocol::SnapshotBegin, {}, {}, 1, {});
    for (const QString &type : {QStringLiteral("AllTypes"), QStringLiteral("OneString")})
        is::protocol::appendRecord(snapshot, is::protocol::Created, type.toUtf8() + "Object", type.toUtf8(),
                                   1700000000000000, is::encode(sample(type)));
    is::protocol::appendRecord(snapshot, is::protocol::SnapshotEnd, {}, {}, 2, {});
    QByteArray changes;
    is::protocol::appendRecord(changes, is::protocol::Updated, "OneStringObject", "OneString", 1700000000000001,
                               is::encode(sample(QStringLiteral("OneString"))));
    is::protocol::appendRecord(changes, is::protocol::Removed, "AllTypesObject", "AllTypes", 1700000000000002, {});
    const QByteArray types = QJsonDocument(is::typesToJson(fuzz::registry())).toJson(QJsonDocument::Compact);
    const QByteArray raw = push::encode(push::Type::Records, snapshot) + push::encode(push::Type::Records, changes) +
                           push::encode(push::Type::Types, types) + push::encode(push::Type::Ping);
    write("fuzz_push", "stream", prefixed(0, raw));
    // The same frames as pieces (type, 16-bit length, payload) that the target frames itself.
    QByteArray pieces;
    for (const auto &[type, payload] : {std::pair{push::Type::Records, snapshot}, {push::Type::Records, changes},
                                        {push::Type::Ping, QByteArray()}}) {
        char length[2];
        qToLittleEndian(quint16(payload.size()), length);
        pieces += char(type) + QByteArray(length, 2) + payload;
    }
    write("fuzz_push", "pieces", prefixed(1, pieces));
    write("fuzz_push", "bad_magic", prefixed(0, QByteArray("DIPX\x01\x05\x00\x00\x00\x00", 10)));
}

} // namespace

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: makeseeds <corpus dir>\n");
        return 2;
    }
    root = QString::fromLocal8Bit(argv[1]);
    frames();
    isvalues();
    pushes();
    const QString src = QStringLiteral(DIALOG_SOURCE_DIR);
    for (const QString &f :
         QDir(src + QStringLiteral("/resources/is-types")).entryList({QStringLiteral("*.xml")}))
        write("fuzz_typexml", f, readFile(src + QStringLiteral("/resources/is-types/") + f));
    write("fuzz_partition", "demo.json", readFile(src + QStringLiteral("/resources/partitions/demo.json")));
    write("fuzz_webhead", "get", prefixed(200, "GET /is/DAQ?regex=.* HTTP/1.1\r\nHost: x\r\n\r\n"));
    write("fuzz_webhead", "websocket",
          prefixed(3, "GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                      "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"));
    write("fuzz_webhead", "not_http", prefixed(255, QByteArray("\x01\x00\x00\x0c", 4)));
    write("fuzz_webhead", "second_request",
          prefixed(7, "GET /is HTTP/1.1\r\nHost: x\r\n\r\n\r\nHEAD /is/DAQ HTTP/1.1\r\nHost: x\r\n\r\n"));
    write("fuzz_webhead", "body", prefixed(40, "POST /is HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello"));
    write("fuzz_webhead", "conflicting_lengths",
          prefixed(16, "GET /is HTTP/1.1\r\nContent-Length: 0\r\nContent-Length: 12\r\n\r\n"));
    write("fuzz_webhead", "chunked",
          prefixed(100, "GET / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"));
    return 0;
}
