// Web IS: the pictures drawn by dialog-render (WebRenderer), tagged for HTTP caches —
// /is/<Server>/<Server.Object>.png, a histogram, and /is/<Server>/<Server.Object>/history.png, the
// time series of one of its numeric attributes.
#pragma once

#include "serveroptions.h"
#include "webpipeline.h"

#include "dialog/is/time.h"

#include <QCache>
#include <QJsonObject>
#include <QString>
#include <functional>
#include <memory>

class QUrlQuery;

namespace dialog::is {
class Dictionary;
class Repository;
class TypeRegistry;
} // namespace dialog::is

namespace dialog::isd {

class WebRenderer;
struct RenderRequest;

/// Answers the PNG routes: histograms and time series. The local server's objects come from its repository,
/// the others' through the dictionary, asynchronously. Each answer carries an ETag (the object's update and
/// the drawing's parameters) and Last-Modified (the object's time); a conditional GET of the same update gets
/// 304 without drawing; drawn pictures are kept in a cache bounded in bytes. Lives in the web server's
/// thread.
class WebPng
{
public:
    /// Every reference must outlive this object.
    WebPng(const ServerOptions &options, is::Repository &repository, const is::TypeRegistry &types,
           is::Dictionary &dictionary, WebPipeline &pipeline);
    ~WebPng();

    /// /is/<Server>/<Server.Object>.png?width=&height=&logy=&logz=&check=: the histogram, framed in
    /// the colour of the check's result (a DQResult) when check= names one.
    void serveHistogram(const WebPipeline::Target &target, const QString &server, const QString &name,
                        const QUrlQuery &query);

    /// /is/<Server>/<Server.Object>/history.png?attr=&since=&width=&height=: the history of the
    /// numeric attribute attr over the last since (10m), drawn as a time series whose window ends at
    /// the newest value; the tag is that of the values drawn.
    void serveSeries(const WebPipeline::Target &target, const QString &server, const QString &name,
                     const QUrlQuery &query);

private:
    using Target = WebPipeline::Target;
    /// One object read for a picture.
    struct Part
    {
        QString name;
        QString type;
        is::Time time;
        quint64 updates = 0;
        QJsonObject value;
    };
    void finish(const Target &t, const WebAnswer &a) { m_pipeline.finish(t, a); }
    /// Reads @p name from the repository when it is this server's, else through the dictionary;
    /// @p done gets it, or the HTTP answer of the failure.
    void readPart(const QString &name, std::function<void(const Part *, const WebAnswer &)> done);
    void answerHistogram(const Target &t, const Part &histogram, const Part *check, const QUrlQuery &query);
    /// Answers @p t with the picture of @p request, tagged @p etag and @p changed: 304 when the
    /// conditional GET names it, else the cached picture of @p key, else the one drawn.
    void answerDrawn(const Target &t, const RenderRequest &request, const QByteArray &etag,
                     const is::Time &changed, const QByteArray &key);

    const ServerOptions &m_options;
    is::Repository &m_repository;
    const is::TypeRegistry &m_types;
    is::Dictionary &m_dictionary;
    WebPipeline &m_pipeline;
    std::unique_ptr<WebRenderer> m_renderer;
    QCache<QByteArray, QByteArray> m_pngs; // drawn PNGs by name and ETag, cost in bytes
};

} // namespace dialog::isd
