#pragma once

#include "dialog/is/criteria.h"
#include "dialog/is/dictionary.h"

#include <QObject>
#include <functional>
#include <memory>

namespace dialog::is {

class ReceiverPrivate;

/// One change of an IS object, as received by a subscriber. Cheap to copy (it shares the received
/// batch and the type registry of its Dictionary, so it stays valid through queued signals and
/// after the Receiver and the Dictionary are gone); name(), typeName() and object() decode on demand.
class Event
{
public:
    /// What happened to the object (or where a snapshot or a history stands).
    enum class Kind : quint8
    {
        Created = 0,
        Updated = 1,
        Removed = 2,
        /// Only for subscriptions made with subscribeWithSnapshot(): the server's matching objects
        /// follow (as Created events), up to SnapshotEnd; what the receiver holds and was not among
        /// them no longer exists. Sent when the subscription is made and again whenever it is made
        /// again (the server restarted). No name, type or value.
        SnapshotBegin = 3,
        SnapshotEnd = 4,
        /// Only for subscriptions made after Receiver::setHistoryFirst(): the recent values of one
        /// matching object (history()), sent before anything else of the subscription.
        History = 5,
    };
    Event() = default;
    /// Created, Updated, Removed, or a snapshot's or a history's marker.
    Kind kind() const { return m_kind; }
    /// Full name "Server.Object".
    QString name() const;
    /// The object name without the server prefix, UTF-8, valid while the Event lives.
    QByteArrayView objectNameUtf8() const;
    /// The IS server the event comes from.
    QString server() const { return m_server; }
    /// The object's type (empty for removals and markers).
    QString typeName() const;
    /// The time of the change (the object's new last-update time).
    Time time() const { return Time(m_timeUs); }
    /// False for removals and for subscriptions made without values.
    bool hasValue() const { return m_valueLength > 0; }
    /// The value decoded with the receiver's types into @p out. Status::Code::NotFound for an event
    /// without value (hasValue() false), else the code of is::decode() (InvalidObject, UnknownType)
    /// when it does not decode.
    Status object(Object *out) const;
    /// The value decoded with the receiver's types; an invalid Object where object(Object *) fails.
    Object object() const;
    /// The encoded value (dialog::is::encode()).
    QByteArrayView encodedValue() const;
    /// For a History event, the object's recent values (empty otherwise).
    dialog::is::History history() const;
    /// Id of the subscription (Receiver::subscribe) that delivered the event.
    int subscription() const { return m_subscription; }

private:
    friend class ReceiverPrivate;
    QByteArray m_batch;
    QString m_server;
    std::shared_ptr<const TypeRegistry> m_types;
    qint64 m_timeUs = 0;
    qint32 m_nameOffset = 0, m_typeOffset = 0, m_valueOffset = 0;
    quint16 m_nameLength = 0, m_typeLength = 0;
    qint32 m_valueLength = 0;
    int m_subscription = 0;
    Kind m_kind = Kind::Created;
};

/// Subscriptions to IS servers (ATLAS IS receiver): tells of every creation, update and removal
/// of the objects matching criteria, with the value or only the name. Subscriptions survive
/// restarts of the server and of the Control Server (they are made again when the server is back).
/// Events arrive in this object's thread, in the order the server applied the changes.
class Receiver : public QObject
{
    Q_OBJECT
public:
    /// @p dictionary (for types and requests) must outlive the receiver.
    explicit Receiver(Dictionary *dictionary, QObject *parent = nullptr);
    ~Receiver() override;

    /// Subscribes to the objects of @p server matching @p criteria. Returns the subscription id
    /// (> 0). The subscription becomes active asynchronously (subscriptionChanged).
    int subscribe(const QString &server, const Criteria &criteria, bool withValues = true);
    /// As subscribe(), but every time the subscription is made (first, and after a restart of the
    /// server) the server first sends its matching objects, framed by SnapshotBegin and SnapshotEnd
    /// events, then every change: enough to hold an exact copy (IS mirrors).
    int subscribeWithSnapshot(const QString &server, const Criteria &criteria, bool withValues = true);
    /// Ends the subscription @p id (what subscribe() or subscribeWithSnapshot() returned).
    void unsubscribe(int id);
    /// True while the subscription @p id exists.
    bool isActive(int id) const;
    /// For an archiver (dialog-archiver): subscriptions made after this call tell the server that
    /// this process archives its changes and answers HISTORY requests (as the server does) on
    /// @p service; the server then sends history queries reaching beyond its ring there.
    void setArchiveService(const QString &service);
    /// Subscriptions made after this call first receive, for every matching object, a History
    /// event with its last @p seconds of values (from the server's ring), each time they are made
    /// (also after a server restart); 0 turns it off.
    void setHistoryFirst(int seconds);
    /// Called for every event, before changed() is emitted (cheaper than a signal at high rates).
    void setCallback(std::function<void(const Event &)> callback);
    /// Events delivered so far, all subscriptions together.
    quint64 receivedCount() const;
    /// Events the server dropped for these subscriptions because they were not read fast enough
    /// (as the server reported them; the newest value of each object is sent again afterwards).
    quint64 droppedCount() const;

Q_SIGNALS:
    /// Emitted in the receiver's thread once per event, in the order the server applied the
    /// changes (after the callback, if one is set).
    void changed(const dialog::is::Event &event);
    /// Emitted in the receiver's thread each time subscription @p id becomes active (@p status ok) or
    /// inactive (it is retried): the server's refusal with its code (BadRequest for criteria it does
    /// not take, UnknownType, …), the request's failure (Timeout, NotConnected, …), or
    /// Status::Code::Broken when the server was lost.
    void subscriptionChanged(int id, const dialog::Status &status);

private:
    friend class ReceiverPrivate;
    std::unique_ptr<ReceiverPrivate> const d;
};

} // namespace dialog::is

Q_DECLARE_METATYPE(dialog::is::Event)
