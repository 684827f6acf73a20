// Web IS: the JSON messages of the WebSocket protocol (ws://HOST:PORT/is/ws), apart from any socket.
#pragma once

#include "dialog/is/criteria.h"
#include "dialog/is/history.h"
#include "dialog/is/object.h"
#include "dialog/is/repository.h"
#include "dialog/is/staleness.h"
#include "dialog/is/typeregistry.h"

#include <QByteArray>
#include <QString>
#include <optional>

namespace dialog::isd::ws {

/// What one criteria message of a client asks for.
struct Subscription
{
    QString server; ///< the IS server whose objects it wants
    is::Criteria criteria;
    qint64 historyUs = 0; ///< "history": the recent values of each object are sent first (0: none)
    bool remote = false;  ///< @c server is not the local one
};

/// Reads a criteria message, {"server": S, "regex": R, "type": T, "subtypes": bool, "history": D}
/// (every field optional; the server defaults to @p localServer). std::nullopt with the one-line
/// reason in @p error for bad JSON, an unknown field, a wrong type, a bad server name, a bad regular
/// expression, a bad history duration, history asked of another server, or a type of the local
/// server that @p types does not know.
std::optional<Subscription> parseSubscription(const QString &text, const QString &localServer,
                                              const is::TypeRegistry &types, QString *error);

/// "created", "updated" or "removed".
const char *kindName(is::Change::Kind kind);
/// {"event": @p event, "name", "type", "time", ["value"], [staleness]} (a removal has no value).
QByteArray eventMessage(const char *event, const QString &fullName, const QString &type, is::Time time,
                        const is::Object &value, const is::Staleness *staleness = nullptr);
/// {"event": "subscribed", "server", "criteria", ["objects": @p objects, when >= 0]}.
QByteArray subscribedMessage(const QString &server, const is::Criteria &criteria, qint64 objects = -1);
/// {"event": "synced"}: every current value was sent.
QByteArray syncedMessage();
/// {"event": "history", "name", "type", "series"}.
QByteArray historyMessage(const QString &fullName, const is::History &history);
/// {"event": "error", "error": @p error}.
QByteArray errorMessage(const QString &error);

} // namespace dialog::isd::ws
