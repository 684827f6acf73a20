#include "logstore.h"

#include <QDateTime>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSqlError>
#include <QSqlQuery>
#include <QThread>
#include <cstdio>

namespace dialog::logger {

namespace {
bool exec(QSqlDatabase &db, const QString &sql, QString *error)
{
    QSqlQuery q(db);
    if (q.exec(sql))
        return true;
    if (error)
        *error = q.lastError().text();
    return false;
}
} // namespace

bool createSchema(QSqlDatabase &db, QString *error)
{
    // The unique key makes a batch sent again (after a lost acknowledgement) harmless. Ids only grow
    // (AUTOINCREMENT), even when the retention empties the table: clients page and follow by id.
    const char *const statements[] = {
        "CREATE TABLE IF NOT EXISTS messages (id INTEGER PRIMARY KEY AUTOINCREMENT, time INTEGER NOT NULL, "
        "severity "
        "INTEGER "
        "NOT NULL, process TEXT NOT NULL, host TEXT NOT NULL, pid INTEGER NOT NULL, category TEXT NOT NULL, "
        "text TEXT NOT NULL, file TEXT, line INTEGER, run INTEGER NOT NULL, vals TEXT, seq INTEGER NOT NULL)",
        "CREATE UNIQUE INDEX IF NOT EXISTS messages_origin ON messages (process, pid, seq)",
        "CREATE INDEX IF NOT EXISTS messages_time ON messages (time)",
        // Entries of an index are ordered by (column, rowid): a process' newest messages are read
        // backwards from it without a sort.
        "CREATE INDEX IF NOT EXISTS messages_process ON messages (process)",
    };
    for (const char *s : statements)
        if (!exec(db, QLatin1String(s), error))
            return false;
    return true;
}

QSqlDatabase openDatabase(const QString &path, const QString &connection, bool readOnly, QString *error)
{
    QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), connection);
    db.setDatabaseName(path);
    db.setConnectOptions(QStringLiteral("QSQLITE_BUSY_TIMEOUT=5000") +
                         (readOnly ? QStringLiteral(";QSQLITE_OPEN_READONLY") : QString()));
    if (!db.open()) {
        *error = db.lastError().text();
        return db;
    }
    if (!readOnly &&
        (!exec(db, QStringLiteral("PRAGMA journal_mode=WAL"), error) ||
         !exec(db, QStringLiteral("PRAGMA synchronous=NORMAL"), error) || !createSchema(db, error)))
        db.close();
    return db;
}

LogStore::LogStore(const Options &options)
    : m_options(options), m_connection(QStringLiteral("store-%1").arg(quintptr(this)))
{
}

LogStore::~LogStore()
{
    {
        QSqlDatabase db = QSqlDatabase::database(m_connection, false);
        db.close();
    }
    QSqlDatabase::removeDatabase(m_connection);
}

qint64 LogStore::bufferedCount() const
{
    QMutexLocker lock(&m_lock);
    return m_buffered;
}

QString LogStore::lastError() const
{
    QMutexLocker lock(&m_lock);
    return m_lastError;
}

void LogStore::open()
{
    if (!m_retention) {
        m_retention = new QTimer(this);
        connect(m_retention, &QTimer::timeout, this, &LogStore::applyRetention);
        m_retention->start(m_options.retentionMs);
    }
    QString error;
    {
        QSqlDatabase db = openDatabase(m_options.path, m_connection, false, &error);
        m_open = db.isOpen();
    }
    if (!m_open) {
        QSqlDatabase::removeDatabase(m_connection);
        QMutexLocker lock(&m_lock);
        m_lastError = QStringLiteral("cannot open %1: %2").arg(m_options.path, error);
        return;
    }
    applyRetention();
}

bool LogStore::enqueue(quint64 ticket, const QList<LogRecord> &records)
{
    bool wake = false;
    {
        QMutexLocker lock(&m_lock);
        if (m_buffered + records.size() > m_options.capacity)
            return false;
        wake = m_pending.isEmpty();
        m_pending.append(Pending{ticket, records});
        m_buffered += records.size();
    }
    // One wake-up per burst: everything that arrives meanwhile goes into the same transaction.
    if (wake)
        QMetaObject::invokeMethod(this, &LogStore::writePending, Qt::QueuedConnection);
    return true;
}

