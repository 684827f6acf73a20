// CRC-32 (IEEE 802.3, the same as zlib's crc32()) of the IS checkpoint and journal formats.
#pragma once

#include <QByteArrayView>
#include <QtGlobal>

namespace dialog::is {

quint32 crc32(QByteArrayView data);

} // namespace dialog::is
