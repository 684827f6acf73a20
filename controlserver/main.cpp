// dialog-controlserver: the directory of a DIALOG system.
#include "controlserver.h"

#include "dialog/clientoptions.h"
#include "dialog/daemon.h"
#include "dialog/options.h"

using namespace Qt::StringLiterals;
using dialog::Option;
using dialog::OptionTable;
using dialog::OptionUnit;

namespace {

// What the command line says beyond ServerOptions.
struct Given
{
    int lostMaxAgeS = 3600;
    bool noMessageLog = false;
    bool noDirectWrites = false;
    dialog::ClientOptions security = dialog::ClientOptions::fromEnvironment();
    QString provenNames;
};

void addServerOptions(OptionTable &t, dialog::cs::ServerOptions &o)
{
    t.add(
        {Option::integer(u"port"_s, u"port"_s,
                         u"TCP port to listen on (default 3425; 0: any free port, the one bound is in the "
                         "\"listening on\" line)."_s,
                         &o.port, 0, 65535),
         Option::custom(u"bind"_s, u"addr"_s, u"Address to listen on (default 127.0.0.1)."_s,
                        [&o](const QString &v) {
                            return o.bind.setAddress(v) ? dialog::Status()
                                                        : Option::refuse(u"expected an IP address"_s);
                        }),
         Option::text(u"advertise"_s, u"host"_s, u"Host name processes use to reach this server."_s,
                      &o.advertisedHost),
         Option::duration(u"heartbeat-ms"_s, u"ms"_s,
                          u"Default heartbeat interval in ms (processes announce their own; default 1000)."_s,
                          &o.heartbeatMs, OptionUnit::Milliseconds, 10, 3600000),
         Option::integer(u"heartbeat-misses"_s, u"n"_s,
                         u"Missed intervals before a process is declared lost (default 3)."_s,
                         &o.heartbeatMisses, 1, 1000),
         Option::text(
             u"standby-of"_s, u"host:port"_s,
             u"Run as a spare of the primary at host:port: take over (listen on --port) when it stops "
             "answering."_s,
             &o.standbyOf),
         Option::integer(u"term"_s, u"n"_s,
                         u"Fencing term (default 1): a primary serves with it; a standby takes over with one "
                         "above it and above its primary's. A server that learns of a higher term serving "
                         "elsewhere steps down and becomes its standby."_s,
                         &o.term, 1, 1000000000000LL),
         Option::flag(u"trust-advertised"_s,
                      u"Accept any address a process advertises (default: it must be the address its "
                      "connection comes from, or from this host one of this host's addresses)."_s,
                      &o.trustAdvertised)});
}

void addLimitOptions(OptionTable &t, dialog::cs::ServerOptions &o, Given &g)
{
    constexpr int many = 100000000;
    t.add(
        {Option::duration(u"handshake-timeout-ms"_s, u"ms"_s,
                          u"Close connections that send no HELLO within this (default 5000)."_s,
                          &o.transport.handshakeTimeoutMs, OptionUnit::Milliseconds, 1, 3600000),
         Option::integer(
             u"max-handshaking"_s, u"n"_s,
             u"Connections waiting for their HELLO, in total; past it the oldest is closed (default 1024)."_s,
             &o.transport.maxHandshaking, 1, many),
         Option::integer(
             u"max-handshaking-per-address"_s, u"n"_s,
             u"Connections waiting for their HELLO from one address; past it the oldest is closed (default 64)."_s,
             &o.transport.maxHandshakingPerAddress, 1, many),
         Option::integer(u"max-connections"_s, u"n"_s,
                         u"Connections past their HELLO, in total; more are closed (default: what the "
                         "descriptor limit, raised to its hard limit at start, leaves room for)."_s,
                         &o.transport.maxConnections, 1, many),
         Option::integer(u"max-connections-per-address"_s, u"n"_s,
                         u"Connections past their HELLO from one address (default 1024)."_s,
                         &o.transport.maxConnectionsPerAddress, 1, many),
         Option::integer(u"max-connecting-per-address"_s, u"n"_s,
                         u"Processes from one address that may wait for their connect-back at once; more are "
                         "told to try again later (default 256)."_s,
                         &o.maxConnectingPerAddress, 1, many),
         Option::integer(u"max-services-per-process"_s, u"n"_s,
                         u"Services one process may provide; more are refused (default 10000)."_s,
                         &o.maxServicesPerProcess, 1, many),
         Option::integer(u"max-services"_s, u"n"_s,
                         u"Services in the directory; more are refused for now (the process asks again "
                         "later), and no process may hold more than the room left for all others (default "
                         "100000)."_s,
                         &o.maxServices, 1, many),
         Option::integer(
             u"reserved-services"_s, u"n"_s,
             u"Of --max-services, the room kept for the partition's own names (RunCtrl.<P>.* of "
             "process P, IS.<S> of IS server S), which other names cannot fill; at most half of it "
             "(default 1000)."_s,
             &o.reservedServices, 0, many),
         Option::integer(
             u"max-names-per-process"_s, u"n"_s,
             u"Commands one process may register, and services it may subscribe to, each; more are "
             "refused (default 10000)."_s,
             &o.maxNamesPerProcess, 1, many),
         Option::integer(
             u"max-names"_s, u"n"_s,
             u"Command registrations and subscriptions in the directory, in total; more are refused "
             "(default 200000)."_s,
             &o.maxNames, 1, many),
         Option::size(u"directory-page-bytes"_s, u"bytes"_s,
                      u"Largest DIALOG.Directory message; a larger directory is published in pages (default "
                      "8388608, at least 65536, at most 67108864)."_s,
                      &o.directoryPageBytes, dialog::DirectorySnapshot::MinPageBytes, 64 * 1024 * 1024),
         Option::integer(u"max-lost"_s, u"n"_s,
                         u"Lost processes kept in the directory's \"lost\" list (default 100)."_s,
                         &o.lost.maxCount, 1, many),
         Option::duration(u"lost-max-age-s"_s, u"s"_s,
                          u"Seconds a lost process stays in the \"lost\" list (default 3600)."_s,
                          &g.lostMaxAgeS, OptionUnit::Seconds, 1, 365 * 86400),
         Option::integer(
             u"lost-max-names"_s, u"n"_s,
             u"Services, commands and subscriptions kept per list of a lost process; the rest are "
             "counted as omitted (default 100)."_s,
             &o.lost.maxNames, 1, many),
         Option::integer(u"listen-backlog"_s, u"n"_s,
                         u"Listen backlog: connections queued before they are accepted (default 1024)."_s,
                         &o.transport.listenBacklog, 1, 65535)});
}

void addTransportOptions(OptionTable &t, dialog::cs::ServerOptions &o, Given &g)
{
    t.add({Option::flag(
               u"no-direct-writes"_s,
               u"Always hand relayed commands and other frames to a sender thread, never write them from "
               "the reader thread (default: write when nothing is queued; $DIALOG_DIRECT_WRITES=0 turns "
               "it off too)."_s,
               &g.noDirectWrites),
           Option::duration(
               u"receive-spin-us"_s, u"us"_s,
               u"After receiving, reader threads poll this many microseconds before they sleep: lower "
               "latency on the command relay, at the cost of CPU (default 0, or "
               "$DIALOG_RECEIVE_SPIN_US)."_s,
               &o.transport.receiveSpinUs, OptionUnit::Microseconds, 0, 100000)});
    g.security.addSecurityTo(t);
    t.add({Option::text(u"identity-file"_s, u"path"_s,
                        u"The partition's identity secret (dialogctl up makes it; needs --secret-file): "
                        "processes prove their names with the keys derived from it, and a wrong proof is "
                        "refused."_s,
                        &o.identityFile),
           Option::text(u"proven-names"_s, u"names"_s,
                        u"Process names, comma-separated, that must be proven (the partition's processes; "
                        "with --identity-file): a CONNECT naming one without its key's proof is refused."_s,
                        &g.provenNames)});
    t.add(Option::flag(u"no-message-log"_s,
                       u"Do not publish this server's messages (connected, lost, refused, take-over) for "
                       "dialog-logger (DIALOG.ControlServer.Log)."_s,
                       &g.noMessageLog));
}

} // namespace

