#include "webfrontend.h"

#include "dialog/httpauth.h"
#include "dialog/httpstatus.h"

#include <QHttpServerRequest>
#include <QJsonDocument>
#include <QTcpServer>
#include <QTcpSocket>
#include <memory>

namespace dialog::http {

WebFrontend::WebFrontend(const QString &name, const QString &tokenSource, QObject *parent)
    : QAbstractHttpServer(parent), m_name(name), m_tokenSource(tokenSource)
{
}

WebFrontend::~WebFrontend() = default;

Status WebFrontend::listen(const QHostAddress &address, quint16 port)
{
    auto tcp = std::make_unique<QTcpServer>();
    if (!tcp->listen(address, port))
        return Status(Status::Code::ListenFailed, QStringLiteral("cannot listen on %1:%2: %3")
                                                      .arg(address.toString())
                                                      .arg(port)
                                                      .arg(tcp->errorString()));
    m_tcp = tcp.release();
    bind(m_tcp); // parents m_tcp to this
    return {};
}

quint16 WebFrontend::port() const
{
    return m_tcp ? m_tcp->serverPort() : 0;
}

void WebFrontend::answer(QTcpSocket *socket, int status, const QByteArray &contentType,
                         const QByteArray &body, bool head)
{
    if (!socket || socket->state() != QAbstractSocket::ConnectedState)
        return;
    QByteArray out = "HTTP/1.1 " + QByteArray::number(status) + ' ' + reasonPhrase(status) + "\r\n";
    out += "Content-Type: " + contentType + "\r\nContent-Length: " + QByteArray::number(body.size()) +
           "\r\nCache-Control: no-cache\r\nConnection: close\r\n\r\n";
    if (!head)
        out += body;
    socket->write(out);
    socket->disconnectFromHost();
}

void WebFrontend::answerJson(QTcpSocket *socket, int status, const QJsonObject &o, bool head)
{
    answer(socket, status, "application/json", QJsonDocument(o).toJson(QJsonDocument::Compact) + '\n', head);
}

void WebFrontend::answerError(QTcpSocket *socket, int status, const QString &message)
{
    answerJson(socket, status, QJsonObject{{QStringLiteral("error"), message}});
}

bool WebFrontend::tokenGiven(const QHttpServerRequest &request) const
{
    if (m_token.isEmpty())
        return false;
    const auto headers = request.headers();
    for (const auto &h : headers)
        if (h.first.compare("authorization", Qt::CaseInsensitive) == 0)
            return bearerMatches(h.second, m_token);
    return false;
}

bool WebFrontend::requireToken(const QHttpServerRequest &request, QTcpSocket *socket)
{
    if (m_token.isEmpty() || tokenGiven(request))
        return true;
    answerError(socket, 401,
                QStringLiteral("%1 needs a token: send 'Authorization: Bearer <token>' (the content of the "
                               "%2)")
                    .arg(m_name, m_tokenSource));
    return false;
}

void WebFrontend::missingHandler(const QHttpServerRequest &, QTcpSocket *socket)
{
    answerError(socket, 404, QStringLiteral("no such resource"));
}

} // namespace dialog::http
