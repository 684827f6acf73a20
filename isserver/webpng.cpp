#include "webpng.h"

#include "webformat.h"
#include "webpaths.h"
#include "webrender.h"

#include "dialog/is/codec.h"
#include "dialog/is/dictionary.h"
#include "dialog/is/history.h"
#include "dialog/is/repository.h"
#include "dialog/is/typeregistry.h"

#include <QCoreApplication>
#include <QJsonArray>
#include <QJsonDocument>
#include <QLocale>
#include <QUrl>
#include <QUrlQuery>

namespace dialog::isd {

namespace {

constexpr int PngMinSide = 16;
constexpr int PngMaxSide = 2048;
constexpr int PngCacheBytes = 16 * 1024 * 1024;
constexpr qint64 DefaultSeriesSpanUs = qint64(600) * 1000000;

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

WebPng::WebPng(const ServerOptions &options, is::Repository &repository, const is::TypeRegistry &types,
               is::Dictionary &dictionary, WebPipeline &pipeline)
    : m_options(options), m_repository(repository), m_types(types), m_dictionary(dictionary),
      m_pipeline(pipeline), m_pngs(PngCacheBytes)
{
    const QString renderer = options.httpRenderer.isEmpty()
                                 ? QCoreApplication::applicationDirPath() + QStringLiteral("/dialog-render")
                                 : options.httpRenderer;
    m_renderer = std::make_unique<WebRenderer>(renderer);
}

WebPng::~WebPng() = default;

void WebPng::readPart(const QString &name, std::function<void(const Part *, const WebAnswer &)> done)
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
        const Part part{name, info.typeName, info.time, info.updateCount, is::toJson(value)};
        return done(&part, {});
    }
    m_dictionary.get(name, [done = std::move(done)](const is::Status &s, const is::Entry &e) {
        if (!s.isOk())
            return done(nullptr, WebAnswer::error(web::httpStatus(s), s.toString()));
        const Part part{e.name, e.typeName, e.time, e.updateCount, is::toJson(e.object)};
        done(&part, {});
    });
}

void WebPng::serveHistogram(const Target &t, const QString &server, const QString &name,
                            const QUrlQuery &query)
{
    if (!web::objectOf(server, name))
        return finish(t, web::badObjectName(server, name));
    // ?check=Server.Object: a data-quality result (DQResult: status, value, details) whose colour
    // frames the picture, as in the histogram presenter.
    const QString check = query.queryItemValue(QStringLiteral("check"), QUrl::FullyDecoded);
    QString checkServer, checkObject;
    if (!check.isEmpty() && !is::Dictionary::splitName(check, &checkServer, &checkObject))
        return finish(t, WebAnswer::error(
                             400, QStringLiteral("check must name an IS object as Server.Object (got '%1')")
                                      .arg(check.left(200))));
    readPart(name, [this, t, query, check](const Part *histogram, const WebAnswer &failed) {
        if (!histogram)
            return finish(t, failed);
        if (check.isEmpty())
            return answerHistogram(t, *histogram, nullptr, query);
        readPart(check, [this, t, query, h = *histogram](const Part *result, const WebAnswer &failed) {
            if (!result)
                return finish(t, failed);
            answerHistogram(t, h, result, query);
        });
    });
}

void WebPng::answerHistogram(const Target &t, const Part &histogram, const Part *check,
                             const QUrlQuery &query)
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
    const auto version = [](const Part &p) {
        return QByteArray::number(p.updates) + '-' + QByteArray::number(p.time.microsecondsSinceEpoch(), 36);
    };
    const QByteArray etag = '"' + version(histogram) + (check ? "-c" + version(*check) : QByteArray()) + '-' +
                            QByteArray::number(r.width) + 'x' + QByteArray::number(r.height) +
                            (r.logY ? "-ly" : "") + (r.logZ ? "-lz" : "") + '"';
    // The picture changes with either object: the later of their times.
    const is::Time changed = check && time < check->time ? check->time : time;
    const QByteArray key = name.toUtf8() + ' ' + (check ? check->name.toUtf8() : QByteArray()) + ' ' + etag;
    answerDrawn(t, r, etag, changed, key);
}

