#include "admission.h"

#include "registry.h"

#include <QHostInfo>
#include <QLoggingCategory>
#include <QNetworkInterface>

#include <algorithm>

Q_LOGGING_CATEGORY(lcAdmission, "dialog.controlserver.admission", QtInfoMsg)

namespace dialog::cs {

using namespace wire_format;
using net::Endpoint;

namespace {
// A claimed address that could not be reached is refused without dialling it again for this long.
constexpr qint64 DialRetryMs = 5000;
// An accepted process that sends nothing within this time is no longer remembered as unverified.
constexpr qint64 UnverifiedForgetMs = 60000;

bool sameAddress(const QHostAddress &a, const QHostAddress &b)
{
    return a.isEqual(b, QHostAddress::TolerantConversion);
}

bool isLoopback(const QHostAddress &a)
{
    bool v4 = false;
    const quint32 ip = a.toIPv4Address(&v4);
    return a.isLoopback() || (v4 && (ip >> 24) == 127);
}

/// An address that reaches this host: loopback, "any" (dialled, it reaches this host) or one of
/// @p local.
bool isThisHost(const QHostAddress &a, const QList<QHostAddress> &local)
{
    return isLoopback(a) || a.isEqual(QHostAddress::AnyIPv4, QHostAddress::TolerantConversion) ||
           a == QHostAddress::AnyIPv6 ||
           std::any_of(local.cbegin(), local.cend(),
                       [&a](const QHostAddress &l) { return sameAddress(a, l); });
}
} // namespace

Admission::Admission(ServerContext &context, Registry &registry, QObject *parent)
    : QObject(parent), m_ctx(context), m_registry(registry)
{
}

void Admission::start()
{
    m_localAddresses = QNetworkInterface::allAddresses();
}

void Admission::onConnect(const net::Inbound &in)
{
    wire::Connect c;
    parseControl(in.data, c);
    if (m_ctx.redirectTo.isValid()) {
        // Stepping down: nobody is accepted here any more; the process goes where the partition is.
        wire::Refused r;
        r.set_what("redirect");
        r.set_name(c.name());
        r.set_reason(ss(QStringLiteral("this Control Server steps down for the one at %1 (term %2)")
                            .arg(m_ctx.redirectTo.toString())
                            .arg(m_ctx.redirectTerm)));
        // (Not the serving server's own watch of us: sent there, it would watch itself.)
        if (qs(c.term_server()) != m_ctx.redirectTo.toString()) {
            r.set_redirect(ss(m_ctx.redirectTo.toString()));
            r.set_term(m_ctx.redirectTerm);
        }
        m_ctx.transport->answer(in.peer, controlFrame(Type::Refused, r));
        return;
    }
    const QString host = qs(c.host());
    if (c.name().empty() || c.port() == 0 || c.port() > 65535 || host.isEmpty()) {
        refuseConnect(in, QStringLiteral("connect"),
                      QStringLiteral("CONNECT without a process name, host or port"));
        return;
    }
    const QHostAddress literal(host);
    if (!literal.isNull() || m_ctx.options.trustAdvertised) {
        admit(in, {literal});
        return;
    }
    // An advertised name is checked against the connection as what it resolves to (asynchronously).
    QHostInfo::lookupHost(host, this, [this, in](const QHostInfo &info) {
        if (m_ctx.transport)
            admit(in, info.addresses());
    });
}

QString Admission::claimError(const QString &claimed, const QList<QHostAddress> &addresses,
                              const QHostAddress &source, const QList<QHostAddress> &localAddresses)
{
    if (addresses.isEmpty() || addresses.first().isNull())
        return QStringLiteral("cannot resolve the advertised host '%1' — advertise an address (--advertise)")
            .arg(claimed);
    for (const QHostAddress &a : addresses) {
        if (sameAddress(a, source))
            return {};
        // From this host (loopback): any address of this host, not another host's.
        if (isLoopback(source) &&
            (isLoopback(a) || std::any_of(localAddresses.cbegin(), localAddresses.cend(),
                                          [&a](const QHostAddress &l) { return sameAddress(a, l); })))
            return {};
    }
    return QStringLiteral("advertises %1 but connected from %2 — advertise the address the Control Server "
                          "sees (--advertise %2), or start it with --trust-advertised")
        .arg(claimed, source.toString());
}

void Admission::refuseConnect(const net::Inbound &in, const QString &what, const QString &reason)
{
    m_ctx.transport->answer(in.peer, ServerContext::refusal(what, in.peer->name, reason));
}

QString Admission::checkEndpoint(const net::Inbound &in, const ProcessRecord &p,
                                 const QList<QHostAddress> &addresses) const
{
    const Endpoint reply{p.host, p.port};
    // Dialling back its own listener, the Control Server would take itself for the process.
    if (p.port == m_ctx.transport->serverPort() &&
        std::any_of(addresses.cbegin(), addresses.cend(),
                    [this](const QHostAddress &a) { return isThisHost(a, m_localAddresses); }))
        return QStringLiteral("%1 is where the Control Server itself listens — advertise the process's "
                              "own port")
            .arg(reply.toString());
    if (!m_ctx.options.trustAdvertised) {
        const QString why = claimError(p.host, addresses, in.peer->source, m_localAddresses);
        if (!why.isEmpty())
            return why;
    }
    const QString holder = m_ctx.directory.processAt(p.host, p.port);
    if (!holder.isEmpty() && holder != p.name)
        return QStringLiteral("%1 is where process %2 listens").arg(reply.toString(), holder);
    const auto failed = m_dialFailures.constFind(reply);
    if (failed != m_dialFailures.cend() && m_ctx.now() - failed->atMs < DialRetryMs)
        return failed->reason; // not dialled again so soon
    // (Counted only when it may matter: fewer waiting in all than the limit cannot reach it.)
    const int limit = m_ctx.options.maxConnectingPerAddress;
    if (m_unverified.size() >= limit && !m_unverified.contains(reply)) {
        const auto fromSource =
            std::count_if(m_unverified.cbegin(), m_unverified.cend(),
                          [&](const Unverified &u) { return sameAddress(u.via->source, in.peer->source); });
        if (fromSource >= limit)
            return QStringLiteral("too many processes from %1 wait for their connect-back; try again later")
                .arg(in.peer->source.toString());
    }
    return {};
}

void Admission::refuseNameInUse(const net::Inbound &in, const ProcessRecord &p, const QString &why)
{
    // One line for the first refusal of a name and then at 2, 4, 8, … (the refused process
    // backs off, but a misconfigured one may keep knocking).
    const int times = ++m_refusedConnects[p.name];
    if ((times & (times - 1)) == 0)
        qCInfo(lcAdmission).noquote()
            << "refused connection of" << p.name << "from" << in.peer->source.toString() << "-" << why
            << (times > 1 ? QStringLiteral("(%1 times)").arg(times) : QString());
    refuseConnect(in, QStringLiteral("connect"), why);
    // A replacement is knocking: if the holder of the name is dead, the probe finds out now.
    if (const ProcessRecord *old = m_ctx.directory.process(p.name))
        m_ctx.sendToEndpoint(Endpoint{old->host, old->port},
                             controlFrame(Type::Heartbeat, wire::Heartbeat()));
}

void Admission::admit(const net::Inbound &in, const QList<QHostAddress> &addresses)
{
    wire::Connect c;
    parseControl(in.data, c);
    ProcessRecord p;
    p.name = qs(c.name());
    p.host = qs(c.host());
    p.port = quint16(c.port());
    p.pid = c.pid();
    p.incarnation = c.incarnation();
    p.session = QByteArray::fromStdString(c.session());
    p.term = c.term();
    p.termServer = qs(c.term_server());
    p.via = in.peer->connectionId;
    p.version = in.peer->version;
    p.heartbeatMs = c.heartbeat_ms() > 0 ? int(c.heartbeat_ms()) : m_ctx.options.heartbeatMs;
    p.connectedAtMs = m_ctx.wallNow();
    p.lastSeenMs = m_ctx.now();
    const Endpoint reply{p.host, p.port};
    // A process of the partition is who its key says, not who its CONNECT claims (name squatting).
    if (m_ctx.options.provenNames.contains(p.name) && !(in.peer->proven && in.peer->name == p.name)) {
        const QString unproven =
            QStringLiteral("%1 is a process of the partition and must prove its name with its process key "
                           "($DIALOG_PROCESS_KEY_FILE, issued by dialogctl up)")
                .arg(p.name);
        qCWarning(lcAdmission).noquote()
            << "refused connection of" << p.name << "from" << in.peer->source.toString() << "-" << unproven;
        refuseConnect(in, QStringLiteral("connect"), unproven);
        return;
    }
    QString why = checkEndpoint(in, p, addresses);
    if (!why.isEmpty()) {
        qCInfo(lcAdmission).noquote()
            << "refused connection of" << p.name << "from" << in.peer->source.toString() << "-" << why;
        refuseConnect(in, QStringLiteral("address"), why);
        return;
    }
    const ProcessRecord *before = m_ctx.directory.process(p.name);
    const bool hadCommands = before && !before->commands.isEmpty(); // a refresh starts without them
    const auto result = m_ctx.directory.connectProcess(p, &why);
    if (result == Directory::ConnectResult::NameInUse) {
        refuseNameInUse(in, p, why);
        return;
    }
    m_refusedConnects.remove(p.name);
    Q_EMIT admitted(p, result == Directory::ConnectResult::Accepted);
    qCInfo(lcAdmission).noquote() << "process" << p.name << "connected from" << reply.toString() << "pid"
                                  << p.pid
                                  << (result == Directory::ConnectResult::Refreshed ? "(again)" : "")
                                  << (in.peer->proven ? "(name proven)" : "");
    // Until it answers, it is on probation: if SUCCESSFULLY_CONNECTED cannot be delivered, the
    // refusal goes back on the connection the CONNECT came by.
    m_unverified.insert(reply, Unverified{in.peer, p.name, p.incarnation, m_ctx.now()});
    wire::Connected ok;
    ok.set_server(ss(m_ctx.self.name));
    ok.set_heartbeat_ms(quint32(p.heartbeatMs));
    ok.set_heartbeat_misses(quint32(m_ctx.options.heartbeatMisses));
    ok.set_session(c.session()); // tells the process which inbound connection is ours
    ok.set_term(m_ctx.term);
    m_ctx.sendToEndpoint(reply, controlFrame(Type::SuccessfullyConnected, ok));
    for (const auto &s : c.services())
        m_registry.registerService(p.name, qs(s));
    for (const auto &cmd : c.commands())
        m_registry.registerCommand(p.name, qs(cmd));
    for (const auto &r : c.requests())
        m_registry.request(p.name, qs(r));
    Q_EMIT directoryChanged(c.commands_size() > 0 || hadCommands);
}

void Admission::heardFrom(const Endpoint &e)
{
    if (!m_unverified.isEmpty())
        m_unverified.remove(e);
}

bool Admission::destinationFailed(const Endpoint &e, const QString &why)
{
    if (!m_unverified.contains(e))
        return false;
    connectBackFailed(e, why);
    return true;
}

void Admission::connectBackFailed(const Endpoint &e, const QString &reason)
{
    const Unverified u = m_unverified.take(e);
    QString detail = reason;
    if (!detail.isEmpty())
        detail[0] = detail[0].toLower();
    const QString why = QStringLiteral("cannot connect back to %1: %2 — check --advertise / firewall")
                            .arg(e.toString(), detail);
    if (m_dialFailures.size() > 4096)
        m_dialFailures.clear(); // bounded; entries are short-lived anyway
    m_dialFailures.insert(e, DialFailure{why, m_ctx.now()});
    m_ctx.transport->answer(u.via, ServerContext::refusal(QStringLiteral("address"), u.name, why));
    if (m_ctx.directory.connected(u.name, u.incarnation))
        Q_EMIT unreachable(u.name, u.incarnation, why);
}

void Admission::expire()
{
    const qint64 t = m_ctx.now();
    for (auto it = m_unverified.begin(); it != m_unverified.end();)
        it = t - it->atMs > UnverifiedForgetMs ? m_unverified.erase(it) : std::next(it);
    for (auto it = m_dialFailures.begin(); it != m_dialFailures.end();)
        it = t - it->atMs > DialRetryMs ? m_dialFailures.erase(it) : std::next(it);
}

} // namespace dialog::cs
