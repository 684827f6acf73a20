#include "archivedb.h"

#include "sqldatabase.h"

#include <QSqlDriver>
#include <QSqlError>
#include <QSqlQuery>
#include <QVariant>
#include <sqlite3.h>

namespace dialog::archiver {

namespace {
bool createSchema(QSqlDatabase &db, QString *error)
{
    // Clustered by (series, time): a query reads one contiguous range.
    const char *const statements[] = {
        "CREATE TABLE IF NOT EXISTS series (id INTEGER PRIMARY KEY, object TEXT NOT NULL, attribute TEXT NOT "
        "NULL, UNIQUE (object, attribute))",
        "CREATE TABLE IF NOT EXISTS raw (series INTEGER NOT NULL, t INTEGER NOT NULL, v REAL NOT NULL, "
        "PRIMARY KEY (series, t)) WITHOUT ROWID",
        "CREATE TABLE IF NOT EXISTS minute (series INTEGER NOT NULL, t INTEGER NOT NULL, mean REAL NOT NULL, "
        "min REAL NOT NULL, max REAL NOT NULL, n INTEGER NOT NULL, PRIMARY KEY (series, t)) WITHOUT ROWID",
        "CREATE TABLE IF NOT EXISTS hour (series INTEGER NOT NULL, t INTEGER NOT NULL, mean REAL NOT NULL, "
        "min REAL NOT NULL, max REAL NOT NULL, n INTEGER NOT NULL, PRIMARY KEY (series, t)) WITHOUT ROWID",
    };
    for (const char *s : statements)
        if (!sql::exec(db, QLatin1String(s), error))
            return false;
    return true;
}
} // namespace

QSqlDatabase openArchive(const QString &path, const QString &connection, QString *error)
{
    QSqlDatabase db = sql::openConnection(sql::DatabaseConfig::sqlite(path), connection, false,
                                          QStringLiteral("dialog-archiver"), error);
    if (db.isOpen() &&
        (!sql::exec(db, QStringLiteral("PRAGMA cache_size=-65536"), error) || !createSchema(db, error)))
        db.close();
    return db;
}

Statement::Statement(QSqlDatabase &db, const char *sql)
{
    const QVariant h = db.driver()->handle();
    if (h.isValid() && qstrcmp(h.typeName(), "sqlite3*") == 0)
        m_db = *static_cast<sqlite3 *const *>(h.constData());
    if (m_db)
        sqlite3_prepare_v2(m_db, sql, -1, &m_stmt, nullptr);
}

Statement::~Statement()
{
    sqlite3_finalize(m_stmt);
}

QString Statement::error() const
{
    return m_db ? QString::fromUtf8(sqlite3_errmsg(m_db)) : QStringLiteral("not a QSQLITE connection");
}

bool Statement::step()
{
    const int rc = sqlite3_step(m_stmt);
    sqlite3_reset(m_stmt);
    return rc == SQLITE_DONE;
}

bool insertBucket(Statement &st, qint32 series, qint64 start, double mean, double min, double max, quint32 n)
{
    sqlite3_bind_int(st.get(), 1, series);
    sqlite3_bind_int64(st.get(), 2, start);
    sqlite3_bind_double(st.get(), 3, mean);
    sqlite3_bind_double(st.get(), 4, min);
    sqlite3_bind_double(st.get(), 5, max);
    sqlite3_bind_int64(st.get(), 6, n);
    return st.step();
}

bool readPoints(const QString &path, const QString &connection, const char *table, qint32 series,
                qint64 fromUs, qint64 toUs, QList<is::HistoryPoint> *out, QString *error)
{
    QSqlDatabase db = QSqlDatabase::database(connection, false);
    if (!db.isValid())
        db = sql::openConnection(sql::DatabaseConfig::sqlite(path), connection, true,
                                 QStringLiteral("dialog-archiver"), error);
    else if (!db.isOpen() && !db.open())
        *error = db.lastError().text();
    if (!db.isOpen())
        return false;
    const bool raw = qstrcmp(table, "raw") == 0;
    QSqlQuery q(db);
    q.setForwardOnly(true);
    q.prepare(
        raw ? QStringLiteral(
                  "SELECT t, v, v, v, 1 FROM raw WHERE series = ? AND t BETWEEN ? AND ? ORDER BY t")
            : QStringLiteral("SELECT t, mean, min, max, n FROM %1 WHERE series = ? AND t BETWEEN ? AND ? "
                             "ORDER BY t")
                  .arg(QLatin1String(table)));
    q.addBindValue(series);
    q.addBindValue(raw ? fromUs : fromUs - (qstrcmp(table, "minute") == 0 ? MinuteUs : HourUs) + 1);
    q.addBindValue(toUs);
    if (!q.exec()) {
        *error = q.lastError().text();
        return false;
    }
    while (q.next()) {
        is::HistoryPoint p;
        p.time = is::Time(q.value(0).toLongLong());
        p.value = q.value(1).toDouble();
        p.min = q.value(2).toDouble();
        p.max = q.value(3).toDouble();
        p.count = quint32(q.value(4).toLongLong());
        out->append(p);
    }
    return true;
}

} // namespace dialog::archiver
