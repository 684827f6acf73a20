#include "sqldatabase.h"

#include <QDir>
#include <QSqlError>
#include <QStandardPaths>
#include <QSqlQuery>
#include <QUrl>
#include <QUrlQuery>

namespace dialog::sql {

bool exec(QSqlDatabase &db, const QString &sql, QString *error)
{
    QSqlQuery q(db);
    if (q.exec(sql))
        return true;
    if (error)
        *error = q.lastError().text();
    return false;
}

QString DatabaseConfig::display() const
{
    if (!isPostgreSQL())
        return path;
    QString h = host;
    if (h.startsWith(QLatin1Char('/')))
        return QStringLiteral("postgresql://%1@/%2?host=%3").arg(user, name, h);
    return QStringLiteral("postgresql://%1@%2:%3/%4").arg(user, h).arg(port).arg(name);
}

DatabaseConfig DatabaseConfig::sqlite(const QString &path)
{
    DatabaseConfig c;
    c.path = path;
    return c;
}

std::optional<DatabaseConfig> DatabaseConfig::choose(const QString &db, const QString &dataDir,
                                                    const QString &fileName, QString *error)
{
    if (!db.isEmpty()) {
        if (!dataDir.isEmpty())
            return *error = QStringLiteral("--db and --data-dir exclude each other"), std::nullopt;
        if (db == QLatin1String("sqlite"))
            return *error = QStringLiteral("--db sqlite is the default: give --data-dir instead"), std::nullopt;
        return fromUrl(db, error);
    }
    QString dir = dataDir;
    if (dir.isEmpty()) // under systemd (StateDirectory=) the unit's state directory
        dir = qEnvironmentVariable("STATE_DIRECTORY").section(QLatin1Char(':'), 0, 0);
    if (dir.isEmpty())
        dir = QStandardPaths::writableLocation(QStandardPaths::AppLocalDataLocation);
    if (!QDir().mkpath(dir))
        return *error = QStringLiteral("cannot create --data-dir '%1'").arg(dir), std::nullopt;
    return sqlite(QDir(dir).absoluteFilePath(fileName));
}

std::optional<DatabaseConfig> DatabaseConfig::fromUrl(const QString &text, QString *error)
{
    const QUrl url(text, QUrl::StrictMode);
    auto bad = [&](const QString &why) {
        *error = QStringLiteral("invalid --db '%1': %2 (expected postgresql://user@host:port/database)")
                     .arg(text, why);
        return std::nullopt;
    };
    if (!url.isValid())
        return bad(url.errorString());
    if (url.scheme() != QLatin1String("postgresql") && url.scheme() != QLatin1String("postgres"))
        return bad(QStringLiteral("only postgresql:// is supported"));
    DatabaseConfig c;
    c.kind = Kind::PostgreSQL;
    c.host = url.host();
    c.user = url.userName();
    c.password = url.password();
    c.port = url.port(5432);
    c.name = url.path().mid(1);
    const QUrlQuery query(url);
    for (const auto &item : query.queryItems(QUrl::FullyDecoded)) {
        if (item.first == QLatin1String("host"))
            c.host = item.second;
        else
            return bad(QStringLiteral("unknown parameter '%1' (known: host)").arg(item.first));
    }
    if (c.host.isEmpty())
        return bad(QStringLiteral("no host"));
    if (c.name.isEmpty() || c.name.contains(QLatin1Char('/')))
        return bad(QStringLiteral("no database name"));
    if (c.user.isEmpty())
        return bad(QStringLiteral("no user"));
    return c;
}

QSqlDatabase openConnection(const DatabaseConfig &config, const QString &connection, bool readOnly,
                            const QString &applicationName, QString *error)
{
    QSqlDatabase db;
    if (config.isPostgreSQL()) {
        db = QSqlDatabase::addDatabase(QStringLiteral("QPSQL"), connection);
        if (!db.isValid()) {
            *error =
                QStringLiteral("Qt's PostgreSQL driver QPSQL is not installed (Debian: libqt6sql6-psql)");
            return db;
        }
        db.setHostName(config.host);
        db.setPort(config.port);
        db.setUserName(config.user);
        db.setPassword(config.password);
        db.setDatabaseName(config.name);
        // An unreachable server costs the caller's thread a bounded wait, not libpq's default.
        db.setConnectOptions(QStringLiteral("connect_timeout=5;application_name=") + applicationName);
    } else {
        db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), connection);
        db.setDatabaseName(config.path);
        db.setConnectOptions(QStringLiteral("QSQLITE_BUSY_TIMEOUT=5000") +
                             (readOnly ? QStringLiteral(";QSQLITE_OPEN_READONLY") : QString()));
    }
    if (!db.open()) {
        *error = db.lastError().text().trimmed();
        return db;
    }
    bool ok = true;
    if (config.isPostgreSQL())
        // Literals are written with doubled quotes only.
        ok = exec(db, QStringLiteral("SET standard_conforming_strings = on"), error);
    else if (!readOnly)
        ok = exec(db, QStringLiteral("PRAGMA journal_mode=WAL"), error) &&
             exec(db, QStringLiteral("PRAGMA synchronous=NORMAL"), error);
    if (!ok)
        db.close();
    return db;
}

void closeConnection(const QString &connection)
{
    {
        QSqlDatabase db = QSqlDatabase::database(connection, false);
        db.close();
    }
    QSqlDatabase::removeDatabase(connection);
}

} // namespace dialog::sql
