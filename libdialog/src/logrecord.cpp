#include "dialog/logrecord.h"

#include <QCborArray>
#include <QCborMap>
#include <QCborStreamReader>
#include <QCborValue>
#include <QDateTime>
#include <QJsonDocument>
#include <QRegularExpression>
#include <QStringEncoder>
#include <cstring>

namespace dialog {

namespace {
// The CBOR keys of a record and of a query: short, since a record is small and flows by the million.
namespace key {
const QString time = QStringLiteral("t"), process = QStringLiteral("p"), host = QStringLiteral("h"),
              pid = QStringLiteral("i"), severity = QStringLiteral("s"), category = QStringLiteral("c"),
              text = QStringLiteral("x"), file = QStringLiteral("f"), line = QStringLiteral("l"),
              run = QStringLiteral("r"), values = QStringLiteral("v"), sequence = QStringLiteral("n"),
              id = QStringLiteral("d");
const QString since = QStringLiteral("since"), until = QStringLiteral("until"),
              minSeverity = QStringLiteral("sev"), limit = QStringLiteral("limit"),
              before = QStringLiteral("before"), after = QStringLiteral("after");
} // namespace key

const char *const names[] = {"debug", "info", "warning", "error", "fatal"};

// Records are written by hand (CBOR's few header forms, straight into one QByteArray) and read with
// QCborStreamReader, not as QCborValue trees: a logger decodes hundreds of thousands a second, and a
// tree per batch, key look-ups by QString and a QString per field cost more than storing them; and
// QCborStreamWriter goes through a QIODevice call per token. The format is the same: a definite-length
// array of definite-length maps with the one-letter keys above.
class RecordWriter
{
public:
    explicit RecordWriter(qsizetype records) { m_out.reserve(records * 96 + 16); }

    QByteArray take() { return std::move(m_out); }

    /// Major type @p major (0 unsigned, 1 negative, 3 text, 4 array, 5 map) with argument @p value.
    void header(quint8 major, quint64 value)
    {
        char h[9];
        m_out.append(h, encodeHeader(h, major, value));
    }

    void integer(qint64 v)
    {
        if (v >= 0)
            header(0, quint64(v));
        else
            header(1, quint64(-1 - v));
    }

    /// A one-letter key.
    void key(char k)
    {
        m_out.append(char(0x61)); // text string of length 1
        m_out.append(k);
    }

    void text(const QString &s)
    {
        // Converted into the output after room for the longest header, then moved behind the real one.
        const qsizetype at = m_out.size();
        m_out.resize(at + 9 + 3 * s.size());
        char *begin = m_out.data() + at + 9;
        const qsizetype length = m_encoder.appendToBuffer(begin, s) - begin;
        char h[9];
        const int headerSize = encodeHeader(h, 3, quint64(length));
        std::memmove(m_out.data() + at + headerSize, begin, size_t(length));
        std::memcpy(m_out.data() + at, h, size_t(headerSize));
        m_out.resize(at + headerSize + length);
    }

    void record(const LogRecord &r)
    {
        const bool hasFile = !r.file.isEmpty();
        const int fields = 3 + !r.process.isEmpty() + !r.host.isEmpty() + (r.pid != 0) +
                           !r.category.isEmpty() + 2 * hasFile + (r.run != 0) + !r.values.isEmpty() +
                           (r.sequence != 0) + (r.id != 0);
        header(5, quint64(fields));
        key('t');
        integer(r.timeMs);
        if (!r.process.isEmpty()) {
            key('p');
            text(r.process);
        }
        if (!r.host.isEmpty()) {
            key('h');
            text(r.host);
        }
        if (r.pid) {
            key('i');
            integer(r.pid);
        }
        key('s');
        integer(qint64(r.severity));
        if (!r.category.isEmpty()) {
            key('c');
            text(r.category);
        }
        key('x');
        text(r.text);
        if (hasFile) {
            key('f');
            text(r.file);
            key('l');
            integer(r.line);
        }
        if (r.run) {
            key('r');
            integer(qint64(r.run));
        }
        if (!r.values.isEmpty()) {
            key('v');
            m_out += QCborValue(QCborMap::fromVariantMap(r.values)).toCbor();
        }
        if (r.sequence) {
            key('n');
            header(0, r.sequence);
        }
        if (r.id) {
            key('d');
            integer(r.id);
        }
    }

private:
    static int encodeHeader(char *out, quint8 major, quint64 value)
    {
        const char m = char(major << 5);
        if (value < 24) {
            out[0] = char(m | char(value));
            return 1;
        }
        const int bytes = value <= 0xff ? 1 : value <= 0xffff ? 2 : value <= 0xffffffffULL ? 4 : 8;
        out[0] = char(m | (bytes == 1 ? 24 : bytes == 2 ? 25 : bytes == 4 ? 26 : 27));
        for (int i = 0; i < bytes; ++i)
            out[1 + i] = char((value >> (8 * (bytes - 1 - i))) & 0xff);
        return 1 + bytes;
    }

