// dialog-logger's web side (--http-port): GET /log?since=…&severity=…&process=…&host=…&category=…
// &text=…&run=…&limit=…&before=…&after=… answers the stored messages as JSON (newest first), and
// GET / serves a page that searches them and follows new ones.
#pragma once

#include <QAbstractHttpServer>
#include <QHostAddress>

namespace dialog::logger {

class LoggerServer;

/// Answers are written by this class once the search (on the searches' thread) is done: in Qt 6.4
/// a QHttpServerResponder may not outlive its request. Each answer closes its connection, so
/// answers never overtake each other on one connection.
class LogWeb : public QAbstractHttpServer
{
    Q_OBJECT
public:
    /// @p server must outlive this object.
    explicit LogWeb(LoggerServer *server, QObject *parent = nullptr);

    /// /log and /stats need `Authorization: Bearer <token>` (401 without); the page itself (no
    /// data) loads without it and asks for it. Empty: no token needed.
    void setToken(const QByteArray &token) { m_token = token; }
    /// Listens on @p address:@p port. False with "cannot listen on ADDR:PORT: reason".
    bool listen(const QHostAddress &address, quint16 port, QString *error);
    quint16 port() const;

protected:
    bool handleRequest(const QHttpServerRequest &request, QTcpSocket *socket) override;
    void missingHandler(const QHttpServerRequest &request, QTcpSocket *socket) override;

private:
    void searchLog(const QHttpServerRequest &request, QTcpSocket *socket);
    bool tokenGiven(const QHttpServerRequest &request) const;

    LoggerServer *m_server;
    QTcpServer *m_tcp = nullptr;
    QByteArray m_token;
};

} // namespace dialog::logger
