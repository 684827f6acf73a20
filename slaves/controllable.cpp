#include "controllable.h"

#include "dialog/is/object.h"
#include "dialog/is/time.h"

#include <QCoreApplication>
#include <QLoggingCategory>

Q_LOGGING_CATEGORY(lcRc, "dialog.runcontrol")

namespace dialog::daq {

Controllable::Controllable(const ControllableOptions &options, QObject *parent)
    : QObject(parent), m_options(options), m_client(std::make_unique<Client>(options.client)),
      m_access(
          std::make_unique<TransitionAccess>(options.access, options.client.secretFile, m_client->name()))
{
    m_state = m_client->publish(rc::stateService(name()));
    m_log = m_client->publish(rc::logService(name()));
    m_status = m_client->publish(rc::statusService(name()));
    m_client->registerCommand(rc::commandName(name()));
    connect(m_client.get(), &Client::requestReceived, this, &Controllable::onRequest);
    connect(m_client.get(), &Client::commandReceived, this, &Controllable::onCommand);
    if (m_options.publishToIs)
        m_is = std::make_unique<IsPublisher>(m_client.get(), m_options.isTypesDir,
                                             [this](const QString &w) { log(Severity::Warning, w); });
    publishState();
}

Controllable::~Controllable() = default;

bool Controllable::openAccess(QString *error)
{
    return m_access->open(error);
}

void Controllable::log(Severity severity, const QString &text)
{
    switch (severity) {
    case Severity::Debug:
        qCDebug(lcRc).noquote() << name() << text;
        break;
    case Severity::Info:
        qCInfo(lcRc).noquote() << name() << text;
        break;
    case Severity::Warning:
        qCWarning(lcRc).noquote() << name() << text;
        break;
    case Severity::Error:
    case Severity::Fatal: // a run-control process reports; it does not abort
        qCCritical(lcRc).noquote() << name() << text;
        break;
    }
    m_log->update(rc::LogMessage{rc::nowMs(), name(), severity, text}.toJson());
}

rc::StateRecord Controllable::stateRecord() const
{
    rc::StateRecord r;
    r.process = name();
    r.kind = m_options.kind;
    r.state = m_machine.state();
    r.busy = m_machine.busy();
    r.transition = m_machine.pending();
    r.lastTransition = m_machine.lastTransition();
    r.transitionMs = m_lastDurationMs;
    r.error = m_machine.error();
    r.timeMs = rc::nowMs();
    r.pid = QCoreApplication::applicationPid();
    addStateExtras(r);
    return r;
}

void Controllable::publishState()
{
    m_state->update(stateRecord().toJson());
    publishIsState();
    Q_EMIT stateChanged(m_machine.state(), m_machine.busy());
}

void Controllable::publishIsState()
{
    if (!m_is || m_options.runParamsServer.isEmpty())
        return;
    const rc::StateMachine m = m_machine;
    const qint64 duration = m_lastDurationMs, endMs = m_lastTransitionEndMs;
    m_is->publish(QStringLiteral("%1.RunCtrl.%2").arg(m_options.runParamsServer, name()),
                  QStringLiteral("RunCtrlState"), [m, duration, endMs](is::Object &o) {
                      o.set<QString>(QStringLiteral("state"), stateName(m.state()));
                      o.set<QString>(QStringLiteral("substate"),
                                     m.pending() ? transitionActivity(*m.pending()) : QString());
                      o.set<QString>(QStringLiteral("lastTransition"),
                                     m.lastTransition() ? transitionName(*m.lastTransition()) : QString());
                      if (endMs > 0)
                          o.set<is::Time>(QStringLiteral("lastTransitionTime"), is::Time(endMs * 1000));
                      o.set<quint32>(QStringLiteral("transitionDuration"), quint32(duration));
                      o.set<bool>(QStringLiteral("busy"), m.busy());
                      o.set<QString>(QStringLiteral("error"), m.error());
                  });
}

bool Controllable::requestTransition(const rc::TransitionRequest &request, Done done, QString *reason)
{
    const rc::Transition t = request.transition;
    if (const Status refused = m_machine.begin(t); !refused.isOk()) {
        if (reason)
            *reason = refused.message();
        return false;
    }
    const quint64 generation = ++m_generation;
    m_transitionTimer.start();
    log(Severity::Info,
        QStringLiteral("%1 (from %2)").arg(transitionActivity(t), stateName(m_machine.state())));
    publishState();
    auto finish = [this, t, generation, done](bool ok, const QString &error) {
        if (generation != m_generation)
            return; // abandoned by a reset
        ++m_generation;
        m_lastDurationMs = m_transitionTimer.elapsed();
        m_lastTransitionEndMs = rc::nowMs();
        if (ok) {
            m_machine.finish();
            log(Severity::Info, QStringLiteral("%1 done in %2 ms: %3")
                                    .arg(transitionName(t))
                                    .arg(m_lastDurationMs)
                                    .arg(stateName(m_machine.state())));
        } else {
            m_machine.fail(QStringLiteral("%1 failed: %2").arg(transitionName(t), error));
            log(Severity::Error, m_machine.error());
        }
        transitionEnded(t, ok); // first: what it sets (the run's start time) is in the state published
        publishState();
        if (done)
            done(ok, ok ? QString() : m_machine.error());
    };
    if (m_options.hangOn.contains(t)) {
        log(Severity::Warning,
            QStringLiteral("hanging in '%1' as requested (--hang-on)").arg(transitionName(t)));
        return true;
    }
    if (m_options.failOn.contains(t)) {
        finish(false, QStringLiteral("failing as requested (--fail-on %1)").arg(transitionName(t)));
        return true;
    }
    perform(t, request, finish);
    return true;
}

void Controllable::enterError(const QString &why)
{
    ++m_generation;
    m_machine.fail(why);
    log(Severity::Error, why);
    publishState();
}

bool Controllable::restoreState(rc::State s)
{
    if (!m_machine.restore(s))
        return false;
    publishState();
    return true;
}

void Controllable::onRequest(const Request &request)
{
    if (request.service() != rc::stateService(name())) {
        if (takeRequest(request))
            return;
        m_client->replyError(request,
                             QStringLiteral("requests are taken on %1 only").arg(rc::stateService(name())));
        return;
    }
    if (!m_options.master.isEmpty() && request.origin() != m_options.master) {
        // The master drives this process; anyone else goes through the master or sends a command
        // through the Control Server, where the access list applies.
        const QString why = QStringLiteral("transitions are taken from %1 only, not from %2")
                                .arg(m_options.master, request.origin());
        log(Severity::Warning, why);
        m_client->replyError(request, why);
        return;
    }
    auto parsed = std::make_optional<rc::TransitionRequest>();
    if (const Status bad = rc::TransitionRequest::fromJson(request.data(), &*parsed); !bad.isOk()) {
        m_client->replyError(request, bad.message());
        return;
    }
    QString error;
    const rc::Transition t = parsed->transition;
    // Transitions asked of this process directly (the GUIs ask the master so) fall under the access
    // list as commands do at the Control Server.
    if (!m_access->permit(request, request.service(), transitionName(t), &error)) {
        log(Severity::Warning, error);
        m_client->replyError(request, error);
        return;
    }
    parsed->requester = request.originUser().isEmpty()
                            ? request.origin()
                            : request.originUser() + QLatin1Char('@') + request.originHost();
    const bool accepted = requestTransition(
        *parsed,
        [this, request](bool ok, const QString &why) {
            if (ok)
                m_client->reply(request, stateRecord().toJson());
            else
                m_client->replyError(request, why);
        },
        &error);
    if (!accepted) {
        log(Severity::Warning,
            QStringLiteral("refused '%1' from %2: %3").arg(transitionName(t), request.origin(), error));
        m_client->replyError(request, error);
    }
}

bool Controllable::permit(const Request &request, const QString &action, QString *why)
{
    if (m_access->permit(request, request.service(), action, why))
        return true;
    log(Severity::Warning, *why);
    return false;
}

void Controllable::onCommand(const Command &command)
{
    if (command.name() != rc::commandName(name()))
        return;
    rc::TransitionRequest parsed;
    const Status bad = rc::TransitionRequest::fromJson(command.data(), &parsed);
    QString error = bad.message();
    parsed.requester = command.origin();
    if (!bad.isOk() || !requestTransition(parsed, {}, &error))
        log(Severity::Warning, QStringLiteral("refused command from %1: %2").arg(command.origin(), error));
}

bool parseTransitionList(const QString &text, QSet<rc::Transition> *out, QString *error)
{
    for (const QString &part : text.split(QLatin1Char(','), Qt::SkipEmptyParts)) {
        const auto t = rc::transitionFromName(part);
        if (!t) {
            *error = QStringLiteral("unknown transition '%1' (known: %2)")
                         .arg(part.trimmed(), rc::allTransitionNames().join(QStringLiteral(", ")));
            return false;
        }
        out->insert(*t);
    }
    return true;
}

} // namespace dialog::daq
