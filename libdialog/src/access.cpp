#include "dialog/access.h"

#include "dialog/glob.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

namespace dialog {

QString accessKindName(AccessList::Kind kind)
{
    switch (kind) {
    case AccessList::Kind::Command:
        return QStringLiteral("command");
    case AccessList::Kind::IsWrite:
        return QStringLiteral("is-write");
    case AccessList::Kind::Transition:
        return QStringLiteral("transition");
    }
    return {};
}

std::optional<AccessList::Kind> accessKindFromName(const QString &name)
{
    for (AccessList::Kind k :
         {AccessList::Kind::Command, AccessList::Kind::IsWrite, AccessList::Kind::Transition})
        if (name == accessKindName(k))
            return k;
    return std::nullopt;
}

Status AccessList::load(const QString &path, AccessList *out)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return Status(Status::Code::StorageError, QStringLiteral("%1: %2").arg(path, f.errorString()));
    return parse(f.read(4 * 1024 * 1024), path, out);
}

Status AccessList::parse(const QByteArray &json, const QString &source, AccessList *out)
{
    auto fail = [&](const QString &where, const QString &why) {
        return Status(Status::Code::BadRequest, where.isEmpty()
                                                    ? QStringLiteral("%1: %2").arg(source, why)
                                                    : QStringLiteral("%1: %2: %3").arg(source, where, why));
    };
    QJsonParseError pe;
    const QJsonDocument doc = QJsonDocument::fromJson(json, &pe);
    if (pe.error != QJsonParseError::NoError)
        return fail({}, QStringLiteral("not JSON: %1 at offset %2").arg(pe.errorString()).arg(pe.offset));
    if (!doc.isObject())
        return fail({}, QStringLiteral("an access list is a JSON object with \"rules\""));
    const QJsonObject root = doc.object();
    for (auto it = root.begin(); it != root.end(); ++it)
        if (it.key() != QLatin1String("default") && it.key() != QLatin1String("rules"))
            return fail(it.key(), QStringLiteral("unknown key (expected \"default\" and \"rules\")"));
    AccessList list;
    const QString def = root.value(QLatin1String("default")).toString(QStringLiteral("allow"));
    if (def != QLatin1String("allow") && def != QLatin1String("deny"))
        return fail(QStringLiteral("default"), QStringLiteral("expected \"allow\" or \"deny\""));
    list.m_defaultAllows = def == QLatin1String("allow");
    const QJsonValue rules = root.value(QLatin1String("rules"));
    if (!rules.isUndefined() && !rules.isArray())
        return fail(QStringLiteral("rules"), QStringLiteral("expected an array"));
    const QJsonArray array = rules.toArray();
    for (qsizetype i = 0; i < array.size(); ++i) {
        const QString where = QStringLiteral("rules[%1]").arg(i);
        if (!array.at(i).isObject())
            return fail(where, QStringLiteral("expected an object"));
        const QJsonObject o = array.at(i).toObject();
        Rule r;
        const bool hasAllow = o.contains(QLatin1String("allow")), hasDeny = o.contains(QLatin1String("deny"));
        if (hasAllow == hasDeny)
            return fail(where, QStringLiteral("needs one of \"allow\" and \"deny\""));
        r.allow = hasAllow;
        const QString kind = o.value(QLatin1String(hasAllow ? "allow" : "deny")).toString();
        if (const auto k = accessKindFromName(kind))
            r.kind = *k;
        else if (kind == QLatin1String("*"))
            r.anyKind = true;
        else
            return fail(where,
                        QStringLiteral("\"%1\" must be \"command\", \"is-write\", \"transition\" or \"*\"")
                            .arg(QLatin1String(hasAllow ? "allow" : "deny")));
        for (auto it = o.begin(); it != o.end(); ++it) {
            const QString key = it.key();
            QRegularExpression *pattern = key == QLatin1String("name")      ? &r.name
                                          : key == QLatin1String("process") ? &r.process
                                          : key == QLatin1String("user")    ? &r.user
                                          : key == QLatin1String("host")    ? &r.host
                                                                            : nullptr;
            if (key == QLatin1String("allow") || key == QLatin1String("deny") ||
                key == QLatin1String("comment"))
                continue;
            if (!pattern)
                return fail(where + QLatin1Char('.') + key,
                            QStringLiteral("unknown key (expected name, process, user, host, comment)"));
            if (!it.value().isString() || it.value().toString().isEmpty())
                return fail(where + QLatin1Char('.') + key,
                            QStringLiteral("expected a non-empty glob pattern"));
            *pattern = globToRegex(it.value().toString());
            if (!pattern->isValid())
                return fail(where + QLatin1Char('.') + key,
                            QStringLiteral("bad pattern: %1").arg(pattern->errorString()));
        }
        list.m_rules.append(r);
    }
    *out = list;
    return Status();
}

AccessList::Decision AccessList::check(Kind kind, const QString &name, const Origin &origin) const
{
    auto matches = [](const QRegularExpression &re, const QString &s) {
        return re.pattern().isEmpty() || re.match(s).hasMatch();
    };
    for (qsizetype i = 0; i < m_rules.size(); ++i) {
        const Rule &r = m_rules.at(i);
        if ((!r.anyKind && r.kind != kind) || !matches(r.name, name) || !matches(r.process, origin.process) ||
            !matches(r.user, origin.user))
            continue;
        if (!r.host.pattern().isEmpty() && !r.host.match(origin.host).hasMatch() &&
            !r.host.match(origin.address).hasMatch())
            continue;
        return Decision{r.allow, int(i), QStringLiteral("rules[%1]").arg(i)};
    }
    return Decision{m_defaultAllows, -1, QStringLiteral("default")};
}

} // namespace dialog
