#include "agentroute.h"

#include <QHostInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <csignal>

namespace dialog::tool {

bool AgentRoute::connect(QString *error)
{
    if (m_session.client)
        return true;
    m_session.client = std::make_unique<Client>(m_options);
    m_session.timeoutMs = 3000;
    if (!m_session.client->start()) {
        *error = m_session.client->errorString();
        m_session.client.reset();
        return false;
    }
    return true;
}

QString AgentRoute::agentFor(const QString &host, bool local)
{
    if (!m_hosts) {
        QString error;
        QStringList hosts;
        // No Control Server, or no directory: no agents (the launcher falls back to ssh).
        if (connect(&error))
            m_session.hosts(&hosts, &error);
        m_hosts = QSet<QString>(hosts.cbegin(), hosts.cend());
    }
    if (m_hosts->contains(host))
        return host;
    const QString self = QHostInfo::localHostName().section(QLatin1Char('.'), 0, 0);
    if (local && m_hosts->contains(self))
        return self;
    return {};
}

bool AgentRoute::start(const QString &agentHost, const QString &name, const QString &program, const QStringList &args,
                       const QJsonObject &env, qint64 *pid, QString *error, const QJsonObject &extra)
{
    if (!connect(error))
        return false;
    QJsonObject request = extra;
    request.insert(QStringLiteral("op"), QStringLiteral("start"));
    request.insert(QStringLiteral("name"), name);
    request.insert(QStringLiteral("program"), program);
    request.insert(QStringLiteral("args"), QJsonArray::fromStringList(args));
    request.insert(QStringLiteral("env"), env);
    QJsonObject a;
    const Status st = m_session.call(agentHost, request, &a, 10000);
    if (!st.isOk()) {
        *error = QStringLiteral("agent of %1: %2").arg(agentHost, st.message());
        return false;
    }
    *pid = a.value(QStringLiteral("pid")).toInteger();
    return true;
}

std::optional<bool> AgentRoute::alive(const QString &agentHost, const QString &name, qint64 pid, QString *error)
{
    if (!connect(error))
        return std::nullopt;
    QJsonObject a;
    const Status st = m_session.call(
        agentHost, {{QStringLiteral("op"), QStringLiteral("ls")}, {QStringLiteral("name"), name}}, &a, 5000);
    if (!st.isOk()) {
        *error = QStringLiteral("agent of %1: %2").arg(agentHost, st.message());
        return std::nullopt;
    }
    const QJsonObject p = a.value(QStringLiteral("processes")).toArray().at(0).toObject();
    // A PID only while it runs; @p pid 0: any.
    return pid == 0 ? p.contains(QStringLiteral("pid")) : p.value(QStringLiteral("pid")).toInteger() == pid;
}

bool AgentRoute::signal(const QString &agentHost, const QString &name, int sig, qint64 graceMs, QString *error)
{
    if (!connect(error))
        return false;
    const QJsonObject request =
        sig == SIGTERM ? QJsonObject{{QStringLiteral("op"), QStringLiteral("stop")},
                                     {QStringLiteral("name"), name},
                                     {QStringLiteral("grace_ms"), graceMs}}
                       : QJsonObject{{QStringLiteral("op"), QStringLiteral("signal")},
                                     {QStringLiteral("name"), name},
                                     {QStringLiteral("signal"), sig}};
    // The stop's answer comes when the process ended; the caller watches it with alive().
    m_session.client->request(agentService(agentHost), QJsonDocument(request).toJson(QJsonDocument::Compact),
                              int(graceMs + 10000), m_session.client.get(), [](const Reply &) {});
    return true;
}

} // namespace dialog::tool
