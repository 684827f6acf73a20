// Helpers for protobuf control payloads.
#pragma once

#include "dialog.pb.h"
#include "frame_p.h"

#include <QByteArray>
#include <QString>
#include <QStringList>

namespace dialog::wire_format {

/// Parses @p payload as the protobuf message that belongs to @p type. False when it does not parse.
bool validControlPayload(Type type, const QByteArray &payload);

template <typename Message> QByteArray controlFrame(Type type, const Message &msg)
{
    const size_t size = msg.ByteSizeLong();
    QByteArray out;
    out.reserve(qsizetype(HeaderSize + size));
    appendHeader(out, type, 0, quint32(size));
    out.resize(qsizetype(HeaderSize + size));
    msg.SerializeWithCachedSizesToArray(reinterpret_cast<uint8_t *>(out.data() + HeaderSize));
    return out;
}

template <typename Message> bool parseControl(const QByteArray &payload, Message &msg)
{
    return msg.ParseFromArray(payload.constData(), int(payload.size()));
}

/// The token of a SUBSCRIBE_SERVICE, to be echoed by its provider; empty when it carries none or
/// one longer than 64 bytes (ours are 16).
inline QByteArray subscriptionToken(const wire::Subscribe &s)
{
    return s.token().size() <= 64 ? QByteArray::fromStdString(s.token()) : QByteArray();
}

inline QString qs(const std::string &s)
{
    return QString::fromStdString(s);
}
inline std::string ss(const QString &s)
{
    return s.toStdString();
}
QByteArray namesFrame(Type type, const QStringList &names);
QStringList namesOf(const wire::Names &n);

} // namespace dialog::wire_format
