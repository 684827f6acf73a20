#include "inbounddecoder_p.h"

#include "payload_p.h"

#include <QtEndian>
#include <cstring>

namespace dialog::wire_format {

InboundDecoder::Buffer InboundDecoder::buffer()
{
    if (m_error != Error::None)
        return {};
    if (m_direct)
        return {m_frame.data() + m_fill, m_frame.size() - m_fill};
    if (m_batch.isEmpty()) {
        m_batch = QByteArray(qsizetype(BatchSize), Qt::Uninitialized);
    } else if (!m_batch.isDetached()) {
        // Frames of it are still held (batchBuffer()): a new buffer, with what is left of this one.
        QByteArray fresh(qsizetype(BatchSize), Qt::Uninitialized);
        std::memcpy(fresh.data(), m_batch.constData() + m_begin, size_t(m_end - m_begin));
        m_end -= m_begin;
        m_begin = 0;
        m_batch = std::move(fresh);
    }
    if (m_begin > 0) {
        // What is left is the start of a small frame (larger ones went to their own buffer): cheap.
        std::memmove(m_batch.data(), m_batch.constData() + m_begin, size_t(m_end - m_begin));
        m_end -= m_begin;
        m_begin = 0;
    }
    if (m_largeFrames && m_end < HeaderSize)
        return {m_batch.data() + m_end, HeaderSize - m_end};
    return {m_batch.data() + m_end, BatchSize - m_end};
}

qint64 InboundDecoder::pendingFrameRemaining() const
{
    if (m_direct)
        return m_frame.size() - m_fill;
    if (m_end - m_begin < HeaderSize)
        return 0;
    const quint32 length = qFromLittleEndian<quint32>(m_batch.constData() + m_begin + 8);
    return HeaderSize + qint64(length) - (m_end - m_begin);
}

bool InboundDecoder::fail(Error e, const QString &why)
{
    m_error = e;
    m_errorString = why;
    m_batch = QByteArray();
    m_begin = m_end = 0;
    m_direct = false;
    m_frame = QByteArray();
    m_fill = 0;
    return false;
}

bool InboundDecoder::parseHeader(const char *p, Header &h)
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
    const quint32 length = qFromLittleEndian<quint32>(p + 8);
    if (qint64(length) > m_maxPayload)
        return fail(
            Error::TooLarge,
            QStringLiteral("frame of %1 bytes exceeds the maximum of %2").arg(length).arg(m_maxPayload));
    h.type = Type(type);
    h.flags = flags;
    h.length = length;
    return true;
}

bool decodeData(Type type, quint8 flags, QByteArrayView payload, QByteArray *owned, qint64 maxDataSize,
                bool keepCompressed, DataParts &out, QString *error, bool takeData)
{
    QByteArrayView data;
    bool split = false;
    switch (type) {
    case Type::ServiceMessage:
    case Type::Request:
        split = splitService(payload, out.name, out.sequence, data);
        break;
    case Type::CommandMessage:
        split = splitCommand(payload, out.name, out.origin, data);
        break;
    case Type::Reply:
        split = splitReply(payload, out.sequence, out.status, data);
        break;
    default:
        break;
    }
    if (!split) {
        if (error)
            *error = QStringLiteral("truncated %1 payload").arg(QLatin1String(typeName(type)));
        return false;
    }
    if (flags & Compressed) {
        if (!keepCompressed)
            return decompress(data, out.data, maxDataSize, error);
        // Kept as it came, but checked in full (size bound, zstd checksum) all the same: a bad
        // frame is refused here, from its sender, not by whoever it would be relayed to.
        QByteArray scratch;
        if (!decompress(data, scratch, maxDataSize, error))
            return false;
    }
    if (data.size() > maxDataSize) {
        if (error)
            *error = QStringLiteral("message of %1 bytes exceeds the maximum of %2")
                         .arg(data.size())
                         .arg(maxDataSize);
        return false;
    }
    if (owned && owned->constData() == payload.data()) {
        // The data is the tail of the frame's own buffer: drop the head (O(1) in Qt 6), no copy.
        const qsizetype head = data.data() - payload.data();
        out.data = std::move(*owned);
        out.data.remove(0, head);
    } else if (takeData) {
        out.data = data.toByteArray();
    } else {
        out.view = data;
    }
    return true;
}

} // namespace dialog::wire_format
