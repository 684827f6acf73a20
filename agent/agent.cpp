#include "agent.h"

#include "agentserver.h"
#include "hostfigures.h"
#include "migration.h"
#include "processtable.h"

#include "dialog/client.h"
#include "dialog/report.h"

#include <QCoreApplication>
#include <QDateTime>
#include <QDir>
#include <QJsonDocument>

#include <cstdio>

namespace dialog::agent {

Agent::Agent(const AgentOptions &options, QObject *parent) : QObject(parent), m_options(options)
{
    m_options.client.name = AgentServer::serviceName(m_options.host);
    m_client = std::make_unique<Client>(m_options.client);
    m_crashes = std::make_unique<CrashReporter>(m_options.crash);
    connect(m_crashes.get(), &CrashReporter::reported, this, [this] { ++m_crashCount; });
    m_table = std::make_unique<ProcessTable>(m_options.dataDir, m_options.host, m_crashes.get());
    m_figures = std::make_unique<HostFigures>(m_client.get(), m_options.host, m_options.dataDir, m_options.isServer,
                                              int(m_options.figuresIntervalMs),
                                              [this](int *managed, int *running, int *crashes) {
                                                  *managed = m_table->size();
                                                  *running = m_table->runningCount();
                                                  *crashes = m_crashCount;
                                              });
    m_server = std::make_unique<AgentServer>(m_client.get(), m_options.host, m_table.get(), m_crashes.get(),
                                             ProgramAllowList(m_options.allow, m_options.binDirs), m_options.access);
    m_server->setStatus([this] { return status(); });
    m_migration = std::make_unique<Migration>(m_client.get(), m_options.host, m_table.get());
}

Agent::~Agent()
{
    shutdown();
}

bool Agent::start(QString *error)
{
    // One agent per data directory: two would both adopt, and both restart, the same processes.
    m_lock = std::make_unique<QLockFile>(QDir(m_options.dataDir).filePath(QStringLiteral(".agent.lock")));
    m_lock->setStaleLockTime(0); // stale only when its process is gone
    if (!m_lock->tryLock(0)) {
        qint64 pid = 0;
        QString host, app;
        m_lock->getLockInfo(&pid, &host, &app);
        *error = QStringLiteral("another dialog-agent (PID %1) uses the data directory %2").arg(pid).arg(m_options.dataDir);
        return false;
    }
    const QString restored = m_table->restore();
    if (!restored.isEmpty()) {
        std::fprintf(stderr, "dialog-agent: %s\n", qPrintable(restored));
        dialog::report(Severity::Info, QStringLiteral("dialog.agent.processes"),
                       QStringLiteral("agent on %1 started: %2").arg(m_options.host, restored), {});
    }
    if (!m_client->start())
        return *error = m_client->errorString(), false;
    if (!m_server->start(error))
        return false;
    m_migration->start();
    m_figures->start();
    return true;
}

void Agent::shutdown()
{
    if (!m_table)
        return;
    if (m_options.stopChildren)
        m_table->shutdown();
    else
        m_table->detach();
    m_table->disconnect(this);
}

QJsonObject Agent::status() const
{
    QJsonObject o{{QStringLiteral("host"), m_options.host},
                  {QStringLiteral("agent"), AgentServer::serviceName(m_options.host)},
                  {QStringLiteral("version"), QCoreApplication::applicationVersion()},
                  {QStringLiteral("pid"), QCoreApplication::applicationPid()},
                  {QStringLiteral("data_dir"), m_options.dataDir},
                  {QStringLiteral("crashes"), m_crashCount},
                  {QStringLiteral("figures"), m_figures->sample().toJson()}};
    if (!m_crashes->coreProblem().isEmpty())
        o.insert(QStringLiteral("core_problem"), m_crashes->coreProblem());
    if (!m_options.isServer.isEmpty())
        o.insert(QStringLiteral("is_object"), m_figures->objectName());
    return o;
}

} // namespace dialog::agent
