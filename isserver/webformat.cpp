#include "webformat.h"

#include "dialog/is/codec.h"

#include <QJsonArray>
#include <QLocale>
#include <QXmlStreamWriter>
#include <cmath>

namespace dialog::isd::web {

namespace {

void writeObject(QXmlStreamWriter &w, const is::Object &object, const QString &name = {},
                 const QString &time = {}, const is::Staleness *staleness = nullptr);

template <typename T> QString scalarText(const T &x)
{
    if constexpr (std::is_same_v<T, bool>) {
        return x ? QStringLiteral("true") : QStringLiteral("false");
    } else if constexpr (std::is_floating_point_v<T>) {
        if (std::isnan(x))
            return QStringLiteral("nan");
        if (std::isinf(x))
            return x > 0 ? QStringLiteral("inf") : QStringLiteral("-inf");
        return QString::number(double(x), 'g', QLocale::FloatingPointShortest);
    } else if constexpr (std::is_arithmetic_v<T>) {
        return QString::number(x); // s8/u8 as numbers, not characters
    } else if constexpr (std::is_same_v<T, QString>) {
        return x;
    } else {
        static_assert(std::is_same_v<T, is::Time>);
        return x.toString();
    }
}

template <typename T> void writeValue(QXmlStreamWriter &w, const T &x)
{
    if constexpr (std::is_same_v<T, is::Object>) {
        w.writeStartElement(QStringLiteral("v"));
        writeObject(w, x);
        w.writeEndElement();
    } else {
        w.writeTextElement(QStringLiteral("v"), scalarText(x));
    }
}

void writeAttribute(QXmlStreamWriter &w, const is::AttributeInfo &info, const is::Value &value)
{
    w.writeStartElement(QStringLiteral("attr"));
    w.writeAttribute(QStringLiteral("name"), info.name());
    w.writeAttribute(QStringLiteral("descr"), info.description());
    w.writeAttribute(QStringLiteral("type"), info.typeName());
    if (info.isVector())
        w.writeAttribute(QStringLiteral("array"), QStringLiteral("1"));
    std::visit(
        [&w](const auto &x) {
            using T = std::decay_t<decltype(x)>;
            if constexpr (std::is_same_v<T, std::monostate>) {
                // never held by a valid object: an attribute without <v>
            } else if constexpr (std::is_arithmetic_v<T> || std::is_same_v<T, QString> ||
                                 std::is_same_v<T, is::Time> || std::is_same_v<T, is::Object>) {
                writeValue(w, x);
            } else {
                for (const auto &e : x)
                    writeValue(w, e);
            }
        },
        value.storage());
    w.writeEndElement();
}

void writeObject(QXmlStreamWriter &w, const is::Object &object, const QString &name, const QString &time,
                 const is::Staleness *staleness)
{
    w.writeStartElement(QStringLiteral("obj"));
    if (!name.isEmpty())
        w.writeAttribute(QStringLiteral("name"), name);
    w.writeAttribute(QStringLiteral("type"), object.typeName());
    if (!time.isEmpty())
        w.writeAttribute(QStringLiteral("time"), time);
    // Only when stale: the paper's shape is unchanged for the live values.
    if (staleness && staleness->isStale()) {
        w.writeAttribute(QStringLiteral("stale"), QStringLiteral("1"));
        w.writeAttribute(QStringLiteral("stale_reason"), staleness->reason());
        w.writeAttribute(QStringLiteral("age_s"), QString::number(double(staleness->ageUs / 1000) / 1000.0));
    }
    const QList<is::AttributeInfo> attrs = object.attributes();
    for (int i = 0; i < attrs.size(); ++i) {
        if (const is::Value *v = object.valueAt(i))
            writeAttribute(w, attrs.at(i), *v);
    }
    w.writeEndElement();
}

// Written to a QString and encoded once: a QIODevice behind the writer costs a call chain per token.
struct Document
{
    QString text;
    QXmlStreamWriter w{&text};
    Document()
    {
        w.setAutoFormatting(true);
        w.setAutoFormattingIndent(1);
    }
    QByteArray finish()
    {
        w.writeEndDocument();
        return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>" + text.toUtf8();
    }
};

void writeType(QXmlStreamWriter &w, const is::TypeInfo &t)
{
    w.writeStartElement(QStringLiteral("type"));
    w.writeAttribute(QStringLiteral("name"), t.name());
    w.writeAttribute(QStringLiteral("descr"), t.description());
    if (!t.baseName().isEmpty())
        w.writeAttribute(QStringLiteral("base"), t.baseName());
    for (const is::AttributeInfo &a : t.allAttributes()) {
        w.writeEmptyElement(QStringLiteral("attr"));
        w.writeAttribute(QStringLiteral("name"), a.name());
        w.writeAttribute(QStringLiteral("descr"), a.description());
        w.writeAttribute(QStringLiteral("type"), a.typeName());
        if (a.isVector())
            w.writeAttribute(QStringLiteral("array"), QStringLiteral("1"));
    }
    w.writeEndElement();
}

} // namespace

QByteArray objectXml(const ObjectValue &value)
{
    Document d;
    writeObject(d.w, value.object, value.name, value.time.toString(), &value.staleness);
    return d.finish();
}

QJsonObject objectJson(const ObjectValue &value)
{
    QJsonObject out{{QStringLiteral("name"), value.name},
                    {QStringLiteral("type"), value.typeName},
                    {QStringLiteral("time"), value.time.toString()},
                    {QStringLiteral("updates"), qint64(value.updateCount)},
                    {QStringLiteral("value"), is::toJson(value.object)}};
    value.staleness.addTo(out);
    return out;
}

QByteArray serversXml(const QList<ServerInfo> &servers)
{
    Document d;
    d.w.writeStartElement(QStringLiteral("servers"));
    for (const ServerInfo &s : servers) {
        d.w.writeEmptyElement(QStringLiteral("server"));
        d.w.writeAttribute(QStringLiteral("name"), s.name);
        if (s.objects >= 0)
            d.w.writeAttribute(QStringLiteral("objects"), QString::number(s.objects));
        if (s.local)
            d.w.writeAttribute(QStringLiteral("local"), QStringLiteral("1"));
        if (!s.error.isEmpty())
            d.w.writeAttribute(QStringLiteral("error"), s.error);
    }
    d.w.writeEndElement();
    return d.finish();
}

QJsonObject serversJson(const QList<ServerInfo> &servers)
{
    QJsonArray array;
    for (const ServerInfo &s : servers) {
        QJsonObject o{{QStringLiteral("name"), s.name},
                      {QStringLiteral("objects"), s.objects >= 0 ? QJsonValue(s.objects) : QJsonValue()},
                      {QStringLiteral("local"), s.local}};
        if (!s.error.isEmpty())
            o.insert(QStringLiteral("error"), s.error);
        array.append(o);
    }
    return QJsonObject{{QStringLiteral("servers"), array}};
}

QByteArray listXml(const QString &server, const QList<is::ObjectInfo> &objects)
{
    Document d;
    d.w.writeStartElement(QStringLiteral("objects"));
    d.w.writeAttribute(QStringLiteral("server"), server);
    d.w.writeAttribute(QStringLiteral("count"), QString::number(objects.size()));
    for (const is::ObjectInfo &o : objects) {
        d.w.writeEmptyElement(QStringLiteral("obj"));
        d.w.writeAttribute(QStringLiteral("name"), server + QLatin1Char('.') + o.name);
        d.w.writeAttribute(QStringLiteral("type"), o.typeName);
        d.w.writeAttribute(QStringLiteral("time"), o.time.toString());
    }
    d.w.writeEndElement();
    return d.finish();
}

QJsonObject listJson(const QString &server, const QList<is::ObjectInfo> &objects)
{
    QJsonArray array;
    for (const is::ObjectInfo &o : objects)
        array.append(QJsonObject{{QStringLiteral("name"), server + QLatin1Char('.') + o.name},
                                 {QStringLiteral("type"), o.typeName},
                                 {QStringLiteral("time"), o.time.toString()},
                                 {QStringLiteral("updates"), qint64(o.updateCount)}});
    return QJsonObject{{QStringLiteral("server"), server}, {QStringLiteral("objects"), array}};
}

QByteArray typesXml(const QList<is::TypeInfo> &types)
{
    Document d;
    d.w.writeStartElement(QStringLiteral("types"));
    for (const is::TypeInfo &t : types)
        writeType(d.w, t);
    d.w.writeEndElement();
    return d.finish();
}

QByteArray typeXml(const is::TypeInfo &type)
{
    Document d;
    writeType(d.w, type);
    return d.finish();
}

QJsonObject typeJson(const is::TypeInfo &type, const QStringList &subtypes)
{
    QJsonObject j = is::typeToJson(type);
    QJsonArray all;
    for (const is::AttributeInfo &a : type.allAttributes())
        all.append(QJsonObject{{QStringLiteral("name"), a.name()},
                               {QStringLiteral("description"), a.description()},
                               {QStringLiteral("type"), a.typeName()},
                               {QStringLiteral("vector"), a.isVector()}});
    j.insert(QStringLiteral("allAttributes"), all);
    j.insert(QStringLiteral("subtypes"), QJsonArray::fromStringList(subtypes));
    return j;
}

QJsonArray historyPointsJson(const is::HistorySeries &series)
{
    QJsonArray points;
    for (const is::HistoryPoint &p : series.points) {
        QJsonArray pt{double(p.time.microsecondsSinceEpoch() / 1000), p.value};
        if (p.count != 1) {
            pt.append(p.min);
            pt.append(p.max);
            pt.append(qint64(p.count));
        }
        points.append(pt);
    }
    return points;
}

QJsonArray historySeriesJson(const is::History &history)
{
    QJsonArray series;
    for (const is::HistorySeries &s : history.series)
        series.append(QJsonObject{{QStringLiteral("attribute"), s.attribute},
                                  {QStringLiteral("points"), historyPointsJson(s)}});
    return series;
}

} // namespace dialog::isd::web
