// The kinds of configuration documents and the schema each is checked against.
#include "dialog/access.h"
#include "dialog/config.h"
#include "dialog/is/typeregistry.h"
#include "dialog/rc/partition.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QRegularExpression>
#include <QXmlStreamReader>

namespace dialog::config {

namespace {

struct Prefix
{
    const char *prefix;
    Kind kind;
};
constexpr Prefix prefixes[] = {
    {"partitions/", Kind::Partition}, {"slaves/", Kind::Slave},     {"readout/", Kind::Readout},
    {"segments/", Kind::Segment},     {"is-types/", Kind::IsTypes}, {"access/", Kind::Access},
    {"alarms/", Kind::Alarms},
};

/// One parameter of a slave kind: the JSON key is the dialog-slave option with '_' for '-'.
struct Parameter
{
    const char *key;
    enum Type
    {
        Integer,
        Number,
        Text,
    } type;
    double min, max;
};
// The same bounds as dialog-slave's options (slaves/slave_main.cpp): a document that passes here is
// accepted by the slave at configure.
constexpr Parameter controlParameters[] = {
    {"registers", Parameter::Integer, 1, 65536},
    {"configure_ms", Parameter::Integer, 0, 600000},
    {"check_ms", Parameter::Integer, 10, 600000},
    {"upset_every_s", Parameter::Number, 0, 86400},
};
constexpr Parameter readoutParameters[] = {
    {"threads", Parameter::Integer, 1, 256},
    {"block_events", Parameter::Integer, 1, 1 << 20},
    {"event_size", Parameter::Integer, 64, 16 << 20},
    {"spill_s", Parameter::Number, 0.01, 3600},
    {"off_s", Parameter::Number, 0, 3600},
    {"rate", Parameter::Integer, 0, 1e9},
    {"queue_blocks", Parameter::Integer, 1, 1 << 16},
    {"output_dir", Parameter::Text, 0, 0},
    {"corrupt_every", Parameter::Integer, 0, 1e12},
};

Status invalid(const QString &path, const QString &why)
{
    return Status(Status::Code::InvalidObject, path + QStringLiteral(": ") + why);
}

/// Line and column (both from 1) of byte @p offset of @p text.
QString position(const QByteArray &text, qsizetype offset)
{
    offset = qBound<qsizetype>(0, offset, text.size());
    const QByteArray before = text.left(offset);
    const qsizetype lastNewline = before.lastIndexOf('\n');
    return QStringLiteral("line %1, column %2")
        .arg(before.count('\n') + 1)
        .arg(QString::fromUtf8(before.mid(lastNewline + 1)).size() + 1);
}

Status parseObject(const QString &path, const QByteArray &content, QJsonObject *out)
{
    QJsonParseError pe;
    const QJsonDocument doc = QJsonDocument::fromJson(content, &pe);
    if (pe.error != QJsonParseError::NoError)
        // QJsonParseError's offset is just past the character it stopped at.
        return invalid(
            path,
            QStringLiteral("%1: invalid JSON: %2").arg(position(content, pe.offset - 1), pe.errorString()));
    if (!doc.isObject())
        return invalid(path, QStringLiteral("expected a JSON object"));
    *out = doc.object();
    return {};
}

QString allowedKeys(const Parameter *begin, const Parameter *end)
{
    QStringList keys{QStringLiteral("description")};
    for (const Parameter *p = begin; p != end; ++p)
        keys << QLatin1String(p->key);
    return keys.join(QStringLiteral(", "));
}

Status checkParameter(const QString &path, const Parameter &p, const QJsonValue &v)
{
    const QString key = QLatin1String(p.key);
    if (p.type == Parameter::Text)
        return v.isString() ? Status() : invalid(path, QStringLiteral("%1: expected a string").arg(key));
    if (!v.isDouble())
        return invalid(path, QStringLiteral("%1: expected a number").arg(key));
    const double x = v.toDouble();
    const bool whole = p.type != Parameter::Integer || x == double(qint64(x));
    if (!whole || x < p.min || x > p.max)
        return invalid(path, QStringLiteral("%1: %2 is out of range (%3 %4..%5)")
                                 .arg(key, QString::number(x),
                                      p.type == Parameter::Integer ? QStringLiteral("an integer")
                                                                   : QStringLiteral("a number"),
                                      QString::number(p.min, 'g', 15), QString::number(p.max, 'g', 15)));
    return {};
}

Status validateParameters(const QString &path, const QByteArray &content, const Parameter *begin,
                          const Parameter *end)
{
    QJsonObject o;
    if (Status st = parseObject(path, content, &o); !st.isOk())
        return st;
    for (auto it = o.begin(); it != o.end(); ++it) {
        if (it.key() == QLatin1String("description")) {
            if (!it.value().isString())
                return invalid(path, QStringLiteral("description: expected a string"));
            continue;
        }
        const Parameter *p =
            std::find_if(begin, end, [&](const Parameter &x) { return it.key() == QLatin1String(x.key); });
        if (p == end)
            return invalid(
                path,
                QStringLiteral("%1: unknown parameter (known: %2)").arg(it.key(), allowedKeys(begin, end)));
        if (Status st = checkParameter(path, *p, it.value()); !st.isOk())
            return st;
    }
    return {};
}

Status validatePartition(const QString &path, const QByteArray &content, QStringList *references)
{
    QJsonObject o;
    if (Status st = parseObject(path, content, &o); !st.isOk())
        return st;
    rc::Partition p;
    if (const Status parsed = rc::Partition::parse(content, path, &p); !parsed.isOk())
        return Status(Status::Code::InvalidObject,
                      path + QStringLiteral(": ") + parsed.message().section(QStringLiteral(": "), 1));
    const QString name = path.section(QLatin1Char('/'), 1);
    if (p.name != name)
        return invalid(path,
                       QStringLiteral("name: '%1' differs from the document's name '%2'").arg(p.name, name));
    for (const QString &s : std::as_const(p.segments)) {
        if (kindOf(s) != Kind::Segment)
            return invalid(path, QStringLiteral("segments: '%1' is not a segments/ document").arg(s));
        references->append(s);
    }
    return {};
}

/// The shape of an alarm rules document: {"alarms": [{"path": …, …}, …]}. The rules themselves
/// (conditions, IS types, references between alarms) are checked by dialog-alarmserver, which
/// refuses to start on a document it cannot take (`dialog-alarmserver --rules config:PATH --check`).
Status validateAlarms(const QString &path, const QByteArray &content)
{
    QJsonObject o;
    if (const Status st = parseObject(path, content, &o); !st.isOk())
        return st;
    for (auto it = o.begin(); it != o.end(); ++it)
        if (it.key() != QLatin1String("alarms"))
            return invalid(path, QStringLiteral("unknown key \"%1\" (expected {\"alarms\": [...]})").arg(it.key()));
    if (!o.value(QLatin1String("alarms")).isArray())
        return invalid(path, QStringLiteral("expected {\"alarms\": [...]}"));
    const QJsonArray alarms = o.value(QLatin1String("alarms")).toArray();
    for (qsizetype i = 0; i < alarms.size(); ++i)
        if (!alarms.at(i).isObject() || alarms.at(i).toObject().value(QLatin1String("path")).toString().isEmpty())
            return invalid(path, QStringLiteral("alarms[%1]: expected an object with a \"path\"").arg(i));
    return {};
}

Status validateSegment(const QString &path, const QByteArray &content, QStringList *references)
{
    QJsonObject o;
    if (Status st = parseObject(path, content, &o); !st.isOk())
        return st;
    for (auto it = o.begin(); it != o.end(); ++it) {
        if (it.key() == QLatin1String("description") && it.value().isString())
            continue;
        if (it.key() != QLatin1String("members"))
            return invalid(path,
                           QStringLiteral("%1: unknown field (known: description, members)").arg(it.key()));
        if (!it.value().isArray())
            return invalid(path, QStringLiteral("members: expected an array of document paths"));
        const QJsonArray members = it.value().toArray();
        for (qsizetype i = 0; i < members.size(); ++i) {
            const QString m = members.at(i).toString();
            const auto kind = kindOf(m);
            if (kind != Kind::Slave && kind != Kind::Readout)
                return invalid(path, QStringLiteral("members[%1]: '%2' is not a slaves/ or readout/ document")
                                         .arg(i)
                                         .arg(members.at(i).toVariant().toString()));
            references->append(m);
        }
    }
    return {};
}

// Alone, a type document is checked as XML only: its types may refer to another document's
// (validateTypes() checks them together).
Status validateIsTypesXml(const QString &path, const QByteArray &content)
{
    QXmlStreamReader xml(content);
    while (!xml.atEnd())
        xml.readNext();
    if (!xml.hasError())
        return {};
    return invalid(path, QStringLiteral("line %1, column %2: invalid XML: %3")
                             .arg(xml.lineNumber())
                             .arg(xml.columnNumber())
                             .arg(xml.errorString()));
}

} // namespace

std::optional<Kind> kindOf(const QString &path)
{
    static const QRegularExpression element(QStringLiteral("^[A-Za-z0-9._@+-]+$"));
    const QStringList parts = path.split(QLatin1Char('/'));
    if (path.size() > 512 || parts.size() < 2)
        return std::nullopt;
    for (const QString &part : parts)
        if (!element.match(part).hasMatch() || part == QLatin1String(".") || part == QLatin1String(".."))
            return std::nullopt;
    for (const Prefix &p : prefixes)
        if (path.startsWith(QLatin1String(p.prefix)))
            return p.kind;
    return std::nullopt;
}

QStringList knownPrefixes()
{
    QStringList out;
    for (const Prefix &p : prefixes)
        out << QLatin1String(p.prefix);
    return out;
}

Status validate(const QString &path, const QByteArray &content, QStringList *references)
{
    QStringList ignored;
    QStringList *refs = references ? references : &ignored;
    const auto kind = kindOf(path);
    if (!kind)
        return Status(Status::Code::InvalidName,
                      QStringLiteral("%1: not a document path (PREFIX/NAME; prefixes: %2)")
                          .arg(path, knownPrefixes().join(QStringLiteral(", "))));
    switch (*kind) {
    case Kind::Partition:
        return validatePartition(path, content, refs);
    case Kind::Slave:
        return validateParameters(path, content, std::begin(controlParameters), std::end(controlParameters));
    case Kind::Readout:
        return validateParameters(path, content, std::begin(readoutParameters), std::end(readoutParameters));
    case Kind::Segment:
        return validateSegment(path, content, refs);
    case Kind::IsTypes:
        return validateIsTypesXml(path, content);
    case Kind::Access: {
        AccessList list;
        const Status st = AccessList::parse(content, path, &list);
        return st.isOk() ? st : Status(Status::Code::InvalidObject, st.message());
    }
    case Kind::Alarms:
        return validateAlarms(path, content);
    }
    return {};
}

Status validateTypes(const QList<Document> &documents)
{
    // Each document is loaded once every type it refers to is: documents are tried again while
    // one more loads; those left fail with the error of their last attempt.
    QList<const Document *> left;
    for (const Document &d : documents)
        if (kindOf(d.path) == Kind::IsTypes)
            left << &d;
    is::TypeRegistry registry;
    for (bool progress = true; progress && !left.isEmpty();) {
        progress = false;
        for (qsizetype i = 0; i < left.size();) {
            if (registry.loadXml(left.at(i)->content, left.at(i)->path).isOk()) {
                left.removeAt(i);
                progress = true;
            } else {
                ++i;
            }
        }
    }
    if (left.isEmpty())
        return {};
    return Status(Status::Code::InvalidObject, registry.loadXml(left.first()->content, left.first()->path).message());
}

QString slaveDocumentPath(const QString &slaveKind, const QString &name)
{
    return (slaveKind == QLatin1String("readout") ? QStringLiteral("readout/") : QStringLiteral("slaves/")) +
           name;
}

QStringList slaveParameterKeys(const QString &slaveKind)
{
    QStringList keys;
    if (slaveKind == QLatin1String("readout")) {
        for (const Parameter &p : readoutParameters)
            keys << QLatin1String(p.key);
    } else {
        for (const Parameter &p : controlParameters)
            keys << QLatin1String(p.key);
    }
    return keys;
}

QStringList slaveArguments(const QByteArray &content)
{
    const QJsonObject o = QJsonDocument::fromJson(content).object();
    QStringList args;
    for (auto it = o.begin(); it != o.end(); ++it) {
        if (it.key() == QLatin1String("description"))
            continue;
        const QJsonValue v = it.value();
        args << QStringLiteral("--") + QString(it.key()).replace(QLatin1Char('_'), QLatin1Char('-'))
             << (v.isString() ? v.toString() : QString::number(v.toDouble(), 'g', 17));
    }
    return args;
}

} // namespace dialog::config
