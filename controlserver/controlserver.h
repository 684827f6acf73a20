// The DIALOG Control Server: keeps the directory, answers requests, forwards commands,
// supervises heartbeats and tells processes about lost partners. The class is the wiring of its
// parts, each with one job: Admission (CONNECT, claims, connect-back), Registry (services,
// commands, requests), Supervision (heartbeats, lost processes, the server's own pauses), Standby
// (the spare server and stepping down), CommandRelay (commands, access list, audit) and
// DirectoryPublisher (the directory and statistics as services).
#pragma once

#include "directorypublisher.h"
#include "servercontext.h"
#include "serveroptions.h"

#include <QObject>
#include <memory>

namespace dialog::cs {

class Admission;
class Fencing;
class CommandRelay;
class Registry;
class Standby;
class Supervision;

class ControlServer : public QObject
{
    Q_OBJECT
public:
    explicit ControlServer(const ServerOptions &options, QObject *parent = nullptr);
    ~ControlServer() override;

    /// Listens (or, as a standby, starts watching the primary). False with @p error on failure.
    bool start(QString *error);
    bool isActive() const { return m_ctx.transport != nullptr; }
    quint16 port() const;
    const Directory &directory() const { return m_ctx.directory; }

    /// Name of the service carrying the directory as JSON.
    static QString directoryService() { return directoryServiceName(); }
    /// Name of the service carrying every process's communication figures as JSON, published at most
    /// once per statisticsIntervalMs() while they change (they arrive with the heartbeats).
    static QString statisticsService() { return statisticsServiceName(); }
    /// Name of the service whose requests are commands, forwarded and confirmed (dialogctl send).
    static QString commandService() { return commandServiceName(); }
    static constexpr int statisticsIntervalMs() { return DirectoryPublisher::statisticsIntervalMs; }

private:
    void connectParts();
    bool activate(QString *error);
    void connectTransport();
    void handleControl(net::InboundBatch &batch);
    /// Dispatches one control frame to the part that handles its type.
    void handle(const net::Inbound &in);
    void directoryChanged(bool routes);

    ServerContext m_ctx;
    std::unique_ptr<net::Transport> m_transport;
    CommandRelay *m_relay;
    DirectoryPublisher *m_publisher;
    Registry *m_registry;
    Admission *m_admission;
    Supervision *m_supervision;
    Standby *m_standby;
    Fencing *m_fencing;
};

} // namespace dialog::cs
