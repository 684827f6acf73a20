// The alarm history and the operators' state of dialog-alarmserver in SQLite (<data-dir>/alarms.sqlite)
// or PostgreSQL (--db), opened through libdialog/sql. Writes are queued in memory and written in
// one transaction per flush (every 200 ms); when the database fails (gone, full, unreachable) the
// alarms go on from memory, the failed writes are counted and retried, oldest first, until they
// succeed (the queue is bounded: beyond it the oldest rows are dropped and counted).
#pragma once

#include "alarmtable.h"

#include "sqldatabase.h"

#include <QJsonArray>
#include <QSqlDatabase>
#include <QTimer>

namespace dialog::alarm {

/// One row of the history.
struct HistoryRow
{
    qint64 timeMs = 0;
    QString path, event, state, severity, value, who, comment;
    bool proven = false;
    QJsonObject toJson() const;
};

class HistoryStore : public QObject
{
    Q_OBJECT
public:
    explicit HistoryStore(const sql::DatabaseConfig &config, QObject *parent = nullptr);
    ~HistoryStore() override;

    /// Opens the database and creates the tables. False with the reason (the server does not start).
    bool open(QString *error);
    /// The kept state of every alarm (path -> AlarmState::persistent()).
    QHash<QString, QJsonObject> loadStates();

    /// Queues a history row and the alarm's new persistent state.
    void append(const HistoryRow &row, const QJsonObject &state);
    /// Rows of alarms at or below @p path ("" all), between @p sinceMs and @p untilMs (0: now),
    /// newest first, at most @p limit; rows not written yet included. False with the reason.
    bool query(const QString &path, qint64 sinceMs, qint64 untilMs, int limit, QJsonArray *out,
               QString *error);

    /// Writes everything queued now (also at destruction).
    void flush();

    quint64 written() const { return m_written; }
    quint64 failures() const { return m_failures; }
    quint64 dropped() const { return m_dropped; }
    int pending() const { return int(m_rows.size() + m_states.size()); }
    QString lastError() const { return m_lastError; }
    QString display() const { return m_config.display(); }

    /// The most rows kept in memory while the database fails.
    static constexpr int MaxPendingRows = 100000;

private:
    bool ensureOpen();
    bool execAll(const char *const *b, const char *const *e, QString *error);

    sql::DatabaseConfig m_config;
    QString m_connection;
    QSqlDatabase m_db;
    bool m_broken = false;
    QList<HistoryRow> m_rows;
    QHash<QString, QJsonObject> m_states;
    QTimer m_timer;
    qint64 m_retryAtMs = 0;
    quint64 m_written = 0, m_failures = 0, m_dropped = 0;
    QString m_lastError;
};

} // namespace dialog::alarm
