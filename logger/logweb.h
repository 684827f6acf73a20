// dialog-logger's web side (--http-port): GET /log?since=…&severity=…&process=…&host=…&category=…
// &text=…&run=…&limit=…&before=…&after=… answers the stored messages as JSON (newest first), and
// GET / serves a page that searches them and follows new ones.
#pragma once

#include "webfrontend.h"

namespace dialog::logger {

class LoggerServer;

/// Answers are written by this class once the search (on the searches' thread) is done: in Qt 6.4
/// a QHttpServerResponder may not outlive its request. Each answer closes its connection, so
/// answers never overtake each other on one connection.
class LogWeb : public http::WebFrontend
{
    Q_OBJECT
public:
    /// @p server must outlive this object.
    explicit LogWeb(LoggerServer *server, QObject *parent = nullptr);

protected:
    /// With a token set (setToken()), /log and /stats need `Authorization: Bearer <token>` (401
    /// without); the page itself (no data) loads without it and asks for it.
    bool handleRequest(const QHttpServerRequest &request, QTcpSocket *socket) override;

private:
    void searchLog(const QHttpServerRequest &request, QTcpSocket *socket);

    LoggerServer *m_server;
};

} // namespace dialog::logger
