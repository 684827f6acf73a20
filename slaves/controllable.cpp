#include "controllable.h"

#include "dialog/is/object.h"
#include "dialog/is/time.h"

#include <QCoreApplication>
#include <QJsonDocument>
#include <QLoggingCategory>

Q_LOGGING_CATEGORY(lcRc, "dialog.runcontrol")

namespace dialog::rc {

Controllable::Controllable(const ControllableOptions &options, QObject *parent)
    : QObject(parent), m_options(options), m_client(std::make_unique<Client>(options.client))
{
    m_state = m_client->publish(rc::stateService(name()));
    m_log = m_client->publish(logService(name()));
    m_status = m_client->publish(rc::statusService(name()));
    m_client->registerCommand(commandName(name()));
    connect(m_client.get(), &Client::requestReceived, this, &Controllable::onRequest);
    connect(m_client.get(), &Client::commandReceived, this, &Controllable::onCommand);
    if (m_options.publishToIs)
        m_is = std::make_unique<IsPublisher>(m_client.get(), m_options.isTypesDir,
                                             [this](const QString &w) { log(Severity::Warning, w); });
    publishState();
}

Controllable::~Controllable() = default;

void Controllable::log(Severity severity, const QString &text)
{
    switch (severity) {
    case Severity::Info:
        qCInfo(lcRc).noquote() << name() << text;
        break;
    case Severity::Warning:
        qCWarning(lcRc).noquote() << name() << text;
        break;
    case Severity::Error:
        qCCritical(lcRc).noquote() << name() << text;
        break;
    }
    const QJsonObject rec{{QStringLiteral("time_ms"), nowMs()},
                          {QStringLiteral("process"), name()},
                          {QStringLiteral("severity"), severityName(severity)},
                          {QStringLiteral("text"), text}};
    m_log->update(QJsonDocument(rec).toJson(QJsonDocument::Compact));
}

QJsonObject Controllable::stateJson() const
{
    QJsonObject o = stateExtras();
    o.insert(QStringLiteral("process"), name());
    o.insert(QStringLiteral("kind"), m_options.kind);
    o.insert(QStringLiteral("state"), stateName(m_machine.state()));
    o.insert(QStringLiteral("busy"), m_machine.busy());
    o.insert(QStringLiteral("transition"),
             m_machine.pending() ? transitionName(*m_machine.pending()) : QString());
    o.insert(QStringLiteral("last_transition"),
             m_machine.lastTransition() ? transitionName(*m_machine.lastTransition()) : QString());
    o.insert(QStringLiteral("transition_ms"), m_lastDurationMs);
    o.insert(QStringLiteral("error"), m_machine.error());
    o.insert(QStringLiteral("time_ms"), nowMs());
    o.insert(QStringLiteral("pid"), qint64(QCoreApplication::applicationPid()));
    return o;
}

void Controllable::publishState()
{
    m_state->update(QJsonDocument(stateJson()).toJson(QJsonDocument::Compact));
    publishIsState();
    Q_EMIT stateChanged(m_machine.state(), m_machine.busy());
}

void Controllable::publishIsState()
{
    if (!m_is || m_options.runParamsServer.isEmpty())
        return;
    const StateMachine m = m_machine;
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

bool Controllable::requestTransition(Transition t, const QJsonObject &params, Done done, QString *reason)
{
    QString why;
    if (!m_machine.begin(t, &why)) {
        if (reason)
            *reason = why;
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
        m_lastTransitionEndMs = nowMs();
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
        publishState();
        transitionEnded(t, ok);
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
    perform(t, params, finish);
    return true;
}

void Controllable::enterError(const QString &why)
{
    ++m_generation;
    m_machine.fail(why);
    log(Severity::Error, why);
    publishState();
}

bool Controllable::restoreState(State s)
{
    if (!m_machine.restore(s))
        return false;
    publishState();
    return true;
}

namespace {

bool parseRequest(const QByteArray &data, Transition *t, QJsonObject *params, QString *error)
{
    QString name = QString::fromUtf8(data).trimmed();
    if (name.startsWith(QLatin1Char('{'))) {
        QJsonParseError pe;
        *params = QJsonDocument::fromJson(data, &pe).object();
        if (pe.error != QJsonParseError::NoError) {
            *error = QStringLiteral("malformed request: %1").arg(pe.errorString());
            return false;
        }
        name = params->value(QStringLiteral("transition")).toString();
    }
    const auto parsed = transitionFromName(name);
    if (!parsed) {
        *error = QStringLiteral("unknown transition '%1' (known: %2)")
                     .arg(name, allTransitionNames().join(QStringLiteral(", ")));
        return false;
    }
    *t = *parsed;
    return true;
}

} // namespace

void Controllable::onRequest(const Request &request)
{
    if (request.service() != stateService(name())) {
        m_client->replyError(request,
                             QStringLiteral("requests are taken on %1 only").arg(stateService(name())));
        return;
    }
    Transition t;
    QJsonObject params;
    QString error;
    if (!parseRequest(request.data(), &t, &params, &error)) {
        m_client->replyError(request, error);
        return;
    }
    const bool accepted = requestTransition(
        t, params,
        [this, request](bool ok, const QString &why) {
            if (ok)
                m_client->reply(request, QJsonDocument(stateJson()).toJson(QJsonDocument::Compact));
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

void Controllable::onCommand(const Command &command)
{
    if (command.name() != commandName(name()))
        return;
    Transition t;
    QJsonObject params;
    QString error;
    if (!parseRequest(command.data(), &t, &params, &error) || !requestTransition(t, params, {}, &error))
        log(Severity::Warning, QStringLiteral("refused command from %1: %2").arg(command.origin(), error));
}

bool parseTransitionList(const QString &text, QSet<Transition> *out, QString *error)
{
    for (const QString &part : text.split(QLatin1Char(','), Qt::SkipEmptyParts)) {
        const auto t = transitionFromName(part);
        if (!t) {
            *error = QStringLiteral("unknown transition '%1' (known: %2)")
                         .arg(part.trimmed(), allTransitionNames().join(QStringLiteral(", ")));
            return false;
        }
        out->insert(*t);
    }
    return true;
}

} // namespace dialog::rc