    QByteArray m_out;
    QStringEncoder m_encoder{QStringEncoder::Utf8, QStringConverter::Flag::Stateless};
};

// Reads the text string at @p r as UTF-8 into @p buffer (any number of chunks). False on a CBOR error,
// or when the string claims more than the @p limit bytes of the whole input (hostile lengths).
bool readUtf8(QCborStreamReader &r, QByteArray &buffer, qsizetype limit)
{
    buffer.resize(0);
    for (;;) {
        const qsizetype size = r.currentStringChunkSize();
        if (size < 0 || size > limit - buffer.size())
            return false;
        const qsizetype at = buffer.size();
        buffer.resize(at + size);
        const auto chunk = r.readStringChunk(buffer.data() + at, size);
        if (chunk.status == QCborStreamReader::Error)
            return false;
        if (chunk.status == QCborStreamReader::EndOfString) {
            buffer.resize(at);
            return true;
        }
        buffer.resize(at + chunk.data);
    }
}

// The strings that repeat from record to record (host, category, file): the previous value is reused
// when the bytes are the same, so a batch shares one QString per distinct value.
struct SharedText
{
    QByteArray utf8;
    QString text;
    const QString &get(const QByteArray &bytes)
    {
        if (bytes != utf8) {
            utf8 = bytes;
            text = QString::fromUtf8(bytes);
        }
        return text;
    }
};

class RecordReader
{
public:
    explicit RecordReader(const QByteArray &data) : m_reader(data), m_size(data.size()) {}

    std::optional<QList<LogRecord>> readAll(QString *error)
    {
        QList<LogRecord> out;
        if (!m_reader.isArray()) {
            if (error)
                *error = m_reader.lastError() != QCborError::NoError
                             ? QStringLiteral("malformed CBOR: %1").arg(m_reader.lastError().toString())
                             : QStringLiteral("not a list of records");
            return std::nullopt;
        }
        if (m_reader.isLengthKnown()) // bounded by the input: a record takes at least 8 bytes
            out.reserve(qsizetype(std::min<quint64>(m_reader.length(), quint64(m_size / 8))));
        if (!m_reader.enterContainer())
            return fail(error);
        while (m_reader.lastError() == QCborError::NoError && m_reader.hasNext()) {
            if (!m_reader.isMap()) {
                if (error)
                    *error = QStringLiteral("a record is not a map");
                return std::nullopt;
            }
            LogRecord r;
            if (!readRecord(r, error))
                return std::nullopt;
            out.append(std::move(r));
        }
        if (m_reader.lastError() != QCborError::NoError || !m_reader.leaveContainer())
            return fail(error);
        return out;
    }

private:
    std::nullopt_t fail(QString *error)
    {
        if (error)
            *error = QStringLiteral("malformed CBOR: %1").arg(m_reader.lastError().toString());
        return std::nullopt;
    }

    bool malformed(QString *error)
    {
        if (error)
            *error = m_reader.lastError() != QCborError::NoError
                         ? QStringLiteral("malformed CBOR: %1").arg(m_reader.lastError().toString())
                         : QStringLiteral("malformed CBOR: a string longer than the batch");
        return false;
    }

    bool integer(qint64 *out)
    {
        if (!m_reader.isInteger())
            return m_reader.next(); // another type: ignored, as a missing field
        *out = m_reader.toInteger();
        return m_reader.next();
    }

    bool text(QString *out, SharedText *shared)
    {
        if (!m_reader.isString())
            return m_reader.next();
        if (!readUtf8(m_reader, m_buffer, m_size))
            return false;
        *out = shared ? shared->get(m_buffer) : QString::fromUtf8(m_buffer);
        return true;
    }

