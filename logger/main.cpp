// dialog-logger: stores every message reported in the DIALOG system (dialog::report(), Qt messages
// after dialog::installMessageHandler()) into SQLite and answers searches (dialog log …).
#include "loggerserver.h"

#include "dialog/application.h"
#include "dialog/report.h"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QDir>
#include <QStandardPaths>
#include <cstdio>

int main(int argc, char *argv[])
{
    dialog::preferLowLatencyEventDispatcher();
    QCoreApplication app(argc, argv);
    QCoreApplication::setApplicationName(QStringLiteral("dialog-logger"));
    QCommandLineParser p;
    p.setApplicationDescription(QStringLiteral("The message logger: stores every reported message into "
                                               "SQLite (<data-dir>/messages.sqlite, WAL mode) "
                                               "and answers searches (dialog log tail|search)."));
    p.addHelpOption();
    p.addOption({QStringLiteral("name"), QStringLiteral("Process name (default dialog-logger)."),
                 QStringLiteral("name"), QStringLiteral("dialog-logger")});
    p.addOption({QStringLiteral("data-dir"),
                 QStringLiteral("Directory of messages.sqlite (default: the user's data directory)."),
                 QStringLiteral("dir")});
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
    QString dir = p.value(QStringLiteral("data-dir"));
    if (dir.isEmpty())
        dir = QStandardPaths::writableLocation(QStandardPaths::AppLocalDataLocation);
    if (!QDir().mkpath(dir))
        return fail(QStringLiteral("cannot create --data-dir '%1'").arg(dir));
    o.path = QDir(dir).absoluteFilePath(QStringLiteral("messages.sqlite"));

    dialog::ClientOptions co = dialog::ClientOptions::fromEnvironment(p.value(QStringLiteral("name")));
    QString why;
    if (!co.applyParser(p, &why))
        return fail(why);
    co.name = p.value(QStringLiteral("name"));

    dialog::quitOnTerminationSignals();
    dialog::Client client(co);
    dialog::logger::LoggerServer server(&client, o);
    if (!server.start(&why))
        return fail(why);
    // The logger's own warnings (database errors, refusals) are messages like any other.
    dialog::installMessageHandler();
    dialog::startReporting(&client);
    std::fprintf(stderr, "dialog-logger: storing into %s\n", qPrintable(o.path));
    return app.exec();
}
