#include "slave_p.h"

#include "dialog/is/object.h"
#include "dialog/is/time.h"
#include "dialog/rc/protocol.h"

#include <QCoreApplication>
#include <QJsonDocument>
#include <QLoggingCategory>

Q_LOGGING_CATEGORY(lcRc, "dialog.runcontrol")

namespace dialog::rc {

SlavePrivate::SlavePrivate(Slave *q, const SlaveOptions &o)
    : q(q), options(o), client(std::make_unique<Client>(o.client)),
      access(std::make_unique<TransitionAccess>(o.access, o.client.secretFile, client->name()))
{
    timeout.setSingleShot(true);
}

Slave::Slave(const SlaveOptions &options, QObject *parent)
    : QObject(parent), d(std::make_unique<SlavePrivate>(this, options))
{
    d->state = d->client->publish(stateService(name()));
    d->log = d->client->publish(logService(name()));
    d->status = d->client->publish(rc::statusService(name()));
    d->client->registerCommand(commandName(name()));
    connect(d->client.get(), &Client::requestReceived, this, [this](const Request &r) { d->onRequest(r); });
    connect(d->client.get(), &Client::commandReceived, this, [this](const Command &c) { d->onCommand(c); });
    if (d->options.publishToIs)
        d->is = std::make_unique<IsPublisher>(d->client.get(), d->options.isTypesDir,
                                              [this](const QString &w) { log(Severity::Warning, w); });
    publishState();
}

Slave::~Slave() = default;

Client *Slave::client() const
{
    return d->client.get();
}

QString Slave::name() const
{
    return d->client->name();
}

const SlaveOptions &Slave::options() const
{
    return d->options;
}

const StateMachine &Slave::machine() const
{
    return d->machine;
}

quint32 Slave::runNumber() const
{
    return d->runNumber;
}

Service *Slave::statusService() const
{
    return d->status;
}

Status Slave::openAccess()
{
    return d->access->open();
}

void Slave::log(Severity severity, const QString &text)
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
    d->log->update(LogMessage{nowMs(), name(), severity, text}.toJson());
}

StateRecord Slave::stateRecord() const
{
    StateRecord r;
    r.process = name();
    r.kind = d->options.kind;
    r.state = d->machine.state();
    r.busy = d->machine.busy();
    r.transition = d->machine.pending();
    r.lastTransition = d->machine.lastTransition();
    r.transitionMs = d->lastDurationMs;
    r.error = d->machine.error();
    r.timeMs = nowMs();
    r.pid = QCoreApplication::applicationPid();
    addStateExtras(r);
    return r;
}

void Slave::addStateExtras(StateRecord &record) const
{
    record.runNumber = d->runNumber;
}

void Slave::transitionEnded(Transition, bool) {}

bool Slave::takeRequest(const Request &)
{
    return false;
}

void Slave::publishState()
{
    d->state->update(stateRecord().toJson());
    d->publishIsState();
    Q_EMIT stateChanged(d->machine.state(), d->machine.busy());
}

void Slave::publishStatus(const QJsonObject &status)
{
    d->status->update(QJsonDocument(status).toJson(QJsonDocument::Compact));
}

void Slave::publishToIs(const QString &name, const QString &type, Fill fill)
{
    if (d->is)
        d->is->publish(name, type, std::move(fill));
}

void Slave::publishStatistics(const QString &type, Fill fill)
{
    if (!d->options.daqServer.isEmpty())
        publishToIs(QStringLiteral("%1.%2").arg(d->options.daqServer, name()), type, std::move(fill));
}

Status Slave::addIsTypes(const QString &xmlFile)
{
    return d->is ? d->is->addTypes(xmlFile) : Status();
}

quint64 Slave::isUpdates() const
{
    return d->is ? d->is->successCount() : 0;
}

void Slave::handleCommand(const QString &command, std::function<void(const Command &)> handler)
{
    d->commands.insert(command, std::move(handler));
    d->client->registerCommand(command);
}

Service *Slave::serve(const QString &service, std::function<void(const Request &)> handler)
{
    d->served.insert(service, std::move(handler));
    return d->client->publish(service);
}

