// Web IS: what every route needs — the object a path names, and the HTTP status of an IS status.
#pragma once

#include "webpipeline.h"

#include "dialog/status.h"

#include <QString>
#include <optional>

namespace dialog::isd::web {

/// HTTP status for an IS API status from another server.
int httpStatus(const Status &s);

/// The object part of @p name ("S.O" gives "O") when @p name is an object of @p server.
std::optional<QString> objectOf(const QString &server, const QString &name);

/// The answer to a path whose object is not one of @p server's (objectOf() gave none).
WebAnswer badObjectName(const QString &server, const QString &name);

} // namespace dialog::isd::web
