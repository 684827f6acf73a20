// Service and command payloads (the hot path, so not protobuf) and zstd compression of their data.
//   SERVICE_MESSAGE: u16 nameLen | name | u64 sequence | data
//   COMMAND_MESSAGE: u16 nameLen | name | u16 originLen | origin | data
//   REQUEST:         u16 nameLen | name | u64 id | data         (same layout as SERVICE_MESSAGE)
//   REPLY:           u64 id | u8 status | data
// With the Compressed flag, data is one zstd frame whose content size is in its header.
#pragma once

#include "frame_p.h"

#include <QByteArray>
#include <QString>

namespace dialog::wire_format {

constexpr int MaxNameLength = 1024;

/// Writes a complete SERVICE_MESSAGE frame for already-prepared (possibly compressed) data.
void appendServiceFrame(QByteArray &out, QByteArrayView name, quint64 seq, quint8 flags, QByteArrayView data);
/// Header + name + sequence only (the data is sent as a separate shared buffer).
QByteArray serviceFramePrefix(QByteArrayView name, quint64 seq, quint8 flags, qint64 dataSize);
QByteArray encodeCommandFrame(QByteArrayView name, QByteArrayView origin, quint8 flags, QByteArrayView data);

/// Splits a SERVICE_MESSAGE payload without copying. False if it is truncated.
bool splitService(QByteArrayView payload, QByteArrayView &name, quint64 &sequence, QByteArrayView &data);
bool splitCommand(QByteArrayView payload, QByteArrayView &name, QByteArrayView &origin, QByteArrayView &data);

QByteArray encodeRequestFrame(QByteArrayView service, quint64 id, quint8 flags, QByteArrayView data);
QByteArray encodeReplyFrame(quint64 id, quint8 status, quint8 flags, QByteArrayView data);
bool splitReply(QByteArrayView payload, quint64 &id, quint8 &status, QByteArrayView &data);

/// zstd (level 1). Returns false when compression is not worth it (incompressible data).
bool compress(QByteArrayView in, QByteArray &out);
/// Returns false on corrupt input or when the content exceeds @p maxSize.
bool decompress(QByteArrayView in, QByteArray &out, qint64 maxSize, QString *error);

/// Prepares data for sending: compressed when it is at least @p threshold bytes (0 = never)
/// and compression pays off. Sets the Compressed flag in @p flags accordingly.
QByteArray prepareData(const QByteArray &data, int threshold, quint8 &flags);

} // namespace dialog::wire_format
