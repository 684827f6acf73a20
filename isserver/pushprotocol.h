// The push-mirror protocol (IS paper §5.1, remote shift): a master IS server opens a TCP connection
// to a mirror on another network and streams its content, then every change. Frames only; this
// codec never touches a socket.
//
// frame := u32 magic "DIPM" | u8 version | u8 type | u32 payload length | payload
//
// master -> mirror: Hello (JSON {"server", "criteria", "ping_ms", "types"}), then Types (JSON array
//                   of types declared since), Records (IS notification records, dialog/is/protocol.h:
//                   SnapshotBegin, Created..., SnapshotEnd, then Created/Updated/Removed), Ping.
// mirror -> master: Accept (JSON {"server"}) or Refuse (UTF-8 reason, then the mirror closes), Pong.
// With a shared secret (--secret-file, the same on both sides) the Hello carries "nonce" (64 hex
// digits) and, before Accept, mirror -> master: Auth (its nonce, 32 bytes, and its proof), master ->
// mirror: Auth (its proof): the challenge-response of docs/protocol.md §3.1.1, H being the Hello
// payload. With TLS files the connection is TLS with mutual authentication from its first byte.
// Nothing else ever goes from the mirror to the master: a mirror cannot write back.
#pragma once

#include <QByteArray>
#include <QSslConfiguration>
#include <QString>
#include <memory>

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
    Auth = 8,
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
/// The size (header included) the frame at the start of @p buffer announces; 0 while its header
/// is incomplete.
qint64 announcedSize(const QByteArray &buffer);

QString typeName(Type type);

/// The shared secret and TLS configuration of the push connection (the IS server's own).
struct Security
{
    QByteArray secret;                            ///< empty: no authentication
    std::shared_ptr<const QSslConfiguration> tls; ///< null: plain TCP
    /// Listen beyond loopback without a secret all the same (--insecure).
    bool insecure = false;
};

} // namespace dialog::isd::push
