#include "fencing.h"

#include "standby.h"

#include <QCoreApplication>
#include <QFile>
#include <QHostInfo>
#include <QNetworkInterface>
#include <QLoggingCategory>
#include <QNetworkProxy>
#include <QTcpSocket>
#include <QTimer>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <unistd.h>

Q_LOGGING_CATEGORY(lcFencing, "dialog.controlserver.fencing", QtInfoMsg)

namespace dialog::cs {

using namespace wire_format;
using net::Endpoint;

namespace {
const QLatin1String StandbyPrefix("DIALOG.Standby.");
/// Heartbeat intervals during which a server that steps down redirects its processes before it
/// becomes a standby (one that missed a redirect gets the next). Not fewer once nobody is left in
/// the directory: a process that knows only this server's address and is between two attempts is
/// not in it, and finds the serving server only by a redirect while this one still listens.
constexpr int RedirectRounds = 10;

/// The address a process named DIALOG.Standby.<port> serves on once it takes over: its own host,
/// the port of its name (invalid for other names).
Endpoint standbyEndpoint(const ProcessRecord &p)
{
    if (!p.name.startsWith(StandbyPrefix))
        return {};
    bool ok = false;
    const quint16 port = p.name.mid(StandbyPrefix.size()).toUShort(&ok);
    return ok && port != 0 ? Endpoint{p.host, port} : Endpoint{};
}
} // namespace

void probeListening(QObject *owner, const Endpoint &at, int timeoutMs, std::function<void(bool)> done)
{
    auto *probe = new QTcpSocket(owner);
    probe->setProxy(QNetworkProxy::NoProxy);
    auto *timeout = new QTimer(probe);
    timeout->setSingleShot(true);
    // Whichever comes first (connected, an error, the time-out) decides, once.
    auto finish = [probe, timeout, done](bool listening) {
        probe->disconnect();
        timeout->disconnect();
        probe->abort();
        probe->deleteLater();
        done(listening);
    };
    QObject::connect(probe, &QTcpSocket::connected, owner, [finish] { finish(true); });
    QObject::connect(probe, &QTcpSocket::errorOccurred, owner, [finish] { finish(false); });
    QObject::connect(timeout, &QTimer::timeout, owner, [finish] { finish(false); });
    timeout->start(timeoutMs);
    probe->connectToHost(at.host, at.port);
}

Fencing::Fencing(ServerContext &context, QObject *parent) : QObject(parent), m_ctx(context) {}

Fencing::~Fencing() = default;

bool Fencing::outranks(quint64 term, quint64 ownTerm)
{
    return term > ownTerm;
}

bool Fencing::isSelf(const Endpoint &e) const
{
    // An address is not compared as text alone: processes know this server by the address they
    // were given (10.0.0.1:3425), while it may call itself by its host name.
    const quint16 port = m_ctx.transport ? m_ctx.transport->serverPort() : m_ctx.options.port;
    if (e.port != port)
        return false;
    if (e.host == m_ctx.self.endpoint.host || e.host == QHostInfo::localHostName() ||
        e.host == QLatin1String("localhost"))
        return true;
    const QHostAddress a(e.host);
    if (a.isNull())
        return false;
    if (a.isLoopback() || a == QHostAddress::AnyIPv4 || a == QHostAddress::AnyIPv6)
        return true;
    const QList<QHostAddress> local = QNetworkInterface::allAddresses();
    return std::any_of(local.cbegin(), local.cend(),
                       [&a](const QHostAddress &l) { return l.isEqual(a, QHostAddress::TolerantConversion); });
}

void Fencing::serving(const QString &replaced)
{
    m_tick = new QTimer(this);
    m_tick->setInterval(qMax(10, m_ctx.options.heartbeatMs));
    connect(m_tick, &QTimer::timeout, this, [this] {
        if (!m_ctx.redirectTo.isValid()) {
            probeStandby(false);
            return;
        }
        redirectAll(); // stepping down
        if (++m_redirectRounds >= RedirectRounds)
            becomeStandbyOf(m_ctx.redirectTo);
    });
    m_tick->start();
    qCInfo(lcFencing).noquote() << "serving with term" << m_ctx.term;
    if (!replaced.isEmpty())
        watch(replaced);
}

void Fencing::standbyKnown(const Endpoint &standby)
{
    if (standby.isValid() && !isSelf(standby))
        m_standby = standby;
}

void Fencing::afterStall()
{
    probeStandby(true);
}

void Fencing::probeStandby(bool hold)
{
    // A standby listens only once it took over: listening, it serves the partition, with a higher
    // term than ours (it took over from us).
    if (!m_standby.isValid() || m_ctx.redirectTo.isValid())
        return;
    if (hold && !m_holding) {
        m_holding = true; // (also when the periodic probe is already on its way)
        Q_EMIT probingChanged(true);
    }
    if (m_probing)
        return;
    m_probing = true;
    const Endpoint standby = m_standby;
    probeListening(this, standby, qMax(500, m_ctx.options.heartbeatMs), [this, standby](bool listening) {
        m_probing = false;
        const bool held = m_holding;
        if (m_holding) {
            m_holding = false;
            Q_EMIT probingChanged(false);
        }
        // Not a standby that took over if the server there watches us with a lower term: it
        // listens to redirect its processes while it steps down for us.
        if (const quint64 lower = listening ? watchedBy(standby) : 0; lower != 0)
            qCInfo(lcFencing).noquote() << "the server at" << standby.toString() << "listens with term" << lower
                                        << "- below ours, it steps down";
        else if (listening)
            stepDownTo(standby, m_ctx.term + 1,
                       QStringLiteral("the standby at %1 took over (it serves there)").arg(standby.toString()));
        else if (held)
            qCInfo(lcFencing).noquote() << "the standby at" << standby.toString()
                                        << "did not take over: still serving";
    });
}

quint64 Fencing::watchedBy(const Endpoint &server) const
{
    // A server that took over from us watches us as the process DIALOG.Standby.<its port>, whose
    // CONNECT carried its term.
    const ProcessRecord *p = m_ctx.directory.process(StandbyPrefix + QString::number(server.port));
    return p && standbyEndpoint(*p) == server && p->term != 0 && p->term < m_ctx.term ? p->term : 0;
}

void Fencing::watch(const QString &replaced)
{
    Endpoint at;
    if (!Endpoint::parse(replaced, at))
        return;
    // An ordinary process of the server we replaced, should it serve again (healed from a partition,
    // restarted by systemd): its CONNECT carries our term, its SUCCESSFULLY_CONNECTED the other's.
    const ServerOptions &opt = m_ctx.options;
    ClientOptions o;
    o.name = StandbyPrefix + QString::number(m_ctx.self.endpoint.port);
    o.secretFile = opt.secretFile;
    o.tlsCert = opt.tls.cert;
    o.tlsKey = opt.tls.key;
    o.tlsCa = opt.tls.ca;
    o.controlServers = {replaced};
    o.heartbeatMs = opt.heartbeatMs;
    o.retryMs = qMax(10, opt.heartbeatMs / 4); // after a heal, asked again within 2 intervals
    o.exitOnRefusal = false;
    o.fencingTerm = m_ctx.term;
    o.fencingServer = m_ctx.self.endpoint.toString();
    m_watch = std::make_unique<Client>(o);
    connect(m_watch.get(), &Client::stateChanged, this, [this, at](Client::State st) {
        if (st != Client::State::Connected || !m_watch)
            return;
        const quint64 other = m_watch->controlServerTerm();
        if (outranks(other, m_ctx.term)) {
            stepDownTo(at, other,
                       QStringLiteral("the Control Server at %1 serves with term %2 (this one: %3)")
                           .arg(at.toString())
                           .arg(other)
                           .arg(m_ctx.term));
        } else if (other == m_ctx.term) {
            // Two servers of one term (two standbys of one primary, a --term given twice): the one
            // that watches goes above it and says so again; the other then steps down.
            m_ctx.term = other + 1;
            qCWarning(lcFencing).noquote() << "the Control Server at" << at.toString()
                                           << "serves with our term too: serving with term" << m_ctx.term;
            m_watch.release()->deleteLater(); // (we are in one of its signals)
            watch(at.toString());
        } else {
            qCInfo(lcFencing).noquote() << "the Control Server at" << at.toString() << "serves with term"
                                        << other << "- below ours, it steps down";
        }
    });
    m_watch->start();
}

void Fencing::admitted(const ProcessRecord &p)
{
    standbyKnown(standbyEndpoint(p));
    if (p.term == 0 || m_ctx.redirectTo.isValid() || !outranks(p.term, m_ctx.term))
        return;
    Endpoint at;
    if (!Endpoint::parse(p.termServer, at) || !at.isValid() || isSelf(at)) {
        // It was ours (this server restarted with a lower term), or says nowhere: serve above it.
        m_ctx.term = p.term + 1;
        qCInfo(lcFencing).noquote() << p.name << "was accepted with term" << p.term
                                    << "- serving with term" << m_ctx.term;
        return;
    }
    const QString name = p.name;
    const quint64 term = p.term;
    probeListening(this, at, qMax(500, m_ctx.options.heartbeatMs), [this, at, name, term](bool listening) {
        if (m_ctx.redirectTo.isValid())
            return;
        if (listening) {
            stepDownTo(at, term,
                       QStringLiteral("%1 was accepted by the Control Server at %2 with term %3 (this one: %4)")
                           .arg(name, at.toString())
                           .arg(term)
                           .arg(m_ctx.term));
            return;
        }
        if (!outranks(term, m_ctx.term))
            return;
        // Nobody serves there any more: this server is the one, above every term seen.
        m_ctx.term = term + 1;
        qCWarning(lcFencing).noquote() << name << "was accepted by the Control Server at" << at.toString()
                                       << "with term" << term << "- it does not answer: serving with term"
                                       << m_ctx.term;
    });
}

void Fencing::stepDownTo(const Endpoint &active, quint64 term, const QString &why)
{
    if (m_ctx.redirectTo.isValid() || !active.isValid())
        return;
    if (isSelf(active)) { // (a server named by an address of ours)
        qCWarning(lcFencing).noquote() << "not stepping down for" << active.toString() << "- that is this server;"
                                       << why;
        return;
    }
    qCWarning(lcFencing).noquote() << "stepping down:" << why << "- redirecting every process to"
                                   << active.toString() << "and becoming its standby";
    m_ctx.redirectTo = active;
    m_ctx.redirectTerm = term;
    // The watch of the other server stays connected (it is closed with every socket at the exec):
    // while this one listens to redirect, the other sees by it that we step down for it, with our
    // lower term, and does not take our listening for a standby that took over.
    if (m_watch)
        QObject::disconnect(m_watch.get(), nullptr, this, nullptr);
    Q_EMIT steppingDown();
    m_redirectRounds = 0;
    redirectAll();
    if (!m_tick) // (not serving: nothing to redirect)
        becomeStandbyOf(active);
}

void Fencing::redirectAll()
{
    wire::ConnectionLost cl;
    cl.set_reason(ss(QStringLiteral("the Control Server at %1 serves the partition (term %2)")
                         .arg(m_ctx.redirectTo.toString())
                         .arg(m_ctx.redirectTerm)));
    cl.set_redirect(ss(m_ctx.redirectTo.toString()));
    cl.set_term(m_ctx.redirectTerm);
    const QByteArray frame = controlFrame(Type::ConnectionLost, cl);
    for (const QString &name : m_ctx.directory.processNames()) {
        const ProcessRecord *p = m_ctx.directory.process(name);
        // Not the serving server's own watch of us: sent there, it would watch itself.
        if (p && standbyEndpoint(*p) != m_ctx.redirectTo && p->termServer != m_ctx.redirectTo.toString())
            m_ctx.sendToEndpoint(Endpoint{p->host, p->port}, frame);
    }
}

void Fencing::becomeStandbyOf(const Endpoint &active)
{
    // Two servers must not serve one partition. The other keeps serving (the processes are there
    // now); this one becomes its standby with a clean slate: the process executes itself again with
    // --standby-of the active server (same PID, so a supervisor keeps watching it; every socket is
    // closed on exec).
    const QString at = active.toString();
    qCWarning(lcFencing).noquote() << "becoming the standby of the Control Server at" << at;
    const QString program = QCoreApplication::applicationFilePath();
    const quint16 port = m_ctx.transport ? m_ctx.transport->serverPort() : m_ctx.options.port;
    const QStringList args = Standby::standbyArguments(QCoreApplication::arguments().mid(1), port, at,
                                                       qMax(m_ctx.term, m_ctx.redirectTerm));
    std::vector<QByteArray> storage;
    storage.push_back(QFile::encodeName(program));
    for (const QString &a : args)
        storage.push_back(a.toLocal8Bit());
    std::vector<char *> argv;
    for (QByteArray &b : storage)
        argv.push_back(b.data());
    argv.push_back(nullptr);
    fflush(stdout);
    fflush(stderr);
    ::execv(argv[0], argv.data());
    qCCritical(lcFencing).noquote() << "cannot step down (exec" << program << "failed:" << qt_error_string(errno)
                                    << "); exiting so that the other server serves alone";
    QCoreApplication::exit(1);
}

} // namespace dialog::cs
