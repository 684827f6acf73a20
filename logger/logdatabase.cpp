#include "logdatabase.h"

#include <QSqlError>
#include <QSqlQuery>
#include <QUrl>
#include <QUrlQuery>

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

QString DatabaseConfig::display() const
{
    if (!isPostgreSQL())
        return path;
    QString h = host;
    if (h.startsWith(QLatin1Char('/')))
        return QStringLiteral("postgresql://%1@/%2?host=%3").arg(user, name, h);
    return QStringLiteral("postgresql://%1@%2:%3/%4").arg(user, h).arg(port).arg(name);
}

DatabaseConfig DatabaseConfig::sqlite(const QString &path)
{
    DatabaseConfig c;
    c.path = path;
    return c;
}

std::optional<DatabaseConfig> DatabaseConfig::fromUrl(const QString &text, QString *error)
{
    const QUrl url(text, QUrl::StrictMode);
    auto bad = [&](const QString &why) {
        *error = QStringLiteral("invalid --db '%1': %2 (expected postgresql://user@host:port/database)")
                     .arg(text, why);
        return std::nullopt;
    };
    if (!url.isValid())
        return bad(url.errorString());
    if (url.scheme() != QLatin1String("postgresql") && url.scheme() != QLatin1String("postgres"))
        return bad(QStringLiteral("only postgresql:// is supported"));
    DatabaseConfig c;
    c.kind = Kind::PostgreSQL;
    c.host = url.host();
    c.user = url.userName();
    c.password = url.password();
    c.port = url.port(5432);
    c.name = url.path().mid(1);
    const QUrlQuery query(url);
    for (const auto &item : query.queryItems(QUrl::FullyDecoded)) {
        if (item.first == QLatin1String("host"))
            c.host = item.second;
        else
            return bad(QStringLiteral("unknown parameter '%1' (known: host)").arg(item.first));
    }
    if (c.host.isEmpty())
        return bad(QStringLiteral("no host"));
    if (c.name.isEmpty() || c.name.contains(QLatin1Char('/')))
        return bad(QStringLiteral("no database name"));
    if (c.user.isEmpty())
        return bad(QStringLiteral("no user"));
    return c;
}

QSqlDatabase openDatabase(const DatabaseConfig &config, const QString &connection, bool readOnly,
                          QString *error)
{
    QSqlDatabase db;
    if (config.isPostgreSQL()) {
        db = QSqlDatabase::addDatabase(QStringLiteral("QPSQL"), connection);
        if (!db.isValid()) {
            *error =
                QStringLiteral("Qt's PostgreSQL driver QPSQL is not installed (Debian: libqt6sql6-psql)");
            return db;
        }
        db.setHostName(config.host);
        db.setPort(config.port);
        db.setUserName(config.user);
        db.setPassword(config.password);
        db.setDatabaseName(config.name);
        // An unreachable server costs the store's thread a bounded wait, not libpq's default.
        db.setConnectOptions(QStringLiteral("connect_timeout=5;application_name=dialog-logger"));
    } else {
        db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), connection);
        db.setDatabaseName(config.path);
        db.setConnectOptions(QStringLiteral("QSQLITE_BUSY_TIMEOUT=5000") +
                             (readOnly ? QStringLiteral(";QSQLITE_OPEN_READONLY") : QString()));
    }
    if (!db.open()) {
        *error = db.lastError().text().trimmed();
        return db;
    }
    bool ok = true;
    if (config.isPostgreSQL()) {
        // The store writes literals with doubled quotes only.
        ok = exec(db, QStringLiteral("SET standard_conforming_strings = on"), error) &&
             (readOnly || createPostgresSchema(db, error));
    } else if (!readOnly) {
        ok = exec(db, QStringLiteral("PRAGMA journal_mode=WAL"), error) &&
             exec(db, QStringLiteral("PRAGMA synchronous=NORMAL"), error) && createSqliteSchema(db, error);
    }
    if (!ok)
        db.close();
    return db;
}

void closeDatabase(const QString &connection)
{
    {
        QSqlDatabase db = QSqlDatabase::database(connection, false);
        db.close();
    }
    QSqlDatabase::removeDatabase(connection);
}

} // namespace dialog::logger
