// Web IS: the WebSocket clients of dialog-isserver's web server (ws://HOST:PORT/is/ws).
#pragma once

#include "dialog/is/criteria.h"
#include "dialog/is/history.h"
#include "dialog/is/repository.h"
#include "dialog/is/staleness.h"

#include <QByteArray>
#include <QHash>
#include <QObject>
#include <QStringList>
#include <QThreadPool>
#include <functional>
#include <memory>

class QWebSocket;

namespace dialog::is {
class Dictionary;
class Event;
class Receiver;
} // namespace dialog::is

namespace dialog::isd {

/// The live side of the web IS. A client sends criteria as JSON
/// ({"server": S, "regex": R, "type": T, "subtypes": bool}); it is answered {"event": "subscribed", …},
/// then one {"event": "value", …} per matching object, {"event": "synced"}, then every
/// {"event": "created|updated|removed", …} as it happens. A new criteria message replaces the
/// subscription. Objects of the local server come from its repository; those of other servers
/// through a dialog::is::Receiver.
///
/// A slow client never makes the server queue without bound: while a client's socket holds more
/// than highWater() bytes not yet written, its notifications are coalesced per object (the newest
/// one of each object is kept), so what it waits for is at most one message per matching object.
/// At most maxClients() clients are served; more are closed with code 4503 and a reason.
///
/// What one client may cost is bounded: a message is at most 64 KiB (a larger frame is refused at
/// its header, code 1009); criteria messages come at most 10 at once and one a second after that
/// (more: closed with code 4429); the first values of a subscription are matched within the scan
/// budget (ScanBudget; over it: an error message, no subscription); a subscription whose pattern
/// runs out of the match limit on a change is closed with code 4400.
class WebSocketHub : public QObject
{
    Q_OBJECT
public:
    /// @p repository and @p dictionary must outlive the hub. Lives in the repository writers' thread.
    WebSocketHub(is::Repository &repository, is::Dictionary *dictionary, int maxClients,
                 QObject *parent = nullptr);
    ~WebSocketHub() override;

    /// Takes ownership of @p socket (already connected, any path): serves it if its path is
    /// /is/ws and there is room, else closes it with a reason.
    void accept(QWebSocket *socket);
    int maxClients() const { return m_maxClients; }
    /// The server's history ring: a subscription to the local server with "history": "10m" gets
    /// each object's recent values ({"event":"history",…}) before its current value.
    void setHistory(const is::HistoryStore *history) { m_history = history; }
    /// How the "value" messages of this server's objects say whether they are stale.
    void setStaleness(std::function<is::Staleness(const is::StoredObject &)> staleness)
    {
        m_staleness = std::move(staleness);
    }
    static constexpr qint64 highWater() { return 1 << 20; }
    /// Milliseconds of matching a subscription's first values may take (ScanBudget); <= 0: no bound.
    void setScanBudget(int ms) { m_scanBudgetMs = ms; }

private:
    struct Client;
    /// Takes one criteria message from @p c's allowance; false (and the client closed) without one.
    bool takeToken(Client &c);
    void onMessage(Client &c, const QString &text);
    void subscribeLocal(Client &c);
    /// The scan of subscribeLocal() is done: sends its values (or @p refused) to @p socket's client
    /// if it still has subscription @p generation.
    void finishLocal(QWebSocket *socket, quint64 generation, const QString &refused,
                     const QList<is::StoredObject> &objects);
    void sendHistory(Client &c, const QString &objectName);
    void subscribeRemote(Client &c);
    void onChange(const is::Change &change);
    void onRemoteEvent(QWebSocket *socket, const is::Event &event);
    void enqueue(Client &c, const QString &key, const QByteArray &message);
    void flush(Client &c);
    void sendControl(Client &c, const QByteArray &message);
    void sendError(Client &c, const QString &error);
    void drop(QWebSocket *socket);

    is::Repository &m_repository;
    is::Dictionary *m_dictionary;
    int m_maxClients;
    int m_listener = 0;
    int m_scanBudgetMs = 2000;
    const is::HistoryStore *m_history = nullptr;
    std::function<is::Staleness(const is::StoredObject &)> m_staleness;
    QHash<QWebSocket *, std::shared_ptr<Client>> m_clients;
    QThreadPool m_scans; // the first values of local subscriptions (at most two at once)
};

} // namespace dialog::isd
