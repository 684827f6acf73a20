#include "configweb.h"

#include "configserver.h"

#include <QFile>
#include <QHttpServerRequest>
#include <QJsonDocument>
#include <QPointer>
#include <QTcpSocket>
#include <QUrlQuery>

using namespace Qt::StringLiterals;

namespace dialog::configdb {

namespace {

/// The HTTP status of a CONFIG answer: 200, or that of its refusal's code.
int statusOf(const QJsonObject &a)
{
    if (!a.contains(u"error"_s))
        return 200;
    const QString code = a.value(u"code"_s).toString();
    if (code == u"NotFound"_s)
        return 404;
    if (code == u"BadRequest"_s)
        return 400;
    return 503;
}

/// @p key of @p q as a number; false (and @p error) when given and not a non-negative integer.
bool number(const QUrlQuery &q, const QString &key, qint64 *out, QString *error)
{
    if (!q.hasQueryItem(key))
        return true;
    bool ok = false;
    *out = q.queryItemValue(key).toLongLong(&ok);
    if (!ok || *out < 0)
        *error = u"%1: '%2' is not a non-negative integer"_s.arg(key, q.queryItemValue(key));
    return ok && *out >= 0;
}

} // namespace

ConfigWeb::ConfigWeb(ConfigServer *server, QObject *parent)
    : WebFrontend(u"the configuration page"_s, QString(), parent), m_server(server)
{
}

QJsonObject ConfigWeb::requestFor(const QString &path, const QUrlQuery &q, QString *error)
{
    const auto text = [&q](const QString &key) { return q.queryItemValue(key, QUrl::FullyDecoded); };
    qint64 a = 0, b = 0, limit = 50;
    if (path == u"/api/runs"_s) {
        if (!number(q, u"since"_s, &a, error) || !number(q, u"before"_s, &b, error) ||
            !number(q, u"limit"_s, &limit, error))
            return {};
        return {{u"op"_s, u"runs"_s},
                {u"since"_s, a},
                {u"run_type"_s, text(u"type"_s)},
                {u"partition"_s, text(u"partition"_s)},
                {u"limit"_s, limit},
                {u"before"_s, b}};
    }
    if (path == u"/api/run"_s) {
        if (!q.hasQueryItem(u"number"_s)) {
            *error = u"number: the run's number is needed (/api/run?number=N)"_s;
            return {};
        }
        if (!number(q, u"number"_s, &a, error))
            return {};
        return {{u"op"_s, u"run"_s}, {u"number"_s, a}};
    }
    if (path == u"/api/doc"_s) {
        if (text(u"path"_s).isEmpty()) {
            *error = u"path: the document's path is needed (/api/doc?path=slaves/FE1&ref=head)"_s;
            return {};
        }
        return {{u"op"_s, u"get"_s}, {u"path"_s, text(u"path"_s)}, {u"ref"_s, text(u"ref"_s)}};
    }
    if (path == u"/api/docs"_s)
        return {{u"op"_s, u"ls"_s}, {u"prefix"_s, text(u"prefix"_s)}, {u"ref"_s, text(u"ref"_s)}};
    if (path == u"/api/log"_s) {
        if (!number(q, u"limit"_s, &limit, error))
            return {};
        return {{u"op"_s, u"log"_s}, {u"path"_s, text(u"path"_s)}, {u"limit"_s, limit}};
    }
    if (path == u"/api/diff"_s) {
        if (text(u"from"_s).isEmpty() || text(u"to"_s).isEmpty()) {
            *error = u"from, to: two versions are needed (/api/diff?from=41&to=head)"_s;
            return {};
        }
        return {{u"op"_s, u"diff"_s}, {u"from"_s, text(u"from"_s)}, {u"to"_s, text(u"to"_s)}};
    }
    if (path == u"/api/tags"_s)
        return {{u"op"_s, u"tags"_s}};
    *error =
        u"no such resource (try /, /api/runs, /api/run, /api/doc, /api/docs, /api/log, /api/diff, /api/tags)"_s;
    return {};
}

bool ConfigWeb::handleRequest(const QHttpServerRequest &request, QTcpSocket *socket)
{
    const QString path = request.url().path();
    const auto method = request.method();
    const bool head = method == QHttpServerRequest::Method::Head;
    if (method != QHttpServerRequest::Method::Get && !head) {
        answerJson(socket, 405, {{u"error"_s, u"only GET and HEAD here: the page is read-only"_s}});
        return true;
    }
    if (path == u"/"_s || path == u"/index.html"_s) {
        QFile page(u":/dialog-configdb/web/index.html"_s);
        if (!page.open(QIODevice::ReadOnly))
            answerJson(socket, 500, {{u"error"_s, u"the page is missing from the build"_s}});
        else
            answer(socket, 200, "text/html; charset=utf-8", page.readAll(), head);
        return true;
    }
    QString error;
    const QJsonObject r = requestFor(path, QUrlQuery(request.url()), &error);
    if (r.isEmpty()) {
        answerJson(socket, path.startsWith(u"/api/"_s) && !error.startsWith(u"no such"_s) ? 400 : 404,
                   {{u"error"_s, error}}, head);
        return true;
    }
    m_server->query(r, this, [socket = QPointer<QTcpSocket>(socket), head](const QJsonObject &a) {
        answerJson(socket, statusOf(a), a, head);
    });
    return true;
}

} // namespace dialog::configdb
