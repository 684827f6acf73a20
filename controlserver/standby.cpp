#include "standby.h"

#include <QCoreApplication>
#include <QFile>
#include <QLoggingCategory>
#include <QNetworkProxy>
#include <QTcpSocket>
#include <QTimer>

#include <cerrno>
#include <cstdio>
#include <unistd.h>

Q_LOGGING_CATEGORY(lcStandby, "dialog.controlserver.standby", QtInfoMsg)

namespace dialog::cs {

namespace {
const QLatin1String StandbyPrefix("DIALOG.Standby.");

/// @p arguments without the option @p option and its value (as "--x v" or "--x=v").
void removeOption(QStringList &arguments, const QString &option)
{
    const QString inline_ = option + QLatin1Char('=');
    for (int i = 0; i < arguments.size();) {
        if (arguments.at(i) == option && i + 1 < arguments.size())
            arguments.remove(i, 2);
        else if (arguments.at(i).startsWith(inline_))
            arguments.remove(i);
        else
            ++i;
    }
}
} // namespace

Standby::Standby(ServerContext &context, QObject *parent) : QObject(parent), m_ctx(context) {}

Standby::~Standby() = default;

void Standby::watchPrimary()
{
    // The standby is an ordinary DIALOG process of the primary: the primary answers its heartbeats,
    // so a dead or hung primary shows up as a lost connection.
    const ServerOptions &opt = m_ctx.options;
    ClientOptions o;
    o.name = StandbyPrefix + QString::number(opt.port);
    o.secretFile = opt.secretFile;
    o.tlsCert = opt.tls.cert;
    o.tlsKey = opt.tls.key;
    o.tlsCa = opt.tls.ca;
    o.controlServers = {opt.standbyOf};
    o.heartbeatMs = opt.heartbeatMs;
    o.exitOnRefusal = false;
    m_primaryWatch = std::make_unique<Client>(o);
    qCInfo(lcStandby).noquote() << "standby of" << opt.standbyOf << "- will serve on port" << opt.port
                                << "when it is gone";
    auto *deadline = new QTimer(this);
    deadline->setSingleShot(true);
    deadline->setInterval(opt.heartbeatMisses * opt.heartbeatMs);
    connect(deadline, &QTimer::timeout, this, [this, deadline] {
        qCWarning(lcStandby).noquote()
            << "primary Control Server" << m_ctx.options.standbyOf << "is gone: taking over";
        m_primaryWatch.reset();
        deadline->deleteLater();
        Q_EMIT takeOver();
    });
    connect(m_primaryWatch.get(), &Client::stateChanged, deadline, [deadline](Client::State st) {
        if (st == Client::State::Connected)
            deadline->stop();
        else if (!deadline->isActive())
            deadline->start();
    });
    deadline->start(); // also covers a primary that is not there at all
    m_primaryWatch->start();
}

void Standby::admitted(const ProcessRecord &p)
{
    if (!p.name.startsWith(StandbyPrefix))
        return;
    // A standby is named after the port it takes over on; it serves from its own host.
    bool ok = false;
    const quint16 port = p.name.mid(StandbyPrefix.size()).toUShort(&ok);
    if (ok && port != 0)
        m_standby = net::Endpoint{p.host, port};
}

void Standby::checkAfterStall()
{
    if (m_standby.port == 0 || m_probing)
        return;
    // Its processes may have moved to the standby, which serves only once it took over.
    m_probing = true;
    Q_EMIT probingChanged(true);
    auto *probe = new QTcpSocket(this);
    probe->setProxy(QNetworkProxy::NoProxy);
    auto *timeout = new QTimer(probe);
    timeout->setSingleShot(true);
    const net::Endpoint standby = m_standby;
    auto finish = [this, probe, timeout](bool listening, const net::Endpoint &at) {
        // Whichever comes first (connected, an error, the time-out) decides, once.
        probe->disconnect();
        timeout->disconnect();
        probe->deleteLater();
        m_probing = false;
        Q_EMIT probingChanged(false);
        if (listening)
            stepDown(at);
        else
            qCInfo(lcStandby).noquote()
                << "the standby at" << at.toString() << "did not take over: still serving";
    };
    connect(probe, &QTcpSocket::connected, this, [finish, standby] { finish(true, standby); });
    connect(probe, &QTcpSocket::errorOccurred, this, [finish, standby] { finish(false, standby); });
    connect(timeout, &QTimer::timeout, this, [finish, standby] { finish(false, standby); });
    timeout->start(qMax(500, m_ctx.options.heartbeatMs));
    probe->connectToHost(standby.host, standby.port);
}

QStringList Standby::standbyArguments(QStringList arguments, quint16 port, const QString &at)
{
    removeOption(arguments, QStringLiteral("--standby-of"));
    removeOption(arguments, QStringLiteral("--port")); // a standby needs a real port: the one it served on
    arguments << QStringLiteral("--port") << QString::number(port) << QStringLiteral("--standby-of") << at;
    return arguments;
}

void Standby::stepDown(const net::Endpoint &active)
{
    // Two servers must not serve one partition. The standby that took over keeps serving (the
    // processes are there now); this one becomes its standby with a clean slate: the process
    // executes itself again with --standby-of the active server (same PID, so a supervisor keeps
    // watching it; every socket is closed on exec, and the processes still here fail over).
    const QString at = active.toString();
    qCWarning(lcStandby).noquote() << "the standby at" << at
                                   << "took over while this server was not running: stepping down to be "
                                      "its standby";
    const QString program = QCoreApplication::applicationFilePath();
    const QStringList args =
        standbyArguments(QCoreApplication::arguments().mid(1), m_ctx.transport->serverPort(), at);
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
    qCCritical(lcStandby).noquote() << "cannot step down (exec" << program
                                    << "failed:" << qt_error_string(errno)
                                    << "); exiting so that the standby serves alone";
    QCoreApplication::exit(1);
}

} // namespace dialog::cs
