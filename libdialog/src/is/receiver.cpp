#include "dialog/is/receiver.h"

#include "dialog/client.h"
#include "dialog/handoff.h"
#include "dialog/is/codec.h"
#include "protocol_p.h"

#include <QHash>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMetaMethod>
#include <QPointer>
#include <atomic>

namespace dialog::is {

using namespace protocol;

QString Event::name() const
{
    return m_server + QLatin1Char('.') + QString::fromUtf8(objectNameUtf8());
}
QByteArrayView Event::objectNameUtf8() const
{
    return QByteArrayView(m_batch.constData() + m_nameOffset, m_nameLength);
}
QString Event::typeName() const
{
    return QString::fromUtf8(m_batch.constData() + m_typeOffset, m_typeLength);
}
QByteArrayView Event::encodedValue() const
{
    return QByteArrayView(m_batch.constData() + m_valueOffset, m_valueLength);
}
Status Event::object(Object *out) const
{
    if (!hasValue() || !m_types)
        return Status(Status::Code::NotFound, QStringLiteral("no value"));
    return decode(encodedValue(), *m_types, *out);
}

Object Event::object() const
{
    Object o;
    if (!object(&o).isOk())
        return Object();
    return o;
}

namespace {
std::atomic<int> nextChannel{1};
}

class ReceiverPrivate
{
public:
    struct Sub
    {
        QString server;
        Criteria criteria;
        bool withValues = true;
        bool snapshot = false;
        QString channel;
        QPointer<Subscription> attached;
        bool active = false;
    };
    struct ServerWatch
    {
        QPointer<Subscription> announce;
        QByteArray started; // the running server's start stamp; changes when it restarts
    };

    Receiver *q = nullptr;
    Dictionary *dictionary = nullptr;
    QHash<int, Sub> subs;
    QHash<QString, ServerWatch> servers;
    std::function<void(const Event &)> callback;
    quint64 received = 0, dropped = 0;
    int nextId = 1;
    QString archiveService;
    qint64 historyUs = 0;

