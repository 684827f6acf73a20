// Receive-side frame codec: reads frames from bytes a connection delivered. Never touches a socket:
// the caller reads into the buffer the decoder hands out (buffer()) and reports how much arrived
// (decode()), so the decoder is tested with a QBuffer and fuzzed with plain bytes.
//
// Small frames are parsed out of one batch buffer, many per read. A frame whose body is larger
// than DirectThreshold and not yet complete gets one buffer of exactly its size, allocated once
// its header has been checked; the rest of its body is then read straight into that buffer and
// handed over without a further copy (as NNG's tcptran_pipe_recv_cb and libzmq's decoder do).
#pragma once

#include "frame_p.h"

#include <QByteArray>
#include <QByteArrayView>
#include <QIODevice>
#include <QString>
#include <cstring>

namespace dialog::wire_format {

class InboundDecoder
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
        Rejected ///< the frame handler refused a frame
    };

    /// Bodies at least this large that are not complete in the batch buffer are read into a buffer
    /// of their exact size.
    static constexpr qint64 DirectThreshold = 4 * 1024;
    static constexpr qint64 BatchSize = 64 * 1024;

    explicit InboundDecoder(qint64 maxPayload = DefaultMaxMessageSize + NameOverhead)
        : m_maxPayload(maxPayload)
    {
    }

    /// Where the next bytes of the connection go, and how many fit (at least 1 unless the decoder
    /// failed). Valid until the next decode(); the caller reads at most that many bytes into it.
    struct Buffer
    {
        char *data = nullptr;
        qint64 size = 0;
    };
    Buffer buffer();

    /// Takes the @p n bytes just written into buffer() and hands every frame they complete to
    /// @p onFrame(Type type, quint8 flags, QByteArrayView payload, QByteArray *owned): @p payload is
    /// valid during the call only; @p owned, when not null, is the frame's own exact-size buffer
    /// (== payload), which the handler may move out of. The handler returns false to refuse the
    /// frame (the decoder then fails with Error::Rejected). Returns false once the decoder has
    /// failed; frames handed over before the failure stay handed over.
    template <typename F> bool decode(qint64 n, F &&onFrame);

    /// Decodes @p data as if it had arrived from the connection (tests, fuzzing).
    template <typename F> bool feed(QByteArrayView data, F &&onFrame);
    /// Reads everything @p device has available. False on a format error (or a refused frame);
    /// @p bytesRead, if given, receives the number of bytes read.
    template <typename F> bool readFrom(QIODevice *device, F &&onFrame, qint64 *bytesRead = nullptr);

    /// The buffer the frames handed over from the batch lie in (payload views of decode() point
    /// into it): a copy shares it, and the decoder continues in a new buffer.
    const QByteArray &batchBuffer() const { return m_batch; }
    /// Bytes received into the batch buffer so far (decoded or not).
    qint64 batchFill() const { return m_end; }
    /// Bytes of an incomplete frame held (its header included).
    qint64 buffered() const { return m_direct ? HeaderSize + m_fill : m_end - m_begin; }
    /// Bytes still needed to complete the frame being read, 0 if its header is not complete.
    qint64 pendingFrameRemaining() const;
    Error error() const { return m_error; }
    QString errorString() const { return m_errorString; }
    qint64 maxPayload() const { return m_maxPayload; }
    /// The bound on the payload of the frames whose header is parsed from now on (a connection
    /// raises it once its peer is authenticated).
    void setMaxPayload(qint64 maxPayload) { m_maxPayload = maxPayload; }

private:
    struct Header
    {
        Type type = Type::Hello;
        quint8 flags = 0;
        quint32 length = 0;
    };
    bool parseHeader(const char *p, Header &h);
    bool fail(Error e, const QString &why);

    qint64 m_maxPayload;
    Error m_error = Error::None;
    QString m_errorString;

    // Batch mode: bytes [m_begin, m_end) of m_batch are received and not yet decoded.
    QByteArray m_batch;
    qint64 m_begin = 0;
    qint64 m_end = 0;
    // Direct mode: the body of m_header is being read into m_frame, m_fill bytes of it so far.
    bool m_direct = false;
    /// The last frame was large: the next read takes its header only, so that a large body is
    /// read straight into its own buffer instead of partly into the batch buffer and copied.
    bool m_largeFrames = false;
    Header m_header;
    QByteArray m_frame;
    qint64 m_fill = 0;
};

