// The hex examples of docs/protocol.md decoded with libdialog's codec: the frame decoder, the
// payload splitters and zstd (payload_p.h), the protobuf messages (dialog.proto, is.proto), the IS
// object codec (dialog/is/codec.h) and the notification records (is/protocol_p.h). Every
// `check KEY VALUE` line of a ```dialog-example block must hold, so the document cannot drift
// from the code.
#include "statuscheck.h"
#include "control_p.h"
#include "dialog/is/codec.h"
#include "dialog/is/typeregistry.h"
#include "inbounddecoder_p.h"
#include "is/protocol_p.h"
#include "payload_p.h"
#include "wirecodec.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonObject>
#include <QtTest>
#include <algorithm>

using namespace dialog::wire_format;
namespace isp = dialog::isproto;

namespace {

const QString DocPath = QStringLiteral(DIALOG_SOURCE_DIR "/docs/protocol.md");

struct Example
{
    int line = 0; // of the opening fence
    QString kind;
    QList<QPair<QString, QString>> checks;
    QByteArray bytes;
};

using Fields = QMap<QString, QString>;

QString str(const std::string &s)
{
    return QString::fromStdString(s);
}
QString hex(const std::string &s)
{
    return QString::fromLatin1(QByteArray::fromStdString(s).toHex());
}

QString num(quint64 v)
{
    return QString::number(v);
}
QString boolean(bool b)
{
    return b ? QStringLiteral("true") : QStringLiteral("false");
}

template <typename Repeated> void addList(Fields &f, const QString &key, const Repeated &list)
{
    f.insert(key + QStringLiteral(".size"), num(quint64(list.size())));
    for (int i = 0; i < list.size(); ++i)
        f.insert(QStringLiteral("%1[%2]").arg(key).arg(i), str(list.Get(i)));
}

QString jsonText(const QJsonValue &v)
{
    switch (v.type()) {
    case QJsonValue::Bool:
        return boolean(v.toBool());
    case QJsonValue::Double:
        return QString::number(v.toDouble(), 'g', 17);
    case QJsonValue::String:
        return v.toString();
    default:
        return QString();
    }
}

// Attribute name -> value text of an object's JSON view (vectors as name[i], nested as a.b).
void addJson(Fields &f, const QString &prefix, const QJsonObject &o)
{
    for (auto it = o.begin(); it != o.end(); ++it) {
        const QString key = prefix + it.key();
        if (it->isObject()) {
            addJson(f, key + QLatin1Char('.'), it->toObject());
        } else if (it->isArray()) {
            const QJsonArray a = it->toArray();
            f.insert(key + QStringLiteral(".size"), num(quint64(a.size())));
            for (qsizetype i = 0; i < a.size(); ++i)
                f.insert(QStringLiteral("%1[%2]").arg(key).arg(i), jsonText(a.at(i)));
        } else {
            f.insert(key, jsonText(*it));
        }
    }
}

bool addValue(Fields &f, const QString &prefix, QByteArrayView value, const dialog::is::TypeRegistry &types,
              QString *error)
{
    f.insert(prefix + QStringLiteral("size"), num(quint64(value.size())));
    if (value.isEmpty())
        return true;
    dialog::is::Object o;
    if (const dialog::Status st = dialog::is::decode(value, types, o); !st.isOk()) {
        if (error)
            *error = st.message();
        return false;
    }
    f.insert(prefix + QStringLiteral("type"), o.typeName());
    addJson(f, prefix, dialog::is::toJson(o));
    return true;
}

template <typename Message> bool parse(QByteArrayView data, Message &m)
{
    return m.ParseFromArray(data.data(), int(data.size()));
}

// The IS request/reply carried as the data of a REQUEST to / REPLY from an IS server.
bool addIsRequest(Fields &f, QByteArrayView data)
{
    isp::Request r;
    if (!parse(data, r))
        return false;
    f.insert(QStringLiteral("is.op"), num(quint64(r.op())));
    f.insert(QStringLiteral("is.name"), str(r.name()));
    f.insert(QStringLiteral("is.type"), str(r.type()));
    f.insert(QStringLiteral("is.channel"), str(r.channel()));
    f.insert(QStringLiteral("is.with_values"), boolean(r.with_values()));
    f.insert(QStringLiteral("is.snapshot"), boolean(r.snapshot()));
    f.insert(QStringLiteral("is.criteria.regex"), str(r.criteria().regex()));
    f.insert(QStringLiteral("is.criteria.type"), str(r.criteria().type()));
    f.insert(QStringLiteral("is.criteria.selector"), num(r.criteria().selector()));
    f.insert(QStringLiteral("is.criteria.logic"), num(r.criteria().logic()));
    return true;
}

bool addIsReply(Fields &f, QByteArrayView data, const dialog::is::TypeRegistry &types, QString *error)
{
    isp::Reply r;
    if (!parse(data, r))
        return false;
    f.insert(QStringLiteral("is.code"), num(r.code()));
    f.insert(QStringLiteral("is.error"), str(r.error()));
    f.insert(QStringLiteral("is.entries.size"), num(quint64(r.entries_size())));
    for (int i = 0; i < r.entries_size(); ++i) {
        const isp::Entry &e = r.entries(i);
        const QString p = QStringLiteral("is.entries[%1].").arg(i);
        f.insert(p + QStringLiteral("name"), str(e.name()));
        f.insert(p + QStringLiteral("type"), str(e.type()));
        f.insert(p + QStringLiteral("time_us"), QString::number(e.time_us()));
        f.insert(p + QStringLiteral("update_count"), num(e.update_count()));
        if (!addValue(f, p + QStringLiteral("value."),
                      QByteArrayView(e.value().data(), qsizetype(e.value().size())), types, error))
            return false;
    }
    return true;
}

bool addRecords(Fields &f, QByteArrayView batch, const dialog::is::TypeRegistry &types, QString *error)
{
    qsizetype pos = 0;
    dialog::is::protocol::RecordView r;
    int n = 0;
    while (pos < batch.size()) {
        if (const dialog::Status read = dialog::is::protocol::nextRecord(batch, pos, r); !read.isOk()) {
            *error = read.message();
            return false;
        }
        const QString p = QStringLiteral("records[%1].").arg(n++);
        f.insert(p + QStringLiteral("kind"), num(r.kind));
        f.insert(p + QStringLiteral("name"), QString::fromUtf8(batch.sliced(r.nameOffset, r.nameLength)));
        f.insert(p + QStringLiteral("type"), QString::fromUtf8(batch.sliced(r.typeOffset, r.typeLength)));
        f.insert(p + QStringLiteral("time_us"), QString::number(r.timeUs));
        if (!addValue(f, p + QStringLiteral("value."), batch.sliced(r.valueOffset, r.valueLength), types,
                      error))
            return false;
    }
    f.insert(QStringLiteral("records.size"), num(quint64(n)));
    return error->isEmpty();
}

// Every field of a control payload, by its proto field name.
bool addControl(Fields &f, Type type, const QByteArray &payload)
{
    switch (type) {
    case Type::Hello: {
        dialog::wire::Hello m;
        if (!parseControl(payload, m))
            return false;
        f.insert(QStringLiteral("name"), str(m.name()));
        f.insert(QStringLiteral("host"), str(m.host()));
        f.insert(QStringLiteral("port"), num(m.port()));
        f.insert(QStringLiteral("pid"), num(m.pid()));
        f.insert(QStringLiteral("incarnation"), num(m.incarnation()));
        f.insert(QStringLiteral("nonce"), hex(m.nonce()));
        return true;
    }
    case Type::Auth: {
        dialog::wire::Auth m;
        if (!parseControl(payload, m))
            return false;
        f.insert(QStringLiteral("nonce"), hex(m.nonce()));
        f.insert(QStringLiteral("proof"), hex(m.proof()));
        return true;
    }
    case Type::ConnectToControlServer: {
        dialog::wire::Connect m;
        if (!parseControl(payload, m))
            return false;
        f.insert(QStringLiteral("name"), str(m.name()));
        f.insert(QStringLiteral("host"), str(m.host()));
        f.insert(QStringLiteral("port"), num(m.port()));
        f.insert(QStringLiteral("pid"), num(m.pid()));
        f.insert(QStringLiteral("incarnation"), num(m.incarnation()));
        f.insert(QStringLiteral("heartbeat_ms"), num(m.heartbeat_ms()));
        addList(f, QStringLiteral("services"), m.services());
        addList(f, QStringLiteral("commands"), m.commands());
        addList(f, QStringLiteral("requests"), m.requests());
        return true;
    }
    case Type::SuccessfullyConnected: {
        dialog::wire::Connected m;
        if (!parseControl(payload, m))
            return false;
        f.insert(QStringLiteral("server"), str(m.server()));
        f.insert(QStringLiteral("heartbeat_ms"), num(m.heartbeat_ms()));
        f.insert(QStringLiteral("heartbeat_misses"), num(m.heartbeat_misses()));
        return true;
    }
    case Type::Heartbeat: {
        dialog::wire::Heartbeat m;
        if (!parseControl(payload, m))
            return false;
        f.insert(QStringLiteral("incarnation"), num(m.incarnation()));
        f.insert(QStringLiteral("sequence"), num(m.sequence()));
        const dialog::wire::Statistics &s = m.statistics();
        f.insert(QStringLiteral("statistics.messages_out"), num(s.messages_out()));
        f.insert(QStringLiteral("statistics.bytes_out"), num(s.bytes_out()));
        f.insert(QStringLiteral("statistics.messages_in"), num(s.messages_in()));
        f.insert(QStringLiteral("statistics.bytes_in"), num(s.bytes_in()));
        return true;
    }
    case Type::RegisterService:
    case Type::UnregisterService:
    case Type::RequestService:
    case Type::CancelRequest:
    case Type::RegisterCommand:
    case Type::UnregisterCommand: {
        dialog::wire::Names m;
        if (!parseControl(payload, m))
            return false;
        addList(f, QStringLiteral("names"), m.names());
        return true;
    }
    case Type::InfoService: {
        dialog::wire::InfoService m;
        if (!parseControl(payload, m))
            return false;
        f.insert(QStringLiteral("name"), str(m.name()));
        f.insert(QStringLiteral("available"), boolean(m.available()));
        f.insert(QStringLiteral("provider"), str(m.provider()));
        f.insert(QStringLiteral("host"), str(m.host()));
        f.insert(QStringLiteral("port"), num(m.port()));
        f.insert(QStringLiteral("incarnation"), num(m.incarnation()));
        return true;
    }
    case Type::SubscribeService:
    case Type::UnsubscribeService: {
        dialog::wire::Subscribe m;
        if (!parseControl(payload, m))
            return false;
        f.insert(QStringLiteral("name"), str(m.name()));
        return true;
    }
    case Type::ConnectionLost: {
        dialog::wire::ConnectionLost m;
        if (!parseControl(payload, m))
            return false;
        f.insert(QStringLiteral("reason"), str(m.reason()));
        return true;
    }
    case Type::LostSender:
    case Type::LostReceiver: {
        dialog::wire::LostProcess m;
        if (!parseControl(payload, m))
            return false;
        f.insert(QStringLiteral("name"), str(m.name()));
        f.insert(QStringLiteral("host"), str(m.host()));
        f.insert(QStringLiteral("port"), num(m.port()));
        f.insert(QStringLiteral("incarnation"), num(m.incarnation()));
        addList(f, QStringLiteral("services"), m.services());
        return true;
    }
    case Type::Refused: {
        dialog::wire::Refused m;
        if (!parseControl(payload, m))
            return false;
        f.insert(QStringLiteral("what"), str(m.what()));
        f.insert(QStringLiteral("name"), str(m.name()));
        f.insert(QStringLiteral("reason"), str(m.reason()));
        return true;
    }
    case Type::Disconnect:
        return payload.isEmpty();
    default:
        return false;
    }
}

/// The data of a service, command, request or reply payload, decompressed when the frame says so.
bool extractData(QByteArrayView data, quint8 flags, QByteArray &out, qint64 max, QString *error)
{
    if (flags & Compressed)
        return decompress(data, out, max, error);
    out = data.toByteArray();
    return true;
}

QString errorName(InboundDecoder::Error e)
{
    switch (e) {
    case InboundDecoder::Error::None:
        return QStringLiteral("None");
    case InboundDecoder::Error::BadMagic:
        return QStringLiteral("BadMagic");
    case InboundDecoder::Error::BadVersion:
        return QStringLiteral("BadVersion");
    case InboundDecoder::Error::UnknownType:
        return QStringLiteral("UnknownType");
    case InboundDecoder::Error::BadFlags:
        return QStringLiteral("BadFlags");
    case InboundDecoder::Error::TooLarge:
        return QStringLiteral("TooLarge");
    case InboundDecoder::Error::Rejected:
        return QStringLiteral("Rejected");
    }
    return QString();
}

} // namespace

