#include "logstore.h"

#include <QDateTime>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSqlDriver>
#include <QSqlError>
#include <QSqlQuery>
#include <QStringEncoder>
#include <QThread>
#include <QVarLengthArray>
#include <algorithm>
#include <cstdio>
#include <sqlite3.h>

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
            std::fprintf(stderr, "dialog-logger: %lld messages not stored (%s); %llu dropped since start\n",
                         qlonglong(records.size()), qPrintable(error), (unsigned long long)m_dropped.load());
        }
        Q_EMIT written(tickets, ok ? QString() : error, stored);
    }
}

// The insert goes to SQLite through the QSQLITE connection's own handle: Qt SQL's positional binding
// costs a string key and a hash look-up per value, which made it the logger's bottleneck (several
// times the cost of SQLite's insert). Opening, transactions, searches and retention stay in Qt SQL.
//
// Rows go in multi-row INSERTs of up to ChunkRows rows: SQLite's cost per statement (opening a cursor
// on the table and on each index, the AUTOINCREMENT bookkeeping) is then paid once per chunk instead
// of once per row, which halves the cost of a row. The strings are bound as UTF-8 (the database's
// encoding, so SQLite converts nothing), converted into one buffer per chunk; the process, host and
// category, the same from row to row, are converted once. The statements are prepared once per
// connection.
class SqliteInsert
{
public:
    static constexpr int ChunkRows = 100;
    static constexpr int Columns = 12;

    explicit SqliteInsert(sqlite3 *db) : m_db(db) {}
    ~SqliteInsert()
    {
        for (sqlite3_stmt *s : std::as_const(m_statements))
            sqlite3_finalize(s);
        sqlite3_finalize(m_lookup);
        sqlite3_finalize(m_highest);
    }
    QString error() const { return QString::fromUtf8(sqlite3_errmsg(m_db)); }

    /// Inserts @p records (in a transaction the caller opened). Sets the row id of every record that
    /// was new and leaves 0 in those stored before (a batch sent again); returns how many were new,
    /// or -1 on failure.
    qint64 insert(QList<LogRecord> &records)
    {
        if (!readHighestId())
            return -1;
        qint64 inserted = 0;
        for (qsizetype first = 0; first < records.size();) {
            // Full chunks, then the rest in 64, 16, 4, 1 rows (few distinct statements to prepare).
            const qsizetype left = records.size() - first;
            int n = ChunkRows;
            for (int size : {ChunkRows, 64, 16, 4, 1})
                if (left >= size) {
                    n = size;
                    break;
                }
            const qint64 added = insertChunk(records, first, n);
            if (added < 0)
                return -1;
            inserted += added;
            first += n;
        }
        return inserted;
    }

private:
    struct Span
    {
        qsizetype at = 0;
        int size = -1; ///< -1: NULL
    };

    sqlite3_stmt *statement(int rows)
    {
        if (sqlite3_stmt *s = m_statements.value(rows))
            return s;
        QByteArray sql =
            "INSERT OR IGNORE INTO messages (time, severity, process, host, pid, category, text, file, "
            "line, run, vals, seq) VALUES ";
        for (int i = 0; i < rows; ++i)
            sql += i ? ",(?,?,?,?,?,?,?,?,?,?,?,?)" : "(?,?,?,?,?,?,?,?,?,?,?,?)";
        sqlite3_stmt *s = nullptr;
        if (sqlite3_prepare_v3(m_db, sql.constData(), int(sql.size()), SQLITE_PREPARE_PERSISTENT, &s,
                               nullptr) != SQLITE_OK)
            return nullptr;
        m_statements.insert(rows, s);
        return s;
    }

    /// The highest row id ever given (AUTOINCREMENT keeps it in sqlite_sequence), once per transaction.
    bool readHighestId()
    {
        if (!m_highest && sqlite3_prepare_v2(m_db, "SELECT seq FROM sqlite_sequence WHERE name = 'messages'",
                                             -1, &m_highest, nullptr) != SQLITE_OK)
            return false;
        const int rc = sqlite3_step(m_highest);
        m_highestId = rc == SQLITE_ROW ? sqlite3_column_int64(m_highest, 0) : 0;
        sqlite3_reset(m_highest);
        return rc == SQLITE_ROW || rc == SQLITE_DONE;
    }

    /// Appends @p s as UTF-8 to m_utf8 (reserved large enough by the caller); the same string as the
    /// previous row's in this column is not converted again.
    Span utf8(const QString &s, int column, bool nullIfEmpty = false)
    {
        if (nullIfEmpty && s.isEmpty())
            return Span{};
        Span &last = m_lastSpan[column];
        QString &lastText = m_lastText[column];
        if (last.size >= 0 && s == lastText)
            return last;
        char *begin = m_utf8.data() + m_used;
        char *end = m_encoder.appendToBuffer(begin, s);
        last = Span{m_used, int(end - begin)};
        lastText = s;
        m_used += end - begin;
        return last;
    }

    void bindText(sqlite3_stmt *st, int index, const Span &span)
    {
        if (span.size < 0)
            sqlite3_bind_null(st, index);
        else
            sqlite3_bind_text(st, index, m_utf8.constData() + span.at, span.size, SQLITE_STATIC);
    }