void SlavePrivate::publishIsState()
{
    if (!is || options.runParamsServer.isEmpty())
        return;
    const StateMachine m = machine;
    const qint64 duration = lastDurationMs, endMs = lastTransitionEndMs;
    is->publish(QStringLiteral("%1.RunCtrl.%2").arg(options.runParamsServer, q->name()),
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

Status Slave::requestTransition(const TransitionRequest &request, Done done)
{
    const Transition t = request.transition;
    if (const Status refused = d->machine.begin(t); !refused.isOk())
        return refused;
    const quint64 generation = ++d->generation;
    d->timeout.stop();
    d->transitionTimer.start();
    if (t == Transition::Start)
        d->runNumber = request.runNumber;
    log(Severity::Info,
        QStringLiteral("%1 (from %2)").arg(transitionActivity(t), stateName(d->machine.state())));
    publishState();
    auto finish = [this, t, generation, done](const Status &outcome) {
        if (generation != d->generation)
            return; // abandoned by a reset or a time-out
        ++d->generation;
        d->timeout.stop();
        d->lastDurationMs = d->transitionTimer.elapsed();
        d->lastTransitionEndMs = nowMs();
        const bool ok = outcome.isOk();
        if (ok) {
            d->machine.finish();
            log(Severity::Info, QStringLiteral("%1 done in %2 ms: %3")
                                    .arg(transitionName(t))
                                    .arg(d->lastDurationMs)
                                    .arg(stateName(d->machine.state())));
        } else {
            const QString error = outcome.message().isEmpty() ? outcome.toString() : outcome.message();
            d->machine.fail(QStringLiteral("%1 failed: %2").arg(transitionName(t), error));
            log(Severity::Error, d->machine.error());
        }
        transitionEnded(t, ok); // first: what it sets (the run's start time) is in the state published
        publishState();
        if (done)
            done(ok ? Status() : Status(outcome.code(), d->machine.error()));
    };
    d->finish = finish;
    if (d->options.hangOn.contains(t)) {
        log(Severity::Warning,
            QStringLiteral("hanging in '%1' as requested (--hang-on)").arg(transitionName(t)));
        return {};
    }
    if (d->options.failOn.contains(t)) {
        finish(Status(Status::Code::Failed,
                      QStringLiteral("failing as requested (--fail-on %1)").arg(transitionName(t))));
        return {};
    }
    d->armTimeout(t, generation);
    perform(t, request, finish);
    return {};
}

void SlavePrivate::armTimeout(Transition t, quint64 begun)
{
    const int ms = options.timeoutMs.value(t, 0);
    if (ms <= 0)
        return;
    timeout.disconnect(q);
    QObject::connect(&timeout, &QTimer::timeout, q, [this, t, ms, begun] {
        if (begun != generation || !finish)
            return;
        finish(Status(Status::Code::Timeout,
                      QStringLiteral("did not complete within %1 ms (its time-out)").arg(ms)));
        Q_UNUSED(t)
    });
    timeout.start(ms);
}

void Slave::perform(Transition t, const TransitionRequest &request, Done done)
{
    Status s;
    switch (t) {
    case Transition::Configure:
        s = configure(request);
        break;
    case Transition::Start:
        s = start(request);
        break;
    case Transition::Pause:
        s = pause();
        break;
    case Transition::Resume:
        s = resume();
        break;
    case Transition::Stop:
        s = stop();
        break;
    case Transition::Unconfigure:
        s = unconfigure();
        break;
    case Transition::Reset:
        s = reset();
        break;
    }
    done(s);
}

Status Slave::configure(const TransitionRequest &)
{
    return {};
}

Status Slave::start(const TransitionRequest &)
{
    return {};
}

Status Slave::pause()
{
    return {};
}

Status Slave::resume()
{
    return {};
}

Status Slave::stop()
{
    return {};
}

Status Slave::unconfigure()
{
    return {};
}

Status Slave::reset()
{
    return {};
}

void Slave::enterError(const QString &why)
{
    ++d->generation;
    d->timeout.stop();
    d->machine.fail(why);
    log(Severity::Error, why);
    publishState();
}

bool Slave::restoreState(State s)
{
    if (!d->machine.restore(s))
        return false;
    publishState();
    return true;
}

void SlavePrivate::onRequest(const Request &request)
{
    const QString service = request.service();
    if (service == stateService(q->name()))
        return onTransitionRequest(request);
    if (const auto it = served.constFind(service); it != served.constEnd())
        return (*it)(request);
    if (q->takeRequest(request))
        return;
    // The run-control services other than State take no requests; any other service may be served
    // by another part of this process (a Sampler, a handler of Client::requestReceived).
    if (service == logService(q->name()) || service == statusService(q->name()))
        client->replyError(request,
                           QStringLiteral("requests are taken on %1 only").arg(stateService(q->name())));
}

void SlavePrivate::onTransitionRequest(const Request &request)
{
    if (!options.master.isEmpty() && request.origin() != options.master) {
        // The master drives this process; anyone else goes through the master or sends a command
        // through the Control Server, where the access list applies.
        const QString why = QStringLiteral("transitions are taken from %1 only, not from %2")
                                .arg(options.master, request.origin());
        q->log(Severity::Warning, why);
        client->replyError(request, why);
        return;
    }
    if (request.data().contains("\"owner\"")) {
        // {"owner": "alice@cr-03"}: the controller says who took this process ("" released it).
        const QJsonObject o = QJsonDocument::fromJson(request.data()).object();
        if (o.contains(QLatin1String("owner")) && !o.contains(QLatin1String("transition")))
            return onOwnerRequest(request, o.value(QLatin1String("owner")).toString());
    }
    TransitionRequest parsed;
    if (const Status bad = TransitionRequest::fromJson(request.data(), &parsed); !bad.isOk()) {
        client->replyError(request, bad.message());
        return;
    }
    const Transition t = parsed.transition;
    // Transitions asked of this process directly (the GUIs ask the master so) fall under the access
    // list as commands do at the Control Server.
    if (const Status denied = access->permit(request, request.service(), transitionName(t)); !denied.isOk()) {
        q->log(Severity::Warning, denied.message());
        client->replyError(request, denied.message());
        return;
    }
    parsed.requester = request.originUser().isEmpty()
                           ? request.origin()
                           : request.originUser() + QLatin1Char('@') + request.originHost();
    const Status refused = q->requestTransition(parsed, [this, request](const Status &outcome) {
        if (outcome.isOk())
            client->reply(request, q->stateRecord().toJson());
        else
            client->replyError(request, outcome.message());
    });
    if (!refused.isOk()) {
        q->log(Severity::Warning, QStringLiteral("refused '%1' from %2: %3")
                                      .arg(transitionName(t), request.origin(), refused.message()));
        client->replyError(request, refused.message());
    }
}

Status Slave::permit(const Request &request, const QString &action)
{
    const Status verdict = d->access->permit(request, request.service(), action);
    if (!verdict.isOk())
        log(Severity::Warning, verdict.message());
    return verdict;
}

void SlavePrivate::onOwnerRequest(const Request &request, const QString &newOwner)
{
    // Only the controller (options.master) gets here when there is one; the access list applies as
    // to its transitions.
    if (const Status verdict =
            access->permit(request, request.service(),
                           newOwner.isEmpty() ? QStringLiteral("release") : QStringLiteral("take"));
        !verdict.isOk()) {
        q->log(Severity::Warning, verdict.message());
        client->replyError(request, verdict.message());
        return;
    }
    ownerBy = request.origin();
    if (newOwner != owner) {
        owner = newOwner;
        q->log(Severity::Info,
               owner.isEmpty()
                   ? QStringLiteral("released: run-control commands are taken again")
                   : QStringLiteral("taken by %1: driven through %2 alone, run-control commands from anyone "
                                    "else are refused")
                         .arg(owner, ownerBy));
    }
    client->reply(request, q->stateRecord().toJson());
}

void SlavePrivate::onCommand(const Command &command)
{
    if (const auto it = commands.constFind(command.name()); it != commands.constEnd())
        return (*it)(command);
    if (command.name() != commandName(q->name()))
        return;
    if (!owner.isEmpty() && command.origin() != ownerBy) {
        // A command names its sender's process only, never its user: the owner's transitions come
        // through the controller, which checked who asked.
        q->log(Severity::Warning,
               QStringLiteral("refused command from %1: %2 is taken by %3, who drives it alone "
                              "(dialogctl rc TRANSITION --node %2, through %4)")
                   .arg(command.origin(), q->name(), owner, ownerBy));
        return;
    }
    TransitionRequest parsed;
    Status refused = TransitionRequest::fromJson(command.data(), &parsed);
    parsed.requester = command.origin();
    if (refused.isOk())
        refused = q->requestTransition(parsed);
    if (!refused.isOk())
        q->log(Severity::Warning,
               QStringLiteral("refused command from %1: %2").arg(command.origin(), refused.message()));
}

} // namespace dialog::rc
