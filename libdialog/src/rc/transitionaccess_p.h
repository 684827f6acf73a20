// Who may ask a run-control process for a transition: the partition's access list (kind
// "transition"), checked where the request arrives, and the audit trail of every such request.
#pragma once

#include "dialog/audit.h"
#include "dialog/client.h"

#include <memory>

namespace dialog::rc {

/// Checks transition requests (REQUESTs on RunCtrl.<P>.State) against an access list and audits
/// them, as the Control Server does for commands and the IS servers for writes. The origin is the
/// one those use: the process name, user and host the requester's HELLO states and the address its
/// connection came from. Used in the thread that owns the process's Client.
class TransitionAccess
{
public:
    /// Checks against @p options.access and, when @p options.audit, records every request in the
    /// trail of @p options.trail (keyed by the partition's secret read from @p secretFile, if any),
    /// in the name of @p daemon.
    TransitionAccess(const AccessOptions &options, const QString &secretFile, const QString &daemon);
    ~TransitionAccess();

    /// Reads the secret and opens the audit file: the errors of security::readSecretFile() and
    /// AuditTrail::open().
    Status open();
    /// Ok when @p request, asking for @p transition on @p service, may go ahead. When it may not,
    /// PermissionDenied with the reason given to the requester ("permission denied: the access list
    /// (rules[1]) does not let …"), and the refusal is logged (dialog.runcontrol.access) and counted.
    /// Audited either way when the trail is kept.
    Status permit(const Request &request, const QString &service, const QString &transition);
    /// Requests refused so far.
    quint64 refused() const { return m_refused; }

private:
    AccessOptions m_options;
    QString m_secretFile;
    QString m_daemon;
    std::unique_ptr<AuditTrail> m_audit;
    quint64 m_refused = 0;
};

} // namespace dialog::rc
