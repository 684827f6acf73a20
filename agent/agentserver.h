// The agent's requests on DIALOG.Agent.<host> (JSON objects with "op": start, stop, signal, ls,
// crashes, forget): programs checked against the allowed list, every start, stop and signal checked
// against the partition's access list and audited.
#pragma once

#include "programallowlist.h"

#include "dialog/audit.h"
#include "dialog/client.h"

#include <QJsonObject>
#include <functional>
#include <memory>

namespace dialog::agent {

class CrashReporter;
class ProcessTable;

class AgentServer : public QObject
{
    Q_OBJECT
public:
    /// The service name of the agent of @p host (and its process name): DIALOG.Agent.<host>.
    static QString serviceName(const QString &host);

    /// @p status fills the "ls" answer with the agent's own figures (host, version, …).
    AgentServer(Client *client, const QString &host, ProcessTable *table, CrashReporter *reporter,
                const ProgramAllowList &allow, const AccessOptions &access, QObject *parent = nullptr);
    ~AgentServer() override;
    void setStatus(std::function<QJsonObject()> status) { m_status = std::move(status); }

    /// Opens the audit trail and publishes the service. False with the reason.
    bool start(QString *error);

private:
    using Answer = std::function<void(const Status &, const QJsonObject &)>;
    void onRequest(const Request &request);
    void dispatch(const QString &op, const QJsonObject &r, const Request &origin, const Answer &answer);
    void startProcess(const QJsonObject &r, const Request &origin, const Answer &answer);
    /// Checks @p op on @p process against the access list and audits the decision (with @p refusal
    /// as the reason when the agent refuses on its own). False: answered with PermissionDenied.
    bool permit(const QString &op, const QString &process, const Request &origin, const QString &refusal,
                const Answer &answer);

    Client *m_client;
    QString m_host, m_service;
    ProcessTable *m_table;
    CrashReporter *m_reporter;
    ProgramAllowList m_allow;
    AccessOptions m_access;
    std::unique_ptr<AuditTrail> m_audit;
    std::function<QJsonObject()> m_status;
};

} // namespace dialog::agent
