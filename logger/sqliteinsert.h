// dialog-logger's insert into SQLite: multi-row statements through the QSQLITE connection's own
// sqlite3 handle, and the check that a record was not stored before (a batch sent again).
#pragma once

#include "dialog/logrecord.h"

#include <QHash>
#include <QList>
#include <QPair>
#include <QStringEncoder>

struct sqlite3;
struct sqlite3_stmt;

namespace dialog::logger {

// Qt SQL's positional binding costs a string key and a hash look-up per value, which made it the
// logger's bottleneck (several times the cost of SQLite's insert): rows go through the connection's
// sqlite3 handle. Opening, transactions, searches and retention stay in Qt SQL.
//
// Rows go in multi-row INSERTs of up to ChunkRows rows: SQLite's cost per statement (opening a cursor
// on the table and on each index, the AUTOINCREMENT bookkeeping) is then paid once per chunk instead
// of once per row, which halves the cost of a row. The strings are bound as UTF-8 (the database's
// encoding, so SQLite converts nothing), converted into one buffer per chunk; the process, host and
// category, the same from row to row, are converted once. The statements are prepared once per
// connection.
//
// A record sent again is recognised by its origin's sequence number: the table `origins` keeps the
// highest sequence stored of every (process, PID), updated once per transaction and origin, and a
// record whose sequence is not above it was stored before. A unique index on (process, pid, seq)
// did the same at the cost of a fourth text-keyed index updated with every row (a quarter of the
// insert). Reporters send each process' records in sequence order, one batch at a time.
class SqliteInsert
{
public:
    static constexpr int ChunkRows = 100;

    /// @p db: an open connection (the store's); the statements are prepared on first use.
    explicit SqliteInsert(sqlite3 *db);
    ~SqliteInsert();
    QString error() const;

    /// Inserts the new ones of @p records, in a transaction the caller opened, and records their
    /// origins' sequences in it. Sets the row id of every new record and leaves 0 in those stored
    /// before; returns how many were new, or -1 on failure (then the caller rolls back).
    qint64 insert(QList<LogRecord> &records);
    /// The caller's transaction was committed / rolled back.
    void committed();
    void rolledBack();

private:
    using Origin = QPair<QString, qint64>; // process, PID
    struct Seen
    {
        qint64 sequence = 0;
        qint64 timeMs = 0;
    };
    struct Span
    {
        qsizetype at = 0;
        int size = -1; ///< -1: NULL
    };

    sqlite3_stmt *statement(int rows);
    bool prepare(sqlite3_stmt **statement, const char *sql);
    /// The highest sequence stored of @p origin (0: none), from this transaction, the cache or the table.
    bool lastSequence(const Origin &origin, qint64 *sequence);
    bool insertChunk(LogRecord *const *rows, int n);
    bool writeOrigins();
    Span utf8(const QString &s, int column, bool nullIfEmpty = false);
    void bindText(sqlite3_stmt *st, int index, const Span &span);

    sqlite3 *m_db;
    QHash<int, sqlite3_stmt *> m_statements;
    sqlite3_stmt *m_readOrigin = nullptr;
    sqlite3_stmt *m_writeOrigin = nullptr;
    QHash<Origin, qint64> m_committed; ///< highest sequence stored, of the origins looked at
    QHash<Origin, Seen> m_pending;     ///< of the transaction in progress
    QStringEncoder m_encoder{QStringEncoder::Utf8, QStringConverter::Flag::Stateless};
    QByteArray m_utf8;
    qsizetype m_used = 0;
    Span m_lastSpan[5];
    QString m_lastText[5];
    QString m_error;
};

} // namespace dialog::logger