    bool readRecord(LogRecord &r, QString *error)
    {
        if (!m_reader.enterContainer()) {
            fail(error);
            return false;
        }
        bool hasTime = false, hasSeverity = false, hasText = false;
        qint64 severity = -1;
        while (m_reader.lastError() == QCborError::NoError && m_reader.hasNext()) {
            char key = 0;
            if (m_reader.isString()) {
                if (!readUtf8(m_reader, m_buffer, m_size))
                    return malformed(error);
                if (m_buffer.size() == 1)
                    key = m_buffer.at(0);
            } else if (!m_reader.next()) {
                return malformed(error);
            }
            qint64 n = 0;
            bool ok = true;
            switch (key) {
            case 't':
                hasTime = m_reader.isInteger();
                ok = integer(&r.timeMs);
                break;
            case 's':
                hasSeverity = m_reader.isInteger();
                ok = integer(&severity);
                break;
            case 'x':
                hasText = m_reader.isString();
                ok = text(&r.text, nullptr);
                break;
            case 'p':
                ok = text(&r.process, &m_process);
                break;
            case 'h':
                ok = text(&r.host, &m_host);
                break;
            case 'c':
                ok = text(&r.category, &m_category);
                break;
            case 'f':
                ok = text(&r.file, &m_file);
                break;
            case 'i':
                ok = integer(&r.pid);
                break;
            case 'l':
                ok = integer(&n);
                r.line = int(n);
                break;
            case 'r':
                ok = integer(&n);
                r.run = quint32(n);
                break;
            case 'n':
                ok = integer(&n);
                r.sequence = quint64(n);
                break;
            case 'd':
                ok = integer(&r.id);
                break;
            case 'v':
                if (m_reader.isMap()) {
                    const QCborValue v = QCborValue::fromCbor(m_reader);
                    r.values = v.toMap().toVariantMap();
                    ok = m_reader.lastError() == QCborError::NoError;
                } else {
                    ok = m_reader.next();
                }
                break;
            default:
                ok = m_reader.next(); // a key of a later version: ignored
                break;
            }
            if (!ok)
                return malformed(error); // the reader may be inside a string: not left normally
        }
        if (m_reader.lastError() != QCborError::NoError || !m_reader.leaveContainer())
            return malformed(error);
        if (!hasTime || !hasSeverity || !hasText || severity < 0 || severity > int(Severity::Fatal)) {
            if (error)
                *error = QStringLiteral("a record lacks a valid time, severity or text");
            return false;
        }
        r.severity = Severity(severity);
        return true;
    }

