#include "standby.h"

#include <QCoreApplication>
#include <QLoggingCategory>
#include <QTimer>


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
    connect(m_primaryWatch.get(), &Client::stateChanged, deadline, [this, deadline](Client::State st) {
        if (st == Client::State::Connected) {
            m_primaryTerm = qMax(m_primaryTerm, m_primaryWatch->controlServerTerm());
            deadline->stop();
        } else if (!deadline->isActive()) {
            deadline->start();
        }
    });
    deadline->start(); // also covers a primary that is not there at all
    m_primaryWatch->start();
}

quint64 Standby::takeOverTerm() const
{
    return qMax(m_ctx.options.term, m_primaryTerm) + 1;
}

QStringList Standby::standbyArguments(QStringList arguments, quint16 port, const QString &at, quint64 term)
{
    removeOption(arguments, QStringLiteral("--standby-of"));
    removeOption(arguments, QStringLiteral("--port")); // a standby needs a real port: the one it served on
    arguments << QStringLiteral("--port") << QString::number(port) << QStringLiteral("--standby-of") << at;
    if (term > 0) {
        removeOption(arguments, QStringLiteral("--term"));
        arguments << QStringLiteral("--term") << QString::number(term);
    }
    return arguments;
}

} // namespace dialog::cs
