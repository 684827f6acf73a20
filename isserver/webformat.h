// Web IS representations of IS data: the IS paper's XML (section 4) and JSON.
#pragma once

#include "dialog/is/history.h"
#include "dialog/is/object.h"
#include "dialog/is/repository.h"
#include "dialog/is/staleness.h"
#include "dialog/is/typeregistry.h"

#include <QByteArray>
#include <QJsonArray>
#include <QJsonObject>
#include <QList>
#include <QString>

namespace dialog::isd::web {

/// One IS server as listed by GET /is.
struct ServerInfo
{
    QString name;
    qint64 objects = -1; ///< -1: unknown (the server did not answer)
    bool local = false;  ///< the server answering the request
    QString error;       ///< why the count is unknown
};

/// One object as answered by GET /is/<Server>/<Server.Object>.
struct ObjectValue
{
    QString name; ///< full name "Server.Object"
    QString typeName;
    is::Time time;
    quint64 updateCount = 0;
    is::Object object;
    is::Staleness staleness; ///< when the object was read
};

/// `<obj name="S.O" type="T" time="…"><attr name="a" descr="…" type="u32"><v>1</v></attr>…</obj>`:
/// vectors as several <v> (and array="1"), nested objects as a nested <obj> inside <v>; a stale
/// object's <obj> has stale="1", stale_reason and age_s too.
QByteArray objectXml(const ObjectValue &value);
/// {"name", "type", "time", "updates", "value": dialog::is::toJson(object), "stale", "age_s",
/// ["stale_reason"], ["expected_interval_s"]} (Staleness::addTo).
QJsonObject objectJson(const ObjectValue &value);

QByteArray serversXml(const QList<ServerInfo> &servers);
QJsonObject serversJson(const QList<ServerInfo> &servers);

/// @p objects' names without the server prefix (as Repository::list() gives them).
QByteArray listXml(const QString &server, const QList<is::ObjectInfo> &objects);
QJsonObject listJson(const QString &server, const QList<is::ObjectInfo> &objects);

QByteArray typesXml(const QList<is::TypeInfo> &types);
QByteArray typeXml(const is::TypeInfo &type);
/// dialog::is::typeToJson() plus "subtypes".
QJsonObject typeJson(const is::TypeInfo &type, const QStringList &subtypes);

/// The series of @p history as a chart reads them: [{"attribute", "points": [[ms, value], …]}],
/// a bucket of several values as [ms, mean, min, max, count].
QJsonArray historySeriesJson(const is::History &history);
/// The points of one series as historySeriesJson() writes them.
QJsonArray historyPointsJson(const is::HistorySeries &series);

} // namespace dialog::isd::web
