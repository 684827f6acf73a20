// The push-mirror protocol (IS paper §5.1, remote shift): a master IS server opens a TCP connection
// to a mirror on another network and streams its content, then every change. Frames only; this
// codec never touches a socket.
//
// frame := u32 magic "DIPM" | u8 version | u8 type | u32 payload length | payload
//
// master -> mirror: Hello (JSON {"server", "criteria", "ping_ms", "types"}), then Types (JSON array
//                   of types declared since), Records (IS notification records, is/protocol_p.h:
//                   SnapshotBegin, Created..., SnapshotEnd, then Created/Updated/Removed), Ping.
// mirror -> master: Accept (JSON {"server"}) or Refuse (UTF-8 reason, then the mirror closes), Pong.
// Nothing else ever goes from the mirror to the master: a mirror cannot write back.
#pragma once

#include <QByteArray>
#include <QString>

namespace dialog::isd::push {

constexpr quint32 Magic = 0x4449504d; // "DIPM"
constexpr quint8 Version = 1;
constexpr qsizetype HeaderSize = 10;
/// Largest payload accepted (a frame of records is at most ~256 KiB plus one object).
constexpr quint32 MaxPayload = 64u << 20;

enum class Type : quint8
{
    Hello = 1,
    Accept = 2,
    Refuse = 3,
    Types = 4,
    Records = 5,
    Ping = 6,
    Pong = 7,
};

struct Frame
{
    Type type = Type::Ping;
    QByteArray payload;
};

QByteArray encode(Type type, const QByteArray &payload = {});

enum class Take
{
    Frame,      ///< one frame taken from the front of the buffer
    Incomplete, ///< more bytes are needed
    Error,      ///< not this protocol (bad magic or version, unknown type, oversized): close
};
/// Takes the first frame of @p buffer (removing its bytes). On Error, @p error says why.
Take take(QByteArray &buffer, Frame *out, QString *error);

QString typeName(Type type);

} // namespace dialog::isd::push
