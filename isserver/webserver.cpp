#include "webserver.h"

#include "metrics.h"
#include "webroutes.h"
#include "websockethub.h"
#include "webtcpserver.h"
#include "writertracker.h"

#include "dialog/client.h"
#include "dialog/httpauth.h"
#include "dialog/is/dictionary.h"
#include "dialog/is/history.h"
#include "dialog/is/repository.h"

#include <QHttpServerRequest>
#include <QLoggingCategory>
#include <QTcpSocket>
#include <QUrlQuery>
#include <QWebSocket>

Q_LOGGING_CATEGORY(lcWeb, "dialog.is.web")

namespace dialog::isd {

namespace {

constexpr int MaxUrlBytes = 8192;
constexpr int RemoteTimeoutMs = 5000;

QByteArray header(const QHttpServerRequest &request, const char *name)
{
    const auto headers = request.headers();
    for (const auto &h : headers)
        if (h.first.compare(name, Qt::CaseInsensitive) == 0)
            return h.second;
    return {};
}

} // namespace

WebServer::WebServer(const ServerOptions &options, is::Repository &repository, const is::TypeRegistry &types,
                     Client &client, is::HistoryStore *history, const WriterTracker &writers, QObject *parent)
    : QAbstractHttpServer(parent), m_options(options),
      m_webSockets(QStringLiteral("dialog-isserver"), QWebSocketServer::NonSecureMode)
{
    m_dictionary = std::make_unique<is::Dictionary>(&client);
    m_dictionary->setTimeout(RemoteTimeoutMs);
    m_hub = std::make_unique<WebSocketHub>(repository, m_dictionary.get(), options.httpMaxWebSockets);
    m_metrics = std::make_unique<MetricsExporter>(
        repository, client, is::Criteria(options.metricsCriteria), [&writers](const is::StoredObject &o) {
            return writers.staleness(o.name, o.object.typeName(), o.time).isStale();
        });
    m_metrics->setMaxObjects(options.metricsMaxObjects);
    m_pipeline = std::make_unique<WebPipeline>();
    m_routes = std::make_unique<WebRoutes>(options, repository, types, writers, *m_dictionary, *m_metrics,
                                           *m_pipeline);
    m_hub->setHistory(history);
    m_hub->setScanBudget(options.scanBudgetMs);
    m_hub->setStaleness([&writers](const is::StoredObject &o) {
        return writers.staleness(o.name, o.object.typeName(), o.time);
    });
    connect(&m_webSockets, &QWebSocketServer::newConnection, this, &WebServer::onNewWebSocket);
}

WebServer::~WebServer()
{
    m_hub.reset(); // its remote receivers use the dictionary
    m_routes.reset();
    m_metrics.reset();
}

bool WebServer::listen(QString *error)
{
    const ServerOptions &o = m_options;
    QHostAddress address;
    if (!address.setAddress(o.httpBind)) {
        *error = QStringLiteral("cannot listen on %1:%2: not an IP address").arg(o.httpBind).arg(o.httpPort);
        return false;
    }
    // Open connections are bounded too (each costs a socket and memory even when idle): room for
    // every WebSocket client and four connections per concurrent HTTP request.
    WebTcpServer::Limits limits;
    limits.maxConnections = o.httpMaxWebSockets + 4 * o.httpMaxRequests;
    limits.idleMs = o.httpIdleS * 1000;
    limits.maxPerAddress = o.httpMaxPerAddress;
    limits.headMs = o.httpHeadS * 1000;
    limits.reservedForToken = qMin(8, limits.maxConnections / 4);
    auto tcp = std::make_unique<WebTcpServer>(&m_webSockets, limits,
                                              [this](QTcpSocket *s) { return m_pipeline->busy(s); });
    tcp->setToken(o.httpToken);
    if (o.httpTls)
        tcp->setTls(o.httpTlsConfiguration);
    if (!tcp->listen(address, o.httpPort)) {
        *error = QStringLiteral("cannot listen on %1:%2: %3")
                     .arg(o.httpBind)
                     .arg(o.httpPort)
                     .arg(tcp->errorString());
        return false;
    }
    m_tcp = tcp.release();
    bind(m_tcp); // parents m_tcp to this
    qCInfo(lcWeb) << "web IS on"
                  << QStringLiteral("%1://%2:%3/")
                         .arg(o.httpTls ? QStringLiteral("https") : QStringLiteral("http"), o.httpBind)
                         .arg(m_tcp->serverPort())
                  << (o.httpToken.isEmpty() ? "" : "(token required)");
    return true;
}

quint16 WebServer::port() const
{
    return m_tcp ? m_tcp->serverPort() : 0;
}

int WebServer::requestsInProgress() const
{
    return m_pipeline->inProgress();
}

void WebServer::onNewWebSocket()
{
    while (QWebSocket *socket = m_webSockets.nextPendingConnection())
        m_hub->accept(socket);
}

void WebServer::missingHandler(const QHttpServerRequest &, QTcpSocket *socket)
{
    // Not reached: handleRequest() answers every request.
    m_pipeline->finish(m_pipeline->open(socket), WebAnswer::error(404, QStringLiteral("no such resource")));
}

bool WebServer::handleRequest(const QHttpServerRequest &request, QTcpSocket *socket)
{
    WebPipeline::Target t = m_pipeline->open(socket);
    t.close = header(request, "connection").compare("close", Qt::CaseInsensitive) == 0;
    const auto method = request.method();
    t.head = method == QHttpServerRequest::Method::Head;
    t.ifNoneMatch = header(request, "if-none-match");
    t.ifModifiedSince = header(request, "if-modified-since");
    if (method != QHttpServerRequest::Method::Get && !t.head) {
        WebAnswer a = WebAnswer::error(405, QStringLiteral("the web IS is read-only (GET and HEAD only)"));
        a.headers.append(qMakePair(QByteArray("Allow"), QByteArray("GET, HEAD")));
        m_pipeline->finish(t, a);
        return true;
    }
    if (m_pipeline->inProgress() > m_options.httpMaxRequests) {
        m_pipeline->finish(
            t, WebAnswer::error(503, QStringLiteral("%1 requests in progress (limit %2), try again later")
                                         .arg(m_pipeline->inProgress() - 1)
                                         .arg(m_options.httpMaxRequests)));
        return true;
    }
    const QUrl url = request.url();
    if (url.toEncoded().size() > MaxUrlBytes) {
        m_pipeline->finish(
            t, WebAnswer::error(414, QStringLiteral("the URL is longer than %1 bytes").arg(MaxUrlBytes)));
        return true;
    }
    const QUrlQuery query(url);
    const QString format = query.queryItemValue(QStringLiteral("format"), QUrl::FullyDecoded);
    if (!format.isEmpty() && format != QLatin1String("json") && format != QLatin1String("xml")) {
        m_pipeline->finish(
            t,
            WebAnswer::error(400, QStringLiteral("unknown format '%1' (xml or json)").arg(format.left(100))));
        return true;
    }
    t.json = format == QLatin1String("json") ||
             (format.isEmpty() && header(request, "accept").contains("application/json"));
    const QString path = url.path(QUrl::FullyDecoded);
    const QStringList segments = path.split(QLatin1Char('/')).mid(1);
    if (!authorized(request, segments)) {
        t.close = true; // a connection without the token holds no room for further tries
        WebAnswer a = WebAnswer::error(
            401, QStringLiteral("this web IS needs a token: send 'Authorization: Bearer <token>' "
                                "(the content of the server's --http-token-file)"));
        a.headers.append(
            qMakePair(QByteArray("WWW-Authenticate"), QByteArray("Bearer realm=\"dialog-isserver\"")));
        m_pipeline->finish(t, a);
        return true;
    }
    m_routes->route(t, url, segments);
    return true;
}

bool WebServer::authorized(const QHttpServerRequest &request, const QStringList &segments) const
{
    const QByteArray &token = m_options.httpToken;
    if (token.isEmpty())
        return true;
    // The page's own files hold no data: they load without the token, and the page then asks for it.
    const bool page = segments.size() == 1 && segments.first() != QLatin1String("metrics") &&
                      segments.first() != QLatin1String("is");
    if (page)
        return true;
    return http::bearerMatches(header(request, "authorization"), token);
}

} // namespace dialog::isd
