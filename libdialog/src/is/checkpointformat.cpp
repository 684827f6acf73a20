// The byte format of IS checkpoint files (documented in dialog/is/checkpoint.h): encoding and
// decoding only, no file handling (checkpoint.cpp reads and writes the files).
#include "checkpointformat_p.h"
#include "crc32_p.h"

#include "dialog/is/checkpoint.h"
#include "dialog/is/codec.h"
#include "dialog/is/typeregistry.h"

#include "../zstdcodec_p.h"

#include <QtEndian>
#include <array>
#include <limits>

namespace dialog::is::checkpointformat {

namespace {

constexpr char Magic[8] = {'D', 'I', 'A', 'L', 'O', 'G', 'I', 'S'};
constexpr int ZstdLevel = 3;
// Bytes of an object record before the name and the encoding: the smallest record.
constexpr quint64 MinRecordSize = 4 + 8 + 8 + 4;

template <typename T> void put(QByteArray &out, T v)
{
    char b[sizeof(T)];
    qToLittleEndian(v, b);
    out.append(b, sizeof(T));
}

// Bounded little-endian reader: every read checks the bytes left.
class Reader
{
public:
    explicit Reader(QByteArrayView data) : m_data(data) {}
    template <typename T> bool get(T &v)
    {
        if (left() < qsizetype(sizeof(T)))
            return false;
        v = qFromLittleEndian<T>(m_data.data() + m_pos);
        m_pos += sizeof(T);
        return true;
    }
    bool bytes(qsizetype n, QByteArrayView &out)
    {
        if (n < 0 || left() < n)
            return false;
        out = m_data.sliced(m_pos, n);
        m_pos += n;
        return true;
    }
    qsizetype pos() const { return m_pos; }
    qsizetype left() const { return m_data.size() - m_pos; }

private:
    QByteArrayView m_data;
    qsizetype m_pos = 0;
};

struct Header
{
    quint32 version = 0;
    QString serverName;
    quint64 objectCount = 0;
    qint64 created = 0;
    quint64 payloadSize = 0;
    quint64 compressedSize = 0;
    qsizetype headerLength = 0;
};

Parsed corrupt(const QString &path, const QString &detail)
{
    return {Problem::Corrupt, QStringLiteral("%1: corrupt checkpoint: %2").arg(path, detail)};
}

// Checks magic, version, header CRC, payload size and payload CRC (no decompression).
Parsed parseHeader(QByteArrayView file, const QString &path, Header &h)
{
    Reader r(file);
    QByteArrayView magic;
    if (!r.bytes(sizeof Magic, magic))
        return corrupt(path, QStringLiteral("truncated header (%1 bytes)").arg(file.size()));
    if (magic != QByteArrayView(Magic, sizeof Magic))
        return {Problem::Corrupt, QStringLiteral("%1: not an IS checkpoint (bad magic)").arg(path)};
    quint32 headerLength = 0;
    if (!r.get(h.version) || !r.get(headerLength))
        return corrupt(path, QStringLiteral("truncated header (%1 bytes)").arg(file.size()));
    if (h.version == 0 || h.version > Checkpoint::FormatVersion)
        return {
            Problem::Unsupported,
            QStringLiteral("%1: checkpoint format version %2 is not supported (this build reads up to %3)")
                .arg(path)
                .arg(h.version)
                .arg(Checkpoint::FormatVersion)};
    if (headerLength < r.pos() + 4 || headerLength > file.size())
        return corrupt(
            path, QStringLiteral("truncated header (%1 of %2 bytes)").arg(file.size()).arg(headerLength));
    Reader hr(file.first(headerLength - 4));
    QByteArrayView skip, name;
    quint16 nameLength = 0;
    quint32 payloadCrc = 0, headerCrc = 0;
    if (!hr.bytes(r.pos(), skip) || !hr.get(nameLength) || !hr.bytes(nameLength, name) ||
        !hr.get(h.objectCount) || !hr.get(h.created) || !hr.get(h.payloadSize) || !hr.get(h.compressedSize) ||
        !hr.get(payloadCrc) || hr.left() != 0)
        return corrupt(path, QStringLiteral("malformed header"));
    headerCrc = qFromLittleEndian<quint32>(file.data() + headerLength - 4);
    if (crc32(file.first(headerLength - 4)) != headerCrc)
        return corrupt(path, QStringLiteral("header checksum mismatch"));
    h.serverName = QString::fromUtf8(name);
    h.headerLength = headerLength;
    const quint64 payloadBytes = quint64(file.size() - headerLength);
    if (payloadBytes < h.compressedSize)
        return corrupt(
            path,
            QStringLiteral("truncated payload (%1 of %2 bytes)").arg(payloadBytes).arg(h.compressedSize));
    if (payloadBytes > h.compressedSize)
        return corrupt(
            path,
            QStringLiteral("%1 unexpected bytes after the payload").arg(payloadBytes - h.compressedSize));
    if (crc32(file.sliced(headerLength)) != payloadCrc)
        return corrupt(path, QStringLiteral("payload checksum mismatch"));
    return {};
}

Parsed parseObjects(QByteArrayView payload, const Header &h, const QString &path,
                    const TypeRegistry &registry, QList<StoredObject> &out, const QStringList &skip,
                    const Conversions &conversions, QStringList *evolved)
{
    Reader r(payload);
    Layouts layouts;
    if (h.version >= 2) {
        quint32 layoutLength = 0;
        QByteArrayView layoutBytes;
        if (!r.get(layoutLength) || !r.bytes(layoutLength, layoutBytes))
            return corrupt(path, QStringLiteral("truncated type layouts"));
        if (const Status st = Layouts::decode(layoutBytes, &layouts); !st.isOk())
            return corrupt(path, st.message());
    }
    // A change evolution refuses fails the first object of its type (skipped objects do not count).
    const Evolution evolution(registry, layouts, conversions);
    if (h.objectCount > quint64(r.left()) / MinRecordSize)
        return corrupt(path, QStringLiteral("object count %1 does not fit the payload").arg(h.objectCount));
    out.reserve(qsizetype(h.objectCount));
    for (quint64 i = 0; i < h.objectCount; ++i) {
        quint32 nameLength = 0, encodedLength = 0;
        QByteArrayView name, encoded;
        StoredObject o;
        qint64 time = 0;
        if (!r.get(nameLength) || !r.bytes(nameLength, name) || !r.get(time) || !r.get(o.updateCount) ||
            !r.get(encodedLength) || !r.bytes(encodedLength, encoded))
            return corrupt(path, QStringLiteral("object #%1 is truncated").arg(i));
        o.name = QString::fromUtf8(name);
        if (skip.contains(o.name))
            continue;
        o.time = Time(time);
        if (const Status st = evolution.decode(encoded, o.object); !st.isOk())
            return {Problem::Unsupported,
                    QStringLiteral("%1: object '%2': %3").arg(path, o.name, st.message())};
        out.append(std::move(o));
    }
    if (r.left() != 0)
        return corrupt(path, QStringLiteral("%1 unexpected bytes after the last object").arg(r.left()));
    if (evolved)
        *evolved = evolution.changes();
    return {};
}

} // namespace

Parsed checkIntegrity(QByteArrayView bytes, const QString &path)
{
    Header h;
    return parseHeader(bytes, path, h);
}

Parsed decode(QByteArrayView bytes, const QString &path, const QString &serverName,
              const TypeRegistry &registry, QList<StoredObject> &out, const QStringList &skip,
              const Conversions &conversions, QStringList *evolved)
{
    Header h;
    Parsed p = parseHeader(bytes, path, h);
    if (p.problem != Problem::None)
        return p;
    if (h.serverName != serverName)
        return {
            Problem::Unsupported,
            QStringLiteral("%1: checkpoint of server '%2', not '%3'").arg(path, h.serverName, serverName)};
    const QByteArrayView compressed = QByteArrayView(bytes).sliced(h.headerLength);
    const qint64 frameSize = zstd::contentSize(compressed);
    if (frameSize < 0 || quint64(frameSize) != h.payloadSize ||
        h.payloadSize > quint64(std::numeric_limits<int>::max()))
        return corrupt(path, QStringLiteral("payload size does not match the header"));
    QByteArray payload;
    QString why;
    if (!zstd::decompress(compressed, payload, frameSize, &why))
        return corrupt(path, why);
    return parseObjects(payload, h, path, registry, out, skip, conversions, evolved);
}

QByteArray encode(const QString &serverName, const QList<StoredObject> &objects, QString *error)
{
    Layouts layouts;
    for (const StoredObject &o : objects)
        layouts.add(o.object);
    const QByteArray layoutBytes = layouts.encode();
    QByteArray payload;
    put(payload, quint32(layoutBytes.size()));
    payload.append(layoutBytes);
    for (const StoredObject &o : objects) {
        const QByteArray name = o.name.toUtf8();
        const QByteArray encoded = encode(o.object);
        put(payload, quint32(name.size()));
        payload.append(name);
        put(payload, o.time.microsecondsSinceEpoch());
        put(payload, o.updateCount);
        put(payload, quint32(encoded.size()));
        payload.append(encoded);
    }

    QByteArray compressed;
    if (!zstd::compress(payload, ZstdLevel, compressed, error))
        return QByteArray();

    const QByteArray server = serverName.toUtf8().left(std::numeric_limits<quint16>::max());
    QByteArray file(Magic, sizeof Magic);
    put(file, Checkpoint::FormatVersion);
    const quint32 headerLength = quint32(sizeof Magic + 4 + 4 + 2 + server.size() + 8 + 8 + 8 + 8 + 4 + 4);
    put(file, headerLength);
    put(file, quint16(server.size()));
    file.append(server);
    put(file, quint64(objects.size()));
    put(file, Time::currentTime().microsecondsSinceEpoch());
    put(file, quint64(payload.size()));
    put(file, quint64(compressed.size()));
    put(file, crc32(compressed));
    put(file, crc32(file));
    Q_ASSERT(file.size() == headerLength);
    file.append(compressed);
    return file;
}

} // namespace dialog::is::checkpointformat
