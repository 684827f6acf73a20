#include "pushprotocol.h"

#include <QtEndian>

namespace dialog::isd::push {

QByteArray encode(Type type, const QByteArray &payload)
{
    QByteArray out(HeaderSize, Qt::Uninitialized);
    qToBigEndian<quint32>(Magic, out.data());
    out[4] = char(Version);
    out[5] = char(type);
    qToBigEndian<quint32>(quint32(payload.size()), out.data() + 6);
    out.append(payload);
    return out;
}

Take take(QByteArray &buffer, Frame *out, QString *error)
{
    if (buffer.size() < HeaderSize) {
        // Reject garbage as soon as the first bytes show it is not this protocol.
        const qsizetype n = qMin<qsizetype>(buffer.size(), 4);
        char magic[4];
        qToBigEndian<quint32>(Magic, magic);
        if (QByteArrayView(buffer.constData(), n) != QByteArrayView(magic, n)) {
            *error = QStringLiteral("not a DIALOG push-mirror connection (bad magic)");
            return Take::Error;
        }
        return Take::Incomplete;
    }
    const uchar *h = reinterpret_cast<const uchar *>(buffer.constData());
    if (qFromBigEndian<quint32>(h) != Magic) {
        *error = QStringLiteral("not a DIALOG push-mirror connection (bad magic)");
        return Take::Error;
    }
    if (h[4] != Version) {
        *error =
            QStringLiteral("push-mirror protocol version %1 (this program speaks %2)").arg(h[4]).arg(Version);
        return Take::Error;
    }
    const quint8 type = h[5];
    if (type < quint8(Type::Hello) || type > quint8(Type::Auth)) {
        *error = QStringLiteral("unknown push-mirror frame type %1").arg(type);
        return Take::Error;
    }
    const quint32 length = qFromBigEndian<quint32>(h + 6);
    if (length > MaxPayload) {
        *error = QStringLiteral("push-mirror frame of %1 bytes (at most %2)").arg(length).arg(MaxPayload);
        return Take::Error;
    }
    if (buffer.size() < HeaderSize + qsizetype(length))
        return Take::Incomplete;
    out->type = Type(type);
    out->payload = buffer.mid(HeaderSize, length);
    buffer.remove(0, HeaderSize + length);
    return Take::Frame;
}

qint64 announcedSize(const QByteArray &buffer)
{
    if (buffer.size() < HeaderSize)
        return 0;
    return HeaderSize + qint64(qFromBigEndian<quint32>(buffer.constData() + 6));
}

QString typeName(Type type)
{
    switch (type) {
    case Type::Hello:
        return QStringLiteral("Hello");
    case Type::Accept:
        return QStringLiteral("Accept");
    case Type::Refuse:
        return QStringLiteral("Refuse");
    case Type::Types:
        return QStringLiteral("Types");
    case Type::Records:
        return QStringLiteral("Records");
    case Type::Ping:
        return QStringLiteral("Ping");
    case Type::Pong:
        return QStringLiteral("Pong");
    case Type::Auth:
        return QStringLiteral("Auth");
    }
    return QStringLiteral("frame %1").arg(int(type));
}

} // namespace dialog::isd::push
