#include "processtable.h"
#include "processentry.h"

#include "crashreporter.h"

#include "dialog/report.h"

#include <QCoreApplication>
#include <QDateTime>
#include <QDir>
#include <QElapsedTimer>
#include <QLoggingCategory>
#include <QRegularExpression>
#include <QTimer>

#include <csignal>

Q_LOGGING_CATEGORY(lcTable, "dialog.agent.processes", QtInfoMsg)

namespace dialog::agent {

namespace {
QElapsedTimer &monotonic()
{
    static QElapsedTimer t = [] {
        QElapsedTimer e;
        e.start();
        return e;
    }();
    return t;
}
} // namespace

ProcessTable::ProcessTable(const QString &dataDir, const QString &host, CrashReporter *reporter, QObject *parent)
    : QObject(parent), m_dataDir(dataDir), m_host(host), m_reporter(reporter)
{
    monotonic();
    // The changes of one turn of the event loop in one write (200 starts at once: not 200 writes).
    m_saveTimer.setSingleShot(true);
    m_saveTimer.setInterval(0);
    connect(&m_saveTimer, &QTimer::timeout, this, &ProcessTable::saveState);
}

ProcessTable::~ProcessTable()
{
    if (!m_shuttingDown)
        detach();
}

QString ProcessTable::statePath() const
{
    return QDir(m_dataDir).filePath(QStringLiteral(".agent-state.json"));
}

bool ProcessTable::isValidName(const QString &name)
{
    static const QRegularExpression re(QStringLiteral("^[A-Za-z0-9._-]{1,200}$"));
    return re.match(name).hasMatch() && !name.startsWith(QLatin1Char('.'));
}

Status ProcessTable::start(const ProcessSpec &spec, const RestartPolicy &policy, QJsonObject *out, bool standby)
{
    if (!isValidName(spec.name))
        return Status(Status::Code::InvalidName,
                      QStringLiteral("invalid process name '%1' (letters, digits, '.', '_', '-')").arg(spec.name.left(64)));
    const std::shared_ptr<Entry> slot = m_entries.value(spec.name);
    if (slot && slot->process->isRunning())
        return Status(Status::Code::AlreadyExists, QStringLiteral("%1 is running (PID %2)").arg(spec.name).arg(slot->process->pid()));
    if (slot)
        slot->process->setSpec(spec);
    else
        makeEntry(spec);
    Entry *e = m_entries.value(spec.name).get();
    e->restartTimer.stop();
    e->tracker = RestartTracker(policy);
    scheduleSave();
    if (standby) {
        e->state = QStringLiteral("standby");
        *out = entryJson(*e);
        return {};
    }
    QString error;
    if (!e->process->start(&error)) {
        e->state = QStringLiteral("failed");
        e->startError = error;
        return Status(Status::Code::Failed, error);
    }
    e->state = QStringLiteral("running");
    e->startError.clear();
    e->startedMs = QDateTime::currentMSecsSinceEpoch();
    qCInfo(lcTable).noquote() << "started" << spec.name << "PID" << e->process->pid() << spec.program;
    Q_EMIT started(spec.name, e->process->pid());
    *out = entryJson(*e);
    return {};
}

ProcessTable::Entry *ProcessTable::makeEntry(const ProcessSpec &spec)
{
    std::shared_ptr<Entry> &slot = m_entries[spec.name];
    slot = std::make_shared<Entry>();
    slot->restartTimer.setSingleShot(true);
    const qint64 coreLimit = m_reporter ? m_reporter->childCoreLimit() : 0;
    slot->process = std::make_unique<ManagedProcess>(spec, QDir(m_dataDir).filePath(spec.name), coreLimit);
    Entry *e = slot.get();
    connect(e->process.get(), &ManagedProcess::exited, this, [this, e](const ExitInfo &i) { onExited(e, i); });
    connect(e->process.get(), &ManagedProcess::logProblem, this, [e, this](const QString &error) {
        const QString name = e->process->spec().name;
        if (error.isEmpty())
            dialog::report(Severity::Info, QStringLiteral("dialog.agent.processes"),
                           QStringLiteral("log of %1 on %2 writable again (what it printed in between is lost)").arg(name, m_host),
                           {{QStringLiteral("process"), name}});
        else
            dialog::report(Severity::Warning, QStringLiteral("dialog.agent.processes"),
                           QStringLiteral("log of %1 on %2: %3; its output is not kept until it can be written again")
                               .arg(name, m_host, error),
                           {{QStringLiteral("process"), name}});
    });
    connect(&e->restartTimer, &QTimer::timeout, this, [this, e] { restart(e); });
    return e;
}

void ProcessTable::restart(Entry *e)
{
    scheduleSave();
    QString error;
    const QString name = e->process->spec().name;
    if (!mayRestart(e)) {
        e->tracker.setRestarts(e->tracker.restarts() - 1); // counted when it was planned, not made
        return;
    }
    if (!e->process->start(&error)) {
        e->state = QStringLiteral("failed");
        e->startError = error;
        dialog::report(Severity::Error, QStringLiteral("dialog.agent.processes"),
                       QStringLiteral("%1 on %2 not restarted: %3").arg(name, m_host, error), {{QStringLiteral("process"), name}});
        return;
    }
    e->state = QStringLiteral("running");
    e->startedMs = QDateTime::currentMSecsSinceEpoch();
    dialog::report(Severity::Info, QStringLiteral("dialog.agent.processes"),
                   QStringLiteral("%1 on %2 restarted (PID %3, restart %4)")
                       .arg(name, m_host)
                       .arg(e->process->pid())
                       .arg(e->tracker.restarts()),
                   {{QStringLiteral("process"), name}, {QStringLiteral("pid"), e->process->pid()}});
    Q_EMIT started(name, e->process->pid());
}

void ProcessTable::onExited(Entry *e, const ExitInfo &info)
{
    scheduleSave();
    const ProcessSpec &spec = e->process->spec();
    e->last = info;
    e->hasExited = true;
    e->startError = info.error;
    qCInfo(lcTable).noquote() << spec.name << "PID" << info.pid << "ended:"
                              << (info.crashed ? signalName(info.signal) : QStringLiteral("exit code %1").arg(info.exitCode))
                              << (info.requested ? "(stopped on request)" : "");
    Q_EMIT ended(spec.name, info);
    if (m_shuttingDown)
        return;
    // An adopted process's end is of unknown status: a core of its PID says it crashed.
    if ((info.crashed || info.statusUnknown) && !info.requested && m_reporter) {
        CrashInput c{spec.name, spec.program, m_host, e->process->directory(), info.pid, info.signal, info.runMs,
                     e->startedMs, e->process->lastLines()};
        m_reporter->report(c);
    }
    const QList<Done> waiters = std::exchange(e->stopWaiters, {});
    if (info.requested || !waiters.isEmpty()) {
        e->state = std::exchange(e->yielding, false) ? QStringLiteral("standby") : QStringLiteral("stopped");
        for (const Done &d : waiters)
            d(Status(), entryJson(*e));
        return;
    }
    // A migratable process that failed while its name may be held on another host (refused by the
    // Control Server's duplicate-name rule, or this agent cut off from it): standby, whatever its policy.
    if (info.failed() && !spec.hosts.isEmpty() && !mayRestart(e))
        return;
    const auto delay = e->tracker.onExit(info.failed(), info.runMs, monotonic().elapsed());
    if (delay && mayRestart(e)) {
        e->state = QStringLiteral("restarting");
        e->restartTimer.start(int(*delay));
        return;
    }
    if (delay)
        return; // standby (mayRestart)
    e->state = info.failed() ? QStringLiteral("failed") : QStringLiteral("exited");
    if (e->tracker.gaveUp())
        dialog::report(Severity::Error, QStringLiteral("dialog.agent.processes"),
                       QStringLiteral("%1 on %2 not restarted: more than %3 restarts within a minute")
                           .arg(spec.name, m_host)
                           .arg(e->tracker.policy().limitPerMinute),
                       {{QStringLiteral("process"), spec.name}});
}

bool ProcessTable::mayRestart(Entry *e)
{
    const QString name = e->process->spec().name;
    if (e->process->spec().hosts.isEmpty() || !m_restartGate || m_restartGate(name))
        return true;
    // A migratable process while this agent cannot tell whether another host runs it.
    e->state = QStringLiteral("standby");
    dialog::report(Severity::Warning, QStringLiteral("dialog.agent.processes"),
                   QStringLiteral("%1 on %2 not restarted: it may run on another host (the Control Server is not "
                                  "reachable, or another process holds its name); standing by")
                       .arg(name, m_host),
                   {{QStringLiteral("process"), name}});
    scheduleSave();
    return false;
}

QList<ProcessTable::Migratable> ProcessTable::migratable() const
{
    QList<Migratable> out;
    for (const auto &e : m_entries) {
        const ProcessSpec &s = e->process->spec();
        if (!s.hosts.isEmpty())
            out.append({s.name, e->state, e->process->pid(), e->hasExited ? e->last.pid : 0, s.hosts, s.lossMs});
    }
    return out;
}

Status ProcessTable::takeOver(const QString &name, const QString &why)
{
    const auto e = m_entries.value(name);
    if (!e || e->state != QLatin1String("standby"))
        return Status(Status::Code::Failed, QStringLiteral("%1 is not standing by").arg(name));
    QString error;
    if (!e->process->start(&error)) {
        e->state = QStringLiteral("failed");
        e->startError = error;
        dialog::report(Severity::Error, QStringLiteral("dialog.agent.processes"),
                       QStringLiteral("%1 not taken over by %2: %3").arg(name, m_host, error), {{QStringLiteral("process"), name}});
        return Status(Status::Code::Failed, error);
    }
    e->state = QStringLiteral("running");
    e->startError.clear();
    e->startedMs = QDateTime::currentMSecsSinceEpoch();
    e->tracker.reset();
    scheduleSave();
    dialog::report(Severity::Warning, QStringLiteral("dialog.agent.processes"),
                   QStringLiteral("%1 started on %2 (PID %3): %4").arg(name, m_host).arg(e->process->pid()).arg(why),
                   {{QStringLiteral("process"), name}, {QStringLiteral("pid"), e->process->pid()}});
    Q_EMIT started(name, e->process->pid());
    return {};
}

void ProcessTable::yield(const QString &name, const QString &why)
{
    const auto e = m_entries.value(name);
    if (!e || !e->process->isRunning() || e->yielding)
        return;
    dialog::report(Severity::Warning, QStringLiteral("dialog.agent.processes"),
                   QStringLiteral("%1 on %2 (PID %3) stopped: %4; standing by").arg(name, m_host).arg(e->process->pid()).arg(why),
                   {{QStringLiteral("process"), name}});
    e->restartTimer.stop();
    e->yielding = true;
    e->state = QStringLiteral("stopping");
    e->process->stop(e->process->spec().graceMs);
    scheduleSave();
}

void ProcessTable::stop(const QString &name, qint64 graceMs, Done done)
{
    const auto it = m_entries.find(name);
    if (it == m_entries.end())
        return done(Status(Status::Code::NotFound, QStringLiteral("no process %1").arg(name)), {});
    Entry *e = it->get();
    e->restartTimer.stop();
    scheduleSave();
    if (!e->process->isRunning()) {
        if (e->state == QLatin1String("restarting") || e->state == QLatin1String("standby"))
            e->state = QStringLiteral("stopped"); // a standby no longer takes the process over
        return done(Status(), entryJson(*e));
    }
    e->stopWaiters.append(std::move(done));
    e->state = QStringLiteral("stopping");
    e->process->stop(graceMs < 0 ? e->process->spec().graceMs : graceMs);
}

Status ProcessTable::signal(const QString &name, int sig)
{
    const auto it = m_entries.find(name);
    if (it == m_entries.end())
        return Status(Status::Code::NotFound, QStringLiteral("no process %1").arg(name));
    QString error;
    if (!(*it)->process->sendSignal(sig, &error))
        return Status(Status::Code::Failed, error);
    return {};
}

Status ProcessTable::remove(const QString &name)
{
    const auto it = m_entries.find(name);
    if (it == m_entries.end())
        return Status(Status::Code::NotFound, QStringLiteral("no process %1").arg(name));
    if ((*it)->process->isRunning())
        return Status(Status::Code::Failed, QStringLiteral("%1 is running").arg(name));
    m_entries.erase(it);
    scheduleSave();
    return {};
}

QJsonObject ProcessTable::entryJson(const Entry &e) const
{
    const ProcessSpec &s = e.process->spec();
    QJsonObject o{{QStringLiteral("name"), s.name},
                  {QStringLiteral("state"), e.state},
                  {QStringLiteral("program"), s.program},
                  {QStringLiteral("arguments"), QJsonArray::fromStringList(s.arguments)},
                  {QStringLiteral("restarts"), e.tracker.restarts()},
                  {QStringLiteral("log"), e.process->logPath()},
                  {QStringLiteral("grace_ms"), s.graceMs}};
    if (!s.hosts.isEmpty()) {
        o.insert(QStringLiteral("hosts"), QJsonArray::fromStringList(s.hosts));
        o.insert(QStringLiteral("loss_ms"), s.lossMs);
    }
    const QJsonObject policy = e.tracker.policy().toJson();
    for (auto it = policy.constBegin(); it != policy.constEnd(); ++it)
        o.insert(it.key(), it.value());
    if (e.process->isRunning()) {
        if (e.process->isAdopted())
            o.insert(QStringLiteral("adopted"), true);
        o.insert(QStringLiteral("pid"), e.process->pid());
        o.insert(QStringLiteral("run_ms"), e.process->runMs());
        o.insert(QStringLiteral("started"), e.startedMs);
    }
    if (e.hasExited)
        o.insert(QStringLiteral("last_exit"), e.last.toJson());
    if (!e.startError.isEmpty())
        o.insert(QStringLiteral("error"), e.startError);
    if (e.process->logBrokenSinceMs() != 0)
        o.insert(QStringLiteral("log_broken_since"), e.process->logBrokenSinceMs());
    return o;
}

QJsonArray ProcessTable::list() const
{
    QStringList names = m_entries.keys();
    names.sort();
    QJsonArray a;
    for (const QString &n : names)
        a.append(entryJson(*m_entries.value(n)));
    return a;
}

QJsonObject ProcessTable::describe(const QString &name) const
{
    const auto e = m_entries.value(name);
    return e ? entryJson(*e) : QJsonObject();
}

int ProcessTable::runningCount() const
{
    int n = 0;
    for (const auto &e : m_entries)
        n += e->process->isRunning() ? 1 : 0;
    return n;
}

void ProcessTable::shutdown()
{
    m_shuttingDown = true;
    qint64 grace = 0;
    for (const auto &e : std::as_const(m_entries)) {
        e->restartTimer.stop();
        if (e->process->isRunning()) {
            e->process->stop(e->process->spec().graceMs);
            grace = qMax(grace, e->process->spec().graceMs);
        }
    }
    QElapsedTimer t;
    t.start();
    // The kill timers need the event loop: turn it until every process ended (SIGKILL is sure).
    while (runningCount() > 0 && t.elapsed() < grace + 5000)
        QCoreApplication::processEvents(QEventLoop::AllEvents, 50);
    for (const auto &e : std::as_const(m_entries))
        e->process->disconnect(this);
    m_entries.clear();
    saveState();
}

void ProcessTable::detach()
{
    m_shuttingDown = true;
    saveState();
    for (const auto &e : std::as_const(m_entries)) {
        e->restartTimer.stop();
        e->process->disconnect(this);
    }
    m_entries.clear(); // ManagedProcess leaves its process running
}

void ProcessTable::scheduleSave()
{
    if (!m_shuttingDown)
        m_saveTimer.start();
}

} // namespace dialog::agent
