#include "transitionaccess_p.h"

#include "dialog/security.h"

#include <QDateTime>
#include <QLoggingCategory>

Q_LOGGING_CATEGORY(lcTransitionAccess, "dialog.runcontrol.access", QtInfoMsg)

namespace dialog::rc {

TransitionAccess::TransitionAccess(const AccessOptions &options, const QString &secretFile,
                                   const QString &daemon)
    : m_options(options), m_secretFile(secretFile), m_daemon(daemon)
{
}

TransitionAccess::~TransitionAccess() = default;

Status TransitionAccess::open()
{
    if (!m_options.audit)
        return {};
    AuditTrail::Options trail = m_options.trail;
    if (!m_secretFile.isEmpty()) { // keys the chain
        if (const Status st = security::readSecretFile(m_secretFile, &trail.secret); !st.isOk())
            return st;
    }
    m_audit = std::make_unique<AuditTrail>(trail);
    return m_audit->open();
}

Status TransitionAccess::permit(const Request &request, const QString &service, const QString &transition)
{
    if (!m_audit && m_options.access.isEmpty())
        return {};
    const Origin origin{request.origin(), request.originUser(), request.originHost(),
                        request.originAddress()};
    const AccessList::Decision d = m_options.access.check(AccessList::Kind::Transition, service, origin);
    if (m_audit) {
        AuditRecord r;
        r.timeMs = QDateTime::currentMSecsSinceEpoch();
        r.daemon = m_daemon;
        r.kind = AccessList::Kind::Transition;
        r.name = service;
        r.operation = transition;
        r.origin = origin;
        r.allowed = d.allowed;
        r.because = m_options.access.isEmpty() ? QString() : d.because;
        m_audit->record(r);
    }
    if (d.allowed)
        return {};
    ++m_refused;
    const QString why =
        QStringLiteral("permission denied: the access list (%1) does not let %2 (user '%3', host '%4') "
                       "request '%5' of %6")
            .arg(d.because, origin.process, origin.user, origin.host, transition, service);
    qCWarning(lcTransitionAccess).noquote()
        << "transition" << transition << "of" << service << "from" << origin.process << "user" << origin.user
        << "host" << origin.host << origin.address << "refused by" << d.because << "of the access list";
    return Status(Status::Code::PermissionDenied, why);
}

} // namespace dialog::rc
