#include "logstore.h"
#include "sqliteinsert.h"

#include "dialog/audit.h"
#include "dialog/handoff.h"

#include <QDateTime>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLoggingCategory>
#include <QSqlDriver>
#include <QSqlError>
#include <QSqlQuery>
#include <QThread>
#include <algorithm>
#include <sqlite3.h>

Q_LOGGING_CATEGORY(lcStore, "dialog.logger.store", QtInfoMsg)

namespace dialog::logger {

LogStore::LogStore(const Options &options)
    : m_options(options), m_connection(QStringLiteral("store-%1").arg(quintptr(this)))
{
}

LogStore::~LogStore()
{
    m_insert.reset();
    closeDatabase(m_connection);
}

void LogStore::close()
{
    m_insert.reset(); // its statements are finalized before the connection closes
    closeDatabase(m_connection);
    m_open = false;
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
        QSqlDatabase db = openDatabase(m_options.database, m_connection, false, &error);
        m_open = db.isOpen();
    }
    if (!m_open) {
        QSqlDatabase::removeDatabase(m_connection);
        QMutexLocker lock(&m_lock);
        m_lastError = QStringLiteral("cannot open %1: %2").arg(m_options.database.display(), error);
        return;
    }
    applyRetention();
}

bool LogStore::enqueue(quint64 ticket, const QList<LogRecord> &records)
{
    bool wake = false;
    {
        QMutexLocker lock(&m_lock);
        // An empty buffer takes any batch, so one larger than the capacity is not refused for ever.
        if (m_buffered > 0 && m_buffered + records.size() > m_options.capacity)
            return false;
        wake = m_pending.isEmpty();
        m_pending.append(Pending{ticket, records});
        m_buffered += records.size();
    }
    // One wake-up per burst: everything that arrives meanwhile goes into the same transaction.
    if (wake)
        handoff::post(this, [this] { writePending(); }); // from the caller's thread to the store's
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
        m_inserted = 0;
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
            m_stored += m_inserted;
        } else {
            // Opened again for the next batch: a database made writable again is used at once.
            if (m_open)
                close();
            m_dropped += quint64(records.size());
            qCWarning(lcStore).noquote()
                << QStringLiteral("%1 messages not stored (%2); %3 dropped since start")
                       .arg(records.size())
                       .arg(error)
                       .arg(m_dropped.load());
        }
        Q_EMIT written(tickets, ok ? QString() : error, stored);
    }
}

bool LogStore::writeBatch(QList<LogRecord> &records, QList<LogRecord> *stored, QString *error)
{
    QSqlDatabase db = QSqlDatabase::database(m_connection, false);
    if (!db.transaction()) {
        *error = db.lastError().text().trimmed();
        return false;
    }
    if (m_keepStored.load(std::memory_order_relaxed))
        stored->reserve(records.size());
    const bool ok = m_options.database.isPostgreSQL() ? insertPostgres(db, records, stored, error)
                                                      : insertSqlite(db, records, stored, error);
    if (!ok) {
        db.rollback();
        if (m_insert)
            m_insert->rolledBack();
        stored->clear();
        return false;
    }
    if (!db.commit()) {
        *error = db.lastError().text().trimmed();
        db.rollback();
        if (m_insert)
            m_insert->rolledBack();
        stored->clear();
        return false;
    }
    if (m_insert)
        m_insert->committed();
    return true;
}

bool LogStore::insertSqlite(QSqlDatabase &db, QList<LogRecord> &records, QList<LogRecord> *stored,
                            QString *error)
{
    if (!m_insert) {
        const QVariant h = db.driver()->handle();
        sqlite3 *handle = nullptr;
        if (h.isValid() && qstrcmp(h.typeName(), "sqlite3*") == 0)
            handle = *static_cast<sqlite3 *const *>(h.constData());
        if (!handle) {
            *error = QStringLiteral("not a QSQLITE connection");
            return false;
        }
        m_insert = std::make_unique<SqliteInsert>(handle);
    }
    const qint64 inserted = m_insert->insert(records);
    if (inserted < 0) {
        *error = m_insert->error();
        return false;
    }
    m_inserted += quint64(inserted);
    // Copied only for a live subscriber: the copies cost as much as a quarter of the insert.
    if (m_keepStored.load(std::memory_order_relaxed) && inserted > 0)
        for (const LogRecord &r : std::as_const(records))
            if (r.id > 0)
                stored->append(r);
    return true;
}

namespace {
// A PostgreSQL string literal (standard_conforming_strings is on for the connection): quotes doubled;
// NUL, which PostgreSQL text cannot hold, becomes U+FFFD.
void appendLiteral(QString &sql, const QString &s)
{
    sql += QLatin1Char('\'');
    for (QChar c : s) {
        if (c == QLatin1Char('\''))
            sql += QLatin1String("''");
        else if (c.unicode() == 0)
            sql += QChar(0xFFFD);
        else
            sql += c;
    }
    sql += QLatin1Char('\'');
}
} // namespace

