#include "dialog/logrecord.h"

#include <QCborArray>
#include <QCborMap>
#include <QCborValue>
#include <QDateTime>
#include <QJsonDocument>
#include <QRegularExpression>

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

QCborMap toCbor(const LogRecord &r)
{
    QCborMap m;
    m.insert(key::time, r.timeMs);
    if (!r.process.isEmpty())
        m.insert(key::process, r.process);
    if (!r.host.isEmpty())
        m.insert(key::host, r.host);
    if (r.pid)
        m.insert(key::pid, r.pid);
    m.insert(key::severity, int(r.severity));
    if (!r.category.isEmpty())
        m.insert(key::category, r.category);
    m.insert(key::text, r.text);
    if (!r.file.isEmpty()) {
        m.insert(key::file, r.file);
        m.insert(key::line, r.line);
    }
    if (r.run)
        m.insert(key::run, qint64(r.run));
    if (!r.values.isEmpty())
        m.insert(key::values, QCborMap::fromVariantMap(r.values));
    if (r.sequence)
        m.insert(key::sequence, qint64(r.sequence));
    if (r.id)
        m.insert(key::id, r.id);
    return m;
}

std::optional<LogRecord> fromCbor(const QCborMap &m, QString *error)
{
    LogRecord r;
    const QCborValue sev = m.value(key::severity);
    if (!m.value(key::time).isInteger() || !sev.isInteger() || sev.toInteger() < 0 ||
        sev.toInteger() > int(Severity::Fatal) || !m.value(key::text).isString()) {
        if (error)
            *error = QStringLiteral("a record lacks a valid time, severity or text");
        return std::nullopt;
    }
    r.timeMs = m.value(key::time).toInteger();
    r.severity = Severity(sev.toInteger());
    r.text = m.value(key::text).toString();
    r.process = m.value(key::process).toString();
    r.host = m.value(key::host).toString();
    r.pid = m.value(key::pid).toInteger();
    r.category = m.value(key::category).toString();
    r.file = m.value(key::file).toString();
    r.line = int(m.value(key::line).toInteger());
    r.run = quint32(m.value(key::run).toInteger());
    if (m.value(key::values).isMap())
        r.values = m.value(key::values).toMap().toVariantMap();
    r.sequence = quint64(m.value(key::sequence).toInteger());
    r.id = m.value(key::id).toInteger();
    return r;
}
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
    QCborArray a;
    for (const LogRecord &r : records)
        a.append(toCbor(r));
    return a.toCborValue().toCbor();
}

std::optional<QList<LogRecord>> decodeRecords(const QByteArray &data, QString *error)
{
    QCborParserError pe;
    const QCborValue v = QCborValue::fromCbor(data, &pe);
    if (pe.error != QCborError::NoError || !v.isArray()) {
        if (error)
            *error = pe.error != QCborError::NoError
                         ? QStringLiteral("malformed CBOR: %1").arg(pe.errorString())
                         : QStringLiteral("not a list of records");
        return std::nullopt;
    }
    const QCborArray a = v.toArray();
    QList<LogRecord> out;
    out.reserve(a.size());
    for (const QCborValue &e : a) {
        if (!e.isMap()) {
            if (error)
                *error = QStringLiteral("a record is not a map");
            return std::nullopt;
        }
        auto r = fromCbor(e.toMap(), error);
        if (!r)
            return std::nullopt;
        out.append(std::move(*r));
    }
    return out;
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

std::optional<LogQuery> LogQuery::decode(const QByteArray &data, QString *error)
{
    QCborParserError pe;
    const QCborValue v = QCborValue::fromCbor(data, &pe);
    if (pe.error != QCborError::NoError || !v.isMap()) {
        if (error)
            *error = QStringLiteral("malformed query");
        return std::nullopt;
    }
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
        run > 0xffffffffLL) {
        if (error)
            *error = QStringLiteral("query out of range (severity, limit 1…10000 or run)");
        return std::nullopt;
    }
    q.minSeverity = Severity(sev);
    q.run = quint32(run);
    return q;
}

QByteArray LogPage::encode() const
{
    return (more ? QByteArray("1") : QByteArray("0")) + encodeRecords(records);
}

std::optional<LogPage> LogPage::decode(const QByteArray &data, QString *error)
{
    if (data.isEmpty() || (data.at(0) != '0' && data.at(0) != '1')) {
        if (error)
            *error = QStringLiteral("malformed answer");
        return std::nullopt;
    }
    auto records = decodeRecords(data.mid(1), error);
    if (!records)
        return std::nullopt;
    return LogPage{*records, data.at(0) == '1'};
}

} // namespace dialog
