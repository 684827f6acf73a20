// The subscriptions of an IS server: who is told of which changes, through the Dispatcher.
#pragma once

#include "dispatcher.h"

#include "dialog/is/criteria.h"

#include <QObject>
#include <memory>

namespace dialog {
class Client;
class Request;
} // namespace dialog
namespace dialog::is {
class HistoryStore;
class Repository;
} // namespace dialog::is

namespace dialog::isd {

/// Subscribes and unsubscribes clients and hands every change of the repository to the
/// Dispatcher, which delivers it on its worker threads. Changes are handed over in batches: once
/// after the requests the main thread is processing now.
///
/// Main thread (the one applying the writes).
class Subscriptions : public QObject
{
    Q_OBJECT
public:
    /// What a subscription asks for (an IS SUBSCRIBE request).
    struct Subscription
    {
        QString channel; ///< the stream channel the requester attached
        is::Criteria criteria;
        bool withValues = true;
        bool snapshot = false;  ///< the matching content first
        QString archiveService; ///< set by an archiver: the service answering HISTORY from its archive
        qint64 historyUs = 0;   ///< the last historyUs of each matching object's history first
    };

    /// Every reference must outlive this object; @p history may be null (--history 0).
    Subscriptions(is::Repository &repository, Client &client, is::HistoryStore *history,
                  const DispatcherOptions &options, QObject *parent = nullptr);
    ~Subscriptions() override;

    /// Starts handing the repository's changes to the dispatcher.
    void start();
    /// Subscribes the origin of @p request and answers it.
    void subscribe(const Request &request, const Subscription &subscription);
    /// Removes the subscription of the origin of @p request on @p channel and answers it.
    void unsubscribe(const Request &request, const QString &channel);
    /// The service of a running archiver of this server (empty if none subscribes).
    QString archiveService() const;

    const Dispatcher &dispatcher() const { return *m_dispatcher; }

private:
    void scheduleFlush();
    /// The History records sent first to a subscription made with a history span.
    void historyRecords(Subscriber &s, qint64 historyUs);

    is::Repository &m_repository;
    Client &m_client;
    is::HistoryStore *m_history;
    std::unique_ptr<Dispatcher> m_dispatcher;
    bool m_flushScheduled = false;
};

} // namespace dialog::isd
