#include "logsearch.h"

#include "logstore.h"

#include "dialog/glob.h"

#include <QDateTime>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSqlDriver>
#include <QSqlError>
#include <QSqlQuery>
#include <algorithm>
#include <sqlite3.h>

namespace dialog::logger {

namespace {
// Rows of one process read newest first before its time window is read from the index instead.
constexpr int ProbeRows = 2000;
} // namespace

LogSearch::LogSearch(const DatabaseConfig &database, int budgetMs)
    : m_database(database), m_connection(QStringLiteral("search-%1").arg(quintptr(this))),
      m_budgetMs(budgetMs)
{
}

namespace {
// SQLite calls it every few thousand virtual-machine steps of a statement; non-zero stops it.
int pastDeadline(void *deadline)
{
    return static_cast<const QDeadlineTimer *>(deadline)->hasExpired() ? 1 : 0;
}
} // namespace

void LogSearch::watch(QSqlDatabase &db, bool on)
{
    if (m_budgetMs <= 0)
        return;
    m_deadline = on ? QDeadlineTimer(m_budgetMs) : QDeadlineTimer(QDeadlineTimer::Forever);
    if (m_database.isPostgreSQL())
        return; // statement_timeout, set when the connection opens
    const QVariant h = db.driver()->handle();
    if (h.isValid() && qstrcmp(h.typeName(), "sqlite3*") == 0)
        if (sqlite3 *handle = *static_cast<sqlite3 *const *>(h.constData()))
            sqlite3_progress_handler(handle, on ? 1000 : 0, on ? &pastDeadline : nullptr, &m_deadline);
}

QString LogSearch::overBudget() const
{
    return QStringLiteral("the search took longer than %1 ms (--search-budget-ms) and was stopped; narrow it "
                          "(a time window, a process, a category, a shorter text)")
        .arg(m_budgetMs);
}

LogSearch::~LogSearch()
{
    closeDatabase(m_connection);
}

std::optional<QList<LogRecord>> LogSearch::run(const LogQuery &query, bool *more, QString *error)
{
    if (query.text.size() > maxTextLength()) {
        *error = QStringLiteral("search text too long: %1 characters, the most is %2")
                     .arg(query.text.size())
                     .arg(maxTextLength());
        return std::nullopt;
    }
    if (!m_open) {
        QSqlDatabase db = openDatabase(m_database, m_connection, true, error);
        m_open = db.isOpen();
        if (m_open && m_budgetMs > 0 && m_database.isPostgreSQL())
            QSqlQuery(db).exec(QStringLiteral("SET statement_timeout = %1").arg(m_budgetMs));
        if (!m_open) {
            db = QSqlDatabase();
            QSqlDatabase::removeDatabase(m_connection);
            return std::nullopt;
        }
    }
    const bool postgres = m_database.isPostgreSQL();
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
        if (!glob) {
            where.append(QLatin1String(column) + QLatin1String(" = ?"));
            binds.append(pattern);
        } else if (postgres) {
            where.append(QLatin1String(column) + QLatin1String(" ~ ?"));
            binds.append(QLatin1Char('^') + globToRegexPattern(pattern) + QLatin1Char('$'));
        } else {
            where.append(QLatin1String(column) + QLatin1String(" GLOB ?"));
            binds.append(globForSqlite(pattern));
        }
    };
    match("process", query.process);
    match("host", query.host);
    match("category", query.category);
    if (!query.text.isEmpty()) {
        QString t = query.text;
        // '!' escapes (a backslash between quotes would confuse Qt's placeholder scan for QPSQL).
        t.replace(QLatin1Char('!'), QLatin1String("!!"))
            .replace(QLatin1Char('%'), QLatin1String("!%"))
            .replace(QLatin1Char('_'), QLatin1String("!_"));
        // SQLite's LIKE ignores the case of ASCII letters; PostgreSQL's ILIKE does the same and more.
        add(postgres ? "text ILIKE ? ESCAPE '!'" : "text LIKE ? ESCAPE '!'",
            QString(QLatin1Char('%') + t + QLatin1Char('%')));
    }
    if (query.run)
        add("run = ?", qint64(query.run));
    if (query.beforeId)
        add("id < ?", query.beforeId);
    if (query.afterId)
        add("id > ?", query.afterId);
    const QString columns =
        QStringLiteral("SELECT id, time, severity, process, host, pid, category, text, file, line, run, "
                       "vals, seq FROM messages");
    const QString filter =
        where.isEmpty() ? QString() : QStringLiteral(" WHERE ") + where.join(QStringLiteral(" AND "));
    const QString order = QStringLiteral(" ORDER BY id DESC LIMIT %1").arg(query.limit + 1);
    QString sql = columns + filter + order;
    // One process: SQLite can walk its rows newest first (by id) and stop at the limit, fast when
    // matches are dense, but a window of one hour without a match would walk all of the process'
    // history; or read the window from the (process, time, severity) index and sort what matches, fast
    // for short windows, slow for long busy ones. Its statistics cannot tell how time and id go
    // together, so the choice is made here: the window for up to a day, the walk beyond. When the index
    // holds every column filtered on, the ids are sorted from the index alone and only the page's
    // rows are read.
    QString probe; // a first, bounded try (see below)
    QVariantList probeBinds;
    if (!postgres && where.contains(QStringLiteral("process = ?"))) {
        const qint64 windowEnd = query.untilMs ? query.untilMs : QDateTime::currentMSecsSinceEpoch();
        if (query.sinceMs && windowEnd - query.sinceMs <= 86400000) {
            // A window of a busy process holds many rows, and dense matches are found sooner by the
            // walk: its newest rows by id are tried first, a bounded number of them; when they hold a
            // whole page of matches, those are the newest matches (every row not read is older).
            probe = columns +
                    QStringLiteral(" WHERE id IN (SELECT id FROM (SELECT * FROM messages INDEXED BY "
                                   "messages_process WHERE process = ?") +
                    (query.beforeId ? QStringLiteral(" AND id < ?") : QString()) +
                    QStringLiteral(" ORDER BY id DESC LIMIT %1)").arg(ProbeRows) + filter + order +
                    QLatin1Char(')') + order;
            probeBinds << query.process;
            if (query.beforeId)
                probeBinds << query.beforeId;
            probeBinds += binds;
            static const QStringList indexed{QStringLiteral("process = ?"), QStringLiteral("time >= ?"),
                                             QStringLiteral("time <= ?"),   QStringLiteral("severity >= ?"),
                                             QStringLiteral("id < ?"),      QStringLiteral("id > ?")};
            const bool covered = std::all_of(where.cbegin(), where.cend(),
                                             [](const QString &c) { return indexed.contains(c); });
            sql = covered ? columns +
                                QStringLiteral(" WHERE id IN (SELECT id FROM messages INDEXED BY "
                                               "messages_process_time") +
                                filter + order + QLatin1Char(')') + order
                          : columns + QStringLiteral(" INDEXED BY messages_process_time") + filter + order;
        } else {
            sql = columns + QStringLiteral(" INDEXED BY messages_process") + filter + order;
        }
    }