void LogStore::writePending()
{
    for (;;) {
        QList<Pending> batch;
        {
            QMutexLocker lock(&m_lock);
            batch.swap(m_pending);
        }
        if (batch.isEmpty())
            return;
        QList<quint64> tickets;
        QList<LogRecord> records;
        for (Pending &p : batch) {
            tickets.append(p.ticket);
            records.append(std::move(p.records));
        }
        if (!m_open)
            open();
        QString error;
        QList<LogRecord> stored;
        const bool ok = m_open && writeBatch(records, &stored, &error);
        if (!m_open) {
            QMutexLocker lock(&m_lock);
            error = m_lastError;
        }
        {
            QMutexLocker lock(&m_lock);
            m_buffered -= records.size();
            m_lastError = ok ? QString() : error;
        }
        if (ok) {
            m_stored += quint64(stored.size());
        } else {
            // Opened again for the next batch: a database made writable again is used at once.
            if (m_open) {
                {
                    QSqlDatabase db = QSqlDatabase::database(m_connection, false);
                    db.close();
                }
                QSqlDatabase::removeDatabase(m_connection);
                m_open = false;
            }
            m_dropped += quint64(records.size());
            std::fprintf(stderr, "dialog-logger: %lld messages not stored (%s); %llu dropped since start\n",
                         qlonglong(records.size()), qPrintable(error), (unsigned long long)m_dropped.load());
        }
        Q_EMIT written(tickets, ok ? QString() : error, stored);
    }
}

bool LogStore::writeBatch(QList<LogRecord> &records, QList<LogRecord> *stored, QString *error)
{
    QSqlDatabase db = QSqlDatabase::database(m_connection, false);
    if (!db.transaction()) {
        *error = db.lastError().text();
        return false;
    }
    QSqlQuery q(db);
    q.prepare(
        QStringLiteral("INSERT OR IGNORE INTO messages (time, severity, process, host, pid, category, text, "
                       "file, line, run, vals, seq) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"));
    stored->reserve(records.size());
    for (LogRecord &r : records) {
        q.bindValue(0, r.timeMs);
        q.bindValue(1, int(r.severity));
        q.bindValue(2, r.process);
        q.bindValue(3, r.host);
        q.bindValue(4, r.pid);
        q.bindValue(5, r.category);
        q.bindValue(6, r.text);
        q.bindValue(7, r.file.isEmpty() ? QVariant() : QVariant(r.file));
        q.bindValue(8, r.file.isEmpty() ? QVariant() : QVariant(r.line));
        q.bindValue(9, qint64(r.run));
        q.bindValue(
            10,
            r.values.isEmpty()
                ? QVariant()
                : QVariant(QString::fromUtf8(
                      QJsonDocument(QJsonObject::fromVariantMap(r.values)).toJson(QJsonDocument::Compact))));
        q.bindValue(11, qint64(r.sequence));
        if (!q.exec()) {
            *error = q.lastError().text();
            db.rollback();
            stored->clear();
            return false;
        }
        if (q.numRowsAffected() > 0) {
            r.id = q.lastInsertId().toLongLong();
            stored->append(r);
        }
    }
    if (!db.commit()) {
        *error = db.lastError().text();
        db.rollback();
        stored->clear();
        return false;
    }
    return true;
}

void LogStore::applyRetention()
{
    if (!m_open)
        return;
    QSqlDatabase db = QSqlDatabase::database(m_connection, false);
    QSqlQuery q(db);
    if (m_options.keepDays > 0) {
        q.prepare(QStringLiteral("DELETE FROM messages WHERE time < ?"));
        q.bindValue(0, QDateTime::currentMSecsSinceEpoch() - qint64(m_options.keepDays) * 86400000);
        if (!q.exec())
            std::fprintf(stderr, "dialog-logger: retention: %s\n", qPrintable(q.lastError().text()));
    }
    if (m_options.maxBytes <= 0)
        return;
    // The size counts used pages (freed pages are reused, the file does not shrink); the oldest
    // tenth goes until it fits.
    for (int round = 0; round < 50; ++round) {
        qint64 pageSize = 0, pages = 0, freePages = 0;
        if (q.exec(QStringLiteral("PRAGMA page_size")) && q.next())
            pageSize = q.value(0).toLongLong();
        if (q.exec(QStringLiteral("PRAGMA page_count")) && q.next())
            pages = q.value(0).toLongLong();
        if (q.exec(QStringLiteral("PRAGMA freelist_count")) && q.next())
            freePages = q.value(0).toLongLong();
        if ((pages - freePages) * pageSize <= m_options.maxBytes)
            return;
        if (!q.exec(
                QStringLiteral("DELETE FROM messages WHERE id <= (SELECT min(id) + (max(id) - min(id)) / 10 "
                               "FROM messages)")) ||
            q.numRowsAffected() <= 0)
            return;
    }
}

} // namespace dialog::logger
