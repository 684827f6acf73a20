// The tables of dialog-configdb (documents, commits, tags, runs) in SQLite or PostgreSQL, and the
// one way the store and the run registry write them: a transaction that holds the database's
// writer lock from its first statement, so a commit and a run-number allocation are atomic against
// every other writer, other configdb daemons on the same PostgreSQL database included.
#pragma once

#include "sqldatabase.h"

#include "dialog/status.h"

#include <QSqlDatabase>
#include <QSqlQuery>
#include <QVariant>
#include <initializer_list>

namespace dialog::configdb {

/// One connection of the calling thread to the configuration database.
class ConfigDatabase
{
public:
    explicit ConfigDatabase(const sql::DatabaseConfig &config);
    ~ConfigDatabase();
    ConfigDatabase(const ConfigDatabase &) = delete;
    ConfigDatabase &operator=(const ConfigDatabase &) = delete;

    /// Opens the connection and creates the tables if missing. StorageError with the reason.
    Status open();
    /// After a failure of the database (a PostgreSQL server restarted, a disk that was full), opens
    /// the connection again; nothing when the last statement succeeded. StorageError if it cannot.
    Status ensureOpen();
    bool isPostgreSQL() const { return m_config.isPostgreSQL(); }
    const sql::DatabaseConfig &config() const { return m_config; }

    /// Runs @p sql with @p values bound in order; @p q is left on the result. StorageError naming
    /// @p what on failure.
    Status exec(QSqlQuery &q, const QString &sql, std::initializer_list<QVariant> values, const char *what);
    /// A query on this connection.
    QSqlQuery query() const { return QSqlQuery(m_db); }

    /// Begins a write transaction holding the writer lock (SQLite: BEGIN IMMEDIATE; PostgreSQL: an
    /// advisory transaction lock). StorageError if it cannot.
    Status begin();
    /// Commits what begin() started; on failure the transaction is rolled back and nothing was
    /// written.
    Status commit();
    /// Abandons what begin() started.
    void rollback();

private:
    sql::DatabaseConfig m_config;
    QString m_connection;
    QSqlDatabase m_db;
    bool m_broken = false; ///< a statement failed: the connection is opened again before the next request
};

} // namespace dialog::configdb
