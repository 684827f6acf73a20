// Where dialog-logger keeps its messages: a SQLite file (QSQLITE, the default) or a PostgreSQL
// database (QPSQL, --db postgresql://…) that many loggers and browsers share. The schema of both
// lives here (the connection set-up in libdialog/sql); the store and the searches only pick the
// dialect.
#pragma once

#include "sqldatabase.h"

#include <QSqlDatabase>
#include <QString>

namespace dialog::logger {

/// The SQLite file or the PostgreSQL database (--db).
using DatabaseConfig = sql::DatabaseConfig;

/// Opens @p config as connection @p connection (in the calling thread) and, unless @p readOnly,
/// creates the table and its indexes if missing. On failure the returned database is closed and
/// @p error says why.
QSqlDatabase openDatabase(const DatabaseConfig &config, const QString &connection, bool readOnly,
                          QString *error);
/// Closes and removes the connection @p connection (in the thread that opened it).
void closeDatabase(const QString &connection);

} // namespace dialog::logger
