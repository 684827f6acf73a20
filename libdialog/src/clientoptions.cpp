#include "dialog/clientoptions.h"

#include "dialog/options.h"

#include <QLoggingCategory>

#include <QCommandLineParser>
#include <algorithm>

Q_DECLARE_LOGGING_CATEGORY(lcClient) // clientcore.cpp

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
    o.insecure = qEnvironmentVariable("DIALOG_INSECURE").trimmed() == QLatin1String("1");
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

namespace {

// The rows of the common options, written to @p o. Their order is the order of --help.
QList<Option> clientRows(ClientOptions *o)
{
    auto ms = OptionUnit::Milliseconds;
    return {
        Option::custom(QStringLiteral("control-server"), QStringLiteral("addr"),
                       QStringLiteral("Control Server address(es), host:port[,host:port] (default: "
                                      "$DIALOG_CONTROL_SERVER or 127.0.0.1:3425)."),
                       [o](const QString &v) {
                           o->controlServers = v.split(QLatin1Char(','), Qt::SkipEmptyParts);
                           return Status();
                       }),
        Option::duration(QStringLiteral("heartbeat-ms"), QStringLiteral("ms"),
                         QStringLiteral("Heartbeat interval in ms (default 1000)."), &o->heartbeatMs, ms, 10,
                         3600000),
        Option::duration(
            QStringLiteral("retry-ms"), QStringLiteral("ms"),
            QStringLiteral("Control Server reconnection interval in ms, the unit of the jittered "
                           "back-off (default: the heartbeat interval)."),
            &o->retryMs, ms, 10, 3600000),
        Option::integer(QStringLiteral("sender-threads"), QStringLiteral("n"),
                        QStringLiteral("Sender threads (default 2)."), &o->senderThreads, 1, 64),
        Option::integer(QStringLiteral("reader-threads"), QStringLiteral("m"),
                        QStringLiteral("Reader threads (default 2)."), &o->readerThreads, 1, 64),
        Option::size(QStringLiteral("queue-bytes"), QStringLiteral("bytes"),
                     QStringLiteral("Bound of each per-destination queue in bytes (default 8388608)."),
                     &o->maxQueueBytes, 4096, qint64(1) << 40),
        Option::size(QStringLiteral("pending-bytes"), QStringLiteral("bytes"),
                     QStringLiteral("Received bytes waiting for delivery before reading pauses (default "
                                    "33554432)."),
                     &o->maxPendingBytes, 4096, qint64(1) << 40),
        Option::size(QStringLiteral("receive-buffer-bytes"), QStringLiteral("bytes"),
                     QStringLiteral("Socket receive buffer of inbound connections (default: the system's; "
                                    "below 262144 a busy connection may stall, and a warning says so)."),
                     &o->receiveBufferBytes, 4096, qint64(1) << 30),
        Option::duration(QStringLiteral("receive-spin-us"), QStringLiteral("us"),
                         QStringLiteral("After receiving, reader threads poll this many microseconds before "
                                        "they sleep: lower latency for request/reply, at the cost of CPU "
                                        "(default 0, or $DIALOG_RECEIVE_SPIN_US)."),
                         &o->receiveSpinUs, OptionUnit::Microseconds, 0, 100000),
        Option::integer(
            QStringLiteral("max-handshaking-per-address"), QStringLiteral("n"),
            QStringLiteral("Inbound connections from one address that may wait for their handshake "
                           "at once (default 64)."),
            &o->maxHandshakingPerAddress, 1, 1000000),
        Option::flag(QStringLiteral("no-direct-writes"),
                     QStringLiteral("Always hand messages to a sender thread, never write them from the "
                                    "calling thread (default: write from it when nothing is queued; "
                                    "$DIALOG_DIRECT_WRITES=0 turns it off too)."),
                     &o->directWrites, false),
        Option::custom(QStringLiteral("advertise"), QStringLiteral("host"),
                       QStringLiteral("Address other processes use to reach this one (default: "
                                      "$DIALOG_ADVERTISE, else the local address of the route to the Control "
                                      "Server)."),
                       [o](const QString &v) {
                           const QString host = v.trimmed();
                           if (host.isEmpty() || host.contains(QLatin1Char(':')) ||
                               std::any_of(host.cbegin(), host.cend(), [](QChar c) { return c.isSpace(); }))
                               return Option::refuse(
                                   QStringLiteral("expected a host name or an IPv4 address"));
                           o->host = host;
                           return Status();
                       }),
        Option::integer(QStringLiteral("dialog-port"), QStringLiteral("port"),
                        QStringLiteral("Port to receive on (default: any free port)."), &o->port, 0, 65535),
    };
}

QList<Option> securityRows(ClientOptions *o)
{
    return {
        Option::text(QStringLiteral("secret-file"), QStringLiteral("path"),
                     QStringLiteral("Shared secret of the partition (default: $DIALOG_SECRET_FILE; none: no "
                                    "authentication)."),
                     &o->secretFile),
        Option::text(QStringLiteral("tls-cert"), QStringLiteral("path"),
                     QStringLiteral("PEM certificate of this process for TLS (default: $DIALOG_TLS_CERT)."),
                     &o->tlsCert),
        Option::text(QStringLiteral("tls-key"), QStringLiteral("path"),
                     QStringLiteral("PEM private key of --tls-cert (default: $DIALOG_TLS_KEY)."), &o->tlsKey),
        Option::text(QStringLiteral("tls-ca"), QStringLiteral("path"),
                     QStringLiteral("PEM certificate of the authority peers must be signed by (default: "
                                    "$DIALOG_TLS_CA)."),
                     &o->tlsCa),
        Option::flag(QStringLiteral("insecure"),
                     QStringLiteral("Listen beyond loopback without a shared secret all the same: whoever "
                                    "reaches the port is believed (default: refuse to; $DIALOG_INSECURE=1)."),
                     &o->insecure, true),
    };
}

QList<Option> allRows(ClientOptions *o)
{
    return clientRows(o) + securityRows(o);
}

} // namespace

