// The message browser's table: stored and live messages in one list, newest first, each message
// once (by the logger's row id), whatever order pages and live updates arrive in.
#pragma once

#include "dialog/logrecord.h"

#include <QAbstractTableModel>
#include <QRegularExpression>
#include <QSet>

namespace dialog::msgbrowser {

/// What the browser shows: a LogQuery that is also applied to live messages in this process.
class LogFilter
{
public:
    LogFilter() = default;
    explicit LogFilter(const LogQuery &query);
    const LogQuery &query() const { return m_query; }
    /// True if @p record passes every field of the query (as the logger's search would decide).
    bool matches(const LogRecord &record) const;

private:
    LogQuery m_query;
    QRegularExpression m_process, m_host, m_category;
};

class LogModel : public QAbstractTableModel
{
    Q_OBJECT
public:
    enum Column
    {
        Time,
        Severity,
        Process,
        Host,
        Category,
        Run,
        Text,
        ColumnCount
    };
    Q_ENUM(Column)

    explicit LogModel(QObject *parent = nullptr);

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

    /// Adds @p records (any order); ones already shown are skipped.
    void add(const QList<LogRecord> &records);
    void clear();
    const LogRecord &record(int row) const { return m_rows.at(row); }
    /// The oldest row id shown (0 when empty): the next older page is asked for before it.
    qint64 oldestId() const { return m_rows.isEmpty() ? 0 : m_rows.last().id; }
    qint64 newestId() const { return m_rows.isEmpty() ? 0 : m_rows.first().id; }

    /// The background colour of a severity (none for info).
    static QColor severityColor(dialog::Severity severity);
    /// The rows @p rows as CSV (RFC 4180: a header line, fields quoted where needed, CRLF).
    QByteArray toCsv(const QList<int> &rows) const;
    /// Every field of @p row, one per line, for the detail pane.
    QString details(int row) const;

private:
    QList<LogRecord> m_rows; ///< by id, descending
    QSet<qint64> m_ids;
};

} // namespace dialog::msgbrowser
