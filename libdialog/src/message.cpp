#include "dialog/message.h"
#include "dialog/request.h"

#include "client_p.h"

namespace dialog {

class MessagePrivate : public QSharedData
{
public:
    QByteArray service, data;
    quint64 sequence = 0;
};

class CommandPrivate : public QSharedData
{
public:
    QByteArray name, data, origin;
};

class ReplyPrivate : public QSharedData
{
public:
    quint64 id = 0;
    Status status{Status::Code::NotConnected};
    QByteArray data;
};

// ---------------------------------------------------------------- Message

Message::Message() : d(new MessagePrivate) {}
Message::Message(const QByteArray &service, const QByteArray &data, quint64 sequence) : d(new MessagePrivate)
{
    d->service = service;
    d->data = data;
    d->sequence = sequence;
}
Message::Message(const QByteArray &service, QByteArray &&data, quint64 sequence) : d(new MessagePrivate)
{
    d->service = service;
    d->data = std::move(data);
    d->sequence = sequence;
}
Message::Message(const Message &other) = default;
Message::Message(Message &&other) noexcept = default;
Message &Message::operator=(const Message &other) = default;
Message &Message::operator=(Message &&other) noexcept = default;
Message::~Message() = default;

void Message::takeInPlace(const QByteArray &service, net::Inbound &in)
{
    if (d.constData()->ref.loadRelaxed() != 1) { // a slot kept a copy: that one is left alone
        *this = Message(service, in.takeData(), in.sequence);
        return;
    }
    MessagePrivate *p = d.data(); // held by nobody else: no detach
    if (p->service.constData() != service.constData())
        p->service = service;
    p->sequence = in.sequence;
    // Data in the shared receive buffer is copied into the previous data's buffer when that one
    // is not shared (resize() reallocates then) and not much larger than needed; data with its
    // own buffer is taken over.
    constexpr qsizetype SmallCapacity = 4096;
    const qsizetype n = in.dataLength;
    if (in.chunk.isNull() || p->data.capacity() > qMax(SmallCapacity, 2 * n)) {
        p->data = in.takeData();
        return;
    }
    p->data.resize(n);
    std::memcpy(p->data.data(), in.chunk.constData() + in.dataOffset, size_t(n));
    in.chunk = QByteArray();
}

QString Message::service() const
{
    return QString::fromUtf8(d->service);
}
QByteArray Message::serviceName() const
{
    return d->service;
}
QByteArray Message::data() const
{
    return d->data;
}
quint64 Message::sequence() const
{
    return d->sequence;
}

// ---------------------------------------------------------------- Command

Command::Command() : d(new CommandPrivate) {}
Command::Command(const QByteArray &name, const QByteArray &data, const QByteArray &origin)
    : d(new CommandPrivate)
{
    d->name = name;
    d->data = data;
    d->origin = origin;
}
Command::Command(const Command &other) = default;
Command::Command(Command &&other) noexcept = default;
Command &Command::operator=(const Command &other) = default;
Command &Command::operator=(Command &&other) noexcept = default;
Command::~Command() = default;

QString Command::name() const
{
    return QString::fromUtf8(d->name);
}
QByteArray Command::data() const
{
    return d->data;
}
QString Command::origin() const
{
    return QString::fromUtf8(d->origin);
}

// ---------------------------------------------------------------- Request

Request::Request() : d(new RequestPrivate) {}
Request::Request(const Request &other) = default;
Request::Request(Request &&other) noexcept = default;
Request &Request::operator=(const Request &other) = default;
Request &Request::operator=(Request &&other) noexcept = default;
Request::~Request() = default;

QString Request::service() const
{
    return d->service;
}
QByteArray Request::data() const
{
    return d->data;
}
QString Request::origin() const
{
    return d->origin;
}
QString Request::originUser() const
{
    return d->originUser;
}
QString Request::originHost() const
{
    return d->originHost;
}
QString Request::originAddress() const
{
    return d->originAddress;
}
bool Request::originProven() const
{
    return d->originProven;
}
quint64 Request::id() const
{
    return d->id;
}

// ---------------------------------------------------------------- Reply

Reply::Reply() : d(new ReplyPrivate) {}
Reply::Reply(quint64 id, const Status &status, const QByteArray &data) : d(new ReplyPrivate)
{
    d->id = id;
    d->status = status;
    if (status.isOk())
        d->data = data;
}
Reply::Reply(const Reply &other) = default;
Reply::Reply(Reply &&other) noexcept = default;
Reply &Reply::operator=(const Reply &other) = default;
Reply &Reply::operator=(Reply &&other) noexcept = default;
Reply::~Reply() = default;

quint64 Reply::id() const
{
    return d->id;
}
Status Reply::status() const
{
    return d->status;
}
Status::Code Reply::error() const
{
    return d->status.code();
}
bool Reply::isOk() const
{
    return d->status.isOk();
}
QByteArray Reply::data() const
{
    return d->data;
}
QString Reply::errorString() const
{
    return d->status.message();
}

} // namespace dialog