int main(int argc, char *argv[])
{
    dialog::DaemonApplication app(argc, argv, u"dialog-controlserver"_s);
    OptionTable t(u"dialog-controlserver"_s,
                  u"The DIALOG Control Server: directory of processes, services, commands and subscriptions; "
                  "heartbeat supervision and recovery notifications."_s);
    dialog::cs::ServerOptions o;
    Given g;
    // The same settings, and defaults, as every DIALOG process (ClientOptions).
    o.transport.receiveSpinUs = g.security.receiveSpinUs;
    addServerOptions(t, o);
    addLimitOptions(t, o, g);
    addTransportOptions(t, o, g);
    dialog::AccessOptions::addParserOptions(t.parser());
    if (!t.process(app.arguments()))
        return 1;
    o.lost.maxAgeMs = qint64(g.lostMaxAgeS) * 1000;
    o.secretFile = g.security.secretFile;
    o.transport.insecure = g.security.insecure;
    o.tls = {g.security.tlsCert, g.security.tlsKey, g.security.tlsCa};
    for (const QString &n : g.provenNames.split(u',', Qt::SkipEmptyParts))
        o.provenNames.insert(n.trimmed());
    o.transport.directWrites = g.security.directWrites && !g.noDirectWrites;
    if (!o.standbyOf.isEmpty() && o.port == 0)
        return t.fail(u"--standby-of needs the port to take over on (--port 0 is not one)"_s);
    // Its own messages (connected, lost, refused, limits, take-over) go to the message log: the
    // server publishes them for dialog-logger, having no Client to send them with.
    o.reportMessages = !g.noMessageLog;
    if (const dialog::Status st = o.access.applyParser(t.parser()); !st.isOk())
        return t.fail(st.message());
    app.beginService(o.reportMessages ? dialog::DaemonApplication::Messages::ToMessageLog
                                      : dialog::DaemonApplication::Messages::StderrOnly);
    dialog::cs::ControlServer server(o);
    QString why;
    if (!server.start(&why))
        return t.fail(why);
    // It publishes its messages itself, having no Client. Under systemd (Type=notify): the port is
    // open, or the standby watches.
    app.serviceReady(nullptr);
    return app.exec();
}
