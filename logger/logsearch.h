// dialog-logger's searches: a LogQuery turned into one SQL statement over its own read-only
// connection, so searches run beside the writer (SQLite's WAL lets readers and one writer overlap;
// PostgreSQL's MVCC does the same).
#pragma once

#include "logdatabase.h"

#include "dialog/logrecord.h"

#include <QDeadlineTimer>
#include <QObject>
#include <QSqlDatabase>
#include <QSqlQuery>

namespace dialog::logger {

class LogSearch : public QObject
{
    Q_OBJECT
public:
    /// Longest search text: a LIKE of a long text over long messages costs their product per row.
    static constexpr int maxTextLength() { return 256; }

    /// Searches @p database; one search may take @p budgetMs (0: no bound).
    explicit LogSearch(const DatabaseConfig &database, int budgetMs = 0);
    ~LogSearch() override;

    /// Runs @p query (in the calling thread): at most query.limit records, newest first; @p more
    /// tells whether older ones match too. std::nullopt with @p error when the database fails, the
    /// text is longer than maxTextLength(), or the search takes longer than its budget (it is
    /// stopped then: SQLite's progress handler, PostgreSQL's statement_timeout).
    std::optional<QList<LogRecord>> run(const LogQuery &query, bool *more, QString *error);

private:
    std::optional<QList<LogRecord>> execute(const QString &sql, const QVariantList &binds, int limit,
                                            bool *more, QString *error);

    static std::optional<QList<LogRecord>> read(QSqlQuery &q, int limit, bool *more);
    /// Arms (or with @p on false, disarms) the budget of the statement about to run.
    void watch(QSqlDatabase &db, bool on);
    QString overBudget() const;

    DatabaseConfig m_database;
    QString m_connection;
    bool m_open = false;
    int m_budgetMs = 0;
    QDeadlineTimer m_deadline;
};

} // namespace dialog::logger
