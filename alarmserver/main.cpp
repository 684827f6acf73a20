// dialog-alarmserver: the alarm server of a DIALOG partition (one per partition): alarms from the
// rules of --rules FILE on IS values, stale IS objects, processes and run states; acknowledge,
// latch, shelve, disable; the history in SQLite or PostgreSQL; the table on ALARM.Table and the
// requests on ALARM.Server (dialogctl alarm …).
#include "alarmserver.h"
#include "alarmservice.h"

#include "dialog/config.h"
#include "dialog/daemon.h"
#include "dialog/is/typeregistry.h"
#include "dialog/options.h"
#include "dialog/security.h"

#include <QCoreApplication>
#include <QDir>
#include <QStandardPaths>
#include <cstdio>

using namespace Qt::StringLiterals;
using dialog::Option;
using dialog::OptionTable;

namespace {

struct Given
{
    QString name = u"AlarmServer"_s;
    QString rules, types, dataDir, db, isServer;
    qint64 stalePollMs = 1000;
    qint64 httpPort = -1;
    qint64 hookTimeoutS = 10, hookMaxRunning = 4;
    QHostAddress httpBind{QHostAddress::LocalHost};
    QString httpTokenFile;
    bool check = false;
};

} // namespace

int main(int argc, char *argv[])
{
    dialog::DaemonApplication app(argc, argv, u"dialog-alarmserver"_s);
    OptionTable t(
        u"dialog-alarmserver"_s,
        u"The alarm server of a partition: alarms from the rules of --rules (IS values with thresholds and "
        "hysteresis, strings and booleans, stale IS objects, lost processes and processes in Error, run "
        "states, debounced by for_s), in a tree of paths; acknowledge, latch, shelve and disable; the "
        "history in SQLite (<data-dir>/alarms.sqlite) or PostgreSQL (--db); the table on the service "
        "ALARM.Table and the requests of dialogctl alarm on ALARM.Server. One per partition."_s);
    Given g;
    dialog::ClientOptions co = dialog::ClientOptions::fromEnvironment();
    t.add(
        {Option::text(u"rules"_s, u"file"_s, u"The alarm rules: a JSON file (see docs/alarms.md), or config:alarms/NAME[@REF], a document of "
                      "the configuration database (dialog-configdb; the newest version without @REF). Required."_s,
                      &g.rules),
         Option::text(u"types"_s, u"dir"_s,
                      u"IS type declarations (*.xml) to check the rules that name a \"type\" against."_s,
                      &g.types),
         Option::flag(u"check"_s,
                      u"Check the rules file and exit: 0 when it is valid, 1 with the line and "
                      "the reason."_s,
                      &g.check),
         Option::text(u"name"_s, u"name"_s, u"Process name (default AlarmServer)."_s, &g.name),
         Option::text(u"data-dir"_s, u"dir"_s,
                      u"Directory of alarms.sqlite (default: $STATE_DIRECTORY under systemd, else the user's "
                      "data directory)."_s,
                      &g.dataDir),
         Option::text(u"db"_s, u"url"_s,
                      u"Keep the history in PostgreSQL instead: postgresql://user[:password]@host[:port]/"
                      "database."_s,
                      &g.db),
         Option::text(u"is-server"_s, u"name"_s,
                      u"Also publish the alarms in the table as IS objects NAME.Alarm.<path> (type "
                      "ActiveAlarm) on this IS server."_s,
                      &g.isServer),
         Option::integer(u"stale-poll-ms"_s, u"ms"_s,
                         u"How often the IS servers are asked for their stale objects (default 1000)."_s,
                         &g.stalePollMs, 100, 600000),
         Option::integer(u"hook-timeout-s"_s, u"s"_s,
                         u"A rule's on_raise hook still running after this long is killed (a command, with "
                         "its process group) or aborted (a POST) and counted as failed (default 10)."_s,
                         &g.hookTimeoutS, 1, 600),
         Option::integer(u"hook-max-running"_s, u"n"_s,
                         u"At most this many hooks run at once; a raise beyond that does not run its hook "
                         "and is counted as dropped (default 4)."_s,
                         &g.hookMaxRunning, 1, 256),
         Option::integer(u"http-port"_s, u"port"_s,
                         u"Serve the alarm page (the table, Ack), /alarms (JSON) and /metrics (Prometheus) "
                         "on this port (0: any free port; default: no web side)."_s,
                         &g.httpPort, 0, 65535),
         Option::custom(u"http-bind"_s, u"address"_s, u"Address of the web side (default 127.0.0.1)."_s,
                        [&g](const QString &v) {
                            return g.httpBind.setAddress(v) ? dialog::Status() : Option::refuse(u"an IP address"_s);
                        }),
         Option::text(u"http-token-file"_s, u"file"_s,
                      u"The web side's /alarms and /metrics need the bearer token held in this file, and "
                      "the page's actions (Ack) are possible only with it (without it the page is read-only)."_s,
                      &g.httpTokenFile)});
    co.addTo(t);
    dialog::AccessOptions::addParserOptions(t.parser());
    if (!t.process(app.arguments()))
        return 1;
    if (g.rules.isEmpty())
        return t.fail(u"--rules FILE (or config:alarms/NAME[@REF]) is required"_s);
    dialog::alarm::ServerOptions o;
    if (const dialog::Status st = o.access.applyParser(t.parser()); !st.isOk())
        return t.fail(st.message());
    if (!g.httpTokenFile.isEmpty()) {
        if (g.httpPort < 0)
            return t.fail(u"--http-token-file needs --http-port"_s);
        if (const dialog::Status st = dialog::security::readSecretFile(g.httpTokenFile, &o.httpToken); !st.isOk())
            return t.fail(u"--http-token-file: %1"_s.arg(st.message()));
    }
    dialog::is::TypeRegistry types;
    if (const dialog::Status st = g.types.isEmpty() ? dialog::Status() : types.loadDirectory(g.types); !st.isOk())
        return t.fail(u"--types: %1"_s.arg(st.message()));
    // --rules config:alarms/NAME[@REF]: the rules are a document of the configuration database,
    // read once the client is connected; otherwise a file, read now.
    const bool fromConfig = g.rules.startsWith(u"config:"_s);
    const QString configPath = g.rules.mid(7).section(u'@', 0, 0);
    const QString configRef = g.rules.mid(7).section(u'@', 1);
    dialog::alarm::RuleSet rules;
    if (fromConfig) {
        if (dialog::config::kindOf(configPath) != dialog::config::Kind::Alarms)
            return t.fail(u"--rules %1: expected config:alarms/NAME or config:alarms/NAME@REF (a version or a tag)"_s
                              .arg(g.rules));
    } else {
        if (const dialog::Status st = dialog::alarm::RuleSet::load(g.rules, &types, &rules); !st.isOk())
            return t.fail(st.message());
        if (g.check) {
            std::printf("%s: %lld alarms, valid\n", qPrintable(g.rules), qint64(rules.rules.size()));
            return 0;
        }
    }
    if (!dialog::Client::isValidName(g.name))
        return t.fail(u"--name '%1' is not a valid process name"_s.arg(g.name));
    // A check only reads: it must not take the running alarm server's name.
    co.name = g.check ? u"AlarmCheck%1"_s.arg(QCoreApplication::applicationPid()) : g.name;
    co.exitOnRefusal = false; // the refusal of ALARM.Server is reported below, in our words
    QString why;
    if (auto chosen = dialog::sql::DatabaseConfig::choose(g.db, g.dataDir, u"alarms.sqlite"_s, &why))
        o.database = *chosen;
    else
        return t.fail(why);
    if (!co.secretFile.isEmpty())
        if (const dialog::Status st = dialog::security::readSecretFile(co.secretFile, &o.secret); !st.isOk())
            return t.fail(st.message());
    o.httpPort = int(g.httpPort);
    o.hooks.timeoutMs = int(g.hookTimeoutS * 1000);
    o.hooks.maxRunning = int(g.hookMaxRunning);
    o.httpBind = g.httpBind;
    o.isServer = g.isServer;
    o.stalePollMs = int(g.stalePollMs);

    app.beginService();
    dialog::Client client(co);
    QObject::connect(&client, &dialog::Client::errorOccurred, &client, [&](dialog::Status::Code code) {
        if (code != dialog::Status::Code::ServiceRefused || !client.errorString().contains(u"ALARM."_s))
            return;
        // One alarm server per partition: the reserved names are taken.
        std::fprintf(stderr,
                     "dialog-alarmserver: another alarm server serves this partition (%s is taken): %s\n",
                     qPrintable(dialog::alarm::serverServiceName()), qPrintable(client.errorString()));
        std::fflush(stderr);
        QCoreApplication::exit(1);
    });
    std::unique_ptr<dialog::alarm::AlarmServer> server;
    // Starts serving @p loaded (from @p source); false with the reason printed.
    const auto serve = [&](const dialog::alarm::RuleSet &loaded, const QString &source) {
        server = std::make_unique<dialog::alarm::AlarmServer>(&client, loaded, o);
        QString error;
        if (!server->start(&error)) {
            std::fprintf(stderr, "dialog-alarmserver: %s\n", qPrintable(error));
            return false;
        }
        if (server->webPort() && o.httpToken.isEmpty() && !g.httpBind.isLoopback())
            std::fprintf(stderr,
                         "dialog-alarmserver: warning: the alarm page on %s has no --http-token-file: anyone "
                         "who reaches it reads the table (it is read-only without a token)\n",
                         qPrintable(g.httpBind.toString()));
        if (server->webPort())
            std::fprintf(stderr, "dialog-alarmserver: alarm page on http://%s:%u/\n",
                         qPrintable(g.httpBind.toString()), unsigned(server->webPort()));
        app.serviceReady(&client);
        std::fprintf(stderr, "dialog-alarmserver: %lld alarms from %s, history in %s, serving %s\n",
                     qint64(loaded.rules.size()), qPrintable(source), qPrintable(o.database.display()),
                     qPrintable(dialog::alarm::serverServiceName()));
        return true;
    };
    if (!fromConfig && !serve(rules, g.rules))
        return 1;
    if (!client.start())
        return t.fail(client.errorString());
    dialog::config::ConfigClient configdb(&client);
    if (fromConfig) {
        configdb.get(configPath, configRef,
                     [&](const dialog::Status &st, const dialog::config::Document &doc, quint64 version) {
                         dialog::alarm::RuleSet loaded;
                         // Messages name the document and the version read: "config:alarms/x@12:3: …".
                         const QString source = u"config:%1@%2"_s.arg(configPath).arg(version);
                         dialog::Status parsed =
                             st.isOk() ? dialog::alarm::RuleSet::parse(doc.content, source, &types, &loaded) : st;
                         if (!parsed.isOk()) {
                             std::fprintf(stderr, "dialog-alarmserver: %s%s\n",
                                          st.isOk() ? "" : qPrintable(u"--rules %1: "_s.arg(g.rules)),
                                          qPrintable(parsed.message()));
                             QCoreApplication::exit(1);
                         } else if (g.check) {
                             std::printf("%s: %lld alarms, valid\n", qPrintable(source),
                                         qint64(loaded.rules.size()));
                             QCoreApplication::exit(0);
                         } else if (!serve(loaded, source)) {
                             QCoreApplication::exit(1);
                         }
                     });
    }
    return app.exec();
}
