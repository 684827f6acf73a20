// The reads of an IS server: get, list, types and history, answered off the main thread.
#pragma once

#include <QByteArray>
#include <QString>

class QThreadPool;

namespace dialog {
class Client;
class Request;
} // namespace dialog
namespace dialog::is {
class HistoryStore;
namespace protocol {
struct ReplyMessage;
struct RequestMessage;
} // namespace protocol
class Repository;
class TypeRegistry;
} // namespace dialog::is

namespace dialog::isd {

class WriterTracker;

/// Answers GET, LIST, TYPES and HISTORY requests on a thread pool: the repository, the registry,
/// the history and the writer tracker are thread-safe, and replying only queues a frame. Each
/// entry carries its object's staleness when the server answered.
class Reads
{
public:
    /// Every reference must outlive this object; @p history may be null (--history 0).
    Reads(const QString &serverName, const is::Repository &repository, const is::TypeRegistry &types,
          Client &client, QThreadPool &pool, const WriterTracker &writers, is::HistoryStore *history);

    /// Answers the GET, LIST or TYPES request @p r of @p request in the pool. Any thread.
    void read(const Request &request, const is::protocol::RequestMessage &r);
    /// Answers the HISTORY request @p r in the pool; @p archive is the service of the archiver
    /// holding older values (empty if none), told to the client.
    void readHistory(const Request &request, const is::protocol::RequestMessage &r, const QString &archive);
    /// Milliseconds of matching one LIST may take (ScanBudget); <= 0: no bound. Before the first read.
    void setScanBudget(int ms) { m_scanBudgetMs = ms; }

private:
    void list(const is::protocol::RequestMessage &r, is::protocol::ReplyMessage *out) const;

    QString m_serverName;
    const is::Repository &m_repository;
    const is::TypeRegistry &m_types;
    Client &m_client;
    QThreadPool &m_pool;
    const WriterTracker &m_writers;
    is::HistoryStore *m_history;
    int m_scanBudgetMs = 2000;
};

} // namespace dialog::isd