    int add(const QString &server, const Criteria &criteria, bool withValues, bool snapshot);
    void watch(const QString &server);
    void sendSubscribe(int id);
    void setActive(int id, const Status &status);
    void onMessage(int id, const Message &m);
};

void ReceiverPrivate::setActive(int id, const Status &status)
{
    auto it = subs.find(id);
    if (it == subs.end())
        return;
    const bool active = status.isOk();
    if (it->active == active && active)
        return;
    it->active = active;
    Q_EMIT q->subscriptionChanged(id, status);
}

void ReceiverPrivate::watch(const QString &server)
{
    ServerWatch &w = servers[server];
    if (w.announce)
        return;
    Client *client = dictionary->client();
    w.announce = client->subscribe(serviceName(server));
    if (!w.announce)
        return;
    QObject::connect(w.announce, &Subscription::messageReceived, q, [this, server](const Message &m) {
        // The server announces itself with its start stamp: a new stamp is a new server, which
        // knows nothing of our subscriptions.
        const QByteArray started =
            QJsonDocument::fromJson(m.data()).object().value(QLatin1String("started")).toVariant().toByteArray();
        ServerWatch &sw = servers[server];
        if (started == sw.started)
            return;
        sw.started = started;
        for (auto it = subs.cbegin(); it != subs.cend(); ++it)
            if (it->server == server)
                sendSubscribe(it.key());
    });
    QObject::connect(w.announce, &Subscription::stateChanged, q, [this, server](Subscription::State st) {
        if (st != Subscription::State::Lost)
            return;
        servers[server].started.clear();
        QList<int> ids;
        for (auto it = subs.cbegin(); it != subs.cend(); ++it)
            if (it->server == server)
                ids << it.key();
        for (int id : std::as_const(ids))
            setActive(id, Status(Status::Code::Broken, QStringLiteral("IS server %1 was lost; waiting for it").arg(server)));
    });
}

void ReceiverPrivate::sendSubscribe(int id)
{
    const auto it = subs.constFind(id);
    if (it == subs.cend())
        return;
    const QString server = it->server;
    QPointer<Receiver> guard(q);
    dictionary->fetchTypes(server, [this, guard, id, server](const Status &ts) {
        if (!guard || !subs.contains(id))
            return;
        if (!ts.isOk()) {
            setActive(id, ts);
            return;
        }
        const Sub &s = subs[id];
        isproto::Request r;
        r.set_op(isproto::Request::SUBSCRIBE);
        r.set_channel(s.channel.toStdString());
        r.set_with_values(s.withValues);
        r.set_snapshot(s.snapshot);
        r.set_archive_service(archiveService.toStdString());
        r.set_history_us(historyUs);
        toProto(s.criteria, r.mutable_criteria());
        dictionary->client()->request(
            serviceName(server), serialize(r), dictionary->timeout(), q, [this, id](const Reply &reply) {
                if (!subs.contains(id))
                    return;
                isproto::Reply rep;
                if (!reply.isOk()) {
                    setActive(id, reply.status());
                    return;
                }
                const QByteArray data = reply.data();
                rep.ParseFromArray(data.constData(), int(data.size()));
                const Status st = statusFromReply(rep);
                setActive(id, st);
            });
    });
}

void ReceiverPrivate::onMessage(int id, const Message &m)
{
    const auto it = subs.constFind(id);
    if (it == subs.cend())
        return;
    const QByteArray batch = m.data();
    const bool signal = q->isSignalConnected(QMetaMethod::fromSignal(&Receiver::changed));
    Event e;
    e.m_batch = batch;
    e.m_server = it->server;
    e.m_types = dictionary->sharedTypes();
    e.m_subscription = id;
    qsizetype pos = 0;
    RecordView r;
    Status read;
    QByteArrayView lastType;
    const QPointer<Receiver> guard(q);
    while (pos < batch.size() && (read = nextRecord(batch, pos, r)).isOk()) {
        if (r.kind == Dropped) {
            dropped += quint64(r.timeUs);
            continue;
        }
        if (r.kind == SnapshotBegin || r.kind == SnapshotEnd)
            e.m_kind = r.kind == SnapshotBegin ? Event::Kind::SnapshotBegin : Event::Kind::SnapshotEnd;
        else if (r.kind == protocol::HistoryRecord)
            e.m_kind = Event::Kind::History;
        else if (r.kind <= Removed)
            e.m_kind = Event::Kind(r.kind);
        else
            continue;
        e.m_timeUs = r.timeUs;
        e.m_nameOffset = r.nameOffset;
        e.m_nameLength = r.nameLength;
        e.m_typeOffset = r.typeOffset;
        e.m_typeLength = r.typeLength;
        e.m_valueOffset = r.valueOffset;
        e.m_valueLength = r.valueLength;
        const QByteArrayView type(batch.constData() + r.typeOffset, r.typeLength);
        if (type != lastType) {
            lastType = type;
            if (r.valueLength > 0 && !dictionary->types().contains(QString::fromUtf8(type)))
                dictionary->fetchTypes(it->server, [](const Status &) {}); // a type declared meanwhile
        }
        ++received;
        if (callback)
            callback(e);
        if (signal)
            Q_EMIT q->changed(e);
        if (!guard || !subs.contains(id))
            return; // unsubscribed or deleted from a slot
    }
    if (!read.isOk())
        qWarning("IS receiver: %s", qPrintable(read.message()));
}

Receiver::Receiver(Dictionary *dictionary, QObject *parent) : QObject(parent), d(std::make_unique<ReceiverPrivate>())
{
    qRegisterMetaType<dialog::is::Event>();
    d->q = this;
    d->dictionary = dictionary;
}

Receiver::~Receiver()
{
    const QList<int> ids = d->subs.keys();
    for (int id : ids)
        unsubscribe(id);
    for (const auto &w : std::as_const(d->servers))
        if (w.announce)
            d->dictionary->client()->unsubscribe(w.announce);
}

int Receiver::subscribe(const QString &server, const Criteria &criteria, bool withValues)
{
    return d->add(server, criteria, withValues, false);
}

int Receiver::subscribeWithSnapshot(const QString &server, const Criteria &criteria, bool withValues)
{
    return d->add(server, criteria, withValues, true);
}

int ReceiverPrivate::add(const QString &server, const Criteria &criteria, bool withValues, bool snapshot)
{
    const int id = nextId++;
    Sub s;
    s.server = server;
    s.criteria = criteria;
    s.withValues = withValues;
    s.snapshot = snapshot;
    Client *client = dictionary->client();
    s.channel = QStringLiteral("IS.sub/%1/%2").arg(client->name()).arg(nextChannel.fetch_add(1));
    s.attached = client->attach(s.channel);
    subs.insert(id, s);
    if (!s.attached || !criteria.isValid()) {
        const Status why = criteria.isValid()
                               ? Status(Status::Code::InvalidName, QStringLiteral("invalid subscription"))
                               : Status(Status::Code::BadRequest, criteria.errorString());
        QMetaObject::invokeMethod(q, handoff::handOff([this, id, why] { setActive(id, why); }),
                                  Qt::QueuedConnection);
        return id;
    }
    QObject::connect(s.attached, &Subscription::messageReceived, q, [this, id](const Message &m) { onMessage(id, m); });
    watch(server);
    // If the server is already announced, subscribe now; otherwise its announcement will.
    if (!servers.value(server).started.isEmpty())
        sendSubscribe(id);
    return id;
}

void Receiver::unsubscribe(int id)
{
    const auto it = d->subs.find(id);
    if (it == d->subs.end())
        return;
    const ReceiverPrivate::Sub s = it.value();
    d->subs.erase(it);
    if (s.attached)
        d->dictionary->client()->unsubscribe(s.attached);
    isproto::Request r;
    r.set_op(isproto::Request::UNSUBSCRIBE);
    r.set_channel(s.channel.toStdString());
    d->dictionary->client()->request(serviceName(s.server), serialize(r), d->dictionary->timeout(), nullptr,
                                     [](const Reply &) {});
}

bool Receiver::isActive(int id) const
{
    return d->subs.value(id).active;
}
void Receiver::setCallback(std::function<void(const Event &)> callback)
{
    d->callback = std::move(callback);
}
quint64 Receiver::receivedCount() const
{
    return d->received;
}
quint64 Receiver::droppedCount() const
{
    return d->dropped;
}

void Receiver::setArchiveService(const QString &service)
{
    d->archiveService = service;
}

void Receiver::setHistoryFirst(int seconds)
{
    d->historyUs = qint64(qMax(0, seconds)) * 1000000;
}

History Event::history() const
{
    if (m_kind != Kind::History)
        return {};
    isproto::Reply reply;
    const QByteArrayView v = encodedValue();
    if (!reply.ParseFromArray(v.data(), int(v.size())))
        return {};
    History h = historyFromProto(reply);
    h.name = name();
    return h;
}

} // namespace dialog::is
