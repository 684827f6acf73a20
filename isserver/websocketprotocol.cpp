#include "websocketprotocol.h"

#include "webformat.h"

#include "dialog/is/codec.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QStringList>

namespace dialog::isd::ws {

namespace {
QByteArray compact(const QJsonObject &o)
{
    return QJsonDocument(o).toJson(QJsonDocument::Compact);
}
} // namespace

std::optional<Subscription> parseSubscription(const QString &text, const QString &localServer,
                                              const is::TypeRegistry &types, QString *error)
{
    auto refuse = [error](const QString &why) {
        *error = why;
        return std::nullopt;
    };
    QJsonParseError pe;
    const QJsonDocument doc = QJsonDocument::fromJson(text.toUtf8(), &pe);
    if (!doc.isObject())
        return refuse(
            pe.error != QJsonParseError::NoError
                ? QStringLiteral("bad JSON at offset %1: %2").arg(pe.offset).arg(pe.errorString())
                : QStringLiteral("expected a JSON object {\"server\", \"regex\", \"type\", \"subtypes\"}"));
    const QJsonObject o = doc.object();
    for (auto it = o.begin(); it != o.end(); ++it) {
        static const QStringList known{QStringLiteral("server"), QStringLiteral("regex"),
                                       QStringLiteral("type"), QStringLiteral("subtypes"),
                                       QStringLiteral("history")};
        if (!known.contains(it.key()))
            return refuse(
                QStringLiteral("unknown field '%1' (expected server, regex, type, subtypes, history)")
                    .arg(it.key().left(100)));
    }
    const QJsonValue server = o.value(QLatin1String("server")), regex = o.value(QLatin1String("regex")),
                     type = o.value(QLatin1String("type")), subtypes = o.value(QLatin1String("subtypes"));
    if ((!server.isUndefined() && !server.isString()) || (!regex.isUndefined() && !regex.isString()) ||
        (!type.isUndefined() && !type.isString()) ||
        (!subtypes.isUndefined() && !subtypes.isBool() && !subtypes.isDouble()))
        return refuse(QStringLiteral("server, regex and type must be strings, subtypes a boolean"));
    Subscription s;
    s.server = server.toString(localServer);
    if (s.server.isEmpty() || s.server.contains(QLatin1Char('.')))
        return refuse(QStringLiteral("invalid server name '%1'").arg(s.server.left(100)));
    const QString typeName = type.toString();
    const bool withSubtypes = subtypes.isBool() ? subtypes.toBool() : subtypes.toDouble() != 0;
    s.criteria = is::Criteria(regex.toString(), typeName,
                              typeName.isEmpty() ? is::Criteria::TypeSelector::Any
                              : withSubtypes     ? is::Criteria::TypeSelector::WithSubtypes
                                                 : is::Criteria::TypeSelector::Exactly);
    if (!s.criteria.isValid())
        return refuse(QStringLiteral("bad regular expression: %1").arg(s.criteria.errorString()));
    s.remote = s.server != localServer;
    const QJsonValue history = o.value(QLatin1String("history"));
    s.historyUs = history.isUndefined() ? 0 : is::parseDurationUs(history.toString());
    if (s.historyUs < 0 || (!history.isUndefined() && !history.isString()))
        return refuse(QStringLiteral("history must be a duration such as \"10m\" (90s, 10m, 2h)"));
    if (s.historyUs > 0 && s.remote)
        return refuse(QStringLiteral("history first is offered for this server's objects (%1); read another "
                                     "server's history at /is/<Server>/<Server.Object>/history")
                          .arg(localServer));
    if (!s.remote && !typeName.isEmpty() && !types.contains(typeName))
        return refuse(QStringLiteral("unknown type '%1'").arg(typeName.left(100)));
    return s;
}

const char *kindName(is::Change::Kind k)
{
    switch (k) {
    case is::Change::Kind::Created:
        return "created";
    case is::Change::Kind::Updated:
        return "updated";
    case is::Change::Kind::Removed:
        return "removed";
    }
    return "updated";
}

QByteArray eventMessage(const char *event, const QString &fullName, const QString &type, is::Time time,
                        const is::Object &value, const is::Staleness *staleness)
{
    QJsonObject o{{QStringLiteral("event"), QLatin1String(event)},
                  {QStringLiteral("name"), fullName},
                  {QStringLiteral("type"), type},
                  {QStringLiteral("time"), time.toString()}};
    if (value.isValid())
        o.insert(QStringLiteral("value"), is::toJson(value));
    if (staleness)
        staleness->addTo(o);
    return compact(o);
}

QByteArray subscribedMessage(const QString &server, const is::Criteria &criteria, qint64 objects)
{
    QJsonObject o{{QStringLiteral("event"), QStringLiteral("subscribed")},
                  {QStringLiteral("server"), server},
                  {QStringLiteral("criteria"), criteria.toJson()}};
    if (objects >= 0)
        o.insert(QStringLiteral("objects"), objects);
    return compact(o);
}

QByteArray syncedMessage()
{
    return compact(QJsonObject{{QStringLiteral("event"), QStringLiteral("synced")}});
}

QByteArray historyMessage(const QString &fullName, const is::History &history)
{
    return compact(QJsonObject{{QStringLiteral("event"), QStringLiteral("history")},
                               {QStringLiteral("name"), fullName},
                               {QStringLiteral("type"), history.typeName},
                               {QStringLiteral("series"), web::historySeriesJson(history)}});
}

QByteArray errorMessage(const QString &error)
{
    return compact(
        QJsonObject{{QStringLiteral("event"), QStringLiteral("error")}, {QStringLiteral("error"), error}});
}

} // namespace dialog::isd::ws
