// dialog-configdb: the configuration database and run registry of a DIALOG system, served as
// requests on CONFIG.<name> (dialogctl config …, dialogctl runs …, the master at configure).
#include "configserver.h"

#include "dialog/daemon.h"
#include "dialog/options.h"

#include <QDir>
#include <QHostAddress>
#include <QStandardPaths>
#include <cstdio>

using namespace Qt::StringLiterals;
using dialog::Option;
using dialog::OptionTable;

namespace {

struct Given
{
    QString name = u"configdb"_s;
    QString dataDir, db;
    qint64 crashAfterRows = 0;
    qint64 httpPort = -1;
    QHostAddress httpBind{QHostAddress::LocalHost};
};

} // namespace

int main(int argc, char *argv[])
{
    dialog::DaemonApplication app(argc, argv, u"dialog-configdb"_s);
    OptionTable t(
        u"dialog-configdb"_s,
        u"The configuration database and run registry: versioned, validated configuration documents "
        "(partitions/, slaves/, readout/, segments/, is-types/, access/) and the record of every run, in "
        "SQLite (<data-dir>/config.sqlite) or PostgreSQL (--db), served as requests on CONFIG.<name> "
        "(dialogctl config …, dialogctl runs …)."_s);
    Given g;
    dialog::ClientOptions co = dialog::ClientOptions::fromEnvironment();
    t.add(
        {Option::text(
             u"name"_s, u"name"_s,
             u"Process name; the service is CONFIG.<name> (default configdb, which clients use unless "
             "$DIALOG_CONFIGDB or --configdb says otherwise)."_s,
             &g.name),
         Option::text(
             u"data-dir"_s, u"dir"_s,
             u"Directory of config.sqlite (default: $STATE_DIRECTORY under systemd, else the user's data "
             "directory)."_s,
             &g.dataDir),
         Option::text(
             u"db"_s, u"url"_s,
             u"Keep the tables in PostgreSQL instead of SQLite: postgresql://user[:password]@host[:port]/"
             "database (?host=/dir for a unix socket directory)."_s,
             &g.db),
         Option::integer(
             u"crash-after-rows"_s, u"n"_s,
             u"For tests: die abruptly (SIGKILL) in the middle of a commit, after writing n of its "
             "documents."_s,
             &g.crashAfterRows, 0, 1000000),
         Option::text(
             u"identity-file"_s, u"path"_s,
             u"The partition's identity secret (dialogctl up gives it, with --secret-file): a commit from "
             "a process that proves its name with its process key is authored by that name."_s,
             &co.identityFile),
         Option::integer(u"http-port"_s, u"port"_s,
                         u"Serve the read-only web page (the runs, a run's record, a document at a version, "
                         "a diff) and its JSON (/api/…) on this port (0: any free port; default: none)."_s,
                         &g.httpPort, 0, 65535),
         Option::custom(u"http-bind"_s, u"address"_s, u"Address of the web page (default 127.0.0.1)."_s,
                        [&g](const QString &v) {
                            return g.httpBind.setAddress(v) ? dialog::Status()
                                                            : Option::refuse(u"an IP address"_s);
                        })});
    co.addTo(t);
    if (!t.process(app.arguments()))
        return 1;
    if (!dialog::Client::isValidName(g.name))
        return t.fail(u"--name '%1' is not a valid process name"_s.arg(g.name));
    co.name = g.name;
    co.exitOnRefusal = true; // a second configdb of that name must not run
    dialog::sql::DatabaseConfig database;
    QString why;
    if (auto chosen = dialog::sql::DatabaseConfig::choose(g.db, g.dataDir, u"config.sqlite"_s, &why))
        database = *chosen;
    else
        return t.fail(why);

    app.beginService();
    dialog::Client client(co);
    dialog::configdb::ConfigServer server(&client, database, g.name, int(g.crashAfterRows));
    if (!server.start(&why))
        return t.fail(why);
    if (g.httpPort >= 0 && !server.listenWeb(g.httpBind, quint16(g.httpPort), &why))
        return t.fail(why);
    app.serviceReady(&client); // under systemd (Type=notify): the database is open, the service published
    std::fprintf(stderr, "dialog-configdb: serving CONFIG.%s from %s\n", qPrintable(g.name),
                 qPrintable(database.display()));
    if (server.webPort() != 0) {
        if (!g.httpBind.isLoopback())
            std::fprintf(stderr,
                         "dialog-configdb: warning: the web page on %s needs no token: anyone who reaches it "
                         "reads the configuration and the runs\n",
                         qPrintable(g.httpBind.toString()));
        std::fprintf(stderr, "dialog-configdb: web page on http://%s:%u/\n",
                     qPrintable(g.httpBind.protocol() == QAbstractSocket::IPv6Protocol
                                    ? u"[%1]"_s.arg(g.httpBind.toString())
                                    : g.httpBind.toString()),
                     unsigned(server.webPort()));
    }
    return app.exec();
}
