// The web side of a daemon that serves a page and a few JSON resources (dialog-logger's web log,
// dialog-alarmserver's alarm page, dialog-configdb's read-only page): it listens, checks the bearer
// token and writes whole answers; the daemon's subclass says what each path answers.
#pragma once

#include "dialog/status.h"

#include <QAbstractHttpServer>
#include <QHostAddress>
#include <QJsonObject>

class QTcpServer;
class QTcpSocket;

namespace dialog::http {

/// A QAbstractHttpServer whose subclass answers in handleRequest() with answer(), answerJson() or
/// answerError(). Every answer is written whole and closes its connection, so answers never
/// overtake each other on one connection, and an answer may be written after handleRequest()
/// returned (in Qt 6.4 a QHttpServerResponder may not outlive its request: keep the socket in a
/// QPointer instead). Lives in one thread: the thread that calls listen().
class WebFrontend : public QAbstractHttpServer
{
    Q_OBJECT
public:
    /// @p name names the daemon's web side in the 401 answers ("this web log"), @p tokenSource
    /// where an operator finds the token ("logger's --http-token-file").
    explicit WebFrontend(const QString &name, const QString &tokenSource, QObject *parent = nullptr);
    ~WebFrontend() override;

    /// The bearer token that the resources needing one (requireToken()) ask for; empty: none.
    void setToken(const QByteArray &token) { m_token = token; }
    /// True when a token is set.
    bool hasToken() const { return !m_token.isEmpty(); }
    /// Listens on @p address:@p port (0: any free port, see port()). ListenFailed with "cannot
    /// listen on ADDR:PORT: reason".
    Status listen(const QHostAddress &address, quint16 port);
    /// The port listened on; 0 before listen() succeeded.
    quint16 port() const;

    /// Writes an answer of @p status with @p body and closes the connection; only the head for a
    /// HEAD request (@p head). Nothing when the client already left (@p socket null or closed).
    static void answer(QTcpSocket *socket, int status, const QByteArray &contentType, const QByteArray &body,
                       bool head = false);
    /// answer() of @p o as compact JSON.
    static void answerJson(QTcpSocket *socket, int status, const QJsonObject &o, bool head = false);
    /// answerJson() of {"error": message}.
    static void answerError(QTcpSocket *socket, int status, const QString &message);

protected:
    /// True when @p request carries `Authorization: Bearer <token>` with the token set (compared in
    /// constant time); false without a token set.
    bool tokenGiven(const QHttpServerRequest &request) const;
    /// For a resource that needs the token when one is set: true when it may be answered; false
    /// after answering 401 (a token is set and @p request lacks it).
    bool requireToken(const QHttpServerRequest &request, QTcpSocket *socket);
    /// Answers 404 {"error": "no such resource"}.
    void missingHandler(const QHttpServerRequest &request, QTcpSocket *socket) override;

private:
    QString m_name;
    QString m_tokenSource;
    QTcpServer *m_tcp = nullptr; // owned by QAbstractHttpServer once bound
    QByteArray m_token;
};

} // namespace dialog::http
