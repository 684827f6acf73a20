// dialog-logger's searches: a LogQuery turned into one SQL statement over its own read-only
// connection, so searches run beside the writer (SQLite's WAL lets readers and one writer overlap;
// PostgreSQL's MVCC does the same).
#pragma once

#include "logdatabase.h"

#include "dialog/logrecord.h"

#include <QObject>

namespace dialog::logger {

class LogSearch : public QObject
{
    Q_OBJECT
public:
    explicit LogSearch(const DatabaseConfig &database);
    ~LogSearch() override;

    /// Runs @p query (in the calling thread): at most query.limit records, newest first; @p more
    /// tells whether older ones match too. std::nullopt with @p error when the database fails.
    std::optional<QList<LogRecord>> run(const LogQuery &query, bool *more, QString *error);

private:
    std::optional<QList<LogRecord>> execute(const QString &sql, const QVariantList &binds, int limit, bool *more,
                                            QString *error);

    DatabaseConfig m_database;
    QString m_connection;
    bool m_open = false;
};

} // namespace dialog::logger
