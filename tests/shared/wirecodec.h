// Helpers of the wire-codec tests: the frames an InboundDecoder hands over, collected, and
// deterministic payload bytes.
#pragma once

#include "inbounddecoder_p.h"

#include <QByteArray>
#include <QList>

namespace dialog::test {

/// One frame as the decoder handed it over (its payload copied out of the decoder's buffer).
struct Frame
{
    wire_format::Type type = wire_format::Type::Hello;
    quint8 flags = 0;
    QByteArray payload;
};

/// Feeds @p data to @p d and appends every frame it completes to @p out; false once @p d failed.
inline bool feed(wire_format::InboundDecoder &d, QByteArrayView data, QList<Frame> &out)
{
    return d.feed(data, [&out](wire_format::Type type, quint8 flags, QByteArrayView payload, QByteArray *) {
        out.append(Frame{type, flags, payload.toByteArray()});
        return true;
    });
}

/// Deterministic bytes covering every value, including 0x00 and the magic's bytes.
inline QByteArray pattern(qsizetype size, quint32 seed = 1)
{
    QByteArray b(size, Qt::Uninitialized);
    quint32 x = seed;
    for (qsizetype i = 0; i < size; ++i) {
        x = x * 1664525u + 1013904223u;
        b[i] = char(x >> 24);
    }
    return b;
}

} // namespace dialog::test