void WebPng::serveSeries(const Target &t, const QString &server, const QString &name, const QUrlQuery &query)
{
    if (!web::objectOf(server, name))
        return finish(t, web::badObjectName(server, name));
    const QString attr = query.queryItemValue(QStringLiteral("attr"), QUrl::FullyDecoded);
    if (attr.isEmpty())
        return finish(t,
                      WebAnswer::error(400, QStringLiteral("attr= must name the numeric attribute to draw")));
    const QString sinceText = query.queryItemValue(QStringLiteral("since"), QUrl::FullyDecoded);
    const qint64 spanUs = sinceText.isEmpty() ? DefaultSeriesSpanUs : is::parseDurationUs(sinceText);
    if (spanUs < 1000)
        return finish(
            t,
            WebAnswer::error(
                400, QStringLiteral("invalid since '%1' (e.g. 90s, 10m, 2h, 7d)").arg(sinceText.left(50))));
    QString why;
    RenderRequest r;
    r.name = name;
    r.type = QStringLiteral("TimeSeries");
    r.width = pngSide(query, QStringLiteral("width"), 480, &why);
    r.height = r.width < 0 ? -1 : pngSide(query, QStringLiteral("height"), 320, &why);
    if (r.width < 0 || r.height < 0)
        return finish(t, WebAnswer::error(400, why));
    const is::Time now = is::Time::currentTime();
    // One bucket (mean, min, max) per pixel column at most: the picture shows no more.
    m_dictionary.history(
        name, is::Time(now.microsecondsSinceEpoch() - spanUs), now, r.width,
        [this, t, name, attr, spanUs, sinceText, r](const is::Status &s, const is::History &h) mutable {
            if (!s.isOk())
                return finish(t, WebAnswer::error(web::httpStatus(s), s.toString()));
            const is::HistorySeries *series = nullptr;
            for (const is::HistorySeries &hs : h.series)
                if (hs.attribute == attr)
                    series = &hs;
            if (!series)
                return finish(
                    t, WebAnswer::error(404, QStringLiteral("%1 has no numeric attribute '%2' in its history")
                                                 .arg(name.left(200), attr.left(100))));
            if (series->points.isEmpty())
                return finish(t, WebAnswer::error(
                                     404, QStringLiteral("no value of %1 of %2 in the last %3")
                                              .arg(attr.left(100), name.left(200),
                                                   sinceText.isEmpty() ? QStringLiteral("10m") : sinceText)));
            // The window ends at the newest value: the same values give the same picture.
            const is::Time newest = series->points.last().time;
            const QJsonArray points = web::historyPointsJson(*series);
            r.value = QJsonObject{{QStringLiteral("label"), QStringLiteral("%1 %2").arg(name, attr)},
                                  {QStringLiteral("end_ms"), double(newest.microsecondsSinceEpoch() / 1000)},
                                  {QStringLiteral("span_ms"), double(spanUs / 1000)},
                                  {QStringLiteral("points"), points}};
            const QByteArray drawn = QJsonDocument(r.value).toJson(QJsonDocument::Compact);
            const QByteArray etag = "\"s-" + QByteArray::number(qHash(drawn), 36) + '-' +
                                    QByteArray::number(points.size()) + '-' + QByteArray::number(r.width) +
                                    'x' + QByteArray::number(r.height) + '"';
            answerDrawn(t, r, etag, newest, name.toUtf8() + " history " + attr.toUtf8() + ' ' + etag);
        },
        attr);
}

void WebPng::answerDrawn(const Target &t, const RenderRequest &r, const QByteArray &etag,
                         const is::Time &changed, const QByteArray &key)
{
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
    if (const QByteArray *cached = m_pngs.object(key)) {
        WebAnswer a;
        a.contentType = "image/png";
        a.body = *cached;
        return finish(t, withTags(a));
    }
    m_renderer->render(r, [this, t, key, tagged = withTags(WebAnswer())](const RenderResult &result) {
        if (result.status != 200)
            return finish(t, WebAnswer::error(result.status, result.error));
        m_pngs.insert(key, new QByteArray(result.png),
                      int(qMin<qsizetype>(result.png.size(), PngCacheBytes)));
        WebAnswer a = tagged;
        a.contentType = "image/png";
        a.body = result.png;
        finish(t, a);
    });
}

} // namespace dialog::isd
