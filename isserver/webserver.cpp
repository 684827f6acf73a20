#include "webserver.h"

#include "metrics.h"
#include "websockethub.h"
#include "webtcpserver.h"
#include "writertracker.h"

#include "dialog/client.h"
#include "dialog/is/history.h"
#include "dialog/is/repository.h"
#include "dialog/is/typeregistry.h"

#include "dialog/is/dictionary.h"

#include <QFile>
#include <QFileInfo>
#include <QHttpServerRequest>
#include <QJsonArray>
#include <QJsonDocument>
#include <QLoggingCategory>
#include <QRegularExpression>
#include <QTcpSocket>
#include <QTimer>
#include <QUrlQuery>
#include <QWebSocket>

Q_LOGGING_CATEGORY(lcWeb, "dialog.is.web")

namespace dialog::isd {

namespace {

constexpr int MaxUrlBytes = 8192;
constexpr int RemoteTimeoutMs = 5000;

QByteArray reasonPhrase(int status)
{
    switch (status) {
    case 200:
        return "OK";
    case 400:
        return "Bad Request";
    case 401:
        return "Unauthorized";
    case 404:
        return "Not Found";
    case 405:
        return "Method Not Allowed";
    case 414:
        return "URI Too Long";
    case 500:
        return "Internal Server Error";
    case 502:
        return "Bad Gateway";
    case 503:
        return "Service Unavailable";
    case 504:
        return "Gateway Timeout";
    default:
        return "Status";
    }
}

/// HTTP status for an IS API status from another server.
int httpStatus(const is::Status &s)
{
    using C = is::Status::Code;
    switch (s.code()) {
    case C::Ok:
        return 200;
    case C::NotFound:
    case C::UnknownServer:
    case C::UnknownType:
        return 404;
    case C::InvalidName:
    case C::TypeMismatch:
    case C::BadRequest:
        return 400;
    case C::Timeout:
        return 504;
    default:
        return 502;
    }
}

QByteArray contentTypeOf(const QString &file)
{
    const QString suffix = QFileInfo(file).suffix().toLower();
    if (suffix == QLatin1String("html"))
        return "text/html; charset=utf-8";
    if (suffix == QLatin1String("js"))
        return "text/javascript; charset=utf-8";
    if (suffix == QLatin1String("css"))
        return "text/css; charset=utf-8";
    if (suffix == QLatin1String("png"))
        return "image/png";
    if (suffix == QLatin1String("svg"))
        return "image/svg+xml";
    if (suffix == QLatin1String("json"))
        return "application/json";
    return "application/octet-stream";
}

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
    : QAbstractHttpServer(parent), m_options(options), m_repository(repository), m_types(types),
      m_writers(writers), m_webSockets(QStringLiteral("dialog-isserver"), QWebSocketServer::NonSecureMode)
{
    m_dictionary = std::make_unique<is::Dictionary>(&client);
    m_dictionary->setTimeout(RemoteTimeoutMs);
    m_hub = std::make_unique<WebSocketHub>(repository, m_dictionary.get(), options.httpMaxWebSockets);
    m_metrics = std::make_unique<MetricsExporter>(
        repository, client, is::Criteria(options.metricsCriteria), [&writers](const is::StoredObject &o) {
            return writers.staleness(o.name, o.object.typeName(), o.time).isStale();
        });
    m_hub->setHistory(history);
    m_hub->setStaleness([&writers](const is::StoredObject &o) {
        return writers.staleness(o.name, o.object.typeName(), o.time);
    });
    connect(&m_webSockets, &QWebSocketServer::newConnection, this, &WebServer::onNewWebSocket);
}

WebServer::~WebServer()
{
    m_hub.reset(); // its remote receivers use the dictionary
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
    auto tcp = std::make_unique<WebTcpServer>(
        &m_webSockets, limits, [this](QTcpSocket *s) { return !m_pipelines.value(s).isEmpty(); });
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

void WebServer::onNewWebSocket()
{
    while (QWebSocket *socket = m_webSockets.nextPendingConnection())
        m_hub->accept(socket);
}

WebServer::Answer WebServer::error(int status, const QString &message)
{
    Answer a;
    a.status = status;
    a.body = QByteArray::number(status) + ' ' + reasonPhrase(status) + ": " + message.toUtf8() + '\n';
    return a;
}

WebServer::Answer WebServer::ok(const Target &t, const QByteArray &xml, const QJsonObject &json)
{
    Answer a;
    if (t.json) {
        a.contentType = "application/json";
        a.body = QJsonDocument(json).toJson(QJsonDocument::Indented);
    } else {
        a.contentType = "application/xml; charset=utf-8";
        a.body = xml;
    }
    return a;
}

void WebServer::finish(const Target &t, const Answer &a)
{
    --m_inProgress;
    QTcpSocket *s = t.socket.data();
    if (!s || s->state() != QAbstractSocket::ConnectedState)
        return; // the client left before its answer was ready
    QByteArray out;
    out.reserve(a.body.size() + 256);
    out += "HTTP/1.1 " + QByteArray::number(a.status) + ' ' + reasonPhrase(a.status) + "\r\n";
    out += "Content-Type: " + a.contentType + "\r\n";
    out += "Content-Length: " + QByteArray::number(a.body.size()) + "\r\n";
    out += "Cache-Control: no-cache\r\n";
    for (const auto &h : a.headers)
        out += h.first + ": " + h.second + "\r\n";
    if (t.close)
        out += "Connection: close\r\n";
    out += "\r\n";
    if (!t.head)
        out += a.body;
    t.slot->bytes = out;
    t.slot->ready = true;
    t.slot->close = t.close;
    QList<std::shared_ptr<Slot>> &queue = m_pipelines[s];
    while (!queue.isEmpty() && queue.first()->ready) {
        const std::shared_ptr<Slot> next = queue.takeFirst();
        s->write(next->bytes);
        if (next->close) {
            queue.clear();
            s->disconnectFromHost();
        }
    }
}

WebServer::Target WebServer::target(QTcpSocket *socket)
{
    Target t;
    t.socket = socket;
    t.slot = std::make_shared<Slot>();
    auto it = m_pipelines.find(socket);
    if (it == m_pipelines.end()) {
        it = m_pipelines.insert(socket, {});
        connect(socket, &QObject::destroyed, this, [this, socket] { m_pipelines.remove(socket); });
    }
    it->append(t.slot);
    return t;
}

void WebServer::missingHandler(const QHttpServerRequest &, QTcpSocket *socket)
{
    // Not reached: handleRequest() answers every request.
    ++m_inProgress;
    finish(target(socket), error(404, QStringLiteral("no such resource")));
}

bool WebServer::handleRequest(const QHttpServerRequest &request, QTcpSocket *socket)
{
    Target t = target(socket);
    t.close = header(request, "connection").compare("close", Qt::CaseInsensitive) == 0;
    ++m_inProgress;
    const auto method = request.method();
    t.head = method == QHttpServerRequest::Method::Head;
    if (method != QHttpServerRequest::Method::Get && !t.head) {
        Answer a = error(405, QStringLiteral("the web IS is read-only (GET and HEAD only)"));
        a.headers.append(qMakePair(QByteArray("Allow"), QByteArray("GET, HEAD")));
        finish(t, a);
        return true;
    }
    if (m_inProgress > m_options.httpMaxRequests) {
        finish(t, error(503, QStringLiteral("%1 requests in progress (limit %2), try again later")
                                 .arg(m_inProgress - 1)
                                 .arg(m_options.httpMaxRequests)));
        return true;
    }
    const QUrl url = request.url();
    if (url.toEncoded().size() > MaxUrlBytes) {
        finish(t, error(414, QStringLiteral("the URL is longer than %1 bytes").arg(MaxUrlBytes)));
        return true;
    }
    const QUrlQuery query(url);
    const QString format = query.queryItemValue(QStringLiteral("format"), QUrl::FullyDecoded);
    if (!format.isEmpty() && format != QLatin1String("json") && format != QLatin1String("xml")) {
        finish(t, error(400, QStringLiteral("unknown format '%1' (xml or json)").arg(format.left(100))));
        return true;
    }
    t.json = format == QLatin1String("json") ||
             (format.isEmpty() && header(request, "accept").contains("application/json"));
    const QString path = url.path(QUrl::FullyDecoded);
    const QStringList segments = path.split(QLatin1Char('/')).mid(1);
    if (!authorized(request, segments)) {
        Answer a =
            error(401, QStringLiteral("this web IS needs a token: send 'Authorization: Bearer <token>' "
                                      "(the content of the server's --http-token-file)"));
        a.headers.append(
            qMakePair(QByteArray("WWW-Authenticate"), QByteArray("Bearer realm=\"dialog-isserver\"")));
        finish(t, a);
        return true;
    }
    route(t, request, segments);
    return true;
}

bool WebServer::authorized(const QHttpServerRequest &request, const QStringList &segments) const
{
    const QByteArray &token = m_options.httpToken;
    if (token.isEmpty())
        return true;
    // The page's own files hold no data: they load without the token, and the page then asks for it.
    const bool page = segments.size() == 1 && segments.first() != QLatin1String("metrics");
    if (page)
        return true;
    return WebTcpServer::bearerMatches(header(request, "authorization"), token);
}

void WebServer::route(const Target &t, const QHttpServerRequest &request, const QStringList &seg)
{
    const QUrlQuery query(request.url());
    if (seg.size() == 1 && seg.first() == QLatin1String("metrics"))
        return serveMetrics(t);
    if (seg.isEmpty() || seg.first() != QLatin1String("is")) {
        // The web page: "/" and single file names.
        if (seg.size() == 1)
            return serveFile(t, seg.first().isEmpty() ? QStringLiteral("index.html") : seg.first());
        return finish(t, error(404, QStringLiteral("no such resource (the IS is under /is)")));
    }
    if (seg.size() == 1 || (seg.size() == 2 && seg.at(1).isEmpty()))
        return serveServers(t);
    const QString server = seg.at(1);
    if (server == QLatin1String("types")) {
        if (seg.size() == 2 || (seg.size() == 3 && seg.at(2).isEmpty()))
            return serveTypes(t, {});
        if (seg.size() == 3)
            return serveTypes(t, seg.at(2));
        return finish(t, error(404, QStringLiteral("no such resource (/is/types or /is/types/<Type>)")));
    }
    if (server == QLatin1String("ws") && seg.size() == 2)
        return finish(
            t, error(400, QStringLiteral("/is/ws is a WebSocket endpoint: connect with a WebSocket client")));
    if (server.isEmpty() || server.contains(QLatin1Char('.')))
        return finish(t, error(400, QStringLiteral("invalid server name '%1'").arg(server.left(100))));
    if (seg.size() == 2 || (seg.size() == 3 && seg.at(2).isEmpty()))
        return serveList(t, server, query);
    if (seg.size() > 3 && seg.last() == QLatin1String("history"))
        return serveHistory(t, server, seg.mid(2, seg.size() - 3).join(QLatin1Char('/')), query);
    // The object name is everything after the server (it may hold '/').
    return serveObject(t, server, seg.mid(2).join(QLatin1Char('/')), query);
}

void WebServer::serveServers(const Target &t)
{
    // The local server at once; the others through the Control Server and their statistics.
    struct State
    {
        QList<web::ServerInfo> servers;
        int waiting = 0;
        Target target;
    };
    auto st = std::make_shared<State>();
    st->target = t;
    const QString local = m_options.name;
    st->servers.append(web::ServerInfo{local, qint64(m_repository.size()), true, {}});
    auto done = [this, st] {
        std::sort(st->servers.begin(), st->servers.end(),
                  [](const web::ServerInfo &a, const web::ServerInfo &b) { return a.name < b.name; });
        finish(st->target, ok(st->target, web::serversXml(st->servers), web::serversJson(st->servers)));
    };
    m_dictionary->servers([this, st, local, done](const is::Status &s, const QStringList &names) {
        if (!s.isOk()) {
            st->servers.first().error = QStringLiteral("the other servers are unknown: %1").arg(s.toString());
            return done();
        }
        for (const QString &name : names) {
            if (name == local)
                continue;
            const int index = int(st->servers.size());
            st->servers.append(web::ServerInfo{name, -1, false, {}});
            ++st->waiting;
            m_dictionary->statistics(name, [st, index, done](const is::Status &s, const is::Entry &e) {
                web::ServerInfo &info = st->servers[index];
                bool ok = false;
                const quint64 n = s.isOk() ? e.object.get<quint64>(QStringLiteral("objects"), &ok) : 0;
                if (ok)
                    info.objects = qint64(n);
                else
                    info.error =
                        s.isOk() ? QStringLiteral("no object count in its statistics") : s.toString();
                if (--st->waiting == 0)
                    done();
            });
        }
        if (st->waiting == 0)
            done();
    });
}

bool WebServer::criteriaFromQuery(const QUrlQuery &query, is::Criteria *out, QString *why, int *status) const
{
    const QString regex = query.queryItemValue(QStringLiteral("regex"), QUrl::FullyDecoded);
    const QString type = query.queryItemValue(QStringLiteral("type"), QUrl::FullyDecoded);
    const QString sub = query.queryItemValue(QStringLiteral("subtypes"), QUrl::FullyDecoded).toLower();
    if (!sub.isEmpty() && sub != QLatin1String("0") && sub != QLatin1String("1") &&
        sub != QLatin1String("true") && sub != QLatin1String("false")) {
        *status = 400;
        *why = QStringLiteral("subtypes must be 1 or 0");
        return false;
    }
    const bool subtypes = sub == QLatin1String("1") || sub == QLatin1String("true");
    if (subtypes && type.isEmpty()) {
        *status = 400;
        *why = QStringLiteral("subtypes=1 needs type=");
        return false;
    }
    *out = is::Criteria(regex, type,
                        type.isEmpty() ? is::Criteria::TypeSelector::Any
                        : subtypes     ? is::Criteria::TypeSelector::WithSubtypes
                                       : is::Criteria::TypeSelector::Exactly);
    if (!out->isValid()) {
        *status = 400;
        *why = QStringLiteral("bad regular expression: %1").arg(out->errorString());
        return false;
    }
    return true;
}

void WebServer::serveList(const Target &t, const QString &server, const QUrlQuery &query)
{
    is::Criteria criteria;
    QString why;
    int status = 400;
    if (!criteriaFromQuery(query, &criteria, &why, &status))
        return finish(t, error(status, why));
    if (server == m_options.name) {
        if (!criteria.type().isEmpty() && !m_types.contains(criteria.type()))
            return finish(t, error(404, QStringLiteral("unknown type '%1'").arg(criteria.type().left(100))));
        const QList<is::ObjectInfo> list = m_repository.list(criteria);
        return finish(t, ok(t, web::listXml(server, list), web::listJson(server, list)));
    }
    m_dictionary->list(
        server, criteria,
        [this, t, server](const is::Status &s, const QList<is::Entry> &entries) {
            if (!s.isOk())
                return finish(t, error(httpStatus(s), s.toString()));
            QList<is::ObjectInfo> list;
            list.reserve(entries.size());
            for (const is::Entry &e : entries) {
                QString srv, obj;
                is::Dictionary::splitName(e.name, &srv, &obj);
                list.append(is::ObjectInfo{obj, e.typeName, e.time, e.updateCount});
            }
            finish(t, ok(t, web::listXml(server, list), web::listJson(server, list)));
        },
        false);
}

void WebServer::serveObject(const Target &t, const QString &server, const QString &name,
                            const QUrlQuery &query)
{
    QString srv, obj;
    if (!is::Dictionary::splitName(name, &srv, &obj) || srv != server)
        return finish(t, error(400, QStringLiteral("the object must be named '%1.<Object>' (got '%2')")
                                        .arg(server, name.left(200))));
    const QString as = query.queryItemValue(QStringLiteral("as"), QUrl::FullyDecoded);
    if (server == m_options.name) {
        is::Object value;
        is::ObjectInfo info;
        QString why;
        // By its full name: an object name holding dots would be read as another server's.
        switch (m_repository.get(name, &value, as, &why, &info)) {
        case is::Repository::Result::Ok:
            break;
        case is::Repository::Result::NotFound:
            return finish(t, error(404, QStringLiteral("no object %1").arg(name.left(200))));
        case is::Repository::Result::UnknownType:
            return finish(t, error(404, QStringLiteral("unknown type '%1'").arg(as.left(100))));
        default:
            return finish(t, error(400, why));
        }
        const web::ObjectValue v{name,      info.typeName,
                                 info.time, info.updateCount,
                                 value,     m_writers.staleness(obj, info.typeName, info.time)};
        return finish(t, ok(t, web::objectXml(v), web::objectJson(v)));
    }
    m_dictionary->get(
        name,
        [this, t](const is::Status &s, const is::Entry &e) {
            if (!s.isOk())
                return finish(t, error(httpStatus(s), s.toString()));
            const web::ObjectValue v{e.name, e.typeName, e.time, e.updateCount, e.object, e.staleness};
            finish(t, ok(t, web::objectXml(v), web::objectJson(v)));
        },
        as);
}

void WebServer::serveTypes(const Target &t, const QString &type)
{
    const is::TypeRegistry &types = m_types;
    if (!type.isEmpty()) {
        const is::TypeInfo info = types.type(type);
        if (!info.isValid())
            return finish(t, error(404, QStringLiteral("unknown type '%1'").arg(type.left(100))));
        return finish(t, ok(t, web::typeXml(info), web::typeJson(info, types.subtypesOf(type))));
    }
    QList<is::TypeInfo> all;
    QJsonArray array;
    for (const QString &name : types.typeNames()) {
        all.append(types.type(name));
        array.append(web::typeJson(all.last(), types.subtypesOf(name)));
    }
    finish(t, ok(t, web::typesXml(all), QJsonObject{{QStringLiteral("types"), array}}));
}

void WebServer::serveFile(const Target &t, const QString &file)
{
    static const QRegularExpression safe(QStringLiteral("^[A-Za-z0-9_-][A-Za-z0-9_.-]{0,100}$"));
    if (!safe.match(file).hasMatch())
        return finish(t, error(404, QStringLiteral("no such file")));
    const QString root = m_options.webRoot.isEmpty() ? QStringLiteral(":/web") : m_options.webRoot;
    QFile f(root + QLatin1Char('/') + file);
    if (!f.open(QIODevice::ReadOnly))
        return finish(t, error(404, QStringLiteral("no such file: %1").arg(file)));
    Answer a;
    a.contentType = contentTypeOf(file);
    a.body = f.readAll();
    finish(t, a);
}

// History (the IS server's ring and, further back, its archiver), JSON only: what a chart needs.
void WebServer::serveHistory(const Target &t, const QString &server, const QString &name,
                             const QUrlQuery &query)
{
    QString srv, obj;
    if (!is::Dictionary::splitName(name, &srv, &obj) || srv != server)
        return finish(t, error(400, QStringLiteral("the object must be named '%1.<Object>' (got '%2')")
                                        .arg(server, name.left(200))));
    const QString sinceText = query.queryItemValue(QStringLiteral("since"), QUrl::FullyDecoded);
    const qint64 since = sinceText.isEmpty() ? qint64(600) * 1000000 : is::parseDurationUs(sinceText);
    if (since < 0)
        return finish(
            t,
            error(400, QStringLiteral("invalid since '%1' (e.g. 90s, 10m, 2h, 7d)").arg(sinceText.left(50))));
    const QString pointsText = query.queryItemValue(QStringLiteral("points"), QUrl::FullyDecoded);
    bool okPoints = true;
    const int points = pointsText.isEmpty() ? 1000 : pointsText.toInt(&okPoints);
    if (!okPoints || points < 0 || points > 100000)
        return finish(
            t,
            error(400,
                  QStringLiteral("invalid points '%1' (0..100000; 0: every one)").arg(pointsText.left(50))));
    const QString attr = query.queryItemValue(QStringLiteral("attr"), QUrl::FullyDecoded);
    const is::Time now = is::Time::currentTime();
    m_dictionary->history(
        name, is::Time(now.microsecondsSinceEpoch() - since), now, points,
        [this, t, name](const is::Status &s, const is::History &h) {
            if (!s.isOk())
                return finish(t, error(httpStatus(s), s.toString()));
            QJsonArray series;
            for (const is::HistorySeries &hs : h.series) {
                // [ms, value] for a value; [ms, mean, min, max, count] for a bucket of several.
                QJsonArray pts;
                for (const is::HistoryPoint &p : hs.points) {
                    QJsonArray pt{double(p.time.microsecondsSinceEpoch() / 1000), p.value};
                    if (p.count != 1) {
                        pt.append(p.min);
                        pt.append(p.max);
                        pt.append(qint64(p.count));
                    }
                    pts.append(pt);
                }
                series.append(QJsonObject{{QStringLiteral("attribute"), hs.attribute},
                                          {QStringLiteral("points"), pts}});
            }
            Target jt = t;
            jt.json = true;
            finish(jt,
                   ok(jt, {},
                      QJsonObject{{QStringLiteral("name"), name},
                                  {QStringLiteral("type"), h.typeName},
                                  {QStringLiteral("oldest"),
                                   h.oldest == is::Time() ? QJsonValue() : QJsonValue(h.oldest.toString())},
                                  {QStringLiteral("series"), series}}));
        },
        attr);
}

void WebServer::serveMetrics(const Target &t)
{
    Answer a;
    a.contentType = MetricsExporter::contentType();
    a.body = m_metrics->render();
    finish(t, a);
}

} // namespace dialog::isd
