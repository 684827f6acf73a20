// dialog-logger's searches: a LogQuery turned into one SQL statement over its own read-only
// connection, so searches run beside the writer (SQLite's WAL lets readers and one writer overlap).
#pragma once

#include "dialog/logrecord.h"

#include <QObject>

namespace dialog::logger {

class LogSearch : public QObject
{
    Q_OBJECT
public:
    explicit LogSearch(const QString &path);
    ~LogSearch() override;

    /// Runs @p query (in the calling thread): at most query.limit records, newest first; @p more
    /// tells whether older ones match too. std::nullopt with @p error when the database fails.
    std::optional<QList<LogRecord>> run(const LogQuery &query, bool *more, QString *error);

private:
    QString m_path, m_connection;
    bool m_open = false;
};

} // namespace dialog::logger
