// The one zstd wrapper of the library: service/command data (payload.cpp) and IS checkpoints
// (is/checkpoint.cpp) both compress through it. Pure codec: bytes in, bytes out, no I/O. zstd's
// own errors are translated here; their text goes into @p error.
#pragma once

#include <QByteArray>
#include <QByteArrayView>
#include <QString>

namespace dialog::zstd {

/// Compresses @p in into one zstd frame (content size and content checksum in it, so corrupted data
/// is detected on decompression) at @p level. False with @p error if zstd fails.
bool compress(QByteArrayView in, int level, QByteArray &out, QString *error = nullptr);

/// The content size written in the frame header of @p in, or -1 if there is no valid header or it
/// does not say.
qint64 contentSize(QByteArrayView in);

/// Decompresses the single frame @p in. False with @p error (and @p out empty) on a corrupt frame,
/// a frame without content size, or content larger than @p maxSize.
bool decompress(QByteArrayView in, QByteArray &out, qint64 maxSize, QString *error = nullptr);

} // namespace dialog::zstd
