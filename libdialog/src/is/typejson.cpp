#include "dialog/is/typeregistry.h"

namespace dialog::is {

QJsonObject typeToJson(const TypeInfo &type)
{
    QJsonArray attrs;
    for (const AttributeInfo &a : type.attributes()) {
        QJsonObject attr{{QStringLiteral("name"), a.name()},
                         {QStringLiteral("description"), a.description()},
                         {QStringLiteral("type"), a.typeName()},
                         {QStringLiteral("vector"), a.isVector()}};
        if (!a.formerName().isEmpty())
            attr.insert(QStringLiteral("was"), a.formerName());
        if (!a.defaultText().isEmpty())
            attr.insert(QStringLiteral("default"), a.defaultText());
        attrs.append(attr);
    }
    QJsonObject out{{QStringLiteral("name"), type.name()},
                    {QStringLiteral("description"), type.description()},
                    {QStringLiteral("base"), type.baseName()},
                    {QStringLiteral("attributes"), attrs}};
    if (type.expectedIntervalS() > 0)
        out.insert(QStringLiteral("expected_interval_s"), type.expectedIntervalS());
    return out;
}

QJsonArray typesToJson(const TypeRegistry &registry)
{
    QJsonArray out;
    for (const QString &name : registry.typeNames())
        out.append(typeToJson(registry.type(name)));
    return out;
}

Status typesFromJson(const QJsonArray &json, QList<TypeInfo> *out)
{
    const auto fail = [](const QString &why) { return Status(Status::Code::BadRequest, why); };
    QList<TypeInfo> types;
    for (qsizetype i = 0; i < json.size(); ++i) {
        if (!json.at(i).isObject())
            return fail(QStringLiteral("type %1: not a JSON object").arg(i));
        const QJsonObject t = json.at(i).toObject();
        const QString name = t.value(QLatin1String("name")).toString();
        if (name.isEmpty())
            return fail(QStringLiteral("type %1: no name").arg(i));
        TypeInfo info(name, t.value(QLatin1String("description")).toString(),
                      t.value(QLatin1String("base")).toString());
        const QJsonValue interval = t.value(QLatin1String("expected_interval_s"));
        if (!interval.isUndefined() && !interval.isNull()) {
            if (!interval.isDouble() || !(interval.toDouble() > 0) || interval.toDouble() > 366.0 * 86400)
                return fail(QStringLiteral("type %1: 'expected_interval_s' is not a number of seconds > 0, "
                                           "at most a year")
                                .arg(name));
            info.setExpectedIntervalS(interval.toDouble());
        }
        const QJsonValue attrs = t.value(QLatin1String("attributes"));
        if (!attrs.isArray() && !attrs.isUndefined())
            return fail(QStringLiteral("type %1: 'attributes' is not an array").arg(name));
        for (const QJsonValue &av : attrs.toArray()) {
            const QJsonObject a = av.toObject();
            const QString an = a.value(QLatin1String("name")).toString();
            const QString at = a.value(QLatin1String("type")).toString();
            if (an.isEmpty() || at.isEmpty())
                return fail(QStringLiteral("type %1: an attribute without name or type").arg(name));
            const QString ad = a.value(QLatin1String("description")).toString();
            const bool vec = a.value(QLatin1String("vector")).toBool();
            const auto basic = basicTypeFromName(at);
            AttributeInfo attr = basic ? AttributeInfo(an, *basic, ad, vec) : AttributeInfo::nested(an, at, ad, vec);
            attr.setFormerName(a.value(QLatin1String("was")).toString());
            attr.setDefaultText(a.value(QLatin1String("default")).toString());
            info.addAttribute(attr);
        }
        types.append(info);
    }
    *out = types;
    return {};
}

Status mergeTypes(TypeRegistry &registry, const QList<TypeInfo> &types)
{
    QList<TypeInfo> missing;
    for (const TypeInfo &t : types) {
        if (!registry.contains(t.name())) {
            missing.append(t);
            continue;
        }
        const TypeInfo known = registry.type(t.name());
        if (known.baseName() != t.baseName() || known.attributes() != t.attributes())
            return Status(Status::Code::TypeMismatch,
                          QStringLiteral("type %1 is already known with another definition").arg(t.name()));
    }
    return missing.isEmpty() ? Status() : registry.declareTypes(missing);
}

} // namespace dialog::is
