#include "dialog/clientoptions.h"

#include <QCommandLineParser>
#include <algorithm>

namespace dialog {

ClientOptions ClientOptions::fromEnvironment(const QString &name)
{
    ClientOptions o;
    o.name = name;
    const QString env = qEnvironmentVariable("DIALOG_CONTROL_SERVER").trimmed();
    if (!env.isEmpty())
        o.controlServers = env.split(QLatin1Char(','), Qt::SkipEmptyParts);
    o.host = qEnvironmentVariable("DIALOG_ADVERTISE").trimmed();
    o.secretFile = qEnvironmentVariable("DIALOG_SECRET_FILE");
    o.tlsCert = qEnvironmentVariable("DIALOG_TLS_CERT");
    o.tlsKey = qEnvironmentVariable("DIALOG_TLS_KEY");
    o.tlsCa = qEnvironmentVariable("DIALOG_TLS_CA");
    bool spinOk = false;
    const int spin = qEnvironmentVariableIntValue("DIALOG_RECEIVE_SPIN_US", &spinOk);
    if (spinOk && spin >= 0 && spin <= 100000)
        o.receiveSpinUs = spin;
    const QString direct = qEnvironmentVariable("DIALOG_DIRECT_WRITES").trimmed().toLower();
    if (direct == QLatin1String("0") || direct == QLatin1String("off") || direct == QLatin1String("no") ||
        direct == QLatin1String("false"))
        o.directWrites = false;
    return o;
}

ClientOptions ClientOptions::fromArguments(const QStringList &arguments, const QString &name)
{
    ClientOptions o = fromEnvironment(name);
    // A light scan so that Client(name) honours --control-server without a parser of its own.
    for (qsizetype i = 1; i < arguments.size(); ++i) {
        const QString &a = arguments.at(i);
        auto value = [&](const QString &opt, QString &out) {
            if (a == opt && i + 1 < arguments.size()) {
                out = arguments.at(++i);
                return true;
            }
            if (a.startsWith(opt + QLatin1Char('='))) {
                out = a.mid(opt.size() + 1);
                return true;
            }
            return false;
        };
        QString v;
        if (value(QStringLiteral("--control-server"), v))
            o.controlServers = v.split(QLatin1Char(','), Qt::SkipEmptyParts);
        else if (value(QStringLiteral("--heartbeat-ms"), v))
            o.heartbeatMs = qMax(10, v.toInt());
        else if (value(QStringLiteral("--retry-ms"), v))
            o.retryMs = qMax(10, v.toInt());
        else if (value(QStringLiteral("--advertise"), v))
            o.host = v.trimmed();
        else if (value(QStringLiteral("--secret-file"), v))
            o.secretFile = v;
        else if (value(QStringLiteral("--tls-cert"), v))
            o.tlsCert = v;
        else if (value(QStringLiteral("--tls-key"), v))
            o.tlsKey = v;
        else if (value(QStringLiteral("--tls-ca"), v))
            o.tlsCa = v;
    }
    return o;
}

void ClientOptions::addParserOptions(QCommandLineParser &p)
{
    p.addOption(
        {QStringLiteral("control-server"),
         QStringLiteral("Control Server address(es), host:port[,host:port] (default: $DIALOG_CONTROL_SERVER "
                        "or 127.0.0.1:3425)."),
         QStringLiteral("addr")});
    p.addOption({QStringLiteral("heartbeat-ms"), QStringLiteral("Heartbeat interval in ms (default 1000)."),
                 QStringLiteral("ms")});
    p.addOption(
        {QStringLiteral("retry-ms"),
         QStringLiteral("Control Server reconnection interval in ms, the unit of the jittered back-off "
                        "(default: the heartbeat interval)."),
         QStringLiteral("ms")});
    p.addOption({QStringLiteral("sender-threads"), QStringLiteral("Sender threads (default 2)."),
                 QStringLiteral("n")});
    p.addOption({QStringLiteral("reader-threads"), QStringLiteral("Reader threads (default 2)."),
                 QStringLiteral("m")});
    p.addOption({QStringLiteral("queue-bytes"),
                 QStringLiteral("Bound of each per-destination queue in bytes (default 8388608)."),
                 QStringLiteral("bytes")});
    p.addOption(
        {QStringLiteral("pending-bytes"),
         QStringLiteral("Received bytes waiting for delivery before reading pauses (default 33554432)."),
         QStringLiteral("bytes")});
    p.addOption({QStringLiteral("receive-buffer-bytes"),
                 QStringLiteral("Socket receive buffer of inbound connections (default: the system's; below "
                                "262144 a busy connection may stall, and a warning says so)."),
                 QStringLiteral("bytes")});
    p.addOption({QStringLiteral("receive-spin-us"),
                 QStringLiteral("After receiving, reader threads poll this many microseconds before they sleep: "
                                "lower latency for request/reply, at the cost of CPU (default 0, or "
                                "$DIALOG_RECEIVE_SPIN_US)."),
                 QStringLiteral("us")});
    p.addOption({QStringLiteral("max-handshaking-per-address"),
                 QStringLiteral("Inbound connections from one address that may wait for their handshake at "
                                "once (default 64)."),
                 QStringLiteral("n")});
    p.addOption({QStringLiteral("no-direct-writes"),
                 QStringLiteral("Always hand messages to a sender thread, never write them from the calling "
                                "thread (default: write from it when nothing is queued; "
                                "$DIALOG_DIRECT_WRITES=0 turns it off too).")});
    p.addOption({QStringLiteral("advertise"),
                 QStringLiteral("Address other processes use to reach this one (default: $DIALOG_ADVERTISE, "
                                "else the local address of the route to the Control Server)."),
                 QStringLiteral("host")});
    p.addOption({QStringLiteral("dialog-port"),
                 QStringLiteral("Port to receive on (default: any free port)."), QStringLiteral("port")});
    addSecurityParserOptions(p);
}

void ClientOptions::addSecurityParserOptions(QCommandLineParser &p)
{
    p.addOption({QStringLiteral("secret-file"),
                 QStringLiteral("Shared secret of the partition (default: $DIALOG_SECRET_FILE; none: no "
                                "authentication)."),
                 QStringLiteral("path")});
    p.addOption({QStringLiteral("tls-cert"),
                 QStringLiteral("PEM certificate of this process for TLS (default: $DIALOG_TLS_CERT)."),
                 QStringLiteral("path")});
    p.addOption({QStringLiteral("tls-key"),
                 QStringLiteral("PEM private key of --tls-cert (default: $DIALOG_TLS_KEY)."),
                 QStringLiteral("path")});
    p.addOption({QStringLiteral("tls-ca"),
                 QStringLiteral("PEM certificate of the authority peers must be signed by (default: "
                                "$DIALOG_TLS_CA)."),
                 QStringLiteral("path")});
}

bool ClientOptions::applyParser(const QCommandLineParser &p, QString *error)
{
    auto number = [&](const char *opt, qint64 min, qint64 max, auto &target) {
        const QString name = QLatin1String(opt);
        if (!p.isSet(name))
            return true;
        bool ok = false;
        const qint64 v = p.value(name).toLongLong(&ok);
        if (!ok || v < min || v > max) {
            if (error)
                *error = QStringLiteral("invalid --%1 '%2' (expected %3..%4)")
                             .arg(name, p.value(name))
                             .arg(min)
                             .arg(max);
            return false;
        }
        target = std::remove_reference_t<decltype(target)>(v);
        return true;
    };
    if (p.isSet(QStringLiteral("advertise"))) {
        host = p.value(QStringLiteral("advertise")).trimmed();
        const bool bad = host.isEmpty() || host.contains(QLatin1Char(':')) ||
                         std::any_of(host.cbegin(), host.cend(), [](QChar c) { return c.isSpace(); });
        if (bad) {
            if (error)
                *error = QStringLiteral("invalid --advertise '%1' (expected a host name or an IPv4 address)")
                             .arg(p.value(QStringLiteral("advertise")));
            return false;
        }
    }
    for (auto [opt, target] : {std::pair{"secret-file", &secretFile}, std::pair{"tls-cert", &tlsCert},
                               std::pair{"tls-key", &tlsKey}, std::pair{"tls-ca", &tlsCa}}) {
        if (p.isSet(QLatin1String(opt)))
            *target = p.value(QLatin1String(opt));
    }
    if (p.isSet(QStringLiteral("no-direct-writes")))
        directWrites = false;
    if (p.isSet(QStringLiteral("control-server")))
        controlServers =
            p.value(QStringLiteral("control-server")).split(QLatin1Char(','), Qt::SkipEmptyParts);
    return number("heartbeat-ms", 10, 3600000, heartbeatMs) && number("retry-ms", 10, 3600000, retryMs) &&
           number("sender-threads", 1, 64, senderThreads) && number("reader-threads", 1, 64, readerThreads) &&
           number("queue-bytes", 4096, qint64(1) << 40, maxQueueBytes) &&
           number("pending-bytes", 4096, qint64(1) << 40, maxPendingBytes) &&
           number("receive-buffer-bytes", 4096, qint64(1) << 30, receiveBufferBytes) &&
           number("max-handshaking-per-address", 1, 1000000, maxHandshakingPerAddress) &&
           number("receive-spin-us", 0, 100000, receiveSpinUs) &&
           number("dialog-port", 0, 65535, port);
}

} // namespace dialog
