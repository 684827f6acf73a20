// dialog-configdb's web page (--http-port): GET / serves a page that shows the run registry (the
// runs, newest first; a run's record), a document at a version and the diff of two versions; it
// reads them from GET /api/… as JSON, the answers of the CONFIG.<name> requests of the same names.
// Read-only: nothing can be changed from it.
#pragma once

#include "webfrontend.h"

#include <QJsonObject>

class QUrlQuery;

namespace dialog::configdb {

class ConfigServer;

/// On the web front end the logger and the alarm server use (answers written whole, closing their
/// connection; 404 for an unknown path). No token: nothing here changes anything.
/// GET /api/runs?since=MS&type=T&partition=P&limit=N&before=N, /api/run?number=N,
/// /api/doc?path=P&ref=R, /api/docs?prefix=P&ref=R, /api/log?path=P&limit=N, /api/diff?from=A&to=B,
/// /api/tags. A refusal is {"error": TEXT, "code": NAME} with 400 (a bad request), 404 (an unknown
/// run, document, version or tag) or 503 (the database does not answer).
class ConfigWeb : public http::WebFrontend
{
    Q_OBJECT
public:
    /// @p server must outlive this object.
    explicit ConfigWeb(ConfigServer *server, QObject *parent = nullptr);

protected:
    bool handleRequest(const QHttpServerRequest &request, QTcpSocket *socket) override;

private:
    /// The CONFIG request that @p path with @p query asks for; empty (and @p error) when none.
    static QJsonObject requestFor(const QString &path, const QUrlQuery &query, QString *error);

    ConfigServer *m_server;
};

} // namespace dialog::configdb
