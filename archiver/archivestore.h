// dialog-archiver's store: numeric attribute changes in SQLite (Qt's QSQLITE, WAL mode), written on
// the store's own thread in one transaction per batch, with downsampling tiers (raw values, 1-minute
// and 1-hour mean/min/max) and their retention.
#pragma once

#include "dialog/is/history.h"

#include <QHash>
#include <QMutex>
#include <QObject>
#include <QSqlDatabase>
#include <QTimer>
#include <atomic>
#include <vector>

namespace dialog::archiver {

/// One value of one series (an object's numeric attribute) at a time.
struct Sample
{
    qint32 series = 0;
    qint64 timeUs = 0;
    double value = 0;
};

/// A series first seen by the archiver: its id and what it is.
struct SeriesName
{
    qint32 id = 0;
    QString object; ///< object name without the server prefix
    QString attribute;
};

class ArchiveStore : public QObject
{
    Q_OBJECT
public:
    struct Options
    {
        QString path;              ///< the SQLite file
        qint64 capacity = 2000000; ///< samples buffered (received, not yet written) at most
        int rawDays = 1;           ///< raw values are kept this long
        int minuteDays = 30;       ///< 1-minute buckets are kept this long; 1-hour ones for ever
        int maintenanceMs = 10000; ///< how often idle buckets are closed and the retention runs
    };
    explicit ArchiveStore(const Options &options);
    ~ArchiveStore() override;

    /// The series already in the file (read at start, before the store's thread runs, with a
    /// connection of the calling thread). False with a reason.
    static bool readSeries(const QString &path, QList<SeriesName> *out, QString *error);

    /// Buffers samples for writing (any thread). Samples beyond the capacity are dropped and
    /// counted: a slow disk never slows the subscriber down. @p fresh are series first used here.
    void enqueue(const QList<SeriesName> &fresh, const std::vector<Sample> &samples);

    quint64 storedCount() const { return m_stored.load(); }
    quint64 droppedCount() const { return m_dropped.load(); }
    qint64 bufferedCount() const;
    QString lastError() const;

    /// Points of @p series between @p from and @p to (inclusive, µs), from the finest tier holding
    /// that span (raw within the raw retention and spans up to 6 hours, else 1-minute buckets within
    /// their retention, else 1-hour buckets), downsampled to @p maxPoints. Runs in the caller's
    /// thread on its own read connection (WAL: readers never wait for the writer).
    static bool query(const QString &path, const QString &connection, qint32 series, qint64 fromUs,
                      qint64 toUs, qsizetype maxPoints, const Options &options, QList<is::HistoryPoint> *out,
                      QString *error);

public Q_SLOTS:
    /// Opens the database (in the store's thread); retried before every write while it fails.
    void open();
    /// Closes the buckets of idle series and applies the retention.
    void maintain();
    /// Writes everything buffered, closes every bucket, stops the maintenance and closes the
    /// database (at exit; a later enqueue() opens it again).
    void flushAll();

private:
    struct Bucket
    {
        qint64 start = -1; // bucket start, µs; -1: empty
        double sum = 0, min = 0, max = 0;
        quint32 count = 0;
        void add(double v);
    };
    struct Aggregate
    {
        Bucket minute, hour;
    };
    void writePending();
    bool writeBatch(const QList<SeriesName> &fresh, const std::vector<Sample> &samples, QString *error);
    bool closeBuckets(qint64 beforeUs, QString *error);

    Options m_options;
    QString m_connection;
    bool m_open = false;
    QTimer *m_timer = nullptr;
    std::vector<Aggregate> m_aggregates; // by series id (store thread)
    mutable QMutex m_lock;               ///< guards m_pending, m_fresh, m_lastError
    std::vector<Sample> m_pending;
    QList<SeriesName> m_fresh;
    bool m_scheduled = false;
    QString m_lastError;
    std::atomic<quint64> m_stored{0}, m_dropped{0};
};

} // namespace dialog::archiver
