// Prometheus / OpenMetrics export of dialog-isserver (GET /metrics on the web IS).
#pragma once

#include "dialog/directory.h"
#include "dialog/is/criteria.h"
#include "dialog/is/repository.h"

#include <QByteArray>
#include <QObject>
#include <QPointer>
#include <functional>

namespace dialog {
class Client;
class Subscription;
namespace is {
class Object;
class Repository;
} // namespace is
} // namespace dialog

namespace dialog::isd {

/// Renders, in the OpenMetrics text format (application/openmetrics-text; version=1.0.0):
///   dialog_is_value{server,object,type,attribute}   every numeric scalar attribute (bool 0/1, time in
///                                                   seconds since the epoch, nested objects flattened
///                                                   as "outer.inner") of the objects matching the
///                                                   criteria (none while the criteria are empty)
///   dialog_is_updates_total{server,object,type}     the update count of the same objects
///   dialog_is_stale{server,object,type}             1 when the object is stale (writer lost or overdue)
///   dialog_is_objects_omitted{server}               matching objects left out over setMaxObjects()
///   dialog_isserver_*{server}                       this server's own statistics (<Server>.Statistics)
///   dialog_process_*{process}                       every process's communication figures, from the
///                                                   Control Server's DIALOG.Statistics service
/// Vectors (histogram contents among them) are not exported: a 1,000-bin histogram would be 1,000
/// series; sum them into a scalar or read them through /is.
///
/// Lives in the IS server's main thread. DIALOG.Statistics is subscribed on the first render()
/// (the Control Server publishes it only while someone subscribes), so the first scrape may lack
/// the process figures.
class MetricsExporter : public QObject
{
    Q_OBJECT
public:
    /// @p repository and @p client must outlive this object. An empty @p criteria exports no object.
    /// @p stale tells whether an object is stale (its writer lost, or older than its type's expected
    /// interval).
    MetricsExporter(is::Repository &repository, Client &client, const is::Criteria &criteria,
                    std::function<bool(const is::StoredObject &)> stale, QObject *parent = nullptr);
    ~MetricsExporter() override;

    /// Exports at most @p count objects (the first by name); the rest are counted in
    /// dialog_is_objects_omitted{server}, so a scrape stays bounded over a large repository.
    void setMaxObjects(int count) { m_maxObjects = count; }

    static QByteArray contentType();
    /// The whole exposition, ending with "# EOF".
    QByteArray render();

private:
    is::Repository &m_repository;
    Client &m_client;
    is::Criteria m_criteria;
    std::function<bool(const is::StoredObject &)> m_stale;
    bool m_exportObjects;
    int m_maxObjects = 10000;
    QPointer<Subscription> m_statistics;
    StatisticsSnapshot m_snapshot;
};

/// A metric-text label value: backslash, double quote and line feed escaped.
QByteArray metricsLabel(const QString &value);
/// A sample value: shortest exact decimal, NaN, +Inf, -Inf.
QByteArray metricsNumber(double value);

} // namespace dialog::isd