bool LogStore::insertPostgres(QSqlDatabase &db, QList<LogRecord> &records, QList<LogRecord> *stored,
                              QString *error)
{
    // QPSQL has no COPY and emulates execBatch() one row at a time (a round trip each): rows go as
    // multi-row INSERTs of literals instead, a few hundred per statement. RETURNING names the rows
    // that were new (a batch sent again after a lost acknowledgement inserts nothing).
    constexpr qsizetype RowsPerStatement = 500;
    QSqlQuery q(db);
    q.setForwardOnly(true);
    QString sql;
    for (qsizetype first = 0; first < records.size(); first += RowsPerStatement) {
        const qsizetype last = std::min(records.size(), first + RowsPerStatement);
        sql.clear();
        sql +=
            QLatin1String("INSERT INTO messages (time, severity, process, host, pid, category, text, file, "
                          "line, run, vals, seq) VALUES ");
        QHash<QString, qsizetype> index;
        index.reserve(last - first);
        for (qsizetype i = first; i < last; ++i) {
            const LogRecord &r = records.at(i);
            if (i > first)
                sql += QLatin1Char(',');
            sql += QLatin1Char('(') + QString::number(r.timeMs) + QLatin1Char(',') +
                   QString::number(int(r.severity)) + QLatin1Char(',');
            appendLiteral(sql, r.process);
            sql += QLatin1Char(',');
            appendLiteral(sql, r.host);
            sql += QLatin1Char(',') + QString::number(r.pid) + QLatin1Char(',');
            appendLiteral(sql, r.category);
            sql += QLatin1Char(',');
            appendLiteral(sql, r.text);
            sql += QLatin1Char(',');
            if (r.file.isEmpty()) {
                sql += QLatin1String("NULL,NULL");
            } else {
                appendLiteral(sql, r.file);
                sql += QLatin1Char(',') + QString::number(r.line);
            }
            sql += QLatin1Char(',') + QString::number(r.run) + QLatin1Char(',');
            if (r.values.isEmpty())
                sql += QLatin1String("NULL");
            else
                appendLiteral(
                    sql,
                    QString::fromUtf8(
                        QJsonDocument(QJsonObject::fromVariantMap(r.values)).toJson(QJsonDocument::Compact)));
            sql += QLatin1Char(',') + QString::number(r.sequence) + QLatin1Char(')');
            index.insert(r.process + QLatin1Char('\n') + r.host + QLatin1Char('\n') + QString::number(r.pid) +
                             QLatin1Char('\n') + QString::number(r.sequence),
                         i);
        }
        sql += QLatin1String(" ON CONFLICT (process, host, pid, seq) DO NOTHING RETURNING id, process, host, "
                             "pid, seq");
        if (!q.exec(sql)) {
            *error = q.lastError().text().trimmed();
            return false;
        }
        QList<std::pair<qsizetype, qint64>> inserted;
        while (q.next()) {
            const QString key = q.value(1).toString() + QLatin1Char('\n') + q.value(2).toString() +
                                QLatin1Char('\n') + q.value(3).toString() + QLatin1Char('\n') +
                                q.value(4).toString();
            const auto it = index.constFind(key);
            if (it != index.constEnd())
                inserted.append({*it, q.value(0).toLongLong()});
        }
        // In the order reported, as the live service publishes them.
        std::sort(inserted.begin(), inserted.end());
        m_inserted += quint64(inserted.size());
        if (m_keepStored.load(std::memory_order_relaxed))
            for (const auto &[i, id] : inserted) {
                records[i].id = id;
                stored->append(records.at(i));
            }
    }
    return true;
}

void LogStore::applyRetention()
{
    if (!m_open)
        return;
    const bool postgres = m_options.database.isPostgreSQL();
    QSqlDatabase db = QSqlDatabase::database(m_connection, false);
    QSqlQuery q(db);
    if (m_options.keepDays > 0) {
        q.prepare(QStringLiteral("DELETE FROM messages WHERE time < ?"));
        q.bindValue(0, QDateTime::currentMSecsSinceEpoch() - qint64(m_options.keepDays) * 86400000);
        if (!q.exec())
            qCWarning(lcStore).noquote() << "retention:" << q.lastError().text();
        // The origins of processes silent for as long (their sequences are not needed any more).
        if (!postgres) {
            q.prepare(QStringLiteral("DELETE FROM origins WHERE time < ?"));
            q.bindValue(0, QDateTime::currentMSecsSinceEpoch() - qint64(m_options.keepDays) * 86400000);
            if (!q.exec())
                qCWarning(lcStore).noquote() << "retention:" << q.lastError().text();
        }
    }
    // PostgreSQL gives freed space back only on VACUUM FULL: --max-bytes is refused for it at start.
    if (m_options.maxBytes <= 0 || postgres)
        return;
    // The size counts used pages (freed pages are reused, the file does not shrink); the ordinary
    // records of the oldest tenth go until it fits. Audit records are never deleted for size: a
    // flood of ordinary messages makes room for them by losing its own oldest, and the bound keeps
    // the disk from filling up before they come.
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
        q.prepare(QStringLiteral("DELETE FROM messages WHERE category <> ? AND id <= (SELECT min(id) + "
                                 "(max(id) - min(id)) / 10 FROM messages WHERE category <> ?)"));
        q.bindValue(0, dialog::auditCategory());
        q.bindValue(1, dialog::auditCategory());
        if (!q.exec() || q.numRowsAffected() <= 0)
            return;
    }
}

} // namespace dialog::logger
