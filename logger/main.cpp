// dialog-logger: stores every message reported in the DIALOG system (dialog::report(), Qt messages
// after dialog::installMessageHandler()) into SQLite and answers searches (dialog log …).
#include "loggerserver.h"
#include "logweb.h"

#include "dialog/application.h"
#include "dialog/report.h"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QDir>
#include <QSqlDatabase>
#include <QStandardPaths>
#include <cstdio>

int main(int argc, char *argv[])
{
    dialog::preferLowLatencyEventDispatcher();
    QCoreApplication app(argc, argv);
    QCoreApplication::setApplicationName(QStringLiteral("dialog-logger"));
    QCommandLineParser p;
    p.setApplicationDescription(
        QStringLiteral("The message logger: stores every reported message into "
                       "SQLite (<data-dir>/messages.sqlite, WAL mode) or PostgreSQL (--db) "
                       "and answers searches (dialog log tail|search)."));
    p.addHelpOption();
    p.addOption({QStringLiteral("name"), QStringLiteral("Process name (default dialog-logger)."),
                 QStringLiteral("name"), QStringLiteral("dialog-logger")});
    p.addOption({QStringLiteral("data-dir"),
                 QStringLiteral("Directory of messages.sqlite (default: the user's data directory)."),
                 QStringLiteral("dir")});
    p.addOption(
        {QStringLiteral("db"),
         QStringLiteral("Store into PostgreSQL instead of SQLite: postgresql://user[:password]@host[:port]/"
                        "database (?host=/dir for a unix socket directory). Many loggers may share one."),
         QStringLiteral("url")});
    p.addOption({QStringLiteral("keep-days"),
                 QStringLiteral("Delete messages older than this many days (default 30; 0: keep)."),
                 QStringLiteral("n"), QStringLiteral("30")});
    p.addOption(
        {QStringLiteral("max-bytes"),
         QStringLiteral("Delete the oldest messages while the database is larger (default 0: no bound)."),
         QStringLiteral("n"), QStringLiteral("0")});
    p.addOption(
        {QStringLiteral("buffer"),
         QStringLiteral("Messages received and not yet written, at most; beyond, reporters are told to "
                        "send again later (default 200000)."),
         QStringLiteral("n"), QStringLiteral("200000")});
    p.addOption({QStringLiteral("retention-s"),
                 QStringLiteral("How often the retention runs (default 60 s)."), QStringLiteral("s"),
                 QStringLiteral("60")});
    p.addOption({QStringLiteral("http-port"),
                 QStringLiteral("Serve GET /log (JSON) and a search page on this port (0: any free one; "
                                "default: no web side)."),
                 QStringLiteral("port")});
    p.addOption({QStringLiteral("http-bind"), QStringLiteral("Address of the web side (default 127.0.0.1)."),
                 QStringLiteral("address"), QStringLiteral("127.0.0.1")});
    dialog::ClientOptions::addParserOptions(p);
    p.process(app);

    auto fail = [](const QString &why) {
        std::fprintf(stderr, "dialog-logger: %s\n", qPrintable(why));
        return 1;
    };
    if (!p.positionalArguments().isEmpty())
        return fail(
            QStringLiteral("unexpected argument '%1' (see --help)").arg(p.positionalArguments().first()));
    auto number = [&](const char *name, qint64 min, qint64 max, qint64 *out) {
        bool ok = false;
        *out = p.value(QLatin1String(name)).toLongLong(&ok);
        if (ok && *out >= min && *out <= max)
            return true;
        fail(QStringLiteral("invalid --%1 '%2' (%3..%4)")
                 .arg(QLatin1String(name), p.value(QLatin1String(name)))
                 .arg(min)
                 .arg(max));
        return false;
    };
    dialog::logger::LogStore::Options o;
    qint64 keepDays = 0, buffer = 0, retentionS = 0;
    if (!number("keep-days", 0, 100000, &keepDays) || !number("max-bytes", 0, qint64(1) << 50, &o.maxBytes) ||
        !number("buffer", 1, 100000000, &buffer) || !number("retention-s", 1, 86400, &retentionS))
        return 1;
    o.keepDays = int(keepDays);
    o.capacity = buffer;
    o.retentionMs = int(retentionS * 1000);
    qint64 httpPort = -1;
    if (p.isSet(QStringLiteral("http-port")) && !number("http-port", 0, 65535, &httpPort))
        return 1;
    QHostAddress httpBind;
    if (!httpBind.setAddress(p.value(QStringLiteral("http-bind"))))
        return fail(QStringLiteral("invalid --http-bind '%1' (an IP address)")
                        .arg(p.value(QStringLiteral("http-bind"))));
    QString why;
    if (p.isSet(QStringLiteral("db"))) {
        if (p.isSet(QStringLiteral("data-dir")))
            return fail(QStringLiteral("--db and --data-dir exclude each other"));
        if (o.maxBytes > 0)
            return fail(
                QStringLiteral("--max-bytes applies to SQLite only (PostgreSQL does not give freed space "
                               "back); use --keep-days"));
        auto db = dialog::logger::DatabaseConfig::fromUrl(p.value(QStringLiteral("db")), &why);
        if (!db)
            return fail(why);
        if (!QSqlDatabase::isDriverAvailable(QStringLiteral("QPSQL")))
            return fail(QStringLiteral("--db needs Qt's PostgreSQL driver QPSQL (Debian: libqt6sql6-psql)"));
        o.database = *db;
    } else {
        QString dir = p.value(QStringLiteral("data-dir"));
        if (dir.isEmpty())
            dir = QStandardPaths::writableLocation(QStandardPaths::AppLocalDataLocation);
        if (!QDir().mkpath(dir))
            return fail(QStringLiteral("cannot create --data-dir '%1'").arg(dir));
        o.database = dialog::logger::DatabaseConfig::sqlite(
            QDir(dir).absoluteFilePath(QStringLiteral("messages.sqlite")));
    }

    dialog::ClientOptions co = dialog::ClientOptions::fromEnvironment(p.value(QStringLiteral("name")));
    if (!co.applyParser(p, &why))
        return fail(why);
    co.name = p.value(QStringLiteral("name"));

    dialog::quitOnTerminationSignals();
    dialog::Client client(co);
    dialog::logger::LoggerServer server(&client, o);
    if (!server.start(&why))
        return fail(why);
    dialog::logger::LogWeb web(&server);
    if (httpPort >= 0) {
        if (!web.listen(httpBind, quint16(httpPort), &why))
            return fail(why);
        std::fprintf(stderr, "dialog-logger: web log on http://%s:%u/\n", qPrintable(httpBind.toString()),
                     unsigned(web.port()));
    }
    // The logger's own warnings (database errors, refusals) are messages like any other.
    dialog::installMessageHandler();
    dialog::startReporting(&client);
    std::fprintf(stderr, "dialog-logger: storing into %s\n", qPrintable(o.database.display()));
    return app.exec();
}