class TestProtocolDoc : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void examples_data();
    void examples();
    void everyTypeIsDocumented();

private:
    QList<Example> m_examples;
    QString m_text;
    dialog::is::TypeRegistry m_types;
};

void TestProtocolDoc::initTestCase()
{
    QFile file(DocPath);
    QVERIFY2(file.open(QIODevice::ReadOnly), qPrintable(DocPath + QStringLiteral(": ") + file.errorString()));
    m_text = QString::fromUtf8(file.readAll());
    const QStringList lines = m_text.split(QLatin1Char('\n'));
    Example *cur = nullptr;
    for (int i = 0; i < lines.size(); ++i) {
        const QString &l = lines.at(i);
        if (!cur) {
            if (l.startsWith(QLatin1String("```dialog-example "))) {
                m_examples.append(Example{i + 1, l.mid(18).trimmed(), {}, {}});
                cur = &m_examples.last();
            }
            continue;
        }
        if (l.startsWith(QLatin1String("```"))) {
            cur = nullptr;
        } else if (l.startsWith(QLatin1String("check "))) {
            const QString rest = l.mid(6);
            const qsizetype sp = rest.indexOf(QLatin1Char(' '));
            QVERIFY2(sp > 0, qPrintable(QStringLiteral("line %1: check without a value").arg(i + 1)));
            cur->checks.append({rest.left(sp), rest.mid(sp + 1)});
        } else {
            const QByteArray hex = l.toLatin1().replace(' ', "");
            const QByteArray bytes = QByteArray::fromHex(hex);
            QVERIFY2(bytes.size() * 2 == hex.size(),
                     qPrintable(QStringLiteral("line %1: not hex").arg(i + 1)));
            cur->bytes += bytes;
        }
    }
    QVERIFY2(!cur, "unterminated dialog-example block");
    QVERIFY2(m_examples.size() >= 20, qPrintable(QStringLiteral("only %1 examples").arg(m_examples.size())));
    QString error;
    QVERIFY_OK(m_types.loadDirectory(QStringLiteral(DIALOG_SOURCE_DIR "/resources/is-types")));
}

