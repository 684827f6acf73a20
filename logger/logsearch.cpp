#include "logsearch.h"

#include "logstore.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QSqlError>
#include <QSqlQuery>

namespace dialog::logger {

LogSearch::LogSearch(const QString &path)
    : m_path(path), m_connection(QStringLiteral("search-%1").arg(quintptr(this)))
{
}

LogSearch::~LogSearch()
{
    {
        QSqlDatabase db = QSqlDatabase::database(m_connection, false);
        db.close();
    }
    QSqlDatabase::removeDatabase(m_connection);
}

std::optional<QList<LogRecord>> LogSearch::run(const LogQuery &query, bool *more, QString *error)
{
    if (!m_open) {
        QSqlDatabase db = openDatabase(m_path, m_connection, true, error);
        m_open = db.isOpen();
        if (!m_open) {
            db = QSqlDatabase();
            QSqlDatabase::removeDatabase(m_connection);
            return std::nullopt;
        }
    }
    QStringList where;
    QVariantList binds;
    auto add = [&](const char *clause, const QVariant &v) {
        where.append(QLatin1String(clause));
        binds.append(v);
    };
    if (query.sinceMs)
        add("time >= ?", query.sinceMs);
    if (query.untilMs)
        add("time <= ?", query.untilMs);
    if (query.minSeverity > Severity::Debug)
        add("severity >= ?", int(query.minSeverity));
    // A pattern without wildcards is an equality, which the planner always serves from an index.
    auto match = [&](const char *column, const QString &pattern) {
        if (pattern.isEmpty())
            return;
        const bool glob = pattern.contains(QLatin1Char('*')) || pattern.contains(QLatin1Char('?')) ||
                          pattern.contains(QLatin1Char('['));
        where.append(QLatin1String(column) + (glob ? QLatin1String(" GLOB ?") : QLatin1String(" = ?")));
        binds.append(pattern);
    };
    match("process", query.process);
    match("host", query.host);
    match("category", query.category);
    if (!query.text.isEmpty()) {
        QString t = query.text;
        t.replace(QLatin1Char('\\'), QLatin1String("\\\\"))
            .replace(QLatin1Char('%'), QLatin1String("\\%"))
            .replace(QLatin1Char('_'), QLatin1String("\\_"));
        add("text LIKE ? ESCAPE '\\'", QString(QLatin1Char('%') + t + QLatin1Char('%')));
    }
    if (query.run)
        add("run = ?", qint64(query.run));
    if (query.beforeId)
        add("id < ?", query.beforeId);
    if (query.afterId)
        add("id > ?", query.afterId);
    QString sql =
        QStringLiteral("SELECT id, time, severity, process, host, pid, category, text, file, line, run, "
                       "vals, seq FROM messages");
    if (!where.isEmpty())
        sql += QStringLiteral(" WHERE ") + where.join(QStringLiteral(" AND "));
    sql += QStringLiteral(" ORDER BY id DESC LIMIT %1").arg(query.limit + 1);

    QSqlDatabase db = QSqlDatabase::database(m_connection, false);
    QSqlQuery q(db);
    q.setForwardOnly(true);
    if (!q.prepare(sql)) {
        *error = q.lastError().text();
        return std::nullopt;
    }
    for (int i = 0; i < binds.size(); ++i)
        q.bindValue(i, binds.at(i));
    if (!q.exec()) {
        *error = q.lastError().text();
        return std::nullopt;
    }
    QList<LogRecord> out;
    *more = false;
    while (q.next()) {
        if (out.size() == query.limit) {
            *more = true;
            break;
        }
        LogRecord r;
        r.id = q.value(0).toLongLong();
        r.timeMs = q.value(1).toLongLong();
        r.severity = Severity(qBound(0, q.value(2).toInt(), int(Severity::Fatal)));
        r.process = q.value(3).toString();
        r.host = q.value(4).toString();
        r.pid = q.value(5).toLongLong();
        r.category = q.value(6).toString();
        r.text = q.value(7).toString();
        r.file = q.value(8).toString();
        r.line = q.value(9).toInt();
        r.run = quint32(q.value(10).toLongLong());
        if (!q.value(11).isNull())
            r.values = QJsonDocument::fromJson(q.value(11).toString().toUtf8()).object().toVariantMap();
        r.sequence = quint64(q.value(12).toLongLong());
        out.append(std::move(r));
    }
    return out;
}

} // namespace dialog::logger
