// dialog-controlserver: the directory of a DIALOG system.
#include "controlserver.h"

#include "dialog/application.h"
#include "dialog/clientoptions.h"
#include "dialog/report.h"
#include <QCommandLineParser>
#include <QCoreApplication>

#include <cstdio>

int main(int argc, char *argv[])
{
    dialog::preferLowLatencyEventDispatcher();
    QCoreApplication app(argc, argv);
    QCoreApplication::setApplicationName(QStringLiteral("dialog-controlserver"));
    QCommandLineParser p;
    p.setApplicationDescription(QStringLiteral(
        "The DIALOG Control Server: directory of processes, services, commands and subscriptions; "
        "heartbeat supervision and recovery notifications."));
    p.addHelpOption();
    p.addOption(
        {QStringLiteral("port"),
         QStringLiteral("TCP port to listen on (default 3425; 0: any free port, the one bound is in the "
                        "\"listening on\" line)."),
         QStringLiteral("port"), QStringLiteral("3425")});
    p.addOption({QStringLiteral("bind"), QStringLiteral("Address to listen on (default 127.0.0.1)."),
                 QStringLiteral("addr"), QStringLiteral("127.0.0.1")});
    p.addOption({QStringLiteral("advertise"), QStringLiteral("Host name processes use to reach this server."),
                 QStringLiteral("host")});
    p.addOption(
        {QStringLiteral("heartbeat-ms"),
         QStringLiteral("Default heartbeat interval in ms (processes announce their own; default 1000)."),
         QStringLiteral("ms"), QStringLiteral("1000")});
    p.addOption({QStringLiteral("heartbeat-misses"),
                 QStringLiteral("Missed intervals before a process is declared lost (default 3)."),
                 QStringLiteral("n"), QStringLiteral("3")});
    p.addOption(
        {QStringLiteral("standby-of"),
         QStringLiteral("Run as a spare of the primary at host:port: take over (listen on --port) when it "
                        "stops answering."),
         QStringLiteral("host:port")});
    p.addOption(
        {QStringLiteral("trust-advertised"),
         QStringLiteral("Accept any address a process advertises (default: it must be the address its "
                        "connection comes from, or from this host one of this host's addresses).")});
    p.addOption({QStringLiteral("handshake-timeout-ms"),
                 QStringLiteral("Close connections that send no HELLO within this (default 5000)."),
                 QStringLiteral("ms"), QStringLiteral("5000")});
    p.addOption(
        {QStringLiteral("max-handshaking"),
         QStringLiteral("Connections waiting for their HELLO, in total; more are closed (default 1024)."),
         QStringLiteral("n"), QStringLiteral("1024")});
    p.addOption({QStringLiteral("max-handshaking-per-address"),
                 QStringLiteral("Connections waiting for their HELLO from one address (default 64)."),
                 QStringLiteral("n"), QStringLiteral("64")});
    p.addOption(
        {QStringLiteral("max-connecting-per-address"),
         QStringLiteral("Processes from one address that may wait for their connect-back at once; more "
                        "are told to try again later (default 256)."),
         QStringLiteral("n"), QStringLiteral("256")});
    p.addOption({QStringLiteral("max-services-per-process"),
                 QStringLiteral("Services one process may provide; more are refused (default 10000)."),
                 QStringLiteral("n"), QStringLiteral("10000")});
    p.addOption({QStringLiteral("max-services"),
                 QStringLiteral("Services in the directory; more are refused (default 100000)."),
                 QStringLiteral("n"), QStringLiteral("100000")});
    p.addOption({QStringLiteral("max-names-per-process"),
                 QStringLiteral("Commands one process may register, and services it may subscribe to, each; "
                                "more are refused (default 10000)."),
                 QStringLiteral("n"), QStringLiteral("10000")});
    p.addOption(
        {QStringLiteral("max-names"),
         QStringLiteral("Command registrations and subscriptions in the directory, in total; more are "
                        "refused (default 200000)."),
         QStringLiteral("n"), QStringLiteral("200000")});
    p.addOption({QStringLiteral("directory-page-bytes"),
                 QStringLiteral("Largest DIALOG.Directory message; a larger directory is published in pages "
                                "(default 8388608, at least 65536, at most 67108864)."),
                 QStringLiteral("bytes"), QStringLiteral("8388608")});
    p.addOption({QStringLiteral("max-lost"),
                 QStringLiteral("Lost processes kept in the directory's \"lost\" list (default 100)."),
                 QStringLiteral("n"), QStringLiteral("100")});
    p.addOption({QStringLiteral("lost-max-age-s"),
                 QStringLiteral("Seconds a lost process stays in the \"lost\" list (default 3600)."),
                 QStringLiteral("s"), QStringLiteral("3600")});
    p.addOption({QStringLiteral("lost-max-names"),
                 QStringLiteral("Services, commands and subscriptions kept per list of a lost process; the "
                                "rest are counted as omitted (default 100)."),
                 QStringLiteral("n"), QStringLiteral("100")});
    p.addOption(
        {QStringLiteral("listen-backlog"),
         QStringLiteral("Listen backlog: connections queued before they are accepted (default 1024)."),
         QStringLiteral("n"), QStringLiteral("1024")});
    p.addOption({QStringLiteral("no-direct-writes"),
                 QStringLiteral("Always hand relayed commands and other frames to a sender thread, never "
                                "write them from the reader thread (default: write when nothing is queued; "
                                "$DIALOG_DIRECT_WRITES=0 turns it off too).")});
    p.addOption({QStringLiteral("receive-spin-us"),
                 QStringLiteral("After receiving, reader threads poll this many microseconds before they sleep: "
                                "lower latency on the command relay, at the cost of CPU (default 0, or "
                                "$DIALOG_RECEIVE_SPIN_US)."),
                 QStringLiteral("us")});
    dialog::ClientOptions::addSecurityParserOptions(p);
    p.addOption({QStringLiteral("no-message-log"),
                 QStringLiteral("Do not publish this server's messages (connected, lost, refused, take-over) "
                                "for dialog-logger (DIALOG.ControlServer.Log).")});
    dialog::AccessOptions::addParserOptions(p);
    p.process(app);

    auto fail = [](const QString &why) {
        std::fprintf(stderr, "dialog-controlserver: %s\n", qPrintable(why));
        return 1;
    };
    if (!p.positionalArguments().isEmpty())
        return fail(
            QStringLiteral("unexpected argument '%1' (see --help)").arg(p.positionalArguments().first()));
    dialog::cs::ServerOptions o;
    bool ok = false;
    const uint port = p.value(QStringLiteral("port")).toUInt(&ok);
    if (!ok || port > 65535)
        return fail(QStringLiteral("invalid --port '%1'").arg(p.value(QStringLiteral("port"))));
    o.port = quint16(port);
    if (!o.bind.setAddress(p.value(QStringLiteral("bind"))))
        return fail(QStringLiteral("invalid --bind address '%1'").arg(p.value(QStringLiteral("bind"))));
    o.advertisedHost = p.value(QStringLiteral("advertise"));
    o.heartbeatMs = p.value(QStringLiteral("heartbeat-ms")).toInt(&ok);
    if (!ok || o.heartbeatMs < 10)
        return fail(
            QStringLiteral("invalid --heartbeat-ms '%1'").arg(p.value(QStringLiteral("heartbeat-ms"))));
    o.heartbeatMisses = p.value(QStringLiteral("heartbeat-misses")).toInt(&ok);
    if (!ok || o.heartbeatMisses < 1)
        return fail(QStringLiteral("invalid --heartbeat-misses '%1'")
                        .arg(p.value(QStringLiteral("heartbeat-misses"))));
    int lostMaxAgeS = 0;
    const struct
    {
        const char *option;
        int *value;
    } limits[] = {{"max-lost", &o.lost.maxCount},
                  {"lost-max-age-s", &lostMaxAgeS},
                  {"lost-max-names", &o.lost.maxNames},
                  {"handshake-timeout-ms", &o.transport.handshakeTimeoutMs},
                  {"max-handshaking", &o.transport.maxHandshaking},
                  {"max-handshaking-per-address", &o.transport.maxHandshakingPerAddress},
                  {"listen-backlog", &o.transport.listenBacklog},
                  {"max-connecting-per-address", &o.maxConnectingPerAddress},
                  {"max-services-per-process", &o.maxServicesPerProcess},
                  {"max-services", &o.maxServices},
                  {"max-names-per-process", &o.maxNamesPerProcess},
                  {"max-names", &o.maxNames}};
    for (const auto &l : limits) {
        *l.value = p.value(QLatin1String(l.option)).toInt(&ok);
        if (!ok || *l.value < 1)
            return fail(QStringLiteral("invalid --%1 '%2'")
                            .arg(QLatin1String(l.option), p.value(QLatin1String(l.option))));
    }
    o.lost.maxAgeMs = qint64(lostMaxAgeS) * 1000;
    const qint64 pageBytes = p.value(QStringLiteral("directory-page-bytes")).toLongLong(&ok);
    if (!ok || pageBytes < dialog::DirectorySnapshot::MinPageBytes || pageBytes > 64 * 1024 * 1024)
        return fail(QStringLiteral("invalid --directory-page-bytes '%1' (65536 to 67108864)")
                        .arg(p.value(QStringLiteral("directory-page-bytes"))));
    o.directoryPageBytes = pageBytes;

    // The same settings, and defaults, as every DIALOG process (ClientOptions).
    const dialog::ClientOptions env = dialog::ClientOptions::fromEnvironment();
    auto fileOption = [&p](const char *name, const QString &fallback) {
        return p.isSet(QLatin1String(name)) ? p.value(QLatin1String(name)) : fallback;
    };
    o.secretFile = fileOption("secret-file", env.secretFile);
    o.tls = {fileOption("tls-cert", env.tlsCert), fileOption("tls-key", env.tlsKey),
             fileOption("tls-ca", env.tlsCa)};
    o.transport.directWrites = env.directWrites && !p.isSet(QStringLiteral("no-direct-writes"));
    o.transport.receiveSpinUs = env.receiveSpinUs;
    if (p.isSet(QStringLiteral("receive-spin-us"))) {
        o.transport.receiveSpinUs = p.value(QStringLiteral("receive-spin-us")).toInt(&ok);
        if (!ok || o.transport.receiveSpinUs < 0 || o.transport.receiveSpinUs > 100000)
            return fail(QStringLiteral("invalid --receive-spin-us '%1' (0 to 100000)")
                            .arg(p.value(QStringLiteral("receive-spin-us"))));
    }
    o.trustAdvertised = p.isSet(QStringLiteral("trust-advertised"));
    o.standbyOf = p.value(QStringLiteral("standby-of"));
    if (!o.standbyOf.isEmpty() && o.port == 0)
        return fail(QStringLiteral("--standby-of needs the port to take over on (--port 0 is not one)"));
    // Its own messages (connected, lost, refused, limits, take-over) go to the message log: the
    // server publishes them for dialog-logger, having no Client to send them with.
    o.reportMessages = !p.isSet(QStringLiteral("no-message-log"));
    QString problem;
    if (!o.access.applyParser(p, &problem))
        return fail(problem);
    if (o.reportMessages)
        dialog::installMessageHandler();
    dialog::quitOnTerminationSignals();
    dialog::cs::ControlServer server(o);
    QString why;
    if (!server.start(&why))
        return fail(why);
    dialog::notifyReady(); // under systemd (Type=notify): the port is open, or the standby watches
    return app.exec();
}
