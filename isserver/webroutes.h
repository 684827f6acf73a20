// Web IS: the resources under /is, /metrics and the web page's files.
#pragma once

#include "serveroptions.h"
#include "webpipeline.h"

#include <QString>
#include <QStringList>
#include <QThreadPool>
#include <memory>

class QUrl;
class QUrlQuery;

namespace dialog::is {
class Criteria;
class Dictionary;
class Repository;
class TypeRegistry;
} // namespace dialog::is

namespace dialog::isd {

class MetricsExporter;
class WebPng;
class WriterTracker;

/// Answers one HTTP GET of the web IS (see WebServer for the resources). The local server's objects
/// come from its repository, the others' through @p dictionary, asynchronously. Every answer goes
/// through the pipeline. Lives in the web server's thread.
class WebRoutes
{
public:
    /// Every reference must outlive this object.
    WebRoutes(const ServerOptions &options, is::Repository &repository, const is::TypeRegistry &types,
              const WriterTracker &writers, is::Dictionary &dictionary, MetricsExporter &metrics,
              WebPipeline &pipeline);
    /// Waits for the scans in progress.
    ~WebRoutes();

    /// Answers the request for @p url, whose decoded path is @p segments (split at '/').
    void route(const WebPipeline::Target &target, const QUrl &url, const QStringList &segments);

private:
    using Target = WebPipeline::Target;
    void finish(const Target &t, const WebAnswer &a) { m_pipeline.finish(t, a); }
    void serveServers(const Target &target);
    void serveList(const Target &target, const QString &server, const QUrlQuery &query);
    /// Lists the local objects matching @p criteria in a scan thread, within the scan budget.
    void scanLocal(const Target &target, const QString &server, const is::Criteria &criteria);
    void serveObject(const Target &target, const QString &server, const QString &name,
                     const QUrlQuery &query);
    void serveTypes(const Target &target, const QString &type);
    /// /is/<Server>/<Server.Object>/history?attr=&since=&points= (JSON): Dictionary::history().
    void serveHistory(const Target &target, const QString &server, const QString &name,
                      const QUrlQuery &query);
    void serveFile(const Target &target, const QString &file);
    void serveMetrics(const Target &target);
    bool criteriaFromQuery(const QUrlQuery &query, is::Criteria *out, QString *error, int *status) const;

    const ServerOptions &m_options;
    is::Repository &m_repository;
    const is::TypeRegistry &m_types;
    const WriterTracker &m_writers;
    is::Dictionary &m_dictionary;
    MetricsExporter &m_metrics;
    WebPipeline &m_pipeline;
    QThreadPool m_scans; // the list scans of the local server (at most two at once)
    std::unique_ptr<WebPng> m_png; // the .png routes
};

} // namespace dialog::isd
