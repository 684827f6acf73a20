// What the agent and crashes verbs share: the agents of the directory (DIALOG.Agent.<host>) and
// their requests, waited for.
#pragma once

#include "clientsetup.h"

#include <QJsonObject>
#include <QStringList>

namespace dialog::tool {

struct AgentSession
{
    std::unique_ptr<Client> client;
    qint64 timeoutMs = 10000;

    bool open(const OptionTable &p, const QString &verb, QString *error)
    {
        client = makeClient(p, verb, error);
        return client != nullptr;
    }
    /// The hosts that have an agent registered now, sorted; false with @p error when the
    /// directory did not come within timeoutMs.
    bool hosts(QStringList *out, QString *error);
    /// Sends @p request to the agent of @p host and waits for its JSON answer.
    Status call(const QString &host, const QJsonObject &request, QJsonObject *answer, qint64 timeoutMs = -1);
};

/// "DIALOG.Agent.<host>".
QString agentService(const QString &host);

} // namespace dialog::tool