    qint64 insertChunk(QList<LogRecord> &records, qsizetype first, int n)
    {
        sqlite3_stmt *st = statement(n);
        if (!st)
            return -1;
        // Room for every string of the chunk at 3 bytes per UTF-16 unit, so spans stay valid.
        qsizetype room = 0;
        for (qsizetype i = first; i < first + n; ++i) {
            const LogRecord &r = records.at(i);
            room +=
                3 * (r.process.size() + r.host.size() + r.category.size() + r.text.size() + r.file.size());
        }
        QList<QByteArray> values; // the rare key/values, as JSON
        m_utf8.resize(room);
        m_used = 0;
        for (Span &s : m_lastSpan)
            s = Span{};
        struct Row
        {
            Span process, host, category, text, file;
        };
        QVarLengthArray<Row, ChunkRows> rows(n);
        for (int k = 0; k < n; ++k) {
            const LogRecord &r = records.at(first + k);
            rows[k] = Row{utf8(r.process, 0), utf8(r.host, 1), utf8(r.category, 2), utf8(r.text, 3),
                          utf8(r.file, 4, true)};
        }
        for (int k = 0; k < n; ++k) {
            const LogRecord &r = records.at(first + k);
            const Row &row = rows.at(k);
            const int b = k * Columns;
            sqlite3_bind_int64(st, b + 1, r.timeMs);
            sqlite3_bind_int(st, b + 2, int(r.severity));
            bindText(st, b + 3, row.process);
            bindText(st, b + 4, row.host);
            sqlite3_bind_int64(st, b + 5, r.pid);
            bindText(st, b + 6, row.category);
            bindText(st, b + 7, row.text);
            bindText(st, b + 8, row.file);
            if (row.file.size < 0)
                sqlite3_bind_null(st, b + 9);
            else
                sqlite3_bind_int(st, b + 9, r.line);
            sqlite3_bind_int64(st, b + 10, r.run);
            if (r.values.isEmpty()) {
                sqlite3_bind_null(st, b + 11);
            } else {
                values.append(
                    QJsonDocument(QJsonObject::fromVariantMap(r.values)).toJson(QJsonDocument::Compact));
                sqlite3_bind_text(st, b + 11, values.last().constData(), int(values.last().size()),
                                  SQLITE_STATIC);
            }
            sqlite3_bind_int64(st, b + 12, qint64(r.sequence));
        }
        const int rc = sqlite3_step(st);
        sqlite3_reset(st);
        if (rc != SQLITE_DONE)
            return -1;
        const int changes = sqlite3_changes(m_db);
        const qint64 before = m_highestId;
        if (changes > 0)
            m_highestId = sqlite3_last_insert_rowid(m_db);
        if (changes == n) {
            // One statement in a transaction of the only writer: consecutive ids, in the rows' order.
            for (int k = 0; k < n; ++k)
                records[first + k].id = m_highestId - n + 1 + k;
            return n;
        }
        for (int k = 0; k < n; ++k)
            records[first + k].id = 0;
        if (changes == 0)
            return 0; // all of them stored before (a batch sent again)
        // Some were stored before: the new ones are those whose id is above the highest one before.
        return identifyNew(records, first, n, before) ? changes : -1;
    }

    bool identifyNew(QList<LogRecord> &records, qsizetype first, int n, qint64 before)
    {
        if (!m_lookup &&
            sqlite3_prepare_v2(m_db, "SELECT id FROM messages WHERE process = ? AND pid = ? AND seq = ?", -1,
                               &m_lookup, nullptr) != SQLITE_OK)
            return false;
        for (int k = 0; k < n; ++k) {
            LogRecord &r = records[first + k];
            const QByteArray process = r.process.toUtf8();
            sqlite3_bind_text(m_lookup, 1, process.constData(), int(process.size()), SQLITE_STATIC);
            sqlite3_bind_int64(m_lookup, 2, r.pid);
            sqlite3_bind_int64(m_lookup, 3, qint64(r.sequence));
            const int rc = sqlite3_step(m_lookup);
            if (rc == SQLITE_ROW && sqlite3_column_int64(m_lookup, 0) > before)
                r.id = sqlite3_column_int64(m_lookup, 0);
            sqlite3_reset(m_lookup);
            if (rc != SQLITE_ROW && rc != SQLITE_DONE)
                return false;
        }
        return true;
    }

    sqlite3 *m_db;
    QHash<int, sqlite3_stmt *> m_statements;
    sqlite3_stmt *m_lookup = nullptr;
    sqlite3_stmt *m_highest = nullptr;
    qint64 m_highestId = 0;
    QStringEncoder m_encoder{QStringEncoder::Utf8, QStringConverter::Flag::Stateless};
    QByteArray m_utf8;
    qsizetype m_used = 0;
    Span m_lastSpan[5];
    QString m_lastText[5];
};

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
        stored->clear();
        return false;
    }
    if (!db.commit()) {
        *error = db.lastError().text().trimmed();
        db.rollback();
        stored->clear();
        return false;
    }
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
            std::fprintf(stderr, "dialog-logger: retention: %s\n", qPrintable(q.lastError().text()));
    }
    // PostgreSQL gives freed space back only on VACUUM FULL: --max-bytes is refused for it at start.
    if (m_options.maxBytes <= 0 || postgres)
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
