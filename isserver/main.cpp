// dialog-isserver: an IS server (ATLAS Information Service) in a DIALOG system.
#include "isserver.h"

#include "dialog/application.h"
#include "dialog/is/criteria.h"
#include "dialog/report.h"
#include "dialog/security.h"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QSslSocket>
#include <QThread>
#include <cstdio>

int main(int argc, char *argv[])
{
    dialog::preferLowLatencyEventDispatcher();
    QCoreApplication app(argc, argv);
    QCoreApplication::setApplicationName(QStringLiteral("dialog-isserver"));
    QCommandLineParser p;
    p.setApplicationDescription(QStringLiteral(
        "An IS server: typed information objects named Server.Object, held in memory, read, updated, "
        "iterated and subscribed by criteria; persisted to --data-dir."));
    p.addHelpOption();
    p.addOption({QStringLiteral("name"),
                 QStringLiteral("Server name, unique in the DIALOG system (required)."),
                 QStringLiteral("name")});
    p.addOption({QStringLiteral("threads"),
                 QStringLiteral("Worker threads for reads and delivery (default: the number of cores)."),
                 QStringLiteral("n")});
    p.addOption({QStringLiteral("data-dir"),
                 QStringLiteral("Directory of the checkpoint file <name>.is (default: no persistence)."),
                 QStringLiteral("dir")});
    p.addOption({QStringLiteral("types"), QStringLiteral("Directory of IS type XML files to load."),
                 QStringLiteral("dir")});
    p.addOption({QStringLiteral("checkpoint-s"),
                 QStringLiteral("Checkpoint interval in seconds (default 10; 0: only at exit)."),
                 QStringLiteral("s"), QStringLiteral("10")});
    p.addOption({QStringLiteral("journal"),
                 QStringLiteral("Write-ahead journal <name>.is.journal.N in --data-dir: a write is acknowledged "
                                "only once journaled, so it survives a crash (default: on with --data-dir).")});
    p.addOption({QStringLiteral("no-journal"),
                 QStringLiteral("No journal: a crash (SIGKILL, power cut) loses every write acknowledged since "
                                "the last checkpoint (up to --checkpoint-s).")});
    p.addOption({QStringLiteral("journal-sync"),
                 QStringLiteral("When journal records are made durable: none (written to the kernel before the "
                                "acknowledgement: survives a crash of the server, not of the machine), batch "
                                "(one fdatasync per batch of writes before their acknowledgements: group "
                                "commit), always (one fdatasync per write). Default batch."),
                 QStringLiteral("policy"), QStringLiteral("batch")});
    p.addOption({QStringLiteral("subscriber-queue"),
                 QStringLiteral("Bound of a slow subscriber's own queue, in notifications (default 10000)."),
                 QStringLiteral("n"), QStringLiteral("10000")});
    p.addOption({QStringLiteral("slow-grace-ms"),
                 QStringLiteral("A subscriber process falling behind alone (or one of a few) holds the updates "
                                "for at most this long in 30 s before it is dropped for (default 500; 0: dropped "
                                "for at once)."),
                 QStringLiteral("ms"), QStringLiteral("500")});
    p.addOption(
        {QStringLiteral("http-port"),
         QStringLiteral("Serve the web IS (HTTP, WebSocket, web page) on this TCP port (default: off; 0: any "
                        "free port, the one bound is in the \"web IS on\" line)."),
         QStringLiteral("port")});
    p.addOption({QStringLiteral("http-bind"),
                 QStringLiteral("Address the web IS listens on (default 127.0.0.1)."), QStringLiteral("addr"),
                 QStringLiteral("127.0.0.1")});
    p.addOption({QStringLiteral("http-max-requests"),
                 QStringLiteral("Concurrent HTTP requests served; more are answered 503 (default 16)."),
                 QStringLiteral("n"), QStringLiteral("16")});
    p.addOption({QStringLiteral("http-idle-s"),
                 QStringLiteral("Close HTTP connections idle for this many seconds (default 30)."),
                 QStringLiteral("s"), QStringLiteral("30")});
    p.addOption({QStringLiteral("http-max-websockets"),
                 QStringLiteral("Concurrent WebSocket clients; more are closed with a reason (default 64)."),
                 QStringLiteral("n"), QStringLiteral("64")});
    p.addOption({QStringLiteral("http-max-per-address"),
                 QStringLiteral("Open web IS connections from one client address; more get 503 (default 32)."),
                 QStringLiteral("n"), QStringLiteral("32")});
    p.addOption({QStringLiteral("http-head-s"),
                 QStringLiteral("A request head must be complete this long after connecting, or 408 (default 5)."),
                 QStringLiteral("s"), QStringLiteral("5")});
    p.addOption(
        {QStringLiteral("http-token-file"),
         QStringLiteral("The web IS's /is and /metrics (HTTP and WebSocket) need the bearer token held in "
                        "this file (at least 16 bytes; white space around it ignored). With "
                        "--tls-cert/--tls-key/--tls-ca the web IS is HTTPS."),
         QStringLiteral("file")});
    p.addOption({QStringLiteral("quota-object-bytes"),
                 QStringLiteral("Largest encoded object value accepted, in bytes (default 4194304)."),
                 QStringLiteral("bytes"), QStringLiteral("4194304")});
    p.addOption({QStringLiteral("quota-client-objects"),
                 QStringLiteral("Objects one client process may own (default 100000)."), QStringLiteral("n"),
                 QStringLiteral("100000")});
    p.addOption({QStringLiteral("quota-client-bytes"),
                 QStringLiteral("Bytes one client process may own (default 268435456)."), QStringLiteral("bytes"),
                 QStringLiteral("268435456")});
    p.addOption({QStringLiteral("quota-objects"), QStringLiteral("Objects in the server (default 1000000)."),
                 QStringLiteral("n"), QStringLiteral("1000000")});
    p.addOption({QStringLiteral("quota-bytes"), QStringLiteral("Bytes in the server (default 2147483648)."),
                 QStringLiteral("bytes"), QStringLiteral("2147483648")});
    p.addOption({QStringLiteral("regex-max-length"),
                 QStringLiteral("Longest criteria regular expression, in characters (default 1024)."),
                 QStringLiteral("n"), QStringLiteral("1024")});
    p.addOption({QStringLiteral("regex-match-limit"),
                 QStringLiteral("PCRE2 match limit of a criteria regex on one name (default 1000000)."),
                 QStringLiteral("n"), QStringLiteral("1000000")});
    p.addOption({QStringLiteral("regex-heap-kib"),
                 QStringLiteral("PCRE2 heap limit of one match, in KiB (default 8192)."), QStringLiteral("kib"),
                 QStringLiteral("8192")});
    p.addOption({QStringLiteral("web-root"),
                 QStringLiteral("Directory of the web page files (default: resources/web of the installation)."),
                 QStringLiteral("dir")});
    p.addOption({QStringLiteral("metrics-criteria"),
                 QStringLiteral("GET /metrics exports the numeric attributes of the objects whose name "
                                "matches this regex (default: none, only the server's and the processes' "
                                "figures)."),
                 QStringLiteral("regex")});
    p.addOption({QStringLiteral("sum"),
                 QStringLiteral("Keep the sum of the objects whose name matches this regex (histograms bin-wise, "
                                "other types attribute-wise) in the object named by the --into that follows; "
                                "repeatable."),
                 QStringLiteral("regex")});
    p.addOption({QStringLiteral("into"), QStringLiteral("The object holding the sum of the preceding --sum."),
                 QStringLiteral("name")});
    p.addOption({QStringLiteral("alarms"),
                 QStringLiteral("Alarm rules (PATTERN.ATTRIBUTE OP NUMBER [for DURATION] -> SEVERITY \"TEXT\", one a "
                                "line): raised and cleared as objects Alarm.<line>.<Object> of this server."),
                 QStringLiteral("file")});
    p.addOption({QStringLiteral("mirror-of"),
                 QStringLiteral(
                     "Run as a read-only mirror of the IS server <server>: its content, then every change."),
                 QStringLiteral("server")});
    p.addOption({QStringLiteral("mirror-criteria"),
                 QStringLiteral("With --mirror-of: mirror only the objects whose name matches this regex."),
                 QStringLiteral("regex")});
    // Push mirror (IS paper 5.1): the master connects out to a mirror on another network.
    p.addOption(
        {QStringLiteral("push-to"),
         QStringLiteral("Push this server's content, then every change, to the push mirror(s) listening at "
                        "HOST:PORT[,HOST:PORT...]; reconnects by itself."),
         QStringLiteral("host:port,...")});
    p.addOption({QStringLiteral("push-criteria"),
                 QStringLiteral("With --push-to: push only the objects whose name matches this regex."),
                 QStringLiteral("regex")});
    p.addOption(
        {QStringLiteral("push-ping-ms"),
         QStringLiteral("With --push-to: ping interval; a side that hears nothing for 3 intervals drops the "
                        "connection and the master reconnects (default 2000)."),
         QStringLiteral("ms"), QStringLiteral("2000")});
    p.addOption(
        {QStringLiteral("mirror-listen"),
         QStringLiteral("Run as a read-only push mirror: accept the master's connection on [ADDR:]PORT "
                        "(ADDR default 0.0.0.0; PORT 0: any free port, the one bound is in the \"push "
                        "mirror listening on\" line)."),
         QStringLiteral("[addr:]port")});
    p.addOption(
        {QStringLiteral("mirror-master"),
         QStringLiteral("With --mirror-listen: the name of the master IS server accepted (default: --name)."),
         QStringLiteral("server")});
    p.addOption(
        {QStringLiteral("history"),
         QStringLiteral("Values kept per object in the history ring (numeric attributes; default 600; 0: "
                        "no history)."),
         QStringLiteral("n"), QStringLiteral("600")});
    p.addOption({QStringLiteral("history-s"),
                 QStringLiteral("Age bound of the history ring in seconds (default 3600)."),
                 QStringLiteral("s"), QStringLiteral("3600")});
    p.addOption({QStringLiteral("history-config"),
                 QStringLiteral("File of per-name / per-type history bounds (`name REGEX count=N seconds=S`, "
                                "`type TYPE ...`)."),
                 QStringLiteral("file")});
    dialog::ClientOptions::addParserOptions(p);
    dialog::AccessOptions::addParserOptions(p);
    p.process(app);

    auto fail = [](const QString &why) {
        std::fprintf(stderr, "dialog-isserver: %s\n", qPrintable(why));
        return 1;
    };
    if (!p.positionalArguments().isEmpty())
        return fail(
            QStringLiteral("unexpected argument '%1' (see --help)").arg(p.positionalArguments().first()));
    dialog::isd::ServerOptions o;
    o.name = p.value(QStringLiteral("name"));
    if (o.name.isEmpty())
        return fail(QStringLiteral("--name is required"));
    bool ok = true;
    o.threads = p.isSet(QStringLiteral("threads")) ? p.value(QStringLiteral("threads")).toInt(&ok)
                                                   : qMax(1, QThread::idealThreadCount());
    if (!ok || o.threads < 1 || o.threads > 256)
        return fail(
            QStringLiteral("invalid --threads '%1' (1..256)").arg(p.value(QStringLiteral("threads"))));
    o.checkpointS = p.value(QStringLiteral("checkpoint-s")).toInt(&ok);
    if (!ok || o.checkpointS < 0)
        return fail(
            QStringLiteral("invalid --checkpoint-s '%1'").arg(p.value(QStringLiteral("checkpoint-s"))));
    if (p.isSet(QStringLiteral("journal")) && p.isSet(QStringLiteral("no-journal")))
        return fail(QStringLiteral("--journal and --no-journal exclude each other"));
    o.journal = !p.isSet(QStringLiteral("no-journal"));
    if (!dialog::is::Journal::parseSync(p.value(QStringLiteral("journal-sync")), &o.journalSync))
        return fail(QStringLiteral("invalid --journal-sync '%1' (none, batch or always)")
                        .arg(p.value(QStringLiteral("journal-sync"))));
    o.queueRecords = p.value(QStringLiteral("subscriber-queue")).toInt(&ok);
    if (!ok || o.queueRecords < 1)
        return fail(QStringLiteral("invalid --subscriber-queue '%1'")
                        .arg(p.value(QStringLiteral("subscriber-queue"))));
    o.slowGraceMs = p.value(QStringLiteral("slow-grace-ms")).toInt(&ok);
    if (!ok || o.slowGraceMs < 0 || o.slowGraceMs > 30000)
        return fail(QStringLiteral("invalid --slow-grace-ms '%1' (0..30000)")
                        .arg(p.value(QStringLiteral("slow-grace-ms"))));
    if (p.isSet(QStringLiteral("http-port"))) {
        const int port = p.value(QStringLiteral("http-port")).toInt(&ok);
        if (!ok || port < 0 || port > 65535)
            return fail(QStringLiteral("invalid --http-port '%1' (0..65535)")
                            .arg(p.value(QStringLiteral("http-port"))));
        o.httpPort = port;
    }
    o.httpBind = p.value(QStringLiteral("http-bind"));
    o.httpMaxRequests = p.value(QStringLiteral("http-max-requests")).toInt(&ok);
    if (!ok || o.httpMaxRequests < 1)
        return fail(QStringLiteral("invalid --http-max-requests '%1'")
                        .arg(p.value(QStringLiteral("http-max-requests"))));
    o.httpIdleS = p.value(QStringLiteral("http-idle-s")).toInt(&ok);
    if (!ok || o.httpIdleS < 1)
        return fail(QStringLiteral("invalid --http-idle-s '%1'").arg(p.value(QStringLiteral("http-idle-s"))));
    o.httpMaxWebSockets = p.value(QStringLiteral("http-max-websockets")).toInt(&ok);
    if (!ok || o.httpMaxWebSockets < 1)
        return fail(QStringLiteral("invalid --http-max-websockets '%1'").arg(p.value(QStringLiteral("http-max-websockets"))));
    o.httpMaxPerAddress = p.value(QStringLiteral("http-max-per-address")).toInt(&ok);
    if (!ok || o.httpMaxPerAddress < 1)
        return fail(QStringLiteral("invalid --http-max-per-address '%1'").arg(p.value(QStringLiteral("http-max-per-address"))));
    o.httpHeadS = p.value(QStringLiteral("http-head-s")).toInt(&ok);
    if (!ok || o.httpHeadS < 1)
        return fail(QStringLiteral("invalid --http-head-s '%1'").arg(p.value(QStringLiteral("http-head-s"))));
    const struct
    {
        const char *option;
        qint64 *value;
    } quotas[] = {{"quota-object-bytes", &o.quota.maxObjectBytes},
                  {"quota-client-objects", &o.quota.maxObjectsPerClient},
                  {"quota-client-bytes", &o.quota.maxBytesPerClient},
                  {"quota-objects", &o.quota.maxObjects},
                  {"quota-bytes", &o.quota.maxBytes}};
    for (const auto &q : quotas) {
        *q.value = p.value(QLatin1String(q.option)).toLongLong(&ok);
        if (!ok || *q.value < 1)
            return fail(QStringLiteral("invalid --%1 '%2'").arg(QLatin1String(q.option), p.value(QLatin1String(q.option))));
    }
    dialog::is::Criteria::Limits regexLimits;
    regexLimits.maxPatternLength = p.value(QStringLiteral("regex-max-length")).toInt(&ok);
    if (!ok || regexLimits.maxPatternLength < 1)
        return fail(QStringLiteral("invalid --regex-max-length '%1'").arg(p.value(QStringLiteral("regex-max-length"))));
    regexLimits.matchLimit = p.value(QStringLiteral("regex-match-limit")).toUInt(&ok);
    if (!ok || regexLimits.matchLimit < 1)
        return fail(QStringLiteral("invalid --regex-match-limit '%1'").arg(p.value(QStringLiteral("regex-match-limit"))));
    regexLimits.heapLimitKiB = p.value(QStringLiteral("regex-heap-kib")).toUInt(&ok);
    if (!ok || regexLimits.heapLimitKiB < 1)
        return fail(QStringLiteral("invalid --regex-heap-kib '%1'").arg(p.value(QStringLiteral("regex-heap-kib"))));
    dialog::is::Criteria::setLimits(regexLimits);
    o.webRoot = p.value(QStringLiteral("web-root"));
    o.metricsCriteria = p.value(QStringLiteral("metrics-criteria"));
    if (!o.metricsCriteria.isEmpty() && o.httpPort < 0)
        return fail(QStringLiteral("--metrics-criteria needs --http-port (GET /metrics is on the web IS)"));
    o.mirrorOf = p.value(QStringLiteral("mirror-of"));
    o.mirrorCriteria = p.value(QStringLiteral("mirror-criteria"));
    if (!o.mirrorCriteria.isEmpty() && o.mirrorOf.isEmpty())
        return fail(QStringLiteral("--mirror-criteria needs --mirror-of"));
    if (!o.mirrorOf.isEmpty() && o.mirrorOf == o.name)
        return fail(QStringLiteral("--mirror-of names this server itself"));
    for (const QString &t : p.value(QStringLiteral("push-to")).split(QLatin1Char(','), Qt::SkipEmptyParts))
        o.pushTo << t.trimmed();
    if (p.isSet(QStringLiteral("push-to")) && o.pushTo.isEmpty())
        return fail(QStringLiteral("--push-to needs HOST:PORT"));
    o.pushCriteria = p.value(QStringLiteral("push-criteria"));
    if (!o.pushCriteria.isEmpty() && o.pushTo.isEmpty())
        return fail(QStringLiteral("--push-criteria needs --push-to"));
    o.pushPingMs = p.value(QStringLiteral("push-ping-ms")).toInt(&ok);
    if (!ok || o.pushPingMs < 100 || o.pushPingMs > 600000)
        return fail(QStringLiteral("invalid --push-ping-ms '%1' (100..600000)")
                        .arg(p.value(QStringLiteral("push-ping-ms"))));
    if (p.isSet(QStringLiteral("mirror-listen"))) {
        const QString v = p.value(QStringLiteral("mirror-listen"));
        const qsizetype colon = v.lastIndexOf(QLatin1Char(':'));
        QString addr = colon >= 0 ? v.left(colon) : QStringLiteral("0.0.0.0");
        if (addr.startsWith(QLatin1Char('[')) && addr.endsWith(QLatin1Char(']')))
            addr = addr.mid(1, addr.size() - 2);
        const int port = v.mid(colon + 1).toInt(&ok);
        if (!ok || port < 0 || port > 65535 || !o.mirrorListenAddress.setAddress(addr))
            return fail(
                QStringLiteral("invalid --mirror-listen '%1' ([ADDR:]PORT, ADDR an IP address)").arg(v));
        o.mirrorListenPort = port;
        if (!o.mirrorOf.isEmpty())
            return fail(QStringLiteral(
                "--mirror-listen and --mirror-of exclude each other (a mirror has one master)"));
    }
    o.mirrorMaster =
        p.isSet(QStringLiteral("mirror-master")) ? p.value(QStringLiteral("mirror-master")) : o.name;
    if (p.isSet(QStringLiteral("mirror-master")) && o.mirrorListenPort < 0)
        return fail(QStringLiteral("--mirror-master needs --mirror-listen"));
    o.historyCount = p.value(QStringLiteral("history")).toInt(&ok);
    if (!ok || o.historyCount < 0)
        return fail(
            QStringLiteral("invalid --history '%1' (0 or more)").arg(p.value(QStringLiteral("history"))));
    o.historySeconds = p.value(QStringLiteral("history-s")).toInt(&ok);
    if (!ok || o.historySeconds < 1)
        return fail(
            QStringLiteral("invalid --history-s '%1' (1 or more)").arg(p.value(QStringLiteral("history-s"))));
    o.historyConfig = p.value(QStringLiteral("history-config"));
    const QStringList sums = p.values(QStringLiteral("sum"));
    const QStringList intos = p.values(QStringLiteral("into"));
    if (sums.size() != intos.size())
        return fail(QStringLiteral("each --sum needs one --into (got %1 --sum, %2 --into)")
                        .arg(sums.size())
                        .arg(intos.size()));
    for (int i = 0; i < sums.size(); ++i)
        o.sums.append(qMakePair(sums.at(i), intos.at(i)));
    o.alarmsFile = p.value(QStringLiteral("alarms"));
    o.dataDir = p.value(QStringLiteral("data-dir"));
    o.typesDir = p.value(QStringLiteral("types"));
    if (p.isSet(QStringLiteral("journal")) && o.dataDir.isEmpty())
        return fail(QStringLiteral("--journal needs --data-dir (the journal is kept next to the checkpoint)"));
    if (p.isSet(QStringLiteral("journal")) && (!o.mirrorOf.isEmpty() || o.mirrorListenPort >= 0))
        return fail(QStringLiteral("--journal on a mirror: a mirror keeps no journal (it copies its master again "
                                   "when it starts)"));
    o.client = dialog::ClientOptions::fromEnvironment(QStringLiteral("IS.Server.") + o.name);
    o.client.exitOnRefusal = true;            // a second server of the same name must not run
    o.client.maxQueueBytes = 4 * 1024 * 1024; // per subscriber process; a slow one costs at most this
    QString why;
    if (!o.client.applyParser(p, &why))
        return fail(why);
    o.client.name = QStringLiteral("IS.Server.") + o.name;
    if (p.isSet(QStringLiteral("http-token-file"))) {
        if (o.httpPort < 0)
            return fail(QStringLiteral("--http-token-file needs --http-port"));
        if (!dialog::security::readSecretFile(p.value(QStringLiteral("http-token-file")), &o.httpToken, &why))
            return fail(QStringLiteral("--http-token-file: %1").arg(why));
    }
    if (!o.access.applyParser(p, &why))
        return fail(why);
    const dialog::security::TlsFiles tls{o.client.tlsCert, o.client.tlsKey, o.client.tlsCa};
    if (o.httpPort >= 0 && !tls.isEmpty()) {
        if (!dialog::security::tlsConfiguration(tls, &o.httpTlsConfiguration, &why))
            return fail(why);
        // Browsers present no client certificate: the web port only proves its own identity.
        o.httpTlsConfiguration.setPeerVerifyMode(QSslSocket::VerifyNone);
        o.httpTls = true;
    }

    dialog::quitOnTerminationSignals();
    dialog::isd::IsServer server(o);
    if (!server.start(&why))
        return fail(why);
    // Its warnings go to dialog-logger too (when one runs), through the server's own client.
    dialog::installMessageHandler();
    dialog::startReporting(&server.client());
    dialog::notifyReady(); // under systemd (Type=notify): its ports are open
    const int rc = app.exec();
    if (!server.saveNow(&why))
        return fail(QStringLiteral("final checkpoint failed: %1").arg(why));
    return rc;
}
