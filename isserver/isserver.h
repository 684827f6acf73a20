// dialog-isserver: one IS server (ATLAS Information Service) as a DIALOG process.
#pragma once

#include "dispatcher.h"
#include "mirror.h"
#include "pushreceiver.h"
#include "pushsender.h"
#include "quota.h"

#include "dialog/audit.h"
#include "dialog/client.h"
#include "dialog/directory.h"
#include "dialog/is/dictionary.h"
#include "dialog/is/history.h"
#include "dialog/is/repository.h"
#include "dialog/is/typeregistry.h"
#include "is/journal_p.h"

#include <QElapsedTimer>
#include <QMutex>
#include <QObject>
#include <QSslConfiguration>
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
    /// Write-ahead journal next to the checkpoint (is/journal_p.h): an acknowledged write survives
    /// a crash. Only with a data directory, never on a mirror (its content comes from the master).
    bool journal = true;
    is::Journal::Sync journalSync = is::Journal::Sync::Batch;
    int queueRecords = 10000;
    int slowGraceMs = 500; ///< DispatcherOptions::slowGraceMs
    // Web IS (webserver.h): off while httpPort < 0; 0 listens on any free port.
    int httpPort = -1;
    QString httpBind = QStringLiteral("127.0.0.1");
    int httpMaxRequests = 16;  ///< concurrent HTTP requests; more get 503
    int httpMaxWebSockets = 64; ///< concurrent WebSocket clients; more are closed with a reason
    int httpIdleS = 30;         ///< an HTTP connection without a request in progress is closed after this
    int httpMaxPerAddress = 32; ///< open HTTP/WebSocket connections from one client address
    int httpHeadS = 5;          ///< a connection's first request head must be complete within this
    QByteArray httpToken;       ///< bearer token of /is and /metrics (HTTP and WebSocket); empty: none
    bool httpTls = false;       ///< HTTPS/WSS with httpTlsConfiguration
    QSslConfiguration httpTlsConfiguration;
    AccessOptions access;       ///< who may write which object, and the audit trail of writes
    Quota::Limits quota;        ///< what one client may store, and the server in total
    QString webRoot;            ///< directory of the web page (resources/web); empty: the built-in default
    QString metricsCriteria;    ///< object-name regex of the objects GET /metrics exports; empty: none
    // Mirror (mirror.h): a read-only copy of the server mirrorOf, restricted to mirrorCriteria.
    QString mirrorOf;
    QString mirrorCriteria; ///< object-name regex; empty: every object
    // Push mirror (pushsender.h, pushreceiver.h): this master pushes to mirrors at pushTo
    // ("host:port"), or this mirror listens at mirrorListen for the master mirrorMaster.
    QStringList pushTo;
    QString pushCriteria; ///< object-name regex; empty: every object
    int pushPingMs = 2000; ///< silence for 3 intervals drops the connection (both sides)
    QHostAddress mirrorListenAddress;
    int mirrorListenPort = -1; ///< < 0: not a push mirror
    QString mirrorMaster;      ///< empty: a master of this server's own name
    // History ring (dialog/is/history.h): the newest historyCount values, historySeconds at most.
    int historyCount = 600;
    int historySeconds = 3600;
    QString historyConfig; ///< per-name / per-type bounds (HistoryStore::parseRules); empty: none
    /// Farm sums (summer.h): each object-name regex with the object that holds the sum of its matches.
    QList<QPair<QString, QString>> sums;
    QString alarmsFile; ///< alarm rules (alarms.h); empty: none
    ClientOptions client;
};

class AlarmEvaluator;
class Summer;
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
    /// The history ring (null with --history 0).
    is::HistoryStore *history() { return m_history.get(); }
    /// The service of a running archiver of this server (empty if none subscribes).
    QString archiveService() const;
    const is::TypeRegistry &types() const { return m_types; }
    Client &client() { return *m_client; }
    /// Whether the process that wrote @p object (its object name) last was declared lost since.
    /// Any thread.
    bool isWriterLost(const QString &object) const;
    /// The staleness, now, of @p object (its object name) of type @p type last written at
    /// @p lastWrite: its writer lost, or older than the type's expected interval. Any thread.
    is::Staleness staleness(const QString &object, const QString &type, is::Time lastWrite) const;

