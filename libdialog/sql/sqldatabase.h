// Where a daemon keeps its tables: a SQLite file (QSQLITE, the default) or a PostgreSQL database
// (QPSQL, --db postgresql://…) that several daemons and readers share. The --db syntax and the
// connection set-up of both live here; each daemon creates its own schema.
#pragma once

#include <QSqlDatabase>
#include <QString>
#include <optional>

namespace dialog::sql {

struct DatabaseConfig
{
    enum class Kind
    {
        SQLite,
        PostgreSQL,
    };
    Kind kind = Kind::SQLite;
    QString path; ///< SQLite: the file
    /// PostgreSQL: server, port, user, password (may be empty) and database name. A host that starts
    /// with '/' is the directory of the server's unix socket (as for libpq).
    QString host, user, password, name;
    int port = 5432;

    bool isPostgreSQL() const { return kind == Kind::PostgreSQL; }
    /// The file, or the URL without the password (for messages and statistics).
    QString display() const;

    /// Parses postgresql://[user[:password]@]host[:port]/database[?host=/socket/dir] (also
    /// "postgres://"); std::nullopt with a one-line reason in @p error for anything else.
    static std::optional<DatabaseConfig> fromUrl(const QString &url, QString *error);
    static DatabaseConfig sqlite(const QString &path);
    /// A daemon's database from its options: PostgreSQL when @p db (--db) is given, else the SQLite
    /// file @p fileName in @p dataDir (--data-dir; empty: systemd's $STATE_DIRECTORY, else the
    /// user's application data directory), created if missing. std::nullopt with the reason in
    /// @p error (both given, a bad URL, a directory that cannot be made).
    static std::optional<DatabaseConfig> choose(const QString &db, const QString &dataDir, const QString &fileName,
                                                QString *error);
};

/// Opens @p config as connection @p connection (in the calling thread): SQLite with a busy time-out
/// and, unless @p readOnly, in WAL mode; PostgreSQL with a bounded connect time-out, reporting
/// @p applicationName, with standard-conforming strings. On failure the returned database is
/// closed and @p error says why.
QSqlDatabase openConnection(const DatabaseConfig &config, const QString &connection, bool readOnly,
                            const QString &applicationName, QString *error);
/// Runs @p sql on @p db; false with the driver's text in @p error (if not null).
bool exec(QSqlDatabase &db, const QString &sql, QString *error);
/// Closes and removes the connection @p connection (in the thread that opened it).
void closeConnection(const QString &connection);

} // namespace dialog::sql
