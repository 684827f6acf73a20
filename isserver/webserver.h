// Web IS (the ATLAS IS paper, section 4): dialog-isserver's read-only HTTP and WebSocket interface
// and its web page.
#pragma once

#include "serveroptions.h"
#include "webformat.h"

#include <QAbstractHttpServer>
#include <QHash>
#include <QPointer>
#include <QString>
#include <QWebSocketServer>
#include <memory>

class QTcpServer;
class QTcpSocket;

namespace dialog {
class Client;
}
namespace dialog::is {
class Dictionary;
class Criteria;
class HistoryStore;
class Repository;
class TypeRegistry;
} // namespace dialog::is

namespace dialog::isd {

class WriterTracker;
class MetricsExporter;
class WebSocketHub;
class WebPipeline;
class WebRoutes;

/// Serves, read-only, on one TCP port:
///   GET /is                             the IS servers of the DIALOG system and their object counts
///   GET /is/<Server>[?regex=&type=&subtypes=1]   the matching objects (name, type, time)
///   GET /is/<Server>/<Server.Object>[?as=Base]   the object's value
///   GET /is/types, /is/types/<Type>     the types this server knows
///   GET /is/ws (WebSocket upgrade)      live values, see WebSocketHub
///   GET /metrics                        OpenMetrics text for Prometheus, see MetricsExporter
///   GET /, /<file>                      the web page (built in, or from ServerOptions::webRoot)
/// in XML (default) or JSON (`Accept: application/json` or `?format=json`). Objects of other servers
/// are read through the IS API (dialog::is::Dictionary), asynchronously: the server's main thread
/// never waits for the network.
///
/// With a token (ServerOptions::httpToken), /is and /metrics need `Authorization: Bearer <token>`
/// (401 without), a WebSocket the header or `?token=`; with TLS, everything is HTTPS/WSS.
///
/// At most ServerOptions::httpMaxRequests requests are in progress at once (a request is in
/// progress from its arrival until its answer is written); more are answered 503 at once.
///
/// WebSocket upgrades are taken from the connection before the HTTP parser sees them (Qt 6.4's
/// QAbstractHttpServer does not recognise them) and handed to a QWebSocketServer.
///
/// This class admits a request (method, bounds, token); WebRoutes answers it and WebPipeline
/// writes the answers in order.
class WebServer : public QAbstractHttpServer
{
    Q_OBJECT
public:
    /// Serves @p repository (of types @p types) and, through @p client, the other IS servers;
    /// @p history (null with --history 0) feeds the WebSocket history, @p writers the staleness of
    /// objects. Every reference must outlive this object.
    WebServer(const ServerOptions &options, is::Repository &repository, const is::TypeRegistry &types,
              Client &client, is::HistoryStore *history, const WriterTracker &writers,
              QObject *parent = nullptr);
    ~WebServer() override;

    /// Listens on ServerOptions::httpBind:httpPort. False with "cannot listen on ADDR:PORT: reason".
    bool listen(QString *error);
    quint16 port() const;
    int requestsInProgress() const;

protected:
    bool handleRequest(const QHttpServerRequest &request, QTcpSocket *socket) override;
    void missingHandler(const QHttpServerRequest &request, QTcpSocket *socket) override;

private:
    /// True when no token is needed for @p segments (the page's files, or no --http-token-file) or
    /// @p request carries it.
    bool authorized(const QHttpServerRequest &request, const QStringList &segments) const;
    void onNewWebSocket();

    const ServerOptions &m_options;
    std::unique_ptr<is::Dictionary> m_dictionary;
    std::unique_ptr<WebSocketHub> m_hub;
    std::unique_ptr<MetricsExporter> m_metrics;
    std::unique_ptr<WebPipeline> m_pipeline;
    std::unique_ptr<WebRoutes> m_routes;
    QTcpServer *m_tcp = nullptr;
    QWebSocketServer m_webSockets;
};

} // namespace dialog::isd
