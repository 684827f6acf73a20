#include "historystore.h"

#include <QDateTime>
#include <QJsonDocument>
#include <QLoggingCategory>
#include <QSqlError>
#include <QSqlQuery>

using namespace Qt::StringLiterals;

Q_LOGGING_CATEGORY(lcHistory, "dialog.alarm.history", QtInfoMsg)

namespace dialog::alarm {

namespace {

const char *const schema[] = {
    "CREATE TABLE IF NOT EXISTS alarm_history (time BIGINT NOT NULL, path TEXT NOT NULL, event TEXT NOT "
    "NULL, "
    "state TEXT NOT NULL, severity TEXT NOT NULL, value TEXT NOT NULL, who TEXT NOT NULL, proven INTEGER NOT "
    "NULL, comment TEXT NOT NULL)",
    "CREATE INDEX IF NOT EXISTS alarm_history_time ON alarm_history (time)",
    "CREATE INDEX IF NOT EXISTS alarm_history_path ON alarm_history (path, time)",
    "CREATE TABLE IF NOT EXISTS alarm_state (path TEXT PRIMARY KEY, state TEXT NOT NULL)",
};

constexpr qint64 RetryMs = 2000;

/// A text column's value: never NULL.
QVariant text(const QString &s)
{
    return s.isNull() ? QVariant(u""_s) : QVariant(s);
}

bool below(const QString &path, const QString &node)
{
    return node.isEmpty() || path == node || path.startsWith(node + u'/');
}

} // namespace

QJsonObject HistoryRow::toJson() const
{
    return {{u"time_ms"_s, timeMs}, {u"path"_s, path},         {u"event"_s, event},
            {u"state"_s, state},    {u"severity"_s, severity}, {u"value"_s, value},
            {u"who"_s, who},        {u"proven"_s, proven},     {u"comment"_s, comment}};
}

HistoryStore::HistoryStore(const sql::DatabaseConfig &config, QObject *parent)
    : QObject(parent), m_config(config), m_connection(u"alarm-history"_s)
{
    m_timer.setInterval(200);
    connect(&m_timer, &QTimer::timeout, this, &HistoryStore::flush);
}

HistoryStore::~HistoryStore()
{
    m_timer.stop();
    flush();
    m_db = QSqlDatabase();
    sql::closeConnection(m_connection);
}

bool HistoryStore::execAll(const char *const *b, const char *const *e, QString *error)
{
    QSqlQuery q(m_db);
    for (auto s = b; s != e; ++s)
        if (!q.exec(QLatin1String(*s))) {
            *error = q.lastError().text();
            return false;
        }
    return true;
}

bool HistoryStore::open(QString *error)
{
    m_db = sql::openConnection(m_config, m_connection, false, u"dialog-alarmserver"_s, error);
    if (!m_db.isOpen()) {
        *error = u"cannot open %1: %2"_s.arg(m_config.display(), *error);
        return false;
    }
    if (!execAll(std::begin(schema), std::end(schema), error)) {
        *error = u"cannot create the tables in %1: %2"_s.arg(m_config.display(), *error);
        return false;
    }
    m_timer.start();
    return true;
}

bool HistoryStore::ensureOpen()
{
    if (!m_broken)
        return true;
    if (QDateTime::currentMSecsSinceEpoch() < m_retryAtMs)
        return false;
    m_db = QSqlDatabase();
    sql::closeConnection(m_connection);
    QString error;
    m_db = sql::openConnection(m_config, m_connection, false, u"dialog-alarmserver"_s, &error);
    if (m_db.isOpen() && execAll(std::begin(schema), std::end(schema), &error)) {
        m_broken = false;
        qCInfo(lcHistory).noquote() << "alarm history" << m_config.display() << "writable again";
        return true;
    }
    m_lastError = error;
    m_retryAtMs = QDateTime::currentMSecsSinceEpoch() + RetryMs;
    return false;
}

QHash<QString, QJsonObject> HistoryStore::loadStates()
{
    QHash<QString, QJsonObject> states;
    QSqlQuery q(m_db);
    if (!q.exec(u"SELECT path, state FROM alarm_state"_s)) {
        qCWarning(lcHistory).noquote() << "cannot read the kept alarm states:" << q.lastError().text();
        return states;
    }
    while (q.next())
        states.insert(q.value(0).toString(),
                      QJsonDocument::fromJson(q.value(1).toString().toUtf8()).object());
    return states;
}

void HistoryStore::append(const HistoryRow &row, const QJsonObject &state)
{
    m_rows.append(row);
    if (m_rows.size() > MaxPendingRows) {
        m_rows.removeFirst();
        ++m_dropped;
    }
    m_states.insert(row.path, state);
}

void HistoryStore::flush()
{
    if (m_rows.isEmpty() && m_states.isEmpty())
        return;
    if (!ensureOpen())
        return;
    QString error;
    const auto failed = [&](const QString &why) {
        m_db.rollback();
        ++m_failures;
        m_broken = true;
        m_retryAtMs = QDateTime::currentMSecsSinceEpoch() + RetryMs;
        if (m_lastError != why)
            qCWarning(lcHistory).noquote() << "alarm history" << m_config.display() << "not written ("
                                           << pending() << "waiting, retried every 2 s):" << why;
        m_lastError = why;
    };
    if (!m_db.transaction())
        return failed(m_db.lastError().text());
    QSqlQuery q(m_db);
    q.prepare(u"INSERT INTO alarm_history (time, path, event, state, severity, value, who, proven, comment) "
              "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"_s);
    for (const HistoryRow &r : std::as_const(m_rows)) {
        for (const QVariant &v :
             {QVariant(r.timeMs), text(r.path), text(r.event), text(r.state), text(r.severity), text(r.value),
              text(r.who), QVariant(r.proven ? 1 : 0), text(r.comment)})
            q.addBindValue(v);
        if (!q.exec())
            return failed(q.lastError().text());
    }
    QSqlQuery s(m_db);
    s.prepare(
        m_config.isPostgreSQL()
            ? u"INSERT INTO alarm_state (path, state) VALUES (?, ?) ON CONFLICT (path) DO UPDATE SET state = "
              "EXCLUDED.state"_s
            : u"INSERT OR REPLACE INTO alarm_state (path, state) VALUES (?, ?)"_s);
    for (auto it = m_states.cbegin(); it != m_states.cend(); ++it) {
        s.addBindValue(it.key());
        s.addBindValue(QString::fromUtf8(QJsonDocument(it.value()).toJson(QJsonDocument::Compact)));
        if (!s.exec())
            return failed(s.lastError().text());
    }
    if (!m_db.commit())
        return failed(m_db.lastError().text());
    if (!m_lastError.isEmpty()) {
        qCInfo(lcHistory).noquote() << "alarm history: the" << m_rows.size() << "waiting rows written";
        m_lastError.clear();
    }
    m_written += quint64(m_rows.size());
    m_rows.clear();
    m_states.clear();
}

bool HistoryStore::query(const QString &path, qint64 sinceMs, qint64 untilMs, int limit, QJsonArray *out,
                         QString *error)
{
    if (untilMs <= 0)
        untilMs = std::numeric_limits<qint64>::max();
    // What is not written yet is the newest.
    for (auto it = m_rows.crbegin(); it != m_rows.crend() && out->size() < limit; ++it)
        if (below(it->path, path) && it->timeMs >= sinceMs && it->timeMs <= untilMs)
            out->append(it->toJson());
    if (out->size() >= limit)
        return true;
    if (!ensureOpen()) {
        *error = u"the alarm history %1 cannot be read: %2"_s.arg(m_config.display(), m_lastError);
        return out->size() > 0;
    }
    QSqlQuery q(m_db);
    q.prepare(
        u"SELECT time, path, event, state, severity, value, who, proven, comment FROM alarm_history "
        "WHERE time >= ? AND time <= ? AND (? = '' OR path = ? OR substr(path, 1, length(?) + 1) = ? || '/') "
        "ORDER BY time DESC LIMIT ?"_s);
    for (const QVariant &v : {QVariant(sinceMs), QVariant(untilMs), QVariant(path), QVariant(path),
                              QVariant(path), QVariant(path), QVariant(limit - int(out->size()))})
        q.addBindValue(v);
    if (!q.exec()) {
        *error = q.lastError().text();
        return false;
    }
    while (q.next()) {
        HistoryRow r{q.value(0).toLongLong(), q.value(1).toString(), q.value(2).toString(),
                     q.value(3).toString(),   q.value(4).toString(), q.value(5).toString(),
                     q.value(6).toString(),   q.value(8).toString(), q.value(7).toInt() != 0};
        out->append(r.toJson());
    }
    return true;
}

} // namespace dialog::alarm