    if (!probe.isEmpty()) {
        auto page = execute(probe, probeBinds, query.limit, more, error);
        if (!page || *more) // more than a page matched among the rows read: the newest page is right
            return page;
    }
    return execute(sql, binds, query.limit, more, error);
}

std::optional<QList<LogRecord>> LogSearch::execute(const QString &sql, const QVariantList &binds, int limit,
                                                   bool *more, QString *error)
{
    QSqlDatabase db = QSqlDatabase::database(m_connection, false);
    QSqlQuery q(db);
    q.setForwardOnly(true);
    bool ok = q.prepare(sql);
    for (int i = 0; ok && i < binds.size(); ++i)
        q.bindValue(i, binds.at(i));
    watch(db, true);
    const std::optional<QList<LogRecord>> out = ok && q.exec() ? read(q, limit, more) : std::nullopt;
    const bool late = m_budgetMs > 0 && m_deadline.hasExpired();
    watch(db, false);
    if (!out) {
        *error = late ? overBudget() : q.lastError().text().trimmed();
        // Opened again at the next search: a lost server connection is not reported as lost for ever
        // (libpq's errors do not say which they are).
        db = QSqlDatabase();
        q = QSqlQuery();
        closeDatabase(m_connection);
        m_open = false;
        return std::nullopt;
    }
    return out;
}

std::optional<QList<LogRecord>> LogSearch::read(QSqlQuery &q, int limit, bool *more)
{
    QList<LogRecord> out;
    *more = false;
    while (q.next()) {
        if (out.size() == limit) {
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
    // Stopped by the budget (or failed) while stepping: not a shorter answer.
    if (q.lastError().isValid())
        return std::nullopt;
    return out;
}

} // namespace dialog::logger
