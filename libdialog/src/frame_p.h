// Frame codec: a fixed 12-byte header followed by the payload. Never touches a socket.
#pragma once

#include <QByteArray>
#include <QByteArrayView>
#include <QString>
#include <cstdint>

namespace dialog::wire_format {

// Header layout (little endian):
//   0  u16 magic (0xD1A1)
//   2  u8  protocol version
//   3  u8  message type
//   4  u8  flags
//   5  u8  reserved, must be 0
//   6  u16 reserved, must be 0
//   8  u32 payload length
constexpr quint16 Magic = 0xD1A1;
constexpr quint8 Version = 1;
constexpr int HeaderSize = 12;
/// Largest service or command data accepted by default (the payload limit adds room for names).
constexpr qint64 DefaultMaxMessageSize = 64 * 1024 * 1024;
constexpr qint64 NameOverhead = 4096;
/// Largest payload accepted on an inbound connection before its HELLO (and, with a shared secret,
/// its AUTH) has been accepted: an unauthenticated peer never makes the receiver allocate more.
constexpr qint64 MaxPreAuthPayload = 4 * 1024;

enum class Type : quint8
{
    Hello = 1,
    ConnectToControlServer = 2,
    SuccessfullyConnected = 3,
    Heartbeat = 4,
    RegisterService = 5,
    UnregisterService = 6,
    RequestService = 7,
    CancelRequest = 8,
    InfoService = 9,
    SubscribeService = 10,
    UnsubscribeService = 11,
    ServiceMessage = 12,
    RegisterCommand = 13,
    UnregisterCommand = 14,
    CommandMessage = 15,
    ConnectionLost = 16,
    LostSender = 17,
    LostReceiver = 18,
    Refused = 19,
    Disconnect = 20,
    Request = 21, ///< to the provider of a service, answered by a Reply
    Reply = 22,
    Auth = 23, ///< challenge-response of a connection in a partition with a shared secret
};
constexpr quint8 MaxType = 23;

const char *typeName(Type t);
inline bool isDataType(Type t)
{
    return t == Type::ServiceMessage || t == Type::CommandMessage || t == Type::Request || t == Type::Reply;
}

enum Flag : quint8
{
    Compressed = 0x01, ///< the data part of a service/command payload is a zstd frame
};
constexpr quint8 KnownFlags = Compressed;

/// Appends one encoded frame (header + payload) to @p out.
void appendHeader(QByteArray &out, Type type, quint8 flags, quint32 payloadLength);
void appendFrame(QByteArray &out, Type type, quint8 flags, QByteArrayView payload);
QByteArray encodeFrame(Type type, quint8 flags, QByteArrayView payload);

} // namespace dialog::wire_format
