// Frame codec: a fixed 12-byte header followed by the payload. Never touches a socket.
#pragma once

#include <QByteArray>
#include <QByteArrayView>
#include <QList>
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
};
constexpr quint8 MaxType = 22;

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

struct Frame
{
    Type type = Type::Hello;
    quint8 flags = 0;
    QByteArray payload;
};

/// Appends one encoded frame (header + payload) to @p out.
void appendHeader(QByteArray &out, Type type, quint8 flags, quint32 payloadLength);
void appendFrame(QByteArray &out, Type type, quint8 flags, QByteArrayView payload);
QByteArray encodeFrame(Type type, quint8 flags, QByteArrayView payload);

/// Incremental decoder: feed it whatever a read() returned, take the complete frames out.
/// Any violation of the format puts it in a terminal error state; the caller closes the connection.
class FrameDecoder
{
public:
    enum class Error
    {
        None,
        BadMagic,
        BadVersion,
        UnknownType,
        BadFlags,
        TooLarge,
        Rejected
    };

    explicit FrameDecoder(qint64 maxPayload = DefaultMaxMessageSize + NameOverhead) : m_maxPayload(maxPayload)
    {
    }

    /// Zero-copy variant: calls @p onFrame(Type, quint8 flags, QByteArrayView payload) for every complete
    /// frame; the view is valid only during the call. @p onFrame returns false to stop (the decoder
    /// then fails with Error::Rejected). Returns false on a format error.
    template <typename F> bool feedView(QByteArrayView data, F &&onFrame);

    /// Parses @p data (appended to what is buffered); complete frames are appended to @p out.
    /// Returns false on a format error (see error()/errorString()); frames decoded before it stay in out.
    bool feed(const QByteArray &data, QList<Frame> &out);
    /// Bytes of an incomplete frame still buffered.
    qint64 buffered() const { return m_buffer.size(); }
    /// Bytes still needed to complete the frame being read, 0 if unknown.
    qint64 pendingFrameRemaining() const;
    Error error() const { return m_error; }
    QString errorString() const { return m_errorString; }
    qint64 maxPayload() const { return m_maxPayload; }

private:
    bool fail(Error e, const QString &why);
    bool parseHeader(const char *p, Frame &f, quint32 &len);
    void keepTail(const char *base, qint64 pos, qint64 size, bool fromBuffer);

    QByteArray m_buffer;
    qint64 m_maxPayload;
    Error m_error = Error::None;
    QString m_errorString;
};

template <typename F> bool FrameDecoder::feedView(QByteArrayView data, F &&onFrame)
{
    if (m_error != Error::None)
        return false;
    const bool fromBuffer = !m_buffer.isEmpty();
    if (fromBuffer)
        m_buffer.append(data.data(), data.size());
    const char *base = fromBuffer ? m_buffer.constData() : data.data();
    const qint64 size = fromBuffer ? m_buffer.size() : data.size();
    qint64 pos = 0;
    while (size - pos >= HeaderSize) {
        Frame f;
        quint32 len = 0;
        if (!parseHeader(base + pos, f, len))
            return false;
        if (size - pos - HeaderSize < qint64(len))
            break;
        if (!onFrame(f.type, f.flags, QByteArrayView(base + pos + HeaderSize, len)))
            return fail(Error::Rejected, QStringLiteral("frame rejected"));
        pos += HeaderSize + len;
    }
    keepTail(base, pos, size, fromBuffer);
    return true;
}

} // namespace dialog::wire_format
