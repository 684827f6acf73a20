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
    case Type::Auth:
        return "AUTH";
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

} // namespace dialog::wire_format
