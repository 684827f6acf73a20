#include "webroutes.h"

#include "metrics.h"
#include "scanbudget.h"
#include "webformat.h"
#include "webpaths.h"
#include "webpng.h"
#include "writertracker.h"

#include "dialog/handoff.h"
#include "dialog/is/dictionary.h"
#include "dialog/is/history.h"
#include "dialog/is/repository.h"
#include "dialog/is/typeregistry.h"

#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QRegularExpression>
#include <QTcpSocket>
#include <QUrl>
#include <QUrlQuery>
#include <optional>

namespace dialog::isd {

namespace {

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

} // namespace

WebRoutes::WebRoutes(const ServerOptions &options, is::Repository &repository, const is::TypeRegistry &types,
                     const WriterTracker &writers, is::Dictionary &dictionary, MetricsExporter &metrics,
                     WebPipeline &pipeline)
    : m_options(options), m_repository(repository), m_types(types), m_writers(writers),
      m_dictionary(dictionary), m_metrics(metrics), m_pipeline(pipeline),
      m_png(std::make_unique<WebPng>(options, repository, types, dictionary, pipeline))
{
    m_scans.setMaxThreadCount(2);
}

WebRoutes::~WebRoutes()
{
    handoff::waitForDone(m_scans);
}

void WebRoutes::route(const Target &t, const QUrl &url, const QStringList &seg)
{
    const QUrlQuery query(url);
    if (seg.size() == 1 && seg.first() == QLatin1String("metrics"))
        return serveMetrics(t);
    if (seg.isEmpty() || seg.first() != QLatin1String("is")) {
        // The web page: "/" and single file names.
        if (seg.size() == 1)
            return serveFile(t, seg.first().isEmpty() ? QStringLiteral("index.html") : seg.first());
        return finish(t, WebAnswer::error(404, QStringLiteral("no such resource (the IS is under /is)")));
    }
    if (seg.size() == 1 || (seg.size() == 2 && seg.at(1).isEmpty()))
        return serveServers(t);
    const QString server = seg.at(1);
    if (server == QLatin1String("types")) {
        if (seg.size() == 2 || (seg.size() == 3 && seg.at(2).isEmpty()))
            return serveTypes(t, {});
        if (seg.size() == 3)
            return serveTypes(t, seg.at(2));
        return finish(
            t, WebAnswer::error(404, QStringLiteral("no such resource (/is/types or /is/types/<Type>)")));
    }
    if (server == QLatin1String("ws") && seg.size() == 2)
        return finish(
            t, WebAnswer::error(
                   400, QStringLiteral("/is/ws is a WebSocket endpoint: connect with a WebSocket client")));
    if (server.isEmpty() || server.contains(QLatin1Char('.')))
        return finish(
            t, WebAnswer::error(400, QStringLiteral("invalid server name '%1'").arg(server.left(100))));
    if (seg.size() == 2 || (seg.size() == 3 && seg.at(2).isEmpty()))
        return serveList(t, server, query);
    if (seg.size() > 3 && seg.last() == QLatin1String("history.png"))
        return m_png->serveSeries(t, server, seg.mid(2, seg.size() - 3).join(QLatin1Char('/')), query);
    if (seg.size() > 3 && seg.last() == QLatin1String("history"))
        return serveHistory(t, server, seg.mid(2, seg.size() - 3).join(QLatin1Char('/')), query);
    // The object name is everything after the server (it may hold '/').
    if (seg.last().endsWith(QLatin1String(".png"))) {
        QString name = seg.mid(2).join(QLatin1Char('/'));
        name.chop(4);
        return m_png->serveHistogram(t, server, name, query);
    }
    return serveObject(t, server, seg.mid(2).join(QLatin1Char('/')), query);
}

void WebRoutes::serveServers(const Target &t)
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
        finish(st->target,
               WebPipeline::ok(st->target, web::serversXml(st->servers), web::serversJson(st->servers)));
    };
    m_dictionary.servers([this, st, local, done](const is::Status &s, const QStringList &names) {
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
            m_dictionary.statistics(name, [st, index, done](const is::Status &s, const is::Entry &e) {
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

bool WebRoutes::criteriaFromQuery(const QUrlQuery &query, is::Criteria *out, QString *why, int *status) const
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

void WebRoutes::serveList(const Target &t, const QString &server, const QUrlQuery &query)
{
    is::Criteria criteria;
    QString why;
    int status = 400;
    if (!criteriaFromQuery(query, &criteria, &why, &status))
        return finish(t, WebAnswer::error(status, why));
    if (server == m_options.name) {
        if (!criteria.type().isEmpty() && !m_types.contains(criteria.type()))
            return finish(
                t, WebAnswer::error(404, QStringLiteral("unknown type '%1'").arg(criteria.type().left(100))));
        return scanLocal(t, server, criteria);
    }
    m_dictionary.list(
        server, criteria,
        [this, t, server](const is::Status &s, const QList<is::Entry> &entries) {
            if (!s.isOk())
                return finish(t, WebAnswer::error(web::httpStatus(s), s.toString()));
            QList<is::ObjectInfo> list;
            list.reserve(entries.size());
            for (const is::Entry &e : entries) {
                QString srv, obj;
                is::Dictionary::splitName(e.name, &srv, &obj);
                list.append(is::ObjectInfo{obj, e.typeName, e.time, e.updateCount});
            }
            finish(t, WebPipeline::ok(t, web::listXml(server, list), web::listJson(server, list)));
        },
        false);
}

void WebRoutes::scanLocal(const Target &t, const QString &server, const is::Criteria &criteria)
{
    // Off the main thread, on a snapshot: a costly pattern delays neither writes nor other
    // requests, and stops at the scan budget or when its client leaves.
    auto budget = std::make_shared<ScanBudget>(m_options.scanBudgetMs);
    if (t.socket)
        QObject::connect(t.socket.data(), &QTcpSocket::disconnected, &m_pipeline,
                         [budget] { budget->cancel(); });
    WebPipeline *pipeline = &m_pipeline;
    handoff::startIn(m_scans, [this, pipeline, t, server, criteria, budget] {
        bool complete = true;
        const QList<is::ObjectInfo> list = m_repository.list(criteria, budget->check(criteria), &complete);
        const WebAnswer a = !budget->refused(criteria, complete)
                                ? WebPipeline::ok(t, web::listXml(server, list), web::listJson(server, list))
                                : WebAnswer::error(400, budget->errorString());
        QMetaObject::invokeMethod(
            pipeline, [pipeline, t, a] { pipeline->finish(t, a); }, Qt::QueuedConnection);
    });
}

void WebRoutes::serveObject(const Target &t, const QString &server, const QString &name,
                            const QUrlQuery &query)
{
    const std::optional<QString> obj = web::objectOf(server, name);
    if (!obj)
        return finish(t, web::badObjectName(server, name));
    const QString as = query.queryItemValue(QStringLiteral("as"), QUrl::FullyDecoded);
    if (server == m_options.name) {
        is::Object value;
        is::ObjectInfo info;
        // By its full name: an object name holding dots would be read as another server's.
        const Status read = m_repository.get(name, &value, as, &info);
        switch (read.code()) {
        case Status::Code::Ok:
            break;
        case Status::Code::NotFound:
            return finish(t, WebAnswer::error(404, QStringLiteral("no object %1").arg(name.left(200))));
        case Status::Code::UnknownType:
            return finish(t, WebAnswer::error(404, QStringLiteral("unknown type '%1'").arg(as.left(100))));
        default:
            return finish(t, WebAnswer::error(400, read.message()));
        }
        const web::ObjectValue v{name,      info.typeName,
                                 info.time, info.updateCount,
                                 value,     m_writers.staleness(*obj, info.typeName, info.time)};
        return finish(t, WebPipeline::ok(t, web::objectXml(v), web::objectJson(v)));
    }
    m_dictionary.get(
        name,
        [this, t](const is::Status &s, const is::Entry &e) {
            if (!s.isOk())
                return finish(t, WebAnswer::error(web::httpStatus(s), s.toString()));
            const web::ObjectValue v{e.name, e.typeName, e.time, e.updateCount, e.object, e.staleness};
            finish(t, WebPipeline::ok(t, web::objectXml(v), web::objectJson(v)));
        },
        as);
}

void WebRoutes::serveTypes(const Target &t, const QString &type)
{
    const is::TypeRegistry &types = m_types;
    if (!type.isEmpty()) {
        const is::TypeInfo info = types.type(type);
        if (!info.isValid())
            return finish(t, WebAnswer::error(404, QStringLiteral("unknown type '%1'").arg(type.left(100))));
        return finish(t, WebPipeline::ok(t, web::typeXml(info), web::typeJson(info, types.subtypesOf(type))));
    }
    QList<is::TypeInfo> all;
    QJsonArray array;
    for (const QString &name : types.typeNames()) {
        all.append(types.type(name));
        array.append(web::typeJson(all.last(), types.subtypesOf(name)));
    }
    finish(t, WebPipeline::ok(t, web::typesXml(all), QJsonObject{{QStringLiteral("types"), array}}));
}

void WebRoutes::serveFile(const Target &t, const QString &file)
{
    static const QRegularExpression safe(QStringLiteral("^[A-Za-z0-9_-][A-Za-z0-9_.-]{0,100}$"));
    if (!safe.match(file).hasMatch())
        return finish(t, WebAnswer::error(404, QStringLiteral("no such file")));
    const QString root = m_options.webRoot.isEmpty() ? QStringLiteral(":/web") : m_options.webRoot;
    QFile f(root + QLatin1Char('/') + file);
    if (!f.open(QIODevice::ReadOnly))
        return finish(t, WebAnswer::error(404, QStringLiteral("no such file: %1").arg(file)));
    WebAnswer a;
    a.contentType = contentTypeOf(file);
    a.body = f.readAll();
    finish(t, a);
}

// History (the IS server's ring and, further back, its archiver), JSON only: what a chart needs.
void WebRoutes::serveHistory(const Target &t, const QString &server, const QString &name,
                             const QUrlQuery &query)
{
    const std::optional<QString> obj = web::objectOf(server, name);
    if (!obj)
        return finish(t, web::badObjectName(server, name));
    const QString sinceText = query.queryItemValue(QStringLiteral("since"), QUrl::FullyDecoded);
    const qint64 since = sinceText.isEmpty() ? qint64(600) * 1000000 : is::parseDurationUs(sinceText);
    if (since < 0)
        return finish(
            t,
            WebAnswer::error(
                400, QStringLiteral("invalid since '%1' (e.g. 90s, 10m, 2h, 7d)").arg(sinceText.left(50))));
    const QString pointsText = query.queryItemValue(QStringLiteral("points"), QUrl::FullyDecoded);
    bool okPoints = true;
    const int points = pointsText.isEmpty() ? 1000 : pointsText.toInt(&okPoints);
    if (!okPoints || points < 0 || points > 100000)
        return finish(t, WebAnswer::error(400, QStringLiteral("invalid points '%1' (0..100000; 0: every one)")
                                                   .arg(pointsText.left(50))));
    const QString attr = query.queryItemValue(QStringLiteral("attr"), QUrl::FullyDecoded);
    const is::Time now = is::Time::currentTime();
    m_dictionary.history(
        name, is::Time(now.microsecondsSinceEpoch() - since), now, points,
        [this, t, name](const is::Status &s, const is::History &h) {
            if (!s.isOk())
                return finish(t, WebAnswer::error(web::httpStatus(s), s.toString()));
            const QJsonArray series = web::historySeriesJson(h);
            Target jt = t;
            jt.json = true;
            finish(jt, WebPipeline::ok(jt, {},
                                       QJsonObject{{QStringLiteral("name"), name},
                                                   {QStringLiteral("type"), h.typeName},
                                                   {QStringLiteral("oldest"),
                                                    h.oldest == is::Time() ? QJsonValue()
                                                                           : QJsonValue(h.oldest.toString())},
                                                   {QStringLiteral("series"), series}}));
        },
        attr);
}

void WebRoutes::serveMetrics(const Target &t)
{
    WebAnswer a;
    a.contentType = MetricsExporter::contentType();
    a.body = m_metrics.render();
    finish(t, a);
}

} // namespace dialog::isd
