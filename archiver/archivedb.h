// dialog-archiver's tables: the SQLite schema (series, raw, minute, hour), opening the file through
// libdialog's sql layer, the prepared statements of the writer and the history query.
#pragma once

#include "dialog/is/history.h"

#include <QList>
#include <QSqlDatabase>
#include <QString>

struct sqlite3;
struct sqlite3_stmt;

namespace dialog::archiver {

constexpr qint64 MinuteUs = 60LL * 1000000;
constexpr qint64 HourUs = 3600LL * 1000000;
constexpr qint64 DayUs = 24 * HourUs;

/// Opens the archive @p path for writing as connection @p connection (WAL, a 64 MiB page cache)
/// and creates its tables if they are missing. On failure the returned database is closed and
/// @p error says why; the connection stays registered (sql::closeConnection() removes it).
QSqlDatabase openArchive(const QString &path, const QString &connection, QString *error);

/// A prepared statement on the QSQLITE connection's own handle (as dialog-logger does: Qt SQL's
/// binding costs a hash look-up per value).
class Statement
{
public:
    Statement(QSqlDatabase &db, const char *sql);
    ~Statement();
    Statement(const Statement &) = delete;
    Statement &operator=(const Statement &) = delete;
    bool isValid() const { return m_stmt; }
    /// SQLite's text of the last error, or why there is no statement.
    QString error() const;
    sqlite3_stmt *get() const { return m_stmt; }
    /// Runs the bound statement and resets it; true when it completed.
    bool step();

private:
    sqlite3 *m_db = nullptr;
    sqlite3_stmt *m_stmt = nullptr;
};

/// Writes one bucket (mean, min, max, count) with an INSERT into minute or hour.
bool insertBucket(Statement &st, qint32 series, qint64 start, double mean, double min, double max, quint32 n);

/// The points of @p series between @p fromUs and @p toUs from @p table ("raw", "minute" or "hour"),
/// on the read-only connection @p connection to @p path (opened at its first use in the calling
/// thread, then kept). A bucket starting before @p fromUs but reaching into it is included.
bool readPoints(const QString &path, const QString &connection, const char *table, qint32 series,
                qint64 fromUs, qint64 toUs, QList<is::HistoryPoint> *out, QString *error);

} // namespace dialog::archiver
