// dialog-agent's wiring: its Client (DIALOG.Agent.<host>), the process table, the crash reporter,
// the host figures and the request server.
#pragma once

#include "crashreporter.h"

#include "dialog/audit.h"
#include "dialog/clientoptions.h"

#include <QLockFile>
#include <QObject>
#include <QStringList>
#include <memory>

namespace dialog {
class Client;
}

namespace dialog::agent {

class AgentServer;
class HostFigures;
class Migration;
class ProcessTable;

/// Everything main() read from the command line.
struct AgentOptions
{
    ClientOptions client;
    QString host;
    QString dataDir;
    QStringList allow, binDirs;
    QString isServer; ///< empty: no host figures in IS
    qint64 figuresIntervalMs = 5000;
    CrashReporter::Options crash;
    AccessOptions access;
    bool stopChildren = false; ///< stop the processes when the agent ends (default: they run on)
};

class Agent : public QObject
{
    Q_OBJECT
public:
    explicit Agent(const AgentOptions &options, QObject *parent = nullptr);
    ~Agent() override;
    /// Locks the data directory, adopts the processes a previous agent left (its state file),
    /// starts the client and the parts. False with the reason.
    bool start(QString *error);
    Client *client() const { return m_client.get(); }
    /// With --stop-children stops every managed process (SIGTERM, SIGKILL after their grace time)
    /// and waits for them; without, leaves them running for the next agent to adopt.
    void shutdown();

private:
    QJsonObject status() const;

    AgentOptions m_options;
    std::unique_ptr<Client> m_client;
    std::unique_ptr<CrashReporter> m_crashes;
    std::unique_ptr<ProcessTable> m_table;
    std::unique_ptr<HostFigures> m_figures;
    std::unique_ptr<AgentServer> m_server;
    std::unique_ptr<Migration> m_migration;
    std::unique_ptr<QLockFile> m_lock;
    int m_crashCount = 0;
};

} // namespace dialog::agent
