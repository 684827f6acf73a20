// dialog-logger: stores every message reported in the DIALOG system (dialog::report(), Qt messages
// after dialog::installMessageHandler()) into SQLite and answers searches (dialogctl log …).
#include "loggerserver.h"
#include "logweb.h"

#include "dialog/daemon.h"
#include "dialog/options.h"
#include "dialog/report.h"
#include "dialog/security.h"

#include <QDir>
#include <QSqlDatabase>
#include <QStandardPaths>
#include <cstdio>

using namespace Qt::StringLiterals;
using dialog::Option;
using dialog::OptionTable;
using dialog::OptionUnit;

namespace {

// What the command line says beyond LogStore::Options.
struct Given
{
    QString name = u"dialog-logger"_s;
    QString dataDir, db;
    int retentionS = 60;
    qint64 maxBytes = -1; ///< --max-bytes; < 0: not given (SQLite's default bound)
    int httpPort = -1;
    QHostAddress httpBind{QHostAddress::LocalHost};
    QString httpTokenFile;
};

void addOptions(OptionTable &t, dialog::logger::LogStore::Options &o, Given &g)
{
    t.add({Option::text(u"name"_s, u"name"_s, u"Process name (default dialog-logger)."_s, &g.name),
           Option::text(u"data-dir"_s, u"dir"_s,
                        u"Directory of messages.sqlite (default: the user's data directory)."_s, &g.dataDir),
           Option::text(u"db"_s, u"url"_s,
                        u"Store into PostgreSQL instead of SQLite: postgresql://user[:password]@host[:port]/"
                        "database (?host=/dir for a unix socket directory). Many loggers may share one."_s,
                        &g.db),
           Option::integer(u"keep-days"_s, u"n"_s,
                           u"Delete messages older than this many days (default 30; 0: keep)."_s, &o.keepDays,
                           0, 100000),
           Option::size(u"max-bytes"_s, u"n"_s,
                        u"SQLite: delete the oldest ordinary messages while the database is larger (default "
                        "1073741824; 0: no bound); audit records are never deleted for size."_s,
                        &g.maxBytes, 0, qint64(1) << 50),
           Option::duration(u"search-budget-ms"_s, u"ms"_s,
                            u"One search may take this long; a longer one is stopped with a reason "
                            "(default 10000; 0: no bound)."_s,
                            &o.searchBudgetMs, OptionUnit::Milliseconds, 0, 3600000),
           Option::integer(
               u"buffer"_s, u"n"_s,
               u"Messages received and not yet written, at most; beyond, reporters are told to send "
               "again later (default 200000)."_s,
               &o.capacity, 1, 100000000),
           Option::duration(u"retention-s"_s, u"s"_s, u"How often the retention runs (default 60 s)."_s,
                            &g.retentionS, OptionUnit::Seconds, 1, 86400),
           Option::integer(
               u"http-port"_s, u"port"_s,
               u"Serve GET /log (JSON) and a search page on this port (0: any free one; default: no "
               "web side)."_s,
               &g.httpPort, 0, 65535),
           Option::custom(u"http-bind"_s, u"address"_s, u"Address of the web side (default 127.0.0.1)."_s,
                          [&g](const QString &v) {
                              return g.httpBind.setAddress(v) ? dialog::Status()
                                                              : Option::refuse(u"an IP address"_s);
                          }),
           Option::text(u"http-token-file"_s, u"file"_s,
                        u"/log and /stats of the web side need the bearer token held in this file (at least "
                        "16 bytes; white space around it ignored); the page asks for it."_s,
                        &g.httpTokenFile)});
}

// Where the messages go: PostgreSQL (--db) or SQLite in --data-dir. False with the reason.
bool chooseDatabase(const Given &g, dialog::logger::LogStore::Options &o, QString *why)
{
    if (!g.db.isEmpty()) {
        if (!g.dataDir.isEmpty())
            return *why = u"--db and --data-dir exclude each other"_s, false;
        if (g.maxBytes > 0)
            return *why =
                       u"--max-bytes applies to SQLite only (PostgreSQL does not give freed space back); use "
                       "--keep-days"_s,
                   false;
        auto db = dialog::logger::DatabaseConfig::fromUrl(g.db, why);
        if (!db)
            return false;
        if (!QSqlDatabase::isDriverAvailable(u"QPSQL"_s))
            return *why = u"--db needs Qt's PostgreSQL driver QPSQL (Debian: libqt6sql6-psql)"_s, false;
        o.database = *db;
        return true;
    }
    QString dir = g.dataDir;
    if (dir.isEmpty())
        dir = QStandardPaths::writableLocation(QStandardPaths::AppLocalDataLocation);
    if (!QDir().mkpath(dir))
        return *why = u"cannot create --data-dir '%1'"_s.arg(dir), false;
    o.database = dialog::logger::DatabaseConfig::sqlite(QDir(dir).absoluteFilePath(u"messages.sqlite"_s));
    // Bounded by default: a flood of messages must not fill the disk the audit records need.
    o.maxBytes = g.maxBytes < 0 ? qint64(1) << 30 : g.maxBytes;
    return true;
}

} // namespace

int main(int argc, char *argv[])
{
    dialog::DaemonApplication app(argc, argv, u"dialog-logger"_s);
    OptionTable t(u"dialog-logger"_s,
                  u"The message logger: stores every reported message into SQLite "
                  "(<data-dir>/messages.sqlite, WAL mode) or PostgreSQL (--db) and answers "
                  "searches (dialogctl log tail|search)."_s);
    dialog::logger::LogStore::Options o;
    Given g;
    dialog::ClientOptions co = dialog::ClientOptions::fromEnvironment();
    addOptions(t, o, g);
    co.addTo(t);
    if (!t.process(app.arguments()))
        return 1;
    o.retentionMs = g.retentionS * 1000;
    co.name = g.name;
    QString why;
    if (!chooseDatabase(g, o, &why))
        return t.fail(why);

    // The logger's own warnings (database errors, refusals) are messages like any other.
    app.beginService();
    dialog::Client client(co);
    dialog::logger::LoggerServer server(&client, o);
    if (!server.start(&why))
        return t.fail(why);
    dialog::logger::LogWeb web(&server);
    if (!g.httpTokenFile.isEmpty()) {
        if (g.httpPort < 0)
            return t.fail(u"--http-token-file needs --http-port"_s);
        QByteArray token;
        if (const dialog::Status st = dialog::security::readSecretFile(g.httpTokenFile, &token); !st.isOk())
            return t.fail(u"--http-token-file: %1"_s.arg(st.message()));
        web.setToken(token);
    }
    if (g.httpPort >= 0) {
        if (const dialog::Status st = web.listen(g.httpBind, quint16(g.httpPort)); !st.isOk())
            return t.fail(st.message());
        std::fprintf(stderr, "dialog-logger: web log on http://%s:%u/\n", qPrintable(g.httpBind.toString()),
                     unsigned(web.port()));
    }
    app.serviceReady(&client);
    std::fprintf(stderr, "dialog-logger: storing into %s\n", qPrintable(o.database.display()));
    return app.exec();
}