template <typename F> bool InboundDecoder::decode(qint64 n, F &&onFrame)
{
    if (m_error != Error::None)
        return false;
    if (m_direct) {
        m_fill += n;
        if (m_fill < m_frame.size())
            return true;
        m_direct = false;
        m_largeFrames = true;
        QByteArray frame = std::move(m_frame);
        m_frame = QByteArray();
        m_fill = 0;
        if (!onFrame(m_header.type, m_header.flags, QByteArrayView(frame), &frame))
            return fail(Error::Rejected, QStringLiteral("frame rejected"));
        return true;
    }
    m_end += n;
    const char *base = m_batch.constData();
    while (m_end - m_begin >= HeaderSize) {
        Header h;
        if (!parseHeader(base + m_begin, h))
            return false;
        const qint64 available = m_end - m_begin - HeaderSize;
        if (available >= qint64(h.length)) {
            const QByteArrayView payload(base + m_begin + HeaderSize, h.length);
            m_begin += HeaderSize + h.length;
            m_largeFrames = h.length >= DirectThreshold;
            if (!onFrame(h.type, h.flags, payload, static_cast<QByteArray *>(nullptr)))
                return fail(Error::Rejected, QStringLiteral("frame rejected"));
            continue;
        }
        if (h.length >= DirectThreshold) {
            // Allocate once, now that the length is known and checked; the rest of the body is
            // read straight into it.
            m_header = h;
            m_frame = QByteArray(qsizetype(h.length), Qt::Uninitialized);
            std::memcpy(m_frame.data(), base + m_begin + HeaderSize, size_t(available));
            m_fill = available;
            m_direct = true;
            m_begin = m_end;
        }
        break;
    }
    if (m_begin == m_end)
        m_begin = m_end = 0;
    return true;
}

template <typename F> bool InboundDecoder::feed(QByteArrayView data, F &&onFrame)
{
    if (m_error != Error::None)
        return false;
    while (!data.isEmpty()) {
        const Buffer b = buffer();
        const qint64 n = qMin(b.size, qint64(data.size()));
        std::memcpy(b.data, data.data(), size_t(n));
        data = data.sliced(n);
        if (!decode(n, onFrame))
            return false;
    }
    return true;
}

template <typename F> bool InboundDecoder::readFrom(QIODevice *device, F &&onFrame, qint64 *bytesRead)
{
    qint64 total = 0;
    bool ok = m_error == Error::None;
    while (ok && device->bytesAvailable() > 0) {
        const Buffer b = buffer();
        const qint64 n = device->read(b.data, b.size);
        if (n <= 0)
            break;
        total += n;
        ok = decode(n, onFrame);
    }
    if (bytesRead)
        *bytesRead = total;
    return ok;
}

/// The parts of a data frame (SERVICE_MESSAGE, COMMAND_MESSAGE, REQUEST, REPLY).
struct DataParts
{
    QByteArrayView name;   ///< not REPLY; points into the frame (valid while it or data lives)
    QByteArrayView origin; ///< COMMAND_MESSAGE only; points into the frame
    quint64 sequence = 0;  ///< SERVICE_MESSAGE: the sequence; REQUEST, REPLY: the request id
    quint8 status = 0;     ///< REPLY only
    QByteArray data;
    /// Where the data lies in the payload, when it was left there (see decodeData's @p takeData).
    QByteArrayView view;
};

/// Splits the payload of a data frame of @p type and takes its data out: decompressed when
/// @p flags say so and @p keepCompressed is false, and without a copy when @p owned (the frame's
/// own buffer, see InboundDecoder::decode) is given and the data is not decompressed. Compressed
/// data kept compressed is still checked (it must decompress, within the bound).
/// Data (decompressed or not) larger than @p maxDataSize is refused. False with @p error when the
/// payload is truncated, the data too large or not valid zstd.
/// With @p takeData false, uncompressed data without @p owned is only checked and pointed at
/// (out.view), not copied into out.data.
bool decodeData(Type type, quint8 flags, QByteArrayView payload, QByteArray *owned, qint64 maxDataSize,
                bool keepCompressed, DataParts &out, QString *error, bool takeData = true);

} // namespace dialog::wire_format