namespace {

// A light scan, so that Client(name) honours --control-server without a parser of its own: the rows
// of the option table read each value, so a value is checked as a parser would check it. A refused
// value leaves its field as it was; the first refusal is returned.
Status readArguments(const QStringList &arguments, ClientOptions *o)
{
    Status first;
    const QList<Option> rows = allRows(o);
    for (qsizetype i = 1; i < arguments.size(); ++i) {
        const QString &a = arguments.at(i);
        if (!a.startsWith(QLatin1String("--")))
            continue;
        const qsizetype eq = a.indexOf(QLatin1Char('='));
        const QString optionName = a.mid(2, eq < 0 ? -1 : eq - 2);
        const auto row =
            std::find_if(rows.cbegin(), rows.cend(), [&](const Option &r) { return r.name() == optionName; });
        if (row == rows.cend())
            continue;
        QString value;
        if (row->kind() == Option::Kind::Flag) {
            if (eq >= 0)
                continue; // "--insecure=…" is no flag
        } else if (eq >= 0) {
            value = a.mid(eq + 1);
        } else if (i + 1 < arguments.size()) {
            value = arguments.at(++i);
        } else {
            continue; // no value follows: nothing to read
        }
        if (const Status st = row->applyValue(value); !st.isOk() && first.isOk())
            first = st;
    }
    return first;
}

} // namespace

ClientOptions ClientOptions::fromArguments(const QStringList &arguments, const QString &name)
{
    ClientOptions o = fromEnvironment(name);
    if (const Status st = readArguments(arguments, &o); !st.isOk())
        qCWarning(lcClient).noquote() << st.message() << "(the default is kept)";
    return o;
}

void ClientOptions::addParserOptions(QCommandLineParser &p)
{
    ClientOptions unused;
    for (const Option &row : clientRows(&unused))
        p.addOption(row.commandLineOption());
    addSecurityParserOptions(p);
}

void ClientOptions::addSecurityParserOptions(QCommandLineParser &p)
{
    ClientOptions unused;
    for (const Option &row : securityRows(&unused))
        p.addOption(row.commandLineOption());
}

void ClientOptions::addTo(OptionTable &table)
{
    for (const Option &row : allRows(this))
        table.add(row);
}

void ClientOptions::addSecurityTo(OptionTable &table)
{
    for (const Option &row : securityRows(this))
        table.add(row);
}

Status ClientOptions::applyParser(const QCommandLineParser &p)
{
    const QList<Option> rows = allRows(this);
    for (const Option &row : rows) {
        if (const Status st = row.apply(p); !st.isOk())
            return st;
    }
    return {};
}

} // namespace dialog
