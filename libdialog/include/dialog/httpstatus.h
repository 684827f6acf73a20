// HTTP status lines of the daemons' web sides (the web IS, the logger's web log).
#pragma once

#include <QByteArray>

namespace dialog::http {

/// The reason phrase of HTTP status @p status ("Not Found" for 404) for the codes the daemons
/// answer with: 200, 400, 401, 404, 405, 408, 413, 414, 431, 500, 502, 503 and 504; "Status" for
/// any other (a client reads the code, never the phrase).
QByteArray reasonPhrase(int status);

} // namespace dialog::http
