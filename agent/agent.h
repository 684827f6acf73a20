// dialog-agent's wiring: its Client (DIALOG.Agent.<host>), the process table, the crash reporter,
// the host figures and the request server.
#pragma once

#include "crashreporter.h"

#include "dialog/audit.h"
#include "dialog/clientoptions.h"

#include <QObject>
#include <QStringList>
#include <memory>

namespace dialog {
class Client;
}

namespace dialog::agent {

class AgentServer;
class HostFigures;
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
};

class Agent : public QObject
{
    Q_OBJECT
public:
    explicit Agent(const AgentOptions &options, QObject *parent = nullptr);
    ~Agent() override;
    /// Starts the client and the parts. False with the reason.
    bool start(QString *error);
    Client *client() const { return m_client.get(); }
    /// Stops every managed process (SIGTERM, SIGKILL after their grace time) and waits for them.
    void shutdown();

private:
    QJsonObject status() const;

    AgentOptions m_options;
    std::unique_ptr<Client> m_client;
    std::unique_ptr<CrashReporter> m_crashes;
    std::unique_ptr<ProcessTable> m_table;
    std::unique_ptr<HostFigures> m_figures;
    std::unique_ptr<AgentServer> m_server;
    int m_crashCount = 0;
};

} // namespace dialog::agent