    QCborStreamReader m_reader;
    qsizetype m_size;
    QByteArray m_buffer;
    SharedText m_process, m_host, m_category, m_file;
};
} // namespace

QString severityName(Severity severity)
{
    const int i = int(severity);
    return QLatin1String(i >= 0 && i <= int(Severity::Fatal) ? names[i] : "unknown");
}

std::optional<qint64> parseLogTime(const QString &text)
{
    static const QRegularExpression ago(QStringLiteral("^(\\d{1,12})(ms|s|m|h|d)$"));
    const QString s = text.trimmed();
    const auto m = ago.match(s);
    if (m.hasMatch()) {
        const qint64 n = m.captured(1).toLongLong();
        const QString u = m.captured(2);
        const qint64 unit = u == QLatin1String("ms")  ? 1
                            : u == QLatin1String("s") ? 1000
                            : u == QLatin1String("m") ? 60000
                            : u == QLatin1String("h") ? 3600000
                                                      : 86400000;
        return QDateTime::currentMSecsSinceEpoch() - n * unit;
    }
    bool ok = false;
    const qint64 ms = s.toLongLong(&ok);
    if (ok && ms > 0)
        return ms;
    const QDateTime t = QDateTime::fromString(s, Qt::ISODateWithMs);
    if (t.isValid())
        return t.toMSecsSinceEpoch();
    return std::nullopt;
}

std::optional<Severity> severityFromName(const QString &name)
{
    const QString n = name.trimmed().toLower();
    for (int i = 0; i <= int(Severity::Fatal); ++i)
        if (n == QLatin1String(names[i]))
            return Severity(i);
    if (n == QLatin1String("critical"))
        return Severity::Error;
    return std::nullopt;
}

QJsonObject LogRecord::toJson() const
{
    QJsonObject o{{QStringLiteral("time"), timeMs},
                  {QStringLiteral("process"), process},
                  {QStringLiteral("host"), host},
                  {QStringLiteral("pid"), pid},
                  {QStringLiteral("severity"), severityName(severity)},
                  {QStringLiteral("category"), category},
                  {QStringLiteral("text"), text},
                  {QStringLiteral("sequence"), qint64(sequence)}};
    if (!file.isEmpty()) {
        o.insert(QStringLiteral("file"), file);
        o.insert(QStringLiteral("line"), line);
    }
    if (run)
        o.insert(QStringLiteral("run"), qint64(run));
    if (!values.isEmpty())
        o.insert(QStringLiteral("values"), QJsonObject::fromVariantMap(values));
    if (id)
        o.insert(QStringLiteral("id"), id);
    return o;
}

bool LogRecord::operator==(const LogRecord &o) const
{
    return timeMs == o.timeMs && process == o.process && host == o.host && pid == o.pid &&
           severity == o.severity && category == o.category && text == o.text && file == o.file &&
           line == o.line && run == o.run && values == o.values && sequence == o.sequence && id == o.id;
}

QByteArray encodeRecords(const QList<LogRecord> &records)
{
    RecordWriter w(records.size());
    w.header(4, quint64(records.size()));
    for (const LogRecord &r : records)
        w.record(r);
    return w.take();
}

Status decodeRecords(const QByteArray &data, QList<LogRecord> *out)
{
    QString error;
    auto records = RecordReader(data).readAll(&error);
    if (!records)
        return Status(Status::Code::BadRequest, error);
    *out = std::move(*records);
    return {};
}

QByteArray LogQuery::encode() const
{
    QCborMap m;
    if (sinceMs)
        m.insert(key::since, sinceMs);
    if (untilMs)
        m.insert(key::until, untilMs);
    m.insert(key::minSeverity, int(minSeverity));
    if (!process.isEmpty())
        m.insert(key::process, process);
    if (!host.isEmpty())
        m.insert(key::host, host);
    if (!category.isEmpty())
        m.insert(key::category, category);
    if (!text.isEmpty())
        m.insert(key::text, text);
    if (run)
        m.insert(key::run, qint64(run));
    m.insert(key::limit, limit);
    if (beforeId)
        m.insert(key::before, beforeId);
    if (afterId)
        m.insert(key::after, afterId);
    return m.toCborValue().toCbor();
}

Status LogQuery::decode(const QByteArray &data, LogQuery *out)
{
    QCborParserError pe;
    const QCborValue v = QCborValue::fromCbor(data, &pe);
    if (pe.error != QCborError::NoError || !v.isMap())
        return Status(Status::Code::BadRequest, QStringLiteral("malformed query"));
    const QCborMap m = v.toMap();
    LogQuery q;
    q.sinceMs = m.value(key::since).toInteger();
    q.untilMs = m.value(key::until).toInteger();
    const qint64 sev = m.value(key::minSeverity).toInteger();
    q.process = m.value(key::process).toString();
    q.host = m.value(key::host).toString();
    q.category = m.value(key::category).toString();
    q.text = m.value(key::text).toString();
    const qint64 run = m.value(key::run).toInteger();
    q.limit = int(m.value(key::limit).toInteger(100));
    q.beforeId = m.value(key::before).toInteger();
    q.afterId = m.value(key::after).toInteger();
    if (sev < 0 || sev > int(Severity::Fatal) || q.limit < 1 || q.limit > 10000 || run < 0 ||
        run > 0xffffffffLL)
        return Status(Status::Code::BadRequest, QStringLiteral("query out of range (severity, limit 1…10000 or run)"));
    q.minSeverity = Severity(sev);
    q.run = quint32(run);
    *out = std::move(q);
    return {};
}

QByteArray LogPage::encode() const
{
    return (more ? QByteArray("1") : QByteArray("0")) + encodeRecords(records);
}

Status LogPage::decode(const QByteArray &data, LogPage *out)
{
    if (data.isEmpty() || (data.at(0) != '0' && data.at(0) != '1'))
        return Status(Status::Code::BadRequest, QStringLiteral("malformed answer"));
    QList<LogRecord> records;
    if (Status s = decodeRecords(data.mid(1), &records); !s.isOk())
        return s;
    *out = LogPage{std::move(records), data.at(0) == '1'};
    return {};
}

} // namespace dialog
