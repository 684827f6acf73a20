#include "processtable.h"

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

struct ProcessTable::Entry
{
    std::unique_ptr<ManagedProcess> process;
    RestartTracker tracker;
    QString state = QStringLiteral("starting");
    ExitInfo last;
    bool hasExited = false;
    qint64 startedMs = 0;
    QTimer restartTimer;
    QList<Done> stopWaiters;
    QString startError;
};

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
}

ProcessTable::~ProcessTable()
{
    shutdown();
}

bool ProcessTable::isValidName(const QString &name)
{
    static const QRegularExpression re(QStringLiteral("^[A-Za-z0-9._-]{1,200}$"));
    return re.match(name).hasMatch() && name != QLatin1String(".") && name != QLatin1String("..");
}

Status ProcessTable::start(const ProcessSpec &spec, const RestartPolicy &policy, QJsonObject *out)
{
    if (!isValidName(spec.name))
        return Status(Status::Code::InvalidName,
                      QStringLiteral("invalid process name '%1' (letters, digits, '.', '_', '-')").arg(spec.name.left(64)));
    std::shared_ptr<Entry> &slot = m_entries[spec.name];
    if (slot && slot->process->isRunning())
        return Status(Status::Code::AlreadyExists, QStringLiteral("%1 is running (PID %2)").arg(spec.name).arg(slot->process->pid()));
    if (!slot) {
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
                               QStringLiteral("log of %1 on %2 writable again (%3 bytes lost)")
                                   .arg(name, m_host)
                                   .arg(e->process->logBytesLost()),
                               {{QStringLiteral("process"), name}});
            else
                dialog::report(Severity::Warning, QStringLiteral("dialog.agent.processes"),
                               QStringLiteral("log of %1 on %2: %3; its output is not kept until it can be written again")
                                   .arg(name, m_host, error),
                               {{QStringLiteral("process"), name}});
        });
        connect(&e->restartTimer, &QTimer::timeout, this, [this, e] { restart(e); });
    } else {
        slot->process->setSpec(spec);
    }
    Entry *e = slot.get();
    e->restartTimer.stop();
    e->tracker = RestartTracker(policy);
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

void ProcessTable::restart(Entry *e)
{
    QString error;
    const QString name = e->process->spec().name;
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
    if (info.crashed && !info.requested && m_reporter) {
        CrashInput c{spec.name, spec.program, m_host, e->process->directory(), info.pid, info.signal, info.runMs,
                     e->startedMs, e->process->lastLines()};
        m_reporter->report(c);
    }
    const QList<Done> waiters = std::exchange(e->stopWaiters, {});
    if (info.requested || !waiters.isEmpty()) {
        e->state = QStringLiteral("stopped");
        for (const Done &d : waiters)
            d(Status(), entryJson(*e));
        return;
    }
    const auto delay = e->tracker.onExit(info.failed(), info.runMs, monotonic().elapsed());
    if (delay) {
        e->state = QStringLiteral("restarting");
        e->restartTimer.start(int(*delay));
        return;
    }
    e->state = info.failed() ? QStringLiteral("failed") : QStringLiteral("exited");
    if (e->tracker.gaveUp())
        dialog::report(Severity::Error, QStringLiteral("dialog.agent.processes"),
                       QStringLiteral("%1 on %2 not restarted: more than %3 restarts within a minute")
                           .arg(spec.name, m_host)
                           .arg(e->tracker.policy().limitPerMinute),
                       {{QStringLiteral("process"), spec.name}});
}

void ProcessTable::stop(const QString &name, qint64 graceMs, Done done)
{
    const auto it = m_entries.find(name);
    if (it == m_entries.end())
        return done(Status(Status::Code::NotFound, QStringLiteral("no process %1").arg(name)), {});
    Entry *e = it->get();
    e->restartTimer.stop();
    if (!e->process->isRunning()) {
        if (e->state == QLatin1String("restarting"))
            e->state = QStringLiteral("stopped");
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
    const QJsonObject policy = e.tracker.policy().toJson();
    for (auto it = policy.constBegin(); it != policy.constEnd(); ++it)
        o.insert(it.key(), it.value());
    if (e.process->isRunning()) {
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
}

} // namespace dialog::agent
