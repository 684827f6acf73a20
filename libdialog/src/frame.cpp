#include "frame_p.h"

#include <QtEndian>
#include <cstring>

namespace dialog::wire_format {

const char *typeName(Type t)
{
    switch (t) {
    case Type::Hello:
        return "HELLO";
    case Type::ConnectToControlServer:
        return "CONNECT_TO_CONTROL_SERVER";
    case Type::SuccessfullyConnected:
        return "SUCCESSFULLY_CONNECTED";
    case Type::Heartbeat:
        return "HEARTBEAT";
    case Type::RegisterService:
        return "REGISTER_SERVICE";
    case Type::UnregisterService:
        return "UNREGISTER_SERVICE";
    case Type::RequestService:
        return "REQUEST_SERVICE";
    case Type::CancelRequest:
        return "CANCEL_REQUEST";
    case Type::InfoService:
        return "INFO_SERVICE";
    case Type::SubscribeService:
        return "SUBSCRIBE_SERVICE";
    case Type::UnsubscribeService:
        return "UNSUBSCRIBE_SERVICE";
    case Type::ServiceMessage:
        return "SERVICE_MESSAGE";
    case Type::RegisterCommand:
        return "REGISTER_COMMAND";
    case Type::UnregisterCommand:
        return "UNREGISTER_COMMAND";
    case Type::CommandMessage:
        return "COMMAND_MESSAGE";
    case Type::ConnectionLost:
        return "CONNECTION_LOST";
    case Type::LostSender:
        return "LOST_SENDER";
    case Type::LostReceiver:
        return "LOST_RECEIVER";
    case Type::Refused:
        return "REFUSED";
    case Type::Disconnect:
        return "DISCONNECT";
    case Type::Request:
        return "REQUEST";
    case Type::Reply:
        return "REPLY";
    }
    return "UNKNOWN";
}

void appendHeader(QByteArray &out, Type type, quint8 flags, quint32 payloadLength)
{
    char h[HeaderSize];
    qToLittleEndian<quint16>(Magic, h);
    h[2] = char(Version);
    h[3] = char(type);
    h[4] = char(flags);
    h[5] = 0;
    h[6] = 0;
    h[7] = 0;
    qToLittleEndian<quint32>(payloadLength, h + 8);
    out.append(h, HeaderSize);
}

void appendFrame(QByteArray &out, Type type, quint8 flags, QByteArrayView payload)
{
    appendHeader(out, type, flags, quint32(payload.size()));
    out.append(payload.data(), payload.size());
}

QByteArray encodeFrame(Type type, quint8 flags, QByteArrayView payload)
{
    QByteArray out;
    out.reserve(HeaderSize + payload.size());
    appendFrame(out, type, flags, payload);
    return out;
}

bool FrameDecoder::fail(Error e, const QString &why)
{
    m_error = e;
    m_errorString = why;
    m_buffer.clear();
    return false;
}

bool FrameDecoder::parseHeader(const char *p, Frame &f, quint32 &len)
{
    const quint16 magic = qFromLittleEndian<quint16>(p);
    if (magic != Magic)
        return fail(Error::BadMagic, QStringLiteral("bad magic 0x%1").arg(magic, 4, 16, QLatin1Char('0')));
    const quint8 version = quint8(p[2]);
    if (version != Version)
        return fail(Error::BadVersion, QStringLiteral("unsupported protocol version %1").arg(version));
    const quint8 type = quint8(p[3]);
    if (type == 0 || type > MaxType)
        return fail(Error::UnknownType, QStringLiteral("unknown message type %1").arg(type));
    const quint8 flags = quint8(p[4]);
    if ((flags & ~KnownFlags) || p[5] || p[6] || p[7])
        return fail(Error::BadFlags,
                    QStringLiteral("unknown flags 0x%1").arg(flags, 2, 16, QLatin1Char('0')));
    len = qFromLittleEndian<quint32>(p + 8);
    if (qint64(len) > m_maxPayload)
        return fail(Error::TooLarge,
                    QStringLiteral("frame of %1 bytes exceeds the maximum of %2").arg(len).arg(m_maxPayload));
    f.type = Type(type);
    f.flags = flags;
    return true;
}

void FrameDecoder::keepTail(const char *base, qint64 pos, qint64 size, bool fromBuffer)
{
    if (pos >= size) {
        m_buffer.clear();
        return;
    }
    if (fromBuffer)
        m_buffer.remove(0, pos);
    else
        m_buffer = QByteArray(base + pos, size - pos); // deep copy: the input may be a raw view
    // Reserve the whole frame once its length is known, so large frames grow without reallocations.
    const qint64 remaining = pendingFrameRemaining();
    if (remaining > 0)
        m_buffer.reserve(m_buffer.size() + remaining);
}

qint64 FrameDecoder::pendingFrameRemaining() const
{
    if (m_buffer.size() < HeaderSize)
        return 0;
    const quint32 len = qFromLittleEndian<quint32>(m_buffer.constData() + 8);
    return qint64(HeaderSize) + len - m_buffer.size();
}

bool FrameDecoder::feed(const QByteArray &data, QList<Frame> &out)
{
    return feedView(data, [&out](Type type, quint8 flags, QByteArrayView payload) {
        out.append(Frame{type, flags, payload.toByteArray()});
        return true;
    });
}

} // namespace dialog::wire_format
