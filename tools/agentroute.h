// The host agents as `dialogctl up`, `down` and `supervise` use them: a process whose host has an
// agent (DIALOG.Agent.<host> in the partition's directory) is started, watched and stopped through
// it; the other hosts keep ssh (launcher.cpp).
#pragma once

#include "agentsession.h"

#include "dialog/clientoptions.h"

#include <QHash>
#include <QSet>
#include <optional>

namespace dialog::tool {

class AgentRoute
{
public:
    /// @p options: a client of the partition's Control Server (connected on first use).
    explicit AgentRoute(const ClientOptions &options) : m_options(options) {}

    /// The agent's host name for the partition host @p host ("" when it has none): DIALOG.Agent.<host>,
    /// or, for this host, DIALOG.Agent.<this host's short name> too.
    QString agentFor(const QString &host, bool local);
    /// Starts @p name as @p program @p args through the agent of @p agentHost; its PID, or false
    /// with @p error.
    /// @p extra: more fields of the start request (restart policy, "hosts", "standby").
    bool start(const QString &agentHost, const QString &name, const QString &program, const QStringList &args,
               const QJsonObject &env, qint64 *pid, QString *error, const QJsonObject &extra = {});
    /// Whether @p name runs with @p pid (0: any) on @p agentHost; nullopt when the agent did not answer.
    std::optional<bool> alive(const QString &agentHost, const QString &name, qint64 pid, QString *error);
    /// SIGTERM: a stop by the agent (SIGKILL after @p graceMs, no crash report, no restart);
    /// SIGKILL: at once. Not waited for.
    bool signal(const QString &agentHost, const QString &name, int signal, qint64 graceMs, QString *error);

private:
    bool connect(QString *error);

    ClientOptions m_options;
    AgentSession m_session;
    std::optional<QSet<QString>> m_hosts; // the agents registered when first asked
};

} // namespace dialog::tool
