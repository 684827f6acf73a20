#include "webroutes.h"

#include "metrics.h"
#include "scanbudget.h"
#include "webformat.h"
#include "webrender.h"
#include "writertracker.h"

#include "dialog/handoff.h"
#include "dialog/is/dictionary.h"
#include "dialog/is/codec.h"
#include "dialog/is/history.h"
#include "dialog/is/repository.h"
#include "dialog/is/typeregistry.h"

#include <QCoreApplication>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QLocale>
#include <QRegularExpression>
#include <QTcpSocket>
#include <QUrl>
#include <QUrlQuery>
#include <optional>

namespace dialog::isd {

namespace {

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

/// The object part of @p name ("S.O" gives "O") when @p name is an object of @p server.
std::optional<QString> objectOf(const QString &server, const QString &name)
{
    QString srv, obj;
    if (!is::Dictionary::splitName(name, &srv, &obj) || srv != server)
        return std::nullopt;
    return obj;
}

/// The answer to a path whose object is not one of @p server's (objectOf() gave none).
WebAnswer badObjectName(const QString &server, const QString &name)
{
    return WebAnswer::error(
        400, QStringLiteral("the object must be named '%1.<Object>' (got '%2')").arg(server, name.left(200)));
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

constexpr int PngMinSide = 16;
constexpr int PngMaxSide = 2048;
constexpr int PngCacheBytes = 16 * 1024 * 1024;

/// An HTTP date (RFC 9110, IMF-fixdate) of @p time, to the second.
QByteArray httpDate(const QDateTime &time)
{
    return QLocale::c().toString(time.toUTC(), QStringLiteral("ddd, dd MMM yyyy hh:mm:ss 'GMT'")).toLatin1();
}

/// The time of an HTTP date in IMF-fixdate; invalid when it is not one.
QDateTime fromHttpDate(const QByteArray &text)
{
    QDateTime t = QLocale::c().toDateTime(QString::fromLatin1(text.trimmed()),
                                          QStringLiteral("ddd, dd MMM yyyy hh:mm:ss 'GMT'"));
    t.setTimeSpec(Qt::UTC); // the fields were read as they are: they are UTC
    return t;
}

/// True when @p ifNoneMatch (a list of entity tags, or "*") names @p etag (weak comparison).
bool etagMatches(const QByteArray &ifNoneMatch, const QByteArray &etag)
{
    for (QByteArray tag : ifNoneMatch.split(',')) {
        tag = tag.trimmed();
        if (tag == "*")
            return true;
        if (tag.startsWith("W/"))
            tag = tag.mid(2);
        if (tag == etag)
            return true;
    }
    return false;
}

/// A side of the PNG from @p query's @p key (@p fallback without it); -1 with @p why when bad.
int pngSide(const QUrlQuery &query, const QString &key, int fallback, QString *why)
{
    const QString text = query.queryItemValue(key, QUrl::FullyDecoded);
    if (text.isEmpty())
        return fallback;
    bool ok = false;
    const int v = text.toInt(&ok);
    if (!ok || v < PngMinSide || v > PngMaxSide) {
        *why = QStringLiteral("%1 must be %2 to %3 pixels (got '%4')")
                   .arg(key)
                   .arg(PngMinSide)
                   .arg(PngMaxSide)
                   .arg(text.left(20));
        return -1;
    }
    return v;
}

/// A flag of @p query (0/1/true/false, absent: false); false with @p why when bad.
bool pngFlag(const QUrlQuery &query, const QString &key, bool *out, QString *why)
{
    const QString v = query.queryItemValue(key, QUrl::FullyDecoded).toLower();
    if (v.isEmpty() || v == QLatin1String("0") || v == QLatin1String("false")) {
        *out = false;
        return true;
    }
    if (v == QLatin1String("1") || v == QLatin1String("true")) {
        *out = true;
        return true;
    }
    *why = QStringLiteral("%1 must be 1 or 0").arg(key);
    return false;
}

} // namespace

WebRoutes::WebRoutes(const ServerOptions &options, is::Repository &repository, const is::TypeRegistry &types,
                     const WriterTracker &writers, is::Dictionary &dictionary, MetricsExporter &metrics,
                     WebPipeline &pipeline)
    : m_options(options), m_repository(repository), m_types(types), m_writers(writers),
      m_dictionary(dictionary), m_metrics(metrics), m_pipeline(pipeline), m_pngs(PngCacheBytes)
{
    m_scans.setMaxThreadCount(2);
    const QString renderer = options.httpRenderer.isEmpty()
                                 ? QCoreApplication::applicationDirPath() + QStringLiteral("/dialog-render")
                                 : options.httpRenderer;
    m_renderer = std::make_unique<WebRenderer>(renderer);
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
    if (seg.size() > 3 && seg.last() == QLatin1String("history"))
        return serveHistory(t, server, seg.mid(2, seg.size() - 3).join(QLatin1Char('/')), query);
    // The object name is everything after the server (it may hold '/').
    if (seg.last().endsWith(QLatin1String(".png"))) {
        QString name = seg.mid(2).join(QLatin1Char('/'));
        name.chop(4);
        return servePng(t, server, name, query);
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
                return finish(t, WebAnswer::error(httpStatus(s), s.toString()));
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
    const std::optional<QString> obj = objectOf(server, name);
    if (!obj)
        return finish(t, badObjectName(server, name));
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
                return finish(t, WebAnswer::error(httpStatus(s), s.toString()));
            const web::ObjectValue v{e.name, e.typeName, e.time, e.updateCount, e.object, e.staleness};
            finish(t, WebPipeline::ok(t, web::objectXml(v), web::objectJson(v)));
        },
        as);
}

void WebRoutes::readPngPart(const QString &name, std::function<void(const PngPart *, const WebAnswer &)> done)
{
    QString server, object;
    is::Dictionary::splitName(name, &server, &object);
    if (server == m_options.name) {
        is::Object value;
        is::ObjectInfo info;
        const Status read = m_repository.get(name, &value, {}, &info);
        if (read.code() == Status::Code::NotFound)
            return done(nullptr, WebAnswer::error(404, QStringLiteral("no object %1").arg(name.left(200))));
        if (!read.isOk())
            return done(nullptr, WebAnswer::error(400, read.message()));
        const PngPart part{name, info.typeName, info.time, info.updateCount, is::toJson(value)};
        return done(&part, {});
    }
    m_dictionary.get(name, [done = std::move(done)](const is::Status &s, const is::Entry &e) {
        if (!s.isOk())
            return done(nullptr, WebAnswer::error(httpStatus(s), s.toString()));
        const PngPart part{e.name, e.typeName, e.time, e.updateCount, is::toJson(e.object)};
        done(&part, {});
    });
}

void WebRoutes::servePng(const Target &t, const QString &server, const QString &name, const QUrlQuery &query)
{
    if (!objectOf(server, name))
        return finish(t, badObjectName(server, name));
    // ?check=Server.Object: a data-quality result (DQResult: status, value, details) whose colour
    // frames the picture, as in the histogram presenter.
    const QString check = query.queryItemValue(QStringLiteral("check"), QUrl::FullyDecoded);
    QString checkServer, checkObject;
    if (!check.isEmpty() && !is::Dictionary::splitName(check, &checkServer, &checkObject))
        return finish(t, WebAnswer::error(400, QStringLiteral("check must name an IS object as Server.Object (got '%1')")
                                                   .arg(check.left(200))));
    readPngPart(name, [this, t, query, check](const PngPart *histogram, const WebAnswer &failed) {
        if (!histogram)
            return finish(t, failed);
        if (check.isEmpty())
            return answerPng(t, *histogram, nullptr, query);
        readPngPart(check, [this, t, query, h = *histogram](const PngPart *result, const WebAnswer &failed) {
            if (!result)
                return finish(t, failed);
            answerPng(t, h, result, query);
        });
    });
}

void WebRoutes::answerPng(const Target &t, const PngPart &histogram, const PngPart *check, const QUrlQuery &query)
{
    const QString &name = histogram.name, &type = histogram.type;
    const is::Time &time = histogram.time;
    static const QString h1 = QStringLiteral("Histogram1D"), h2 = QStringLiteral("Histogram2D");
    const QString drawnAs = type == h1 || m_types.isSameOrDerived(type, h1)   ? h1
                            : type == h2 || m_types.isSameOrDerived(type, h2) ? h2
                                                                              : QString();
    if (drawnAs.isEmpty())
        return finish(t, WebAnswer::error(400, QStringLiteral("%1 is a %2: only histograms (Histogram1D, "
                                                              "Histogram2D and their subtypes) are drawn")
                                                   .arg(name.left(200), type.left(100))));
    QString why;
    RenderRequest r;
    r.name = name;
    r.type = drawnAs;
    r.value = histogram.value;
    if (check)
        r.check = check->value;
    r.width = pngSide(query, QStringLiteral("width"), 480, &why);
    r.height = r.width < 0 ? -1 : pngSide(query, QStringLiteral("height"), 320, &why);
    if (r.width < 0 || r.height < 0 || !pngFlag(query, QStringLiteral("logy"), &r.logY, &why) ||
        !pngFlag(query, QStringLiteral("logz"), &r.logZ, &why))
        return finish(t, WebAnswer::error(400, why));

    // One picture per update of the object and per drawing: its tag says which.
    const auto version = [](const PngPart &p) {
        return QByteArray::number(p.updates) + '-' + QByteArray::number(p.time.microsecondsSinceEpoch(), 36);
    };
    const QByteArray etag = '"' + version(histogram) + (check ? "-c" + version(*check) : QByteArray()) + '-' +
                            QByteArray::number(r.width) + 'x' + QByteArray::number(r.height) +
                            (r.logY ? "-ly" : "") + (r.logZ ? "-lz" : "") + '"';
    // The picture changes with either object: the later of their times.
    const is::Time changed = check && time < check->time ? check->time : time;
    const QByteArray lastModified = httpDate(changed.toDateTime());
    const auto withTags = [&](WebAnswer a) {
        a.headers.append(qMakePair(QByteArray("ETag"), etag));
        a.headers.append(qMakePair(QByteArray("Last-Modified"), lastModified));
        return a;
    };
    bool unchanged = false;
    if (!t.ifNoneMatch.isEmpty()) {
        unchanged = etagMatches(t.ifNoneMatch, etag);
    } else if (!t.ifModifiedSince.isEmpty()) {
        const QDateTime since = fromHttpDate(t.ifModifiedSince);
        // HTTP dates have whole seconds: the object is unchanged when its second is not later.
        unchanged = since.isValid() && changed.toDateTime().toSecsSinceEpoch() <= since.toSecsSinceEpoch();
    }
    if (unchanged) {
        WebAnswer a;
        a.status = 304;
        return finish(t, withTags(a));
    }
    const QByteArray key = name.toUtf8() + ' ' + (check ? check->name.toUtf8() : QByteArray()) + ' ' + etag;
    if (const QByteArray *cached = m_pngs.object(key)) {
        WebAnswer a;
        a.contentType = "image/png";
        a.body = *cached;
        return finish(t, withTags(a));
    }
    m_renderer->render(r, [this, t, key, tagged = withTags(WebAnswer())](const RenderResult &result) {
        if (result.status != 200)
            return finish(t, WebAnswer::error(result.status, result.error));
        m_pngs.insert(key, new QByteArray(result.png), int(qMin<qsizetype>(result.png.size(), PngCacheBytes)));
        WebAnswer a = tagged;
        a.contentType = "image/png";
        a.body = result.png;
        finish(t, a);
    });
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
    const std::optional<QString> obj = objectOf(server, name);
    if (!obj)
        return finish(t, badObjectName(server, name));
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
                return finish(t, WebAnswer::error(httpStatus(s), s.toString()));
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
