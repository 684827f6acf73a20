// Where dialog-logger keeps its messages: a SQLite file (QSQLITE, the default) or a PostgreSQL
// database (QPSQL, --db postgresql://…) that many loggers and browsers share. The schema and the
// connection set-up of both live here; the store and the searches only pick the dialect.
#pragma once

#include <QSqlDatabase>
#include <QString>
#include <optional>

namespace dialog::logger {

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
};

/// Opens @p config as connection @p connection (in the calling thread) and, unless @p readOnly,
/// creates the table and its indexes if missing. On failure the returned database is closed and
/// @p error says why.
QSqlDatabase openDatabase(const DatabaseConfig &config, const QString &connection, bool readOnly,
                          QString *error);
/// Closes and removes the connection @p connection (in the thread that opened it).
void closeDatabase(const QString &connection);

} // namespace dialog::logger
