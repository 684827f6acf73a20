#include "logdatabase.h"

#include <QSqlError>
#include <QSqlQuery>

namespace dialog::logger {

namespace {
using sql::exec;

bool execAll(QSqlDatabase &db, const char *const *statements, int n, QString *error)
{
    for (int i = 0; i < n; ++i)
        if (!exec(db, QLatin1String(statements[i]), error))
            return false;
    return true;
}

bool createSqliteSchema(QSqlDatabase &db, QString *error)
{
    // Ids only grow (AUTOINCREMENT), even when the retention empties the table: clients page and follow
    // by id. `origins` holds the highest sequence stored of every reporting process (and PID): a batch
    // sent again (after a lost acknowledgement) is recognised by it (SqliteInsert).
    static const char *const statements[] = {
        "CREATE TABLE IF NOT EXISTS messages (id INTEGER PRIMARY KEY AUTOINCREMENT, time INTEGER NOT NULL, "
        "severity INTEGER NOT NULL, process TEXT NOT NULL, host TEXT NOT NULL, pid INTEGER NOT NULL, "
        "category TEXT NOT NULL, text TEXT NOT NULL, file TEXT, line INTEGER, run INTEGER NOT NULL, "
        "vals TEXT, seq INTEGER NOT NULL)",
        "CREATE TABLE IF NOT EXISTS origins (process TEXT NOT NULL, pid INTEGER NOT NULL, seq INTEGER NOT "
        "NULL, "
        "time INTEGER NOT NULL, PRIMARY KEY (process, pid)) WITHOUT ROWID",
        "CREATE INDEX IF NOT EXISTS messages_time ON messages (time)",
        // Entries of an index are ordered by (column, rowid): a process' newest messages are read
        // backwards from it without a sort.
        "CREATE INDEX IF NOT EXISTS messages_process ON messages (process)",
        // A process' messages of a short time window, severity read from the index: "warnings of FE3
        // in the last hour" costs the rows of that hour even when none matches (LogSearch chooses it).
        "CREATE INDEX IF NOT EXISTS messages_process_time ON messages (process, time, severity)",
    };
    if (!execAll(db, statements, int(std::size(statements)), error))
        return false;
    // A database of an earlier logger had a unique index on (process, pid, seq) instead of `origins`:
    // the origins are taken from the messages once, and the index goes.
    QSqlQuery q(db);
    if (!q.exec(QStringLiteral(
            "SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = 'messages_origin'"))) {
        *error = q.lastError().text();
        return false;
    }
    if (!q.next())
        return true;
    q.finish();
    static const char *const migration[] = {
        "BEGIN IMMEDIATE",
        "INSERT OR REPLACE INTO origins (process, pid, seq, time) SELECT process, pid, max(seq), max(time) "
        "FROM messages GROUP BY process, pid",
        "DROP INDEX messages_origin",
        "COMMIT",
    };
    if (execAll(db, migration, int(std::size(migration)), error))
        return true;
    exec(db, QStringLiteral("ROLLBACK"), nullptr);
    return false;
}

bool createPostgresSchema(QSqlDatabase &db, QString *error)
{
    // Several loggers may start at once against one database: CREATE … IF NOT EXISTS is not safe
    // against a concurrent twin, so the creation is serialised by an advisory lock. The host is part
    // of the unique key: loggers of several sites see the same process names and PIDs.
    static const char *const statements[] = {
        "SELECT pg_advisory_xact_lock(17170017)",
        "CREATE TABLE IF NOT EXISTS messages (id BIGSERIAL PRIMARY KEY, time BIGINT NOT NULL, "
        "severity INTEGER NOT NULL, process TEXT NOT NULL, host TEXT NOT NULL, pid BIGINT NOT NULL, "
        "category TEXT NOT NULL, text TEXT NOT NULL, file TEXT, line INTEGER, run BIGINT NOT NULL, "
        "vals TEXT, seq BIGINT NOT NULL)",
        "CREATE UNIQUE INDEX IF NOT EXISTS messages_origin ON messages (process, host, pid, seq)",
        "CREATE INDEX IF NOT EXISTS messages_time ON messages (time)",
        "CREATE INDEX IF NOT EXISTS messages_process ON messages (process, id)",
        "CREATE INDEX IF NOT EXISTS messages_process_time ON messages (process, time, severity)",
    };
    if (!db.transaction()) {
        *error = db.lastError().text();
        return false;
    }
    if (!execAll(db, statements, int(std::size(statements)), error)) {
        db.rollback();
        return false;
    }
    if (!db.commit()) {
        *error = db.lastError().text();
        return false;
    }
    return true;
}
} // namespace

QSqlDatabase openDatabase(const DatabaseConfig &config, const QString &connection, bool readOnly,
                          QString *error)
{
    QSqlDatabase db =
        sql::openConnection(config, connection, readOnly, QStringLiteral("dialog-logger"), error);
    if (!db.isOpen() || readOnly)
        return db;
    if (!(config.isPostgreSQL() ? createPostgresSchema(db, error) : createSqliteSchema(db, error)))
        db.close();
    return db;
}

void closeDatabase(const QString &connection)
{
    sql::closeConnection(connection);
}

} // namespace dialog::logger
