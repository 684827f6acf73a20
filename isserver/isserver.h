// dialog-isserver: one IS server (ATLAS Information Service) as a DIALOG process.
#pragma once

#include "serveroptions.h"

#include "dialog/is/typeregistry.h"

#include <QObject>
#include <QThreadPool>
#include <memory>

namespace dialog {
class Client;
class DirectorySnapshot;
class Request;
} // namespace dialog
namespace dialog::is {
class HistoryStore;
class Repository;
} // namespace dialog::is

namespace dialog::isd {

class DerivedObjects;
class Persistence;
class Reads;
class Replication;
class ServerStatistics;
class Subscriptions;
class WebServer;
class WritePath;
class WriterTracker;

/// The wiring of an IS server's parts: the repository and its registry, the write path, the
/// reads, the subscriptions, persistence, replication, sums and alarms, statistics and the web
/// server. It routes each request of the server's DIALOG service to the part that serves it.
class IsServer : public QObject
{
    Q_OBJECT
public:
    explicit IsServer(const ServerOptions &options, QObject *parent = nullptr);
    ~IsServer() override;

    /// Loads types and the last checkpoint, then joins the DIALOG system. False with a reason.
    bool start(QString *error);
    /// Final checkpoint (on SIGTERM/SIGINT). False with a reason if it could not be written.
    bool saveNow(QString *error);

    const ServerOptions &options() const { return m_options; }
    /// The server's DIALOG client (valid once start() was called).
    Client &client() { return *m_client; }

private:
    bool checkOptions(QString *error) const;
    bool openRepository(QString *error);
    bool startHistory(QString *error);
    bool startParts(QString *error);
    bool join(QString *error);
    void announce();
    bool startServices(QString *error);
    void onRequest(const Request &request);
    void onDirectory(const DirectorySnapshot &directory);

    ServerOptions m_options;
    QThreadPool m_pool; // reads (get, list, types, history) and checkpoints
    is::TypeRegistry m_types;
    std::unique_ptr<is::Repository> m_repository;
    std::unique_ptr<is::HistoryStore> m_history; // with --history > 0
    std::unique_ptr<Client> m_client;
    std::unique_ptr<WriterTracker> m_writers;
    std::unique_ptr<Persistence> m_persistence;
    std::unique_ptr<WritePath> m_writePath;
    std::unique_ptr<Reads> m_reads;
    std::unique_ptr<Subscriptions> m_subscriptions;
    std::unique_ptr<DerivedObjects> m_derived;
    std::unique_ptr<Replication> m_replication;
    std::unique_ptr<ServerStatistics> m_statistics;
    std::unique_ptr<WebServer> m_web; // with --http-port
    quint64 m_requests = 0;
};

} // namespace dialog::isd
