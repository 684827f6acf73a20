#include "loggerserver.h"

#include "dialog/handoff.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QPointer>
#include <utility>

namespace dialog::logger {

LoggerServer::LoggerServer(Client *client, const LogStore::Options &options)
    : m_client(client), m_options(options)
{
    m_store = new LogStore(options);
    m_store->moveToThread(&m_storeThread);
    // Emitted in the store's thread with lists of ours: handed over to this thread with handOff() (see
    // libdialog/src/tsan_qt.cpp). This object outlives the store (the destructor deletes it first).
    connect(
        m_store, &LogStore::written, this,
        [this](const QList<quint64> &tickets, const QString &error, const QList<LogRecord> &stored) {
            handoff::post(this, [this, tickets, error, stored] { onWritten(tickets, error, stored); });
        },
        Qt::DirectConnection);
    m_storeThread.setObjectName(QStringLiteral("logger-store"));
    handoff::startThread(m_storeThread);
    for (Searcher &s : m_searchers) {
        s.search = new LogSearch(options.database, options.searchBudgetMs);
        s.search->moveToThread(&s.thread);
        s.thread.setObjectName(QStringLiteral("logger-search"));
        handoff::startThread(s.thread);
    }
}

LoggerServer::~LoggerServer()
{
    // The store and the search go in their own threads (the store writes what it was given first),
    // in an order ThreadSanitizer sees (callBlocking), then the threads end.
    handoff::callBlocking(m_store, [store = m_store] { delete store; });
    for (Searcher &s : m_searchers)
        handoff::callBlocking(s.search, [search = s.search] { delete search; });
    m_storeThread.quit();
    m_storeThread.wait();
    for (Searcher &s : m_searchers) {
        s.thread.quit();
        s.thread.wait();
    }
}

bool LoggerServer::start(QString *error)
{
    // A search before the tables exist would fail ("no such table"): searches wait for the open.
    handoff::post(m_store, [this, store = m_store] {
        store->open();
        handoff::post(this, [this] {
            m_storeOpened = true;
            for (const auto &run : std::exchange(m_beforeOpen, {}))
                run();
        });
    });
    if (!m_client->publish(logservice::service()) || !(m_live = m_client->publish(logservice::live()))) {
        *error = m_client->errorString();
        return false;
    }
    connect(m_client, &Client::requestReceived, this, &LoggerServer::onRequest);
    m_client->subscribe(logservice::controlServer(), this,
                        [this](const Message &m) { onControlServerLog(m); });
    m_store->setKeepStored(m_live->subscriberCount() > 0);
    connect(m_live, &Service::subscriberCountChanged, this,
            [this](int count) { m_store->setKeepStored(count > 0); });
    return true;
}

void LoggerServer::onRequest(const Request &request)
{
    if (request.service() != logservice::service()) {
        m_client->replyError(request, QStringLiteral("unknown service"));
        return;
    }
    const QByteArray data = request.data();
    const char kind = data.isEmpty() ? 0 : data.at(0);
    if (kind == logservice::StoreKind) {
        QList<LogRecord> records;
        if (const Status read = decodeRecords(data.mid(1), &records); !read.isOk()) {
            m_client->replyError(request, QStringLiteral("malformed batch: ") + read.message());
            return;
        }
        // The sender's name as the Control Server knows it, not what the record claims.
        for (LogRecord &r : records)
            r.process = request.origin();
        truncate(records);
        const quint64 ticket = m_nextTicket++;
        if (!m_store->enqueue(ticket, records)) {
            ++m_refused;
            m_client->replyError(request, logservice::busyError());
            return;
        }
        m_waiting.insert(ticket, request);
    } else if (kind == logservice::QueryKind) {
        LogQuery query;
        if (const Status read = LogQuery::decode(data.mid(1), &query); !read.isOk()) {
            m_client->replyError(request, read.message());
            return;
        }
        search(query, this,
               [this, request](const std::optional<QList<LogRecord>> &records, bool more, const QString &e) {
                   if (records)
                       m_client->reply(request, LogPage{*records, more}.encode());
                   else
                       m_client->replyError(request, QStringLiteral("search failed: ") + e);
               });
    } else if (kind == logservice::StatsKind) {
        m_client->reply(request, statistics());
    } else {
        m_client->replyError(request, QStringLiteral("unknown request kind"));
    }
}

void LoggerServer::onControlServerLog(const Message &message)
{
    QList<LogRecord> records;
    if (const Status read = decodeRecords(message.data(), &records); !read.isOk()) {
        qWarning().noquote() << "malformed messages of the Control Server:" << read.message();
        return;
    }
    QList<LogRecord> fresh;
    QHash<QString, quint64> seen = m_controlServerSeen;
    for (LogRecord &r : records) {
        const QString origin = r.host + QLatin1Char(' ') + QString::number(r.pid);
        const auto it = seen.find(origin);
        if (it != seen.end() && r.sequence <= *it)
            continue;
        if (it != seen.end() && r.sequence > *it + 1)
            m_controlServerMissed += r.sequence - *it - 1;
        seen.insert(origin, r.sequence);
        // Only the Control Server can publish this service (it is one of its own).
        r.process = QStringLiteral("DIALOG.ControlServer");
        fresh.append(std::move(r));
    }
    if (fresh.isEmpty())
        return;
    truncate(fresh);
    // No request waits for this ticket. A full buffer leaves them unseen: the next update (the ring
    // holds them still) brings them again. Stored twice they are not (the unique origin key).
    if (m_store->enqueue(m_nextTicket++, fresh))
        m_controlServerSeen.swap(seen);
}

void LoggerServer::search(const LogQuery &query, QObject *context, SearchDone done)
{
    if (!m_storeOpened) {
        m_beforeOpen.append([this, query, guard = QPointer<QObject>(context), done = std::move(done)] {
            if (guard)
                search(query, guard, done);
        });
        return;
    }
    Searcher *s = &m_searchers.front();
    for (Searcher &other : m_searchers)
        if (other.running < s->running)
            s = &other;
    ++s->running;
    QPointer<QObject> guard(context);
    LogSearch *search = s->search;
    handoff::post(search, [this, s, search, guard, done = std::move(done), query] {
        bool more = false;
        QString e;
        auto records = search->run(query, &more, &e);
        handoff::post(this, [s, guard, done, records, more, e] {
            --s->running;
            if (guard)
                done(records, more, e);
        });
    });
}

void LoggerServer::truncate(QList<LogRecord> &records)
{
    for (LogRecord &r : records) {
        if (r.text.size() <= maxTextBytes() / 3) // a UTF-16 unit is at most 3 bytes of UTF-8
            continue;
        const QByteArray utf8 = r.text.toUtf8();
        if (utf8.size() <= maxTextBytes())
            continue;
        // Cut at a character boundary (a UTF-8 continuation byte is 10xxxxxx).
        qsizetype cut = maxTextBytes() - 64;
        while (cut > 0 && (uchar(utf8.at(cut)) & 0xC0) == 0x80)
            --cut;
        r.text = QString::fromUtf8(utf8.left(cut)) + QStringLiteral(" … [cut: %1 bytes]").arg(utf8.size());
    }
}

void LoggerServer::onWritten(const QList<quint64> &tickets, const QString &error,
                             const QList<LogRecord> &stored)
{
    for (quint64 t : tickets) {
        const auto it = m_waiting.constFind(t);
        if (it == m_waiting.cend())
            continue; // the Control Server's messages: nobody to answer
        const Request r = *it;
        m_waiting.erase(it);
        if (error.isEmpty())
            m_client->reply(r, QByteArray());
        else
            m_client->replyError(r, QStringLiteral("not stored: ") + error);
    }
    // Encoded only for someone who listens (it costs the main thread as much as decoding the batch).
    if (!stored.isEmpty() && m_live->subscriberCount() > 0)
        m_live->update(encodeRecords(stored));
}

QByteArray LoggerServer::statistics() const
{
    QJsonObject o{{QStringLiteral("database"), m_options.database.display()},
                  {QStringLiteral("stored"), qint64(m_store->storedCount())},
                  {QStringLiteral("dropped"), qint64(m_store->droppedCount())},
                  {QStringLiteral("refused_batches"), qint64(m_refused)},
                  {QStringLiteral("buffered"), m_store->bufferedCount()},
                  {QStringLiteral("control_server_missed"), qint64(m_controlServerMissed)},
                  {QStringLiteral("last_error"), m_store->lastError()}};
    return QJsonDocument(o).toJson(QJsonDocument::Compact);
}

} // namespace dialog::logger
