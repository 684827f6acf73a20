#include "logweb.h"

#include "loggerserver.h"

#include <QFile>
#include <QHttpServerRequest>
#include <QJsonArray>
#include <QJsonDocument>
#include <QPointer>
#include <QTcpSocket>
#include <QUrlQuery>

namespace dialog::logger {

namespace {

/// The query the URL's parameters describe; std::nullopt with @p error on a bad value.
std::optional<LogQuery> queryFromUrl(const QUrlQuery &url, QString *error)
{
    LogQuery q;
    q.limit = 100;
    static const QStringList known{
        QStringLiteral("since"),   QStringLiteral("until"), QStringLiteral("severity"),
        QStringLiteral("process"), QStringLiteral("host"),  QStringLiteral("category"),
        QStringLiteral("text"),    QStringLiteral("run"),   QStringLiteral("limit"),
        QStringLiteral("before"),  QStringLiteral("after")};
    for (const auto &item : url.queryItems(QUrl::FullyDecoded)) {
        const QString &key = item.first, &value = item.second;
        if (!known.contains(key)) {
            *error = QStringLiteral("unknown parameter '%1' (known: %2)")
                         .arg(key, known.join(QStringLiteral(", ")));
            return std::nullopt;
        }
        if (value.isEmpty())
            continue;
        auto number = [&](qint64 min, qint64 max, qint64 *out) {
            bool ok = false;
            *out = value.toLongLong(&ok);
            if (ok && *out >= min && *out <= max)
                return true;
            *error = QStringLiteral("invalid %1 '%2' (%3..%4)").arg(key, value).arg(min).arg(max);
            return false;
        };
        qint64 n = 0;
        if (key == QLatin1String("since") || key == QLatin1String("until")) {
            const auto t = parseLogTime(value);
            if (!t) {
                *error = QStringLiteral("invalid %1 '%2' (expected e.g. 2h, 30m, 2026-11-23T18:00:00 or ms)")
                             .arg(key, value);
                return std::nullopt;
            }
            (key == QLatin1String("since") ? q.sinceMs : q.untilMs) = *t;
        } else if (key == QLatin1String("severity")) {
            const auto s = severityFromName(value);
            if (!s) {
                *error =
                    QStringLiteral("invalid severity '%1' (debug, info, warning, error, fatal)").arg(value);
                return std::nullopt;
            }
            q.minSeverity = *s;
        } else if (key == QLatin1String("process")) {
            q.process = value;
        } else if (key == QLatin1String("host")) {
            q.host = value;
        } else if (key == QLatin1String("category")) {
            q.category = value;
        } else if (key == QLatin1String("text")) {
            q.text = value;
        } else if (key == QLatin1String("run")) {
            if (!number(1, 0xffffffffLL, &n))
                return std::nullopt;
            q.run = quint32(n);
        } else if (key == QLatin1String("limit")) {
            if (!number(1, 10000, &n))
                return std::nullopt;
            q.limit = int(n);
        } else if (!number(1, qint64(1) << 62, &n)) {
            return std::nullopt;
        } else {
            (key == QLatin1String("before") ? q.beforeId : q.afterId) = n;
        }
    }
    return q;
}

} // namespace

LogWeb::LogWeb(LoggerServer *server, QObject *parent)
    : WebFrontend(QStringLiteral("this web log"), QStringLiteral("logger's --http-token-file"), parent),
      m_server(server)
{
}

bool LogWeb::handleRequest(const QHttpServerRequest &request, QTcpSocket *socket)
{
    const bool head = request.method() == QHttpServerRequest::Method::Head;
    if (request.method() != QHttpServerRequest::Method::Get && !head) {
        answerError(socket, 405, QStringLiteral("only GET and HEAD"));
        return true;
    }
    const QString path = request.url().path();
    const bool data = path == QLatin1String("/log") || path == QLatin1String("/stats");
    if (data && !requireToken(request, socket))
        return true;
    if (path == QLatin1String("/log")) {
        searchLog(request, socket);
    } else if (path == QLatin1String("/") || path == QLatin1String("/index.html")) {
        QFile page(QStringLiteral(":/dialog-logger/web/index.html"));
        if (!page.open(QIODevice::ReadOnly))
            answerError(socket, 500, QStringLiteral("the search page is missing from the build"));
        else
            answer(socket, 200, "text/html; charset=utf-8", page.readAll(), head);
    } else if (path == QLatin1String("/stats")) {
        answer(socket, 200, "application/json", m_server->statistics() + '\n', head);
    } else {
        answerError(socket, 404, QStringLiteral("no such resource (try / or /log)"));
    }
    return true;
}

void LogWeb::searchLog(const QHttpServerRequest &request, QTcpSocket *socket)
{
    QString error;
    const auto query = queryFromUrl(QUrlQuery(request.url()), &error);
    if (!query) {
        answerError(socket, 400, error);
        return;
    }
    const bool head = request.method() == QHttpServerRequest::Method::Head;
    QPointer<QTcpSocket> s(socket);
    m_server->search(*query, socket,
                     [s, head](const std::optional<QList<LogRecord>> &records, bool more, const QString &e) {
                         if (!records) {
                             answerError(s, 500, QStringLiteral("search failed: ") + e);
                             return;
                         }
                         QJsonArray a;
                         for (const LogRecord &r : *records)
                             a.append(r.toJson());
                         const QJsonObject o{{QStringLiteral("records"), a}, {QStringLiteral("more"), more}};
                         answer(s, 200, "application/json",
                                QJsonDocument(o).toJson(QJsonDocument::Compact) + '\n', head);
                     });
}

} // namespace dialog::logger
