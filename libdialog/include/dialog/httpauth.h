// Bearer tokens of the daemons' web sides (the web IS, the logger's web log).
#pragma once

#include <QByteArray>

namespace dialog::http {

/// Equality whose time does not depend on where @p a and @p b differ (only on the longer length):
/// comparing a secret this way tells an observer of the time nothing about how much of it was right.
bool constantTimeEquals(const QByteArray &a, const QByteArray &b);

/// True when @p authorization (an Authorization header's value) is `Bearer <token>` (the scheme in
/// any case, white space around the token ignored), compared in constant time.
bool bearerMatches(const QByteArray &authorization, const QByteArray &token);

} // namespace dialog::http
