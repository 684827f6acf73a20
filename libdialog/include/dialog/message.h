#pragma once

#include <QByteArray>
#include <QMetaType>
#include <QSharedDataPointer>
#include <QString>

namespace dialog {

class MessagePrivate;
class CommandPrivate;
class SubscriptionPrivate;
namespace net {
struct Inbound;
}

/// One update of a service as a subscriber receives it. Implicitly shared: copies are cheap and
/// may cross threads and queued signals (the data itself is a shared QByteArray).
class Message
{
public:
    Message();
    /// A message of @p service with @p data and the provider's @p sequence number.
    Message(const QByteArray &service, const QByteArray &data, quint64 sequence);
    /// The same, taking over @p data (no reference count round trip per message).
    Message(const QByteArray &service, QByteArray &&data, quint64 sequence);
    ///@{
    /// Copies and moves share the data (implicit sharing).
    Message(const Message &other);
    Message(Message &&other) noexcept;
    Message &operator=(const Message &other);
    Message &operator=(Message &&other) noexcept;
    ///@}
    ~Message();

    /// The service the message is an update of.
    QString service() const;
    /// The service name as received (UTF-8), without conversion.
    QByteArray serviceName() const;
    /// The update's bytes, as the provider published them (decompressed).
    QByteArray data() const;
    /// Per-service counter set by the provider (1 = first update of this provider incarnation).
    quint64 sequence() const;

private:
    friend class SubscriptionPrivate;
    /// Becomes the message in @p in, reusing this one's storage when nothing else holds it.
    void takeInPlace(const QByteArray &service, net::Inbound &in);
    QSharedDataPointer<MessagePrivate> d;
};

/// A command as its registrant receives it. Implicitly shared, like Message.
class Command
{
public:
    Command();
    /// A command @p name with @p data, sent by the process @p origin.
    Command(const QByteArray &name, const QByteArray &data, const QByteArray &origin);
    ///@{
    /// Copies and moves share the data (implicit sharing).
    Command(const Command &other);
    Command(Command &&other) noexcept;
    Command &operator=(const Command &other);
    Command &operator=(Command &&other) noexcept;
    ///@}
    ~Command();

    /// The command's name.
    QString name() const;
    /// The bytes sent with the command.
    QByteArray data() const;
    /// Name of the process that sent the command.
    QString origin() const;

private:
    QSharedDataPointer<CommandPrivate> d;
};

} // namespace dialog

Q_DECLARE_METATYPE(dialog::Message)
Q_DECLARE_METATYPE(dialog::Command)
