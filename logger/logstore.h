// dialog-logger's writer: stores batches of records into SQLite (Qt's QSQLITE, WAL mode) or
// PostgreSQL (QPSQL) on its own thread, one transaction for everything buffered, and applies the
// retention.
#pragma once

#include "logdatabase.h"

#include "dialog/logrecord.h"

#include <QList>
#include <QMutex>
#include <QObject>
#include <QSqlDatabase>
#include <QTimer>
#include <atomic>
#include <memory>

namespace dialog::logger {

class SqliteInsert;

class LogStore : public QObject
{
    Q_OBJECT
public:
    struct Options
    {
        DatabaseConfig database; ///< the SQLite file or the PostgreSQL database
        int keepDays = 30;       ///< records older than this are deleted (0: kept)
        qint64 maxBytes = 0;     ///< the oldest ordinary records are deleted beyond this size (0: no bound)
        int searchBudgetMs = 10000; ///< one search may take this long (LogSearch); 0: no bound
        qint64 capacity = 200000;   ///< records buffered (received, not yet written) at most
        int retentionMs = 60000;    ///< how often the retention runs
    };
    explicit LogStore(const Options &options);
    ~LogStore() override;

    /// Buffers @p records for writing (any thread; called with m_lock not held). False, and nothing
    /// buffered, when the buffer would exceed its capacity: the caller refuses the batch (the
    /// reporter sends it again later); an empty buffer takes a batch of any size. @p ticket comes back
    /// with written().
    bool enqueue(quint64 ticket, const QList<LogRecord> &records);

    quint64 storedCount() const { return m_stored.load(); }
    /// Whether written() carries the stored records (for the live service; any thread). Off, it
    /// carries none, which spares a copy of every record while nobody follows.
    void setKeepStored(bool keep) { m_keepStored = keep; }
    quint64 droppedCount() const { return m_dropped.load(); }
    qint64 bufferedCount() const;
    /// The last write error (empty after a successful write).
    QString lastError() const;

public Q_SLOTS:
    /// Opens the database (in the store's thread). Also retried before every write while it fails.
    void open();
    void applyRetention();

Q_SIGNALS:
    /// Emitted (in the store's thread) once per written set of batches: their tickets, an empty
    /// @p error and the records actually inserted (with their row ids; repeated ones are left out),
    /// or the reason they were not stored (then they are dropped and counted).
    void written(const QList<quint64> &tickets, const QString &error, const QList<dialog::LogRecord> &stored);

private:
    void writePending();
    bool writeBatch(QList<LogRecord> &records, QList<LogRecord> *stored, QString *error);
    bool insertSqlite(QSqlDatabase &db, QList<LogRecord> &records, QList<LogRecord> *stored, QString *error);
    bool insertPostgres(QSqlDatabase &db, QList<LogRecord> &records, QList<LogRecord> *stored,
                        QString *error);
    void close();
    struct Pending
    {
        quint64 ticket;
        QList<LogRecord> records;
    };

    Options m_options;
    QString m_connection;
    bool m_open = false;
    QTimer *m_retention = nullptr;
    mutable QMutex m_lock; ///< guards m_pending, m_buffered, m_lastError
    QList<Pending> m_pending;
    qint64 m_buffered = 0;
    QString m_lastError;
    std::atomic<quint64> m_stored{0}, m_dropped{0};
    std::atomic<bool> m_keepStored{true};
    quint64 m_inserted = 0;                 ///< rows inserted by the write in progress (store thread)
    std::unique_ptr<SqliteInsert> m_insert; ///< the prepared inserts of the open SQLite connection
};

} // namespace dialog::logger
