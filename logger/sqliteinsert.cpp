#include "sqliteinsert.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QVarLengthArray>
#include <sqlite3.h>

namespace dialog::logger {

namespace {
constexpr int Columns = 12;
// Origins looked at are remembered (the table has the truth); a logger that saw this many process
// incarnations starts the cache afresh.
constexpr qsizetype MaxCachedOrigins = 100000;
} // namespace

SqliteInsert::SqliteInsert(sqlite3 *db) : m_db(db) {}

SqliteInsert::~SqliteInsert()
{
    for (sqlite3_stmt *s : std::as_const(m_statements))
        sqlite3_finalize(s);
    sqlite3_finalize(m_readOrigin);
    sqlite3_finalize(m_writeOrigin);
}

QString SqliteInsert::error() const
{
    return m_error.isEmpty() ? QString::fromUtf8(sqlite3_errmsg(m_db)) : m_error;
}

bool SqliteInsert::prepare(sqlite3_stmt **statement, const char *sql)
{
    return *statement ||
           sqlite3_prepare_v3(m_db, sql, -1, SQLITE_PREPARE_PERSISTENT, statement, nullptr) == SQLITE_OK;
}

sqlite3_stmt *SqliteInsert::statement(int rows)
{
    if (sqlite3_stmt *s = m_statements.value(rows))
        return s;
    // OR IGNORE: no constraint can fail (every NOT NULL column is bound), and without it SQLite keeps a
    // statement journal to undo a multi-row statement half done (a third of the cost of a row).
    QByteArray sql = "INSERT OR IGNORE INTO messages (time, severity, process, host, pid, category, text, "
                     "file, line, run, vals, seq) VALUES ";
    for (int i = 0; i < rows; ++i)
        sql += i ? ",(?,?,?,?,?,?,?,?,?,?,?,?)" : "(?,?,?,?,?,?,?,?,?,?,?,?)";
    sqlite3_stmt *s = nullptr;
    if (!prepare(&s, sql.constData()))
        return nullptr;
    m_statements.insert(rows, s);
    return s;
}

bool SqliteInsert::lastSequence(const Origin &origin, qint64 *sequence)
{
    if (const auto p = m_pending.constFind(origin); p != m_pending.cend()) {
        *sequence = p->sequence;
        return true;
    }
    if (const auto c = m_committed.constFind(origin); c != m_committed.cend()) {
        *sequence = *c;
        return true;
    }
    if (!prepare(&m_readOrigin, "SELECT seq FROM origins WHERE process = ? AND pid = ?"))
        return false;
    const QByteArray process = origin.first.toUtf8();
    sqlite3_bind_text(m_readOrigin, 1, process.constData(), int(process.size()), SQLITE_STATIC);
    sqlite3_bind_int64(m_readOrigin, 2, origin.second);
    const int rc = sqlite3_step(m_readOrigin);
    *sequence = rc == SQLITE_ROW ? sqlite3_column_int64(m_readOrigin, 0) : 0;
    sqlite3_reset(m_readOrigin);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        return false;
    if (m_committed.size() >= MaxCachedOrigins)
        m_committed.clear();
    m_committed.insert(origin, *sequence);
    return true;
}

qint64 SqliteInsert::insert(QList<LogRecord> &records)
{
    m_error.clear();
    QList<LogRecord *> fresh;
    fresh.reserve(records.size());
    for (LogRecord &r : records) {
        r.id = 0;
        if (r.sequence == 0) { // no sequence: nothing to recognise it by
            fresh.append(&r);
            continue;
        }
        const Origin origin{r.process, r.pid};
        qint64 last = 0;
        if (!lastSequence(origin, &last))
            return -1;
        if (qint64(r.sequence) <= last)
            continue; // stored before: a batch sent again
        Seen &seen = m_pending[origin];
        seen.sequence = qint64(r.sequence);
        seen.timeMs = std::max(seen.timeMs, r.timeMs);
        fresh.append(&r);
    }
    for (qsizetype first = 0; first < fresh.size();) {
        // Full chunks, then the rest in 64, 16, 4, 1 rows (few distinct statements to prepare).
        const qsizetype left = fresh.size() - first;
        int n = 1;
        for (int size : {ChunkRows, 64, 16, 4, 1})
            if (left >= size) {
                n = size;
                break;
            }
        if (!insertChunk(fresh.constData() + first, n))
            return -1;
        first += n;
    }
    if (!writeOrigins())
        return -1;
    return fresh.size();
}

bool SqliteInsert::writeOrigins()
{
    if (!prepare(&m_writeOrigin, "INSERT INTO origins (process, pid, seq, time) VALUES (?, ?, ?, ?) "
                                 "ON CONFLICT (process, pid) DO UPDATE SET seq = excluded.seq, "
                                 "time = max(time, excluded.time)"))
        return false;
    for (auto it = m_pending.cbegin(); it != m_pending.cend(); ++it) {
        const QByteArray process = it.key().first.toUtf8();
        sqlite3_bind_text(m_writeOrigin, 1, process.constData(), int(process.size()), SQLITE_STATIC);
        sqlite3_bind_int64(m_writeOrigin, 2, it.key().second);
        sqlite3_bind_int64(m_writeOrigin, 3, it->sequence);
        sqlite3_bind_int64(m_writeOrigin, 4, it->timeMs);
        const int rc = sqlite3_step(m_writeOrigin);
        sqlite3_reset(m_writeOrigin);
        if (rc != SQLITE_DONE)
            return false;
    }
    return true;
}

void SqliteInsert::committed()
{
    if (m_committed.size() + m_pending.size() > MaxCachedOrigins)
        m_committed.clear();
    for (auto it = m_pending.cbegin(); it != m_pending.cend(); ++it)
        m_committed.insert(it.key(), it->sequence);
    m_pending.clear();
}

void SqliteInsert::rolledBack()
{
    m_pending.clear();
}

SqliteInsert::Span SqliteInsert::utf8(const QString &s, int column, bool nullIfEmpty)
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

void SqliteInsert::bindText(sqlite3_stmt *st, int index, const Span &span)
{
    if (span.size < 0)
        sqlite3_bind_null(st, index);
    else
        sqlite3_bind_text(st, index, m_utf8.constData() + span.at, span.size, SQLITE_STATIC);
}

bool SqliteInsert::insertChunk(LogRecord *const *records, int n)
{
    sqlite3_stmt *st = statement(n);
    if (!st)
        return false;
    // Room for every string of the chunk at 3 bytes per UTF-16 unit, so that spans stay valid.
    qsizetype room = 0;
    for (int k = 0; k < n; ++k) {
        const LogRecord &r = *records[k];
        room += 3 * (r.process.size() + r.host.size() + r.category.size() + r.text.size() + r.file.size());
    }
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
        const LogRecord &r = *records[k];
        rows[k] = Row{utf8(r.process, 0), utf8(r.host, 1), utf8(r.category, 2), utf8(r.text, 3),
                      utf8(r.file, 4, true)};
    }
    QList<QByteArray> values; // the rare key/values, as JSON
    for (int k = 0; k < n; ++k) {
        const LogRecord &r = *records[k];
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
        return false;
    if (sqlite3_changes(m_db) != n) {
        m_error = QStringLiteral("%1 of %2 rows inserted").arg(sqlite3_changes(m_db)).arg(n);
        return false;
    }
    // One statement in a transaction of the only writer: consecutive ids, in the rows' order.
    const qint64 last = sqlite3_last_insert_rowid(m_db);
    for (int k = 0; k < n; ++k)
        records[k]->id = last - n + 1 + k;
    return true;
}

} // namespace dialog::logger
