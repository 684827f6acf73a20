#include "configdatabase.h"

#include <QAtomicInteger>
#include <QLoggingCategory>
#include <QSqlError>

Q_LOGGING_CATEGORY(lcConfigDatabase, "dialog.configdb.database", QtInfoMsg)

namespace dialog::configdb {

namespace {

// A document row holds its content from the version that set it; NULL content is a removal.
// Reading version V takes, per path, the row of the greatest version <= V (the primary key's
// order). Runs are numbered by the database alone (allocateRun).
const char *const sqliteSchema[] = {
    "CREATE TABLE IF NOT EXISTS commits (version INTEGER PRIMARY KEY, parent INTEGER NOT NULL, "
    "author TEXT NOT NULL, proven INTEGER NOT NULL, time INTEGER NOT NULL, message TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS documents (path TEXT NOT NULL, version INTEGER NOT NULL, content TEXT, "
    "PRIMARY KEY (path, version)) WITHOUT ROWID",
    "CREATE INDEX IF NOT EXISTS documents_version ON documents (version)",
    "CREATE TABLE IF NOT EXISTS tags (name TEXT PRIMARY KEY, version INTEGER NOT NULL, author TEXT NOT NULL, "
    "time INTEGER NOT NULL)",
    "CREATE TABLE IF NOT EXISTS runs (number INTEGER PRIMARY KEY, partition TEXT NOT NULL, run_type TEXT NOT "
    "NULL, config_version INTEGER NOT NULL, config_tag TEXT NOT NULL, operator TEXT NOT NULL, start_time "
    "INTEGER NOT NULL, end_time INTEGER, events INTEGER NOT NULL DEFAULT 0, bytes INTEGER NOT NULL DEFAULT "
    "0, "
    "end_reason TEXT, end_message TEXT, master TEXT NOT NULL, processes TEXT NOT NULL, messages TEXT, "
    "out_of_run TEXT)",
    "CREATE INDEX IF NOT EXISTS runs_start ON runs (start_time)",
    "CREATE INDEX IF NOT EXISTS runs_partition ON runs (partition, number)",
    // The runs that never ended, looked up at every start: a small index, not a scan of the registry.
    "CREATE INDEX IF NOT EXISTS runs_open ON runs (partition) WHERE end_time IS NULL",
};

const char *const postgresSchema[] = {
    "SELECT pg_advisory_xact_lock(17170033)",
    "CREATE TABLE IF NOT EXISTS commits (version BIGINT PRIMARY KEY, parent BIGINT NOT NULL, "
    "author TEXT NOT NULL, proven INTEGER NOT NULL, time BIGINT NOT NULL, message TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS documents (path TEXT NOT NULL, version BIGINT NOT NULL, content TEXT, "
    "PRIMARY KEY (path, version))",
    "CREATE INDEX IF NOT EXISTS documents_version ON documents (version)",
    "CREATE TABLE IF NOT EXISTS tags (name TEXT PRIMARY KEY, version BIGINT NOT NULL, author TEXT NOT NULL, "
    "time BIGINT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS runs (number BIGINT PRIMARY KEY, partition TEXT NOT NULL, run_type TEXT NOT "
    "NULL, config_version BIGINT NOT NULL, config_tag TEXT NOT NULL, operator TEXT NOT NULL, start_time "
    "BIGINT NOT NULL, end_time BIGINT, events BIGINT NOT NULL DEFAULT 0, bytes BIGINT NOT NULL DEFAULT 0, "
    "end_reason TEXT, end_message TEXT, master TEXT NOT NULL, processes TEXT NOT NULL, messages TEXT, "
    "out_of_run TEXT)",
    "CREATE INDEX IF NOT EXISTS runs_start ON runs (start_time)",
    "CREATE INDEX IF NOT EXISTS runs_partition ON runs (partition, number)",
    // The runs that never ended, looked up at every start: a small index, not a scan of the registry.
    "CREATE INDEX IF NOT EXISTS runs_open ON runs (partition) WHERE end_time IS NULL",
    // A registry of an earlier daemon: the warnings and errors of each run were not kept.
    "ALTER TABLE runs ADD COLUMN IF NOT EXISTS messages TEXT",
    // …nor what was out of each run (the run-control tree's disabled and removed nodes).
    "ALTER TABLE runs ADD COLUMN IF NOT EXISTS out_of_run TEXT",
};

Status storageError(bool *broken, const QString &what, const QString &why)
{
    *broken = true;
    return Status(Status::Code::StorageError, QStringLiteral("%1: %2").arg(what, why.trimmed()));
}

QString nextConnectionName()
{
    static QAtomicInteger<int> counter;
    return QStringLiteral("configdb-%1").arg(counter.fetchAndAddRelaxed(1));
}

} // namespace

ConfigDatabase::ConfigDatabase(const sql::DatabaseConfig &config)
    : m_config(config), m_connection(nextConnectionName())
{
}

ConfigDatabase::~ConfigDatabase()
{
    m_db = QSqlDatabase();
    sql::closeConnection(m_connection);
}

Status ConfigDatabase::open()
{
    QString error;
    m_db = sql::openConnection(m_config, m_connection, false, QStringLiteral("dialog-configdb"), &error);
    if (!m_db.isOpen())
        return storageError(&m_broken, QStringLiteral("cannot open %1").arg(m_config.display()), error);
    // A commit acknowledged is on disk: the WAL is synced at every commit (the default NORMAL
    // would keep the last ones only in the OS's cache).
    if (!isPostgreSQL() && !sql::exec(m_db, QStringLiteral("PRAGMA synchronous=FULL"), &error))
        return storageError(&m_broken, QStringLiteral("cannot set up %1").arg(m_config.display()), error);
    if (Status st = begin(); !st.isOk())
        return st;
    QSqlQuery q(m_db);
    const auto run = [&](const char *const *b, const char *const *e) {
        for (auto s = b; s != e; ++s)
            if (!q.exec(QLatin1String(*s)))
                return false;
        return true;
    };
    bool ok = isPostgreSQL() ? run(std::begin(postgresSchema), std::end(postgresSchema))
                             : run(std::begin(sqliteSchema), std::end(sqliteSchema));
    // A SQLite registry of an earlier daemon: the columns of the runs' warnings and errors and of
    // what was out of them are added (SQLite has no ADD COLUMN IF NOT EXISTS).
    for (const QLatin1String column : {QLatin1String("messages"), QLatin1String("out_of_run")})
        if (ok && !isPostgreSQL() &&
            q.exec(QStringLiteral("SELECT 1 FROM pragma_table_info('runs') WHERE name = '%1'").arg(column)) &&
            !q.next())
            ok = q.exec(QStringLiteral("ALTER TABLE runs ADD COLUMN %1 TEXT").arg(column));
    if (!ok) {
        const Status st =
            storageError(&m_broken, QStringLiteral("cannot create the tables"), q.lastError().text());
        rollback();
        return st;
    }
    return commit();
}

Status ConfigDatabase::ensureOpen()
{
    if (!m_broken)
        return {};
    m_db = QSqlDatabase();
    sql::closeConnection(m_connection);
    m_broken = false;
    const Status st = open();
    if (st.isOk())
        qCInfo(lcConfigDatabase).noquote() << "reconnected to" << m_config.display();
    return st;
}

Status ConfigDatabase::exec(QSqlQuery &q, const QString &sql, std::initializer_list<QVariant> values,
                            const char *what)
{
    if (!q.prepare(sql))
        return storageError(&m_broken, QLatin1String(what), q.lastError().text());
    for (const QVariant &v : values) {
        // A null QString binds as SQL NULL: an empty text is meant (a null QVariant stays NULL).
        if (!v.isNull() && v.typeId() == QMetaType::QString && v.toString().isNull())
            q.addBindValue(QStringLiteral(""));
        else
            q.addBindValue(v);
    }
    if (!q.exec())
        return storageError(&m_broken, QLatin1String(what), q.lastError().text());
    return {};
}

Status ConfigDatabase::begin()
{
    QString error;
    if (!isPostgreSQL()) {
        if (!sql::exec(m_db, QStringLiteral("BEGIN IMMEDIATE"), &error))
            return storageError(&m_broken, QStringLiteral("cannot begin a transaction"), error);
        return {};
    }
    if (!m_db.transaction())
        return storageError(&m_broken, QStringLiteral("cannot begin a transaction"), m_db.lastError().text());
    if (!sql::exec(m_db, QStringLiteral("SELECT pg_advisory_xact_lock(17170034)"), &error)) {
        m_db.rollback();
        return storageError(&m_broken, QStringLiteral("cannot lock the database"), error);
    }
    return {};
}

Status ConfigDatabase::commit()
{
    QString error;
    const bool ok = isPostgreSQL() ? m_db.commit() : sql::exec(m_db, QStringLiteral("COMMIT"), &error);
    if (ok)
        return {};
    if (isPostgreSQL())
        error = m_db.lastError().text();
    rollback();
    qCWarning(lcConfigDatabase).noquote() << "commit refused by" << m_config.display() << ":" << error;
    return storageError(&m_broken, QStringLiteral("the database refused the commit, nothing was written"),
                        error);
}

void ConfigDatabase::rollback()
{
    if (isPostgreSQL())
        m_db.rollback();
    else
        sql::exec(m_db, QStringLiteral("ROLLBACK"), nullptr);
}

} // namespace dialog::configdb
