// dialog-isserver: an IS server (ATLAS Information Service) in a DIALOG system.
#include "isserver.h"

#include "dialog/daemon.h"
#include "dialog/is/criteria.h"
#include "dialog/options.h"
#include "dialog/security.h"

#include <QSslSocket>
#include <QThread>

using namespace Qt::StringLiterals;
using dialog::Option;
using dialog::OptionTable;
using dialog::OptionUnit;

namespace {

constexpr auto Seconds = OptionUnit::Seconds;
constexpr auto Milliseconds = OptionUnit::Milliseconds;

// What the command line says beyond ServerOptions, checked against each other after the parse.
struct Given
{
    bool journal = false;
    bool noJournal = false;
    QString httpTokenFile;
    QStringList sums, intos;
    QString mirrorMaster;
    dialog::is::Criteria::Limits regex;
};

void addStoreOptions(OptionTable &t, dialog::isd::ServerOptions &o, Given &g)
{
    t.add(
        {Option::text(u"name"_s, u"name"_s, u"Server name, unique in the DIALOG system (required)."_s,
                      &o.name)
             .required(),
         Option::integer(u"threads"_s, u"n"_s,
                         u"Worker threads for reads and delivery (default: the number of cores)."_s,
                         &o.threads, 1, 256),
         Option::text(u"data-dir"_s, u"dir"_s,
                      u"Directory of the checkpoint file <name>.is (default: no persistence)."_s, &o.dataDir),
         Option::text(u"types"_s, u"dir"_s, u"Directory of IS type XML files to load."_s, &o.typesDir),
         Option::duration(u"checkpoint-s"_s, u"s"_s,
                          u"Checkpoint interval in seconds (default 10; 0: only at exit)."_s, &o.checkpointS,
                          Seconds, 0, 86400),
         Option::flag(
             u"journal"_s,
             u"Write-ahead journal <name>.is.journal.N in --data-dir: a write is acknowledged only once "
             "journaled, so it survives a crash (default: on with --data-dir)."_s,
             &g.journal),
         Option::flag(
             u"no-journal"_s,
             u"No journal: a crash (SIGKILL, power cut) loses every write acknowledged since the last "
             "checkpoint (up to --checkpoint-s)."_s,
             &g.noJournal),
         Option::custom(u"journal-sync"_s, u"policy"_s,
                        u"When journal records are made durable: none (written to the kernel before the "
                        "acknowledgement: survives a crash of the server, not of the machine), batch (one "
                        "fdatasync per batch of writes before their acknowledgements: group commit), always "
                        "(one fdatasync per write). Default batch."_s,
                        [&o](const QString &v) {
                            return dialog::is::Journal::parseSync(v, &o.journalSync)
                                       ? dialog::Status()
                                       : Option::refuse(u"none, batch or always"_s);
                        }),
         Option::integer(u"subscriber-queue"_s, u"n"_s,
                         u"Bound of a slow subscriber's own queue, in notifications (default 10000)."_s,
                         &o.queueRecords, 1, 100000000),
         Option::duration(
             u"slow-grace-ms"_s, u"ms"_s,
             u"A subscriber process falling behind alone (or one of a few) holds the updates for "
             "at most this long in 30 s before it is dropped for (default 500; 0: dropped for at "
             "once)."_s,
             &o.slowGraceMs, Milliseconds, 0, 30000)});
}

void addWebOptions(OptionTable &t, dialog::isd::ServerOptions &o, Given &g)
{
    t.add({Option::integer(
               u"http-port"_s, u"port"_s,
               u"Serve the web IS (HTTP, WebSocket, web page) on this TCP port (default: off; 0: any "
               "free port, the one bound is in the \"web IS on\" line)."_s,
               &o.httpPort, 0, 65535),
           Option::text(u"http-bind"_s, u"addr"_s, u"Address the web IS listens on (default 127.0.0.1)."_s,
                        &o.httpBind),
           Option::integer(u"http-max-requests"_s, u"n"_s,
                           u"Concurrent HTTP requests served; more are answered 503 (default 16)."_s,
                           &o.httpMaxRequests, 1, 100000),
           Option::duration(u"http-idle-s"_s, u"s"_s,
                            u"Close HTTP connections idle for this many seconds (default 30)."_s,
                            &o.httpIdleS, Seconds, 1, 86400),
           Option::integer(u"http-max-websockets"_s, u"n"_s,
                           u"Concurrent WebSocket clients; more are closed with a reason (default 64)."_s,
                           &o.httpMaxWebSockets, 1, 100000),
           Option::integer(u"http-max-per-address"_s, u"n"_s,
                           u"Open web IS connections from one client address; more get 503 (default 32)."_s,
                           &o.httpMaxPerAddress, 1, 1000000),
           Option::duration(
               u"http-head-s"_s, u"s"_s,
               u"A request head must be complete this long after connecting, or 408 (default 5)."_s,
               &o.httpHeadS, Seconds, 1, 3600),
           Option::text(
               u"http-token-file"_s, u"file"_s,
               u"The web IS's /is and /metrics (HTTP and WebSocket) need the bearer token held in this "
               "file (at least 16 bytes; white space around it ignored). With --tls-cert/--tls-key/"
               "--tls-ca the web IS is HTTPS."_s,
               &g.httpTokenFile),
           Option::text(u"http-renderer"_s, u"file"_s,
                        u"The program that draws GET /is/<Server>/<Server.Object>.png (default: dialog-render "
                        "beside dialog-isserver, from the package dialog-toolkit-gui; without it a PNG "
                        "request is answered 501)."_s,
                        &o.httpRenderer)});
}

void addLimitOptions(OptionTable &t, dialog::isd::ServerOptions &o, Given &g)
{
    constexpr qint64 manyBytes = qint64(1) << 50, manyObjects = qint64(1) << 40;
    t.add({Option::size(u"quota-object-bytes"_s, u"bytes"_s,
                        u"Largest encoded object value accepted, in bytes (default 4194304)."_s,
                        &o.quota.maxObjectBytes, 1, manyBytes),
           Option::integer(u"quota-client-objects"_s, u"n"_s,
                           u"Objects one client process may own (default 100000)."_s,
                           &o.quota.maxObjectsPerClient, 1, manyObjects),
           Option::size(u"quota-client-bytes"_s, u"bytes"_s,
                        u"Bytes one client process may own (default 268435456)."_s,
                        &o.quota.maxBytesPerClient, 1, manyBytes),
           Option::integer(u"quota-objects"_s, u"n"_s, u"Objects in the server (default 1000000)."_s,
                           &o.quota.maxObjects, 1, manyObjects),
           Option::size(u"quota-bytes"_s, u"bytes"_s, u"Bytes in the server (default 2147483648)."_s,
                        &o.quota.maxBytes, 1, manyBytes),
           Option::integer(u"quota-address-objects"_s, u"n"_s,
                           u"Objects the clients connecting from one address may own together, whatever "
                           "names they give (default 400000)."_s,
                           &o.quota.maxObjectsPerAddress, 1, manyObjects),
           Option::size(u"quota-address-bytes"_s, u"bytes"_s,
                        u"Bytes the clients connecting from one address may own together (default "
                        "1073741824)."_s,
                        &o.quota.maxBytesPerAddress, 1, manyBytes),
           Option::integer(u"quota-types"_s, u"n"_s,
                           u"IS types the server knows, built in and declared at run time (default 10000)."_s,
                           &o.quota.maxTypes, 1, 10000000),
           Option::integer(u"regex-max-length"_s, u"n"_s,
                           u"Longest criteria regular expression, in characters (default 1024)."_s,
                           &g.regex.maxPatternLength, 1, 1 << 20),
           Option::integer(u"regex-match-limit"_s, u"n"_s,
                           u"PCRE2 match limit of a criteria regex on one name (default 1000000)."_s,
                           &g.regex.matchLimit, 1, 0xffffffffLL),
           Option::size(u"regex-heap-kib"_s, u"kib"_s,
                        u"PCRE2 heap limit of one match, in KiB (default 8192)."_s, &g.regex.heapLimitKiB, 1,
                        1 << 22, OptionUnit::KiB),
           Option::duration(u"scan-budget-ms"_s, u"ms"_s,
                            u"Matching time one list or subscription may spend on all names together; "
                            "over it the request is refused as \"pattern too expensive\" (default 2000; "
                            "0: no bound)."_s,
                            &o.scanBudgetMs, Milliseconds, 0, 3600000)});
}

void addWebContentOptions(OptionTable &t, dialog::isd::ServerOptions &o, Given &g)
{
    t.add(
        {Option::text(u"web-root"_s, u"dir"_s,
                      u"Directory of the web page files (default: resources/web of the installation)."_s,
                      &o.webRoot),
         Option::text(u"metrics-criteria"_s, u"regex"_s,
                      u"GET /metrics exports the numeric attributes of the objects whose name matches this "
                      "regex (default: none, only the server's and the processes' figures)."_s,
                      &o.metricsCriteria),
         Option::integer(u"metrics-max-objects"_s, u"n"_s,
                         u"GET /metrics exports at most this many objects (the first by name); the rest are "
                         "counted in dialog_is_objects_omitted (default 10000)."_s,
                         &o.metricsMaxObjects, 0, 10000000),
         Option::list(
             u"sum"_s, u"regex"_s,
             u"Keep the sum of the objects whose name matches this regex (histograms bin-wise, other "
             "types attribute-wise) in the object named by the --into that follows; repeatable."_s,
             &g.sums),
         Option::list(u"into"_s, u"name"_s, u"The object holding the sum of the preceding --sum."_s,
                      &g.intos),
         Option::text(u"alarms"_s, u"file"_s,
                      u"Alarm rules (PATTERN.ATTRIBUTE OP NUMBER [for DURATION] -> SEVERITY \"TEXT\", one a "
                      "line): raised and cleared as objects Alarm.<line>.<Object> of this server."_s,
                      &o.alarmsFile)});
}

// [ADDR:]PORT of --mirror-listen into @p o.
dialog::Status readMirrorListen(const QString &v, dialog::isd::ServerOptions &o)
{
    const qsizetype colon = v.lastIndexOf(QLatin1Char(':'));
    QString addr = colon >= 0 ? v.left(colon) : u"127.0.0.1"_s;
    if (addr.startsWith(QLatin1Char('[')) && addr.endsWith(QLatin1Char(']')))
        addr = addr.mid(1, addr.size() - 2);
    bool ok = false;
    const int port = v.mid(colon + 1).toInt(&ok);
    if (!ok || port < 0 || port > 65535 || !o.mirrorListenAddress.setAddress(addr))
        return Option::refuse(u"[ADDR:]PORT, ADDR an IP address"_s);
    o.mirrorListenPort = port;
    return {};
}

void addReplicationOptions(OptionTable &t, dialog::isd::ServerOptions &o, Given &g)
{
    t.add(
        {Option::text(
             u"mirror-of"_s, u"server"_s,
             u"Run as a read-only mirror of the IS server <server>: its content, then every change."_s,
             &o.mirrorOf),
         Option::text(u"mirror-criteria"_s, u"regex"_s,
                      u"With --mirror-of: mirror only the objects whose name matches this regex."_s,
                      &o.mirrorCriteria),
         // Push mirror (IS paper 5.1): the master connects out to a mirror on another network.
         Option::custom(u"push-to"_s, u"host:port,..."_s,
                        u"Push this server's content, then every change, to the push mirror(s) listening at "
                        "HOST:PORT[,HOST:PORT...]; reconnects by itself."_s,
                        [&o](const QString &v) {
                            for (const QString &target : v.split(QLatin1Char(','), Qt::SkipEmptyParts))
                                o.pushTo << target.trimmed();
                            return o.pushTo.isEmpty() ? Option::refuse(u"HOST:PORT"_s) : dialog::Status();
                        }),
         Option::text(u"push-criteria"_s, u"regex"_s,
                      u"With --push-to: push only the objects whose name matches this regex."_s,
                      &o.pushCriteria),
         Option::duration(
             u"push-ping-ms"_s, u"ms"_s,
             u"With --push-to: ping interval; a side that hears nothing for 3 intervals drops the "
             "connection and the master reconnects (default 2000)."_s,
             &o.pushPingMs, Milliseconds, 100, 600000),
         Option::custom(
             u"mirror-listen"_s, u"[addr:]port"_s,
             u"Run as a read-only push mirror: accept the master's connection on [ADDR:]PORT (ADDR "
             "default 127.0.0.1; another address needs --secret-file or --insecure; PORT 0: any free "
             "port, the one bound is in the \"push mirror listening on\" line)."_s,
             [&o](const QString &v) { return readMirrorListen(v, o); }),
         Option::text(u"mirror-master"_s, u"server"_s,
                      u"With --mirror-listen: the name of the master IS server accepted (default: --name)."_s,
                      &g.mirrorMaster),
         Option::integer(
             u"history"_s, u"n"_s,
             u"Values kept per object in the history ring (numeric attributes; default 600; 0: no "
             "history)."_s,
             &o.historyCount, 0, 100000000),
         Option::duration(u"history-s"_s, u"s"_s,
                          u"Age bound of the history ring in seconds (default 3600)."_s, &o.historySeconds,
                          Seconds, 1, 10 * 365 * 86400),
         Option::text(
             u"history-config"_s, u"file"_s,
             u"File of per-name / per-type history bounds (`name REGEX count=N seconds=S`, `type TYPE "
             "...`)."_s,
             &o.historyConfig)});
}

// The rules between options; empty when they hold.
QString checkMirrorAndPush(const dialog::isd::ServerOptions &o, const Given &g)
{
    if (!o.metricsCriteria.isEmpty() && o.httpPort < 0)
        return u"--metrics-criteria needs --http-port (GET /metrics is on the web IS)"_s;
    if (!o.mirrorCriteria.isEmpty() && o.mirrorOf.isEmpty())
        return u"--mirror-criteria needs --mirror-of"_s;
    if (!o.mirrorOf.isEmpty() && o.mirrorOf == o.name)
        return u"--mirror-of names this server itself"_s;
    if (!o.pushCriteria.isEmpty() && o.pushTo.isEmpty())
        return u"--push-criteria needs --push-to"_s;
    if (o.mirrorListenPort >= 0 && !o.mirrorOf.isEmpty())
        return u"--mirror-listen and --mirror-of exclude each other (a mirror has one master)"_s;
    if (!g.mirrorMaster.isEmpty() && o.mirrorListenPort < 0)
        return u"--mirror-master needs --mirror-listen"_s;
    if (g.sums.size() != g.intos.size())
        return u"each --sum needs one --into (got %1 --sum, %2 --into)"_s.arg(g.sums.size())
            .arg(g.intos.size());
    if (g.journal && g.noJournal)
        return u"--journal and --no-journal exclude each other"_s;
    if (g.journal && o.dataDir.isEmpty())
        return u"--journal needs --data-dir (the journal is kept next to the checkpoint)"_s;
    if (g.journal && (!o.mirrorOf.isEmpty() || o.mirrorListenPort >= 0))
        return u"--journal on a mirror: a mirror keeps no journal (it copies its master again when it starts)"_s;
    if (!g.httpTokenFile.isEmpty() && o.httpPort < 0)
        return u"--http-token-file needs --http-port"_s;
    return QString();
}

// The derived settings: sums, journal, mirror master, regex limits, the web IS's token and TLS.
bool finish(dialog::isd::ServerOptions &o, const Given &g, QString *why)
{
    for (qsizetype i = 0; i < g.sums.size(); ++i)
        o.sums.append(qMakePair(g.sums.at(i), g.intos.at(i)));
    o.journal = !g.noJournal;
    o.mirrorMaster = g.mirrorMaster.isEmpty() ? o.name : g.mirrorMaster;
    dialog::is::Criteria::setLimits(g.regex);
    o.client.name = u"IS.Server."_s + o.name;
    if (!g.httpTokenFile.isEmpty()) {
        if (const dialog::Status st = dialog::security::readSecretFile(g.httpTokenFile, &o.httpToken);
            !st.isOk()) {
            *why = u"--http-token-file: %1"_s.arg(st.message());
            return false;
        }
    }
    const dialog::security::TlsFiles tls{o.client.tlsCert, o.client.tlsKey, o.client.tlsCa};
    if (o.httpPort >= 0 && !tls.isEmpty()) {
        if (const dialog::Status st = dialog::security::tlsConfiguration(tls, &o.httpTlsConfiguration);
            !st.isOk()) {
            *why = st.message();
            return false;
        }
        // Browsers present no client certificate: the web port only proves its own identity.
        o.httpTlsConfiguration.setPeerVerifyMode(QSslSocket::VerifyNone);
        o.httpTls = true;
    }
    return true;
}

} // namespace