void TestProtocolDoc::examples_data()
{
    QTest::addColumn<int>("index");
    for (int i = 0; i < m_examples.size(); ++i)
        QTest::addRow("line %d", m_examples.at(i).line) << i;
}

void TestProtocolDoc::examples()
{
    QFETCH(int, index);
    const Example &ex = m_examples.at(index);
    QVERIFY(!ex.checks.isEmpty());
    QVERIFY(!ex.bytes.isEmpty());
    Fields f;
    QString error;
    if (ex.kind == QLatin1String("is-value")) {
        QVERIFY2(addValue(f, QString(), ex.bytes, m_types, &error), qPrintable(error));
    } else {
        QCOMPARE(ex.kind, QStringLiteral("frame"));
        InboundDecoder decoder;
        QList<dialog::test::Frame> frames;
        if (!dialog::test::feed(decoder, ex.bytes, frames)) {
            f.insert(QStringLiteral("error"), errorName(decoder.error()));
        } else {
            QCOMPARE(frames.size(), 1);
            QCOMPARE(decoder.buffered(), 0);
            const dialog::test::Frame &fr = frames.first();
            f.insert(QStringLiteral("type"), QString::fromLatin1(typeName(fr.type)));
            f.insert(QStringLiteral("flags"), num(fr.flags));
            f.insert(QStringLiteral("length"), num(quint64(fr.payload.size())));
            const qint64 max = DefaultMaxMessageSize;
            if (fr.type == Type::ServiceMessage || fr.type == Type::Request) {
                QByteArrayView name, data;
                quint64 seq = 0;
                QVERIFY(splitService(fr.payload, name, seq, data));
                QByteArray out;
                QVERIFY2(extractData(data, fr.flags, out, max, &error), qPrintable(error));
                f.insert(QStringLiteral("name"), QString::fromUtf8(name));
                f.insert(fr.type == Type::Request ? QStringLiteral("id") : QStringLiteral("sequence"),
                         num(seq));
                f.insert(QStringLiteral("data"), QString::fromUtf8(out));
                f.insert(QStringLiteral("data.size"), num(quint64(out.size())));
                if (name.startsWith("IS.sub/"))
                    QVERIFY2(addRecords(f, out, m_types, &error), qPrintable(error));
                else if (fr.type == Type::Request && name.startsWith("IS."))
                    QVERIFY(addIsRequest(f, out));
            } else if (fr.type == Type::CommandMessage) {
                QByteArrayView name, origin, data;
                QVERIFY(splitCommand(fr.payload, name, origin, data));
                QByteArray out;
                QVERIFY2(extractData(data, fr.flags, out, max, &error), qPrintable(error));
                f.insert(QStringLiteral("name"), QString::fromUtf8(name));
                f.insert(QStringLiteral("origin"), QString::fromUtf8(origin));
                f.insert(QStringLiteral("data"), QString::fromUtf8(out));
            } else if (fr.type == Type::Reply) {
                quint64 id = 0;
                quint8 status = 0;
                QByteArrayView data;
                QVERIFY(splitReply(fr.payload, id, status, data));
                QByteArray out;
                QVERIFY2(extractData(data, fr.flags, out, max, &error), qPrintable(error));
                f.insert(QStringLiteral("id"), num(id));
                f.insert(QStringLiteral("status"), num(status));
                f.insert(QStringLiteral("data"), QString::fromUtf8(out));
                if (std::any_of(ex.checks.cbegin(), ex.checks.cend(),
                                [](const auto &c) { return c.first.startsWith(QLatin1String("is.")); }))
                    QVERIFY2(addIsReply(f, out, m_types, &error), qPrintable(error));
            } else {
                QVERIFY2(validControlPayload(fr.type, fr.payload), "the control payload does not parse");
                QVERIFY2(addControl(f, fr.type, fr.payload), "the control payload does not parse");
            }
        }
    }
    for (const auto &[key, expected] : ex.checks) {
        QVERIFY2(f.contains(key), qPrintable(QStringLiteral("line %1: no field '%2' (fields: %3)")
                                                 .arg(ex.line)
                                                 .arg(key, QStringList(f.keys()).join(QLatin1Char(' ')))));
        QVERIFY2(f.value(key) == expected,
                 qPrintable(QStringLiteral("line %1: %2 is '%3', the document says '%4'")
                                .arg(ex.line)
                                .arg(key, f.value(key), expected)));
    }
}

void TestProtocolDoc::everyTypeIsDocumented()
{
    // Every message type has its row in the type table, with the code's number and name.
    for (int t = 1; t <= MaxType; ++t) {
        const QString row =
            QStringLiteral("| %1 | %2 |").arg(t).arg(QLatin1String(typeName(Type(quint8(t)))));
        QVERIFY2(m_text.contains(row), qPrintable(QStringLiteral("docs/protocol.md lacks '%1'").arg(row)));
    }
    QVERIFY(m_text.contains(QStringLiteral("`0xD1A1`")));
    QVERIFY(m_text.contains(QStringLiteral("| 2 | 1 | protocol version | `%1` |").arg(Version)));
    QVERIFY(m_text.contains(QStringLiteral("| 8 | 4 | payload length |")));
    QCOMPARE(HeaderSize, 12);
}

QTEST_GUILESS_MAIN(TestProtocolDoc)
#include "tst_protocoldoc.moc"
