// The figures of an IS server, published every second as its object <Server>.Statistics.
#pragma once

#include "dispatcher.h"

#include <QElapsedTimer>
#include <QObject>
#include <functional>
#include <vector>

namespace dialog::is {
class Repository;
class TypeRegistry;
} // namespace dialog::is

namespace dialog::isd {

/// Writes the object Statistics (type ISServerStatistics) of a repository: counts since start,
/// rates over the last interval, and one entry per subscriber. The figures come from the other
/// parts of the server through a callback; the repository's own counts come from the repository.
/// Main thread.
class ServerStatistics : public QObject
{
    Q_OBJECT
public:
    /// What the other parts count, gathered at each publication.
    struct Figures
    {
        quint64 deliveries = 0; ///< notifications delivered to subscribers since start
        quint64 dropped = 0;    ///< notifications dropped for slow subscribers since start
        std::vector<SubscriberPtr> subscribers;
        quint64 requests = 0;
        qint64 lastCheckpointUs = 0; ///< time of the last checkpoint written (0: none)
        quint64 checkpointErrors = 0;
        quint64 quotaRefused = 0;
        quint64 accessRefused = 0;
        quint64 journalErrors = 0;
    };
    using Source = std::function<Figures()>;

    /// The object name ("Statistics"); clients may not write it.
    static QString objectName();
    /// Declares the type ISServerStatistics in @p types unless it is there; errors as
    /// is::TypeRegistry::declareType().
    static Status declareType(is::TypeRegistry &types);

    /// The type must be declared in @p types (declareType()).
    ServerStatistics(is::Repository &repository, const is::TypeRegistry &types, Source source,
                     QObject *parent = nullptr);

    /// Publishes now, then every @p intervalMs.
    void start(int intervalMs = 1000);
    /// Writes the object now. Its own writes are not counted as changes of the repository.
    void publish();

private:
    is::Repository &m_repository;
    const is::TypeRegistry &m_types;
    Source m_source;
    QElapsedTimer m_clock;
    qint64 m_lastMs = 0;
    quint64 m_lastChanges = 0, m_lastDeliveries = 0;
    quint64 m_published = 0;
};

} // namespace dialog::isd
