// dialog-isserver: one IS server (ATLAS Information Service) as a DIALOG process.
#pragma once

#include "dispatcher.h"
#include "mirror.h"
#include "quota.h"

#include "dialog/client.h"
#include "dialog/is/dictionary.h"
#include "dialog/is/repository.h"
#include "dialog/is/typeregistry.h"

#include <QElapsedTimer>
#include <QObject>
#include <QThreadPool>
#include <atomic>
#include <memory>

class QTimer;

namespace dialog::isd {

struct ServerOptions
{
    QString name;
    int threads = 2;
    QString dataDir;  ///< empty: no persistence
    QString typesDir; ///< empty: only the built-in types (and those declared at run time)
    int checkpointS = 10;
    int queueRecords = 10000;
    // Web IS (webserver.h): off while httpPort < 0; 0 listens on any free port.
    int httpPort = -1;
    QString httpBind = QStringLiteral("127.0.0.1");
    int httpMaxRequests = 16;  ///< concurrent HTTP requests; more get 503
    int httpMaxWebSockets = 64; ///< concurrent WebSocket clients; more are closed with a reason
    int httpIdleS = 30;         ///< an HTTP connection without a request in progress is closed after this
    int httpMaxPerAddress = 32; ///< open HTTP/WebSocket connections from one client address
    int httpHeadS = 5;          ///< a connection's first request head must be complete within this
    Quota::Limits quota;        ///< what one client may store, and the server in total
    QString webRoot;            ///< directory of the web page (resources/web); empty: the built-in default
    // Mirror (mirror.h): a read-only copy of the server mirrorOf, restricted to mirrorCriteria.
    QString mirrorOf;
    QString mirrorCriteria; ///< object-name regex; empty: every object
    ClientOptions client;
};

class WebServer;

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
    is::Repository &repository() { return *m_repository; }
    const is::TypeRegistry &types() const { return m_types; }
    Client &client() { return *m_client; }

private:
    void onRequest(const Request &request);
    void reply(const Request &request, const QByteArray &data);
    void replyStatus(const Request &request, is::Status::Code code, const QString &error = {});
    void write(const Request &request, int op, const QString &name, const QByteArray &value);
    void read(const Request &request, const QByteArray &data);
    void subscribe(const Request &request, const QString &channel, const is::Criteria &criteria, bool withValues,
                   bool snapshot);
    bool refuseIfMirror(const Request &request);
    QString quotaKey(const QString &name) const;
    void scheduleFlush();
    void publishStatistics();
    void checkpoint();
    QString typesFile() const;
    bool saveDeclaredTypes(QString *error);

    ServerOptions m_options;
    is::TypeRegistry m_types;
    QList<is::TypeInfo> m_declared; // declared at run time, saved with the checkpoint
    std::unique_ptr<is::Repository> m_repository;
    std::unique_ptr<Dispatcher> m_dispatcher;
    std::unique_ptr<Client> m_client;
    std::unique_ptr<Mirror> m_mirror; // with --mirror-of
    std::unique_ptr<Quota> m_quota;
    QThreadPool m_pool; // reads (get, list, types) and checkpoints
    bool m_flushScheduled = false;
    QTimer *m_statsTimer = nullptr;
    QTimer *m_checkpointTimer = nullptr;
    std::atomic<bool> m_saving{false};
    std::atomic<quint64> m_checkpointErrors{0};
    std::atomic<qint64> m_lastCheckpointUs{0};
    QElapsedTimer m_clock;
    qint64 m_lastStatsMs = 0;
    quint64 m_lastChanges = 0, m_lastDeliveries = 0;
    quint64 m_requests = 0;
    quint64 m_statsPublished = 0;
    std::unique_ptr<WebServer> m_web; // with --http-port
};

} // namespace dialog::isd