private:
    void onRequest(const Request &request);
    void reply(const Request &request, const QByteArray &data);
    void replyStatus(const Request &request, is::Status::Code code, const QString &error = {});
    void write(const Request &request, int op, const QString &name, const QByteArray &value);
    /// Checks a write against the access list and audits it; false (and the request answered
    /// PermissionDenied, logged, counted) when refused.
    bool permitWrite(const Request &request, int op, const QString &name);
    void read(const Request &request, const QByteArray &data);
    void readHistory(const Request &request, const QByteArray &data);
    bool startHistory(QString *error);
    /// The History records sent first to a subscription made with a history span.
    void historyRecords(Subscriber &s, qint64 historyUs);
    /// A mirror, once synchronised: copies the master's history of every object, one at a time.
    void copyMasterHistory();
    void copyNextHistory();
    void subscribe(const Request &request, const QString &channel, const is::Criteria &criteria,
                   bool withValues, bool snapshot, const QString &archiveService = {}, qint64 historyUs = 0);
    bool refuseIfMirror(const Request &request);
    QString quotaKey(const QString &name) const;
    void scheduleFlush();
    void publishStatistics();
    void checkpoint();
    bool startJournal(QString *error);
    /// Writes the journal records of the writes applied so far, then sends their replies (an
    /// error instead of Ok for writes that could not be journaled). Main thread.
    void commitJournal();
    void scheduleJournalCommit();
    QString typesFile() const;
    bool saveDeclaredTypes(QString *error);
    bool startSums(QString *error);
    bool startAlarms(QString *error);
    void onDirectory(const DirectorySnapshot &directory);

    ServerOptions m_options;
    is::TypeRegistry m_types;
    QList<is::TypeInfo> m_declared; // declared at run time, saved with the checkpoint
    std::unique_ptr<is::Repository> m_repository;
    std::unique_ptr<is::HistoryStore> m_history; // with --history > 0
    std::unique_ptr<is::Dictionary> m_historyDictionary; // a mirror: reads the master's history
    QStringList m_historyToCopy;
    std::unique_ptr<Dispatcher> m_dispatcher;
    std::unique_ptr<Client> m_client;
    std::unique_ptr<Mirror> m_mirror; // with --mirror-of
    std::vector<std::unique_ptr<PushSender>> m_pushers; // with --push-to
    std::unique_ptr<PushReceiver> m_pushReceiver;       // with --mirror-listen
    bool startPush(QString *error);
    std::unique_ptr<Quota> m_quota;
    std::unique_ptr<AuditTrail> m_audit; // with --audit / --audit-file
    quint64 m_accessRefused = 0;
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

    // With the journal: the replies of the writes whose records are not committed yet, in order.
    struct PendingReply
    {
        Request request;
        is::Status::Code code;
        QString error;
    };
    std::unique_ptr<is::Journal> m_journal;
    QList<PendingReply> m_pendingReplies;
    bool m_journalCommitScheduled = false;
    quint64 m_journalCheckpointed = 0; // newest segment covered by the last checkpoint written
    std::atomic<quint64> m_journalErrors{0};
    bool m_journalFailing = false; // the last commit failed (logged once per episode)
    int m_journalInFlight = 0;     // commits whose fdatasync (and replies) are still to come
    void journalCommitted(const QList<PendingReply> &replies, bool ok, const QString &why);

    // With --sum and --alarms.
    std::vector<std::unique_ptr<Summer>> m_summers;
    std::unique_ptr<AlarmEvaluator> m_alarms;
    // The process that wrote each object (object name) last, and the objects whose writer was lost.
    QHash<QString, QString> m_writers; // main thread
    mutable QMutex m_lostLock;         // guards m_writerLost: reads check it from the worker pool
    QSet<QString> m_writerLost;
};

} // namespace dialog::isd
