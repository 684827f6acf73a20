#include "payload_p.h"

#include <QtEndian>
#include "zstdcodec_p.h"

namespace dialog::wire_format {

namespace {

void appendU16(QByteArray &out, quint16 v)
{
    char b[2];
    qToLittleEndian(v, b);
    out.append(b, 2);
}

void appendU64(QByteArray &out, quint64 v)
{
    char b[8];
    qToLittleEndian(v, b);
    out.append(b, 8);
}

bool readNameView(QByteArrayView p, qint64 &pos, QByteArrayView &name)
{
    if (p.size() - pos < 2)
        return false;
    const quint16 len = qFromLittleEndian<quint16>(p.data() + pos);
    pos += 2;
    if (len > MaxNameLength || p.size() - pos < len)
        return false;
    name = p.sliced(pos, len);
    pos += len;
    return true;
}

} // namespace

bool splitService(QByteArrayView payload, QByteArrayView &name, quint64 &sequence, QByteArrayView &data)
{
    qint64 pos = 0;
    if (!readNameView(payload, pos, name) || payload.size() - pos < 8)
        return false;
    sequence = qFromLittleEndian<quint64>(payload.data() + pos);
    data = payload.sliced(pos + 8);
    return true;
}

bool splitCommand(QByteArrayView payload, QByteArrayView &name, QByteArrayView &origin, QByteArrayView &data)
{
    qint64 pos = 0;
    if (!readNameView(payload, pos, name) || !readNameView(payload, pos, origin))
        return false;
    data = payload.sliced(pos);
    return true;
}

QByteArray encodeRequestFrame(QByteArrayView service, quint64 id, quint8 flags, QByteArrayView data)
{
    QByteArray out;
    out.reserve(HeaderSize + 10 + service.size() + data.size());
    appendHeader(out, Type::Request, flags, quint32(2 + service.size() + 8 + data.size()));
    appendU16(out, quint16(service.size()));
    out.append(service.data(), service.size());
    appendU64(out, id);
    out.append(data.data(), data.size());
    return out;
}

QByteArray encodeReplyFrame(quint64 id, quint8 status, quint8 flags, QByteArrayView data)
{
    QByteArray out;
    out.reserve(HeaderSize + 9 + data.size());
    appendHeader(out, Type::Reply, flags, quint32(9 + data.size()));
    appendU64(out, id);
    out.append(char(status));
    out.append(data.data(), data.size());
    return out;
}

bool splitReply(QByteArrayView payload, quint64 &id, quint8 &status, QByteArrayView &data)
{
    if (payload.size() < 9)
        return false;
    id = qFromLittleEndian<quint64>(payload.data());
    status = quint8(payload.at(8));
    data = payload.sliced(9);
    return true;
}

void appendServiceFrame(QByteArray &out, QByteArrayView name, quint64 seq, quint8 flags, QByteArrayView data)
{
    appendHeader(out, Type::ServiceMessage, flags, quint32(2 + name.size() + 8 + data.size()));
    appendU16(out, quint16(name.size()));
    out.append(name.data(), name.size());
    appendU64(out, seq);
    out.append(data.data(), data.size());
}

QByteArray serviceFramePrefix(QByteArrayView name, quint64 seq, quint8 flags, qint64 dataSize)
{
    QByteArray out;
    out.reserve(HeaderSize + 2 + name.size() + 8);
    appendHeader(out, Type::ServiceMessage, flags, quint32(2 + name.size() + 8 + dataSize));
    appendU16(out, quint16(name.size()));
    out.append(name.data(), name.size());
    appendU64(out, seq);
    return out;
}

QByteArray encodeCommandFrame(QByteArrayView name, QByteArrayView origin, quint8 flags, QByteArrayView data)
{
    QByteArray out;
    out.reserve(HeaderSize + 4 + name.size() + origin.size() + data.size());
    appendHeader(out, Type::CommandMessage, flags, quint32(4 + name.size() + origin.size() + data.size()));
    appendU16(out, quint16(name.size()));
    out.append(name.data(), name.size());
    appendU16(out, quint16(origin.size()));
    out.append(origin.data(), origin.size());
    out.append(data.data(), data.size());
    return out;
}


bool compress(QByteArrayView in, QByteArray &out)
{
    // Probe a sample first: incompressible data (already compressed, random) is sent as it is
    // rather than spending CPU on a full pass that would not pay off.
    constexpr qint64 Sample = 16 * 1024;
    if (in.size() > 4 * Sample) {
        QByteArray probe;
        if (!zstd::compress(in.first(Sample), 1, probe) || probe.size() > Sample * 9 / 10)
            return false;
    }
    return zstd::compress(in, 1, out) && out.size() < in.size() * 9 / 10;
}

bool decompress(QByteArrayView in, QByteArray &out, qint64 maxSize, QString *error)
{
    return zstd::decompress(in, out, maxSize, error);
}

QByteArray prepareData(const QByteArray &data, int threshold, quint8 &flags)
{
    flags = 0;
    if (threshold > 0 && data.size() >= threshold) {
        QByteArray packed;
        if (compress(data, packed)) {
            flags |= Compressed;
            return packed;
        }
    }
    return data;
}

} // namespace dialog::wire_format
