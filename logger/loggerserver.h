// dialog-logger on the DIALOG side: takes the reporters' batches and the clients' searches as
// requests on DIALOG.Logger, hands batches to the LogStore's thread and acknowledges each once it
// is committed, runs searches on threads of their own, publishes what was stored on
// DIALOG.Logger.Live.
#pragma once

#include "logsearch.h"
#include "logstore.h"

#include "dialog/client.h"

#include <QHash>
#include <QThread>
#include <array>
#include <functional>
#include <memory>

namespace dialog::logger {

class LoggerServer : public QObject
{
    Q_OBJECT
public:
    /// @p client must live in this thread and outlive the server.
    LoggerServer(Client *client, const LogStore::Options &options);
    ~LoggerServer() override;

    /// Publishes the services and opens the database (asynchronously).
    bool start(QString *error);

    quint64 refusedCount() const { return m_refused; }
    /// Longest text of one stored message; a longer one is cut, marked " … [cut: N bytes]".
    static constexpr int maxTextBytes() { return 64 * 1024; }

    /// The answer to a search: the records (newest first) and whether older ones match, or
    /// std::nullopt and the reason.
    using SearchDone =
        std::function<void(const std::optional<QList<LogRecord>> &records, bool more, const QString &error)>;
    /// Runs @p query on the least busy of the searches' threads, once the store has opened the
    /// database (and created its tables); @p done is called in this object's thread, exactly once,
    /// unless @p context is destroyed first.
    void search(const LogQuery &query, QObject *context, SearchDone done);
    /// The counters `dialogctl log stats` prints (JSON).
    QByteArray statistics() const;

private:
    void onRequest(const Request &request);
    /// The Control Server's messages (the ring it publishes): the ones not seen yet are stored.
    void onControlServerLog(const Message &message);
    void onWritten(const QList<quint64> &tickets, const QString &error, const QList<LogRecord> &stored);

    /// Cuts the text of @p records to maxTextBytes(), saying so at its end.
    static void truncate(QList<LogRecord> &records);

    /// Searches run on this many threads, each with its own connection: one slow search leaves the
    /// others a thread.
    static constexpr int SearchThreads = 2;
    struct Searcher
    {
        QThread thread;
        LogSearch *search = nullptr; ///< lives in thread
        int running = 0;             ///< searches handed to it and not answered yet
    };

    Client *m_client;
    LogStore::Options m_options;
    QThread m_storeThread;
    LogStore *m_store = nullptr; ///< lives in m_storeThread
    std::array<Searcher, SearchThreads> m_searchers;
    Service *m_live = nullptr;
    bool m_storeOpened = false;                ///< the store's open() has run (well or not)
    QList<std::function<void()>> m_beforeOpen; ///< searches asked for before that
    QHash<quint64, Request> m_waiting;         ///< batches not yet committed, by ticket
    quint64 m_nextTicket = 1;
    quint64 m_refused = 0; ///< batches refused because the buffer was full
    /// The Control Server's messages: the last sequence number buffered for storing, per host and
    /// PID (a restarted or standby Control Server is another PID), and those missed (fallen out of
    /// its ring before the logger saw them).
    QHash<QString, quint64> m_controlServerSeen;
    quint64 m_controlServerMissed = 0;
};

} // namespace dialog::logger
