#include "websockethub.h"

#include "scanbudget.h"
#include "websocketprotocol.h"

#include "dialog/handoff.h"
#include "dialog/is/codec.h"
#include "dialog/is/dictionary.h"
#include "dialog/is/receiver.h"
#include "dialog/is/typeregistry.h"

#include <QElapsedTimer>
#include <QLoggingCategory>
#include <QPointer>
#include <QThread>
#include <QWebSocket>
#include <utility>

Q_LOGGING_CATEGORY(lcWebSocket, "dialog.is.web.ws")

namespace dialog::isd {

namespace {
constexpr qint64 MaxIncomingMessage = 64 * 1024;
// Criteria messages: each one re-reads and re-sends every matching object, so their rate is bounded
// per client: a burst of CriteriaBurst, then one per CriteriaRefillMs.
constexpr int CriteriaBurst = 10;
constexpr int CriteriaRefillMs = 1000;
// Application close codes, as the HTTP status they resemble.
constexpr int CloseTooManyMessages = 4429;
constexpr int CloseTooExpensive = 4400;
const QString SyncedKey = QStringLiteral("\x01synced"); // not a valid object name: never coalesced with one

} // namespace

struct WebSocketHub::Client
{
    QWebSocket *socket = nullptr;
    bool subscribed = false;
    bool remote = false;
    QString server;
    is::Criteria criteria;
    qint64 historyUs = 0; // "history": the recent values of each object are sent first
    std::unique_ptr<is::Receiver> receiver;
    QStringList order;                  // keys of pending, oldest first
    QHash<QString, QByteArray> pending; // key (object name) -> newest message not yet sent
    quint64 coalesced = 0;
    double tokens = CriteriaBurst; // criteria messages it may send now
    QElapsedTimer refill;          // since tokens was last topped up
    bool syncing = false;          // its first values are being matched: changes wait in pending
    quint64 generation = 0;        // of its subscription: a scan for an older one is dropped
};

WebSocketHub::WebSocketHub(is::Repository &repository, is::Dictionary *dictionary, int maxClients,
                           QObject *parent)
    : QObject(parent), m_repository(repository), m_dictionary(dictionary), m_maxClients(maxClients)
{
    m_scans.setMaxThreadCount(2);
    m_listener = m_repository.addListener([this](const is::Change &c) {
        if (QThread::currentThread() == thread())
            onChange(c);
        else
            QMetaObject::invokeMethod(this, handoff::handOff([this, c] { onChange(c); }),
                                      Qt::QueuedConnection);
    });
}

WebSocketHub::~WebSocketHub()
{
    handoff::waitForDone(m_scans); // their answers, posted to this object, are dropped with it
    m_repository.removeListener(m_listener);
    const auto sockets = m_clients.keys();
    for (QWebSocket *s : sockets) {
        s->disconnect(this);
        s->close(QWebSocketProtocol::CloseCodeGoingAway, QStringLiteral("the IS server is stopping"));
        delete s;
    }
}

void WebSocketHub::accept(QWebSocket *socket)
{
    const QString path = socket->requestUrl().path();
    if (path != QLatin1String("/is/ws")) {
        qCInfo(lcWebSocket) << "WebSocket refused from" << socket->peerAddress().toString() << "path" << path;
        socket->close(QWebSocketProtocol::CloseCodePolicyViolated,
                      QStringLiteral("no WebSocket endpoint at %1 (use /is/ws)").arg(path.left(100)));
        connect(socket, &QWebSocket::disconnected, socket, &QObject::deleteLater);
        return;
    }
    if (m_clients.size() >= m_maxClients) {
        qCInfo(lcWebSocket) << "WebSocket refused from" << socket->peerAddress().toString() << ": limit"
                            << m_maxClients << "reached";
        // 4503: an application code ("as HTTP 503"); 1013 "try again later" would suit too, but Qt's
        // own WebSocket client rejects it as a protocol error.
        socket->close(
            QWebSocketProtocol::CloseCode(4503),
            QStringLiteral("too many WebSocket clients (limit %1), try again later").arg(m_maxClients));
        connect(socket, &QWebSocket::disconnected, socket, &QObject::deleteLater);
        return;
    }
    auto c = std::make_shared<Client>();
    c->socket = socket;
    socket->setParent(this);
    socket->setMaxAllowedIncomingMessageSize(MaxIncomingMessage);
    // A frame is refused at its header, not buffered up to its announced length.
    socket->setMaxAllowedIncomingFrameSize(MaxIncomingMessage);
    c->refill.start();
    m_clients.insert(socket, c);
    connect(socket, &QWebSocket::textMessageReceived, this, [this, socket](const QString &text) {
        if (auto c = m_clients.value(socket))
            onMessage(*c, text);
    });
    connect(socket, &QWebSocket::binaryMessageReceived, this, [this, socket](const QByteArray &) {
        if (auto c = m_clients.value(socket); c && takeToken(*c))
            sendError(*c, QStringLiteral("binary messages are not understood; send JSON criteria as text"));
    });
    connect(socket, &QWebSocket::bytesWritten, this, [this, socket](qint64) {
        if (auto c = m_clients.value(socket))
            flush(*c);
    });
    connect(socket, &QWebSocket::disconnected, this, [this, socket] { drop(socket); });
}

void WebSocketHub::drop(QWebSocket *socket)
{
    if (m_clients.remove(socket))
        socket->deleteLater();
}

bool WebSocketHub::takeToken(Client &c)
{
    c.tokens = qMin<double>(CriteriaBurst, c.tokens + double(c.refill.restart()) / CriteriaRefillMs);
    if (c.tokens >= 1) {
        c.tokens -= 1;
        return true;
    }
    qCInfo(lcWebSocket).noquote() << "WebSocket from" << c.socket->peerAddress().toString()
                                  << "closed: too many criteria messages";
    c.socket->close(QWebSocketProtocol::CloseCode(CloseTooManyMessages),
                    QStringLiteral("too many criteria messages: at most %1 at once, then one per %2 ms")
                        .arg(CriteriaBurst)
                        .arg(CriteriaRefillMs));
    return false;
}

void WebSocketHub::onMessage(Client &c, const QString &text)
{
    if (!takeToken(c))
        return;
    QString error;
    const std::optional<ws::Subscription> sub =
        ws::parseSubscription(text, m_repository.serverName(), m_repository.registry(), &error);
    if (!sub) {
        sendError(c, error);
        return;
    }
    // A new subscription replaces the previous one and whatever it had not sent yet.
    c.receiver.reset();
    c.order.clear();
    c.pending.clear();
    c.subscribed = true;
    c.remote = sub->remote;
    c.server = sub->server;
    c.criteria = sub->criteria;
    c.historyUs = sub->historyUs;
    if (c.remote)
        subscribeRemote(c);
    else
        subscribeLocal(c);
}

void WebSocketHub::subscribeLocal(Client &c)
{
    // Matched in a scan thread on a snapshot, within the scan budget: a costly pattern stops neither
    // the server's main thread nor its writers. Changes meanwhile wait in the client's queue.
    c.syncing = true;
    const quint64 generation = ++c.generation;
    QPointer<QWebSocket> socket(c.socket);
    handoff::startIn(m_scans, [this, socket, generation, criteria = c.criteria, budgetMs = m_scanBudgetMs] {
        ScanBudget budget(budgetMs);
        bool complete = true;
        QList<is::StoredObject> objects = m_repository.objects(criteria, budget.check(criteria), &complete);
        const QString refused = budget.refused(criteria, complete) ? budget.errorString() : QString();
        handoff::post(this, [this, socket, generation, refused, objects = std::move(objects)] {
            if (socket)
                finishLocal(socket, generation, refused, objects);
        });
    });
}

void WebSocketHub::finishLocal(QWebSocket *socket, quint64 generation, const QString &refused,
                               const QList<is::StoredObject> &objects)
{
    auto client = m_clients.value(socket);
    if (!client || client->generation != generation)
        return; // gone, or subscribed anew since
    Client &c = *client;
    // The changes that came during the scan are newer than its values: they go after "synced".
    QStringList heldOrder = std::exchange(c.order, {});
    QHash<QString, QByteArray> held = std::exchange(c.pending, {});
    c.syncing = false;
    if (!refused.isEmpty()) {
        c.subscribed = false;
        sendError(c, refused);
        return;
    }
    sendControl(c, ws::subscribedMessage(c.server, c.criteria, objects.size()));
    const QString prefix = c.server + QLatin1Char('.');
    for (const is::StoredObject &o : objects) {
        if (held.contains(o.name))
            continue; // a newer state of it is held
        if (c.historyUs > 0)
            sendHistory(c, o.name);
        // The current value says whether it is stale; an update is a write, so never stale.
        const is::Staleness st = m_staleness ? m_staleness(o) : is::Staleness();
        enqueue(c, o.name,
                ws::eventMessage("value", prefix + o.name, o.object.typeName(), o.time, o.object,
                                 m_staleness ? &st : nullptr));
    }
    enqueue(c, SyncedKey, ws::syncedMessage());
    for (const QString &key : std::as_const(heldOrder))
        enqueue(c, key, held.value(key));
}

void WebSocketHub::sendHistory(Client &c, const QString &objectName)
{
    // {"event":"history","name":…,"type":…,"series":[{"attribute":…,"points":[[ms,value],…]}]}, at
    // most 600 points per attribute ([ms, mean, min, max, count] for a bucket of several values).
    if (!m_history)
        return;
    is::History h;
    const is::Time now = is::Time::currentTime();
    if (!m_history->query(objectName, {}, is::Time(now.microsecondsSinceEpoch() - c.historyUs), now, 600, &h)
             .isOk())
        return;
    // Its own key: never coalesced with the object's values.
    enqueue(c, QStringLiteral("\x02history ") + objectName,
            ws::historyMessage(c.server + QLatin1Char('.') + objectName, h));
}

void WebSocketHub::subscribeRemote(Client &c)
{
    c.receiver = std::make_unique<is::Receiver>(m_dictionary);
    QPointer<QWebSocket> socket(c.socket);
    c.receiver->setCallback([this, socket](const is::Event &e) {
        if (socket)
            onRemoteEvent(socket, e);
    });
    connect(c.receiver.get(), &is::Receiver::subscriptionChanged, this,
            [this, socket](int, const Status &status) {
                auto c = m_clients.value(socket);
                if (!c)
                    return;
                if (!status.isOk())
                    sendError(*c, QStringLiteral("subscription to %1: %2").arg(c->server, status.toString()));
            });
    c.receiver->subscribeWithSnapshot(c.server, c.criteria, true);
    sendControl(c, ws::subscribedMessage(c.server, c.criteria));
}

void WebSocketHub::onRemoteEvent(QWebSocket *socket, const is::Event &e)
{
    auto c = m_clients.value(socket);
    if (!c || !c->remote)
        return;
    switch (e.kind()) {
    case is::Event::Kind::SnapshotBegin:
        return;
    case is::Event::Kind::SnapshotEnd:
        enqueue(*c, SyncedKey, ws::syncedMessage());
        return;
    default:
        break;
    }
    const is::Object value = e.kind() == is::Event::Kind::Removed ? is::Object() : e.object();
    const char *kind = e.kind() == is::Event::Kind::Created   ? "created"
                       : e.kind() == is::Event::Kind::Removed ? "removed"
                                                              : "updated";
    const QString name = e.name();
    enqueue(*c, name, ws::eventMessage(kind, name, e.typeName(), e.time(), value));
}

void WebSocketHub::onChange(const is::Change &change)
{
    QByteArray message; // built once, for the first interested client
    const QString fullName = m_repository.serverName() + QLatin1Char('.') + change.name;
    QList<QWebSocket *> tooExpensive;
    for (const auto &c : std::as_const(m_clients)) {
        if (!c->subscribed || c->remote)
            continue;
        const bool match = c->criteria.matches(change.name, change.typeName, m_repository.registry());
        if (c->criteria.exhausted()) {
            // It would cost the whole match limit on every change from now on.
            c->subscribed = false;
            tooExpensive.append(c->socket);
            continue;
        }
        if (!match)
            continue;
        if (message.isEmpty())
            message = ws::eventMessage(ws::kindName(change.kind), fullName, change.typeName, change.time,
                                       change.object);
        enqueue(*c, change.name, message);
    }
    for (QWebSocket *socket : std::as_const(tooExpensive)) {
        qCInfo(lcWebSocket).noquote() << "WebSocket from" << socket->peerAddress().toString()
                                      << "closed: its pattern ran out of the match limit";
        socket->close(QWebSocketProtocol::CloseCode(CloseTooExpensive),
                      QStringLiteral("pattern too expensive: matching an object name ran out of the match "
                                     "limit; subscribe with a simpler pattern"));
    }
}

void WebSocketHub::enqueue(Client &c, const QString &key, const QByteArray &message)
{
    if (!c.syncing && c.pending.isEmpty() && c.socket->bytesToWrite() < highWater()) {
        c.socket->sendTextMessage(QString::fromUtf8(message));
        return;
    }
    auto it = c.pending.find(key);
    if (it != c.pending.end()) {
        *it = message; // the client only needs the newest state of the object
        ++c.coalesced;
        return;
    }
    c.order.append(key);
    c.pending.insert(key, message);
}

void WebSocketHub::flush(Client &c)
{
    if (c.syncing)
        return;
    while (!c.order.isEmpty() && c.socket->bytesToWrite() < highWater())
        c.socket->sendTextMessage(QString::fromUtf8(c.pending.take(c.order.takeFirst())));
}

void WebSocketHub::sendControl(Client &c, const QByteArray &message)
{
    c.socket->sendTextMessage(QString::fromUtf8(message));
}

void WebSocketHub::sendError(Client &c, const QString &error)
{
    sendControl(c, ws::errorMessage(error));
}

} // namespace dialog::isd