int main(int argc, char *argv[])
{
    dialog::DaemonApplication app(argc, argv, u"dialog-isserver"_s);
    OptionTable t(
        u"dialog-isserver"_s,
        u"An IS server: typed information objects named Server.Object, held in memory, read, updated, "
        "iterated and subscribed by criteria; persisted to --data-dir."_s);
    dialog::isd::ServerOptions o;
    Given g;
    o.threads = qMax(1, QThread::idealThreadCount());
    o.client = dialog::ClientOptions::fromEnvironment();
    o.client.exitOnRefusal = true;            // a second server of the same name must not run
    o.client.maxQueueBytes = 4 * 1024 * 1024; // per subscriber process; a slow one costs at most this
    addStoreOptions(t, o, g);
    addWebOptions(t, o, g);
    addLimitOptions(t, o, g);
    addWebContentOptions(t, o, g);
    addReplicationOptions(t, o, g);
    o.client.addTo(t);
    dialog::AccessOptions::addParserOptions(t.parser());
    if (!t.process(app.arguments()))
        return 1;
    QString why = checkMirrorAndPush(o, g);
    if (!why.isEmpty() || !finish(o, g, &why))
        return t.fail(why);
    if (const dialog::Status st = o.access.applyParser(t.parser()); !st.isOk())
        return t.fail(st.message());

    // Its warnings go to dialog-logger too (when one runs), through the server's own client; those
    // of the start (a checkpoint fallen back to the previous one) wait in the queue until then.
    app.beginService();
    dialog::isd::IsServer server(o);
    if (!server.start(&why))
        return t.fail(why);
    app.serviceReady(&server.client()); // under systemd (Type=notify): its ports are open
    const int rc = app.exec();
    if (!server.saveNow(&why))
        return t.fail(u"final checkpoint failed: %1"_s.arg(why));
    return rc;
}
