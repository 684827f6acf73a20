// libFuzzer target: a byte stream as a connection delivers it, through the InboundDecoder (batch
// and direct mode, cut at fuzzer-chosen points) and every frame on through what the transport's
// reader does with it: control payloads checked, data frames split and decompressed.
#include "fuzzcommon.h"

#include "control_p.h"
#include "inbounddecoder_p.h"

using namespace dialog::wire_format;

extern "C" int LLVMFuzzerInitialize(int *, char ***)
{
    dialog::fuzz::quietQt();
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    // First byte: the read size (1..256 bytes, or everything at once) and whether compressed
    // data is kept compressed (a router); second: the payload bound (small, so direct mode and
    // the "too large" path are both reached).
    const qint64 chunk = data[0] & 0x80 ? qint64(size) : qint64(data[0] & 0x7f) * 2 + 1;
    const bool keep = data[0] & 0x40;
    const qint64 maxPayload = 64 + qint64(data[1]) * 256;
    QByteArrayView in = dialog::fuzz::bytes(data + 2, size - 2);

    InboundDecoder decoder(maxPayload);
    const auto onFrame = [&](Type type, quint8 flags, QByteArrayView payload, QByteArray *owned) {
        if (!isDataType(type))
            return validControlPayload(type, owned ? *owned : payload.toByteArray());
        DataParts parts;
        QString error;
        return decodeData(type, flags, payload, owned, maxPayload, keep, parts, &error);
    };
    while (!in.isEmpty()) {
        const qint64 n = qMin(chunk, qint64(in.size()));
        if (!decoder.feed(in.first(n), onFrame)) {
            if (decoder.error() == InboundDecoder::Error::None || decoder.errorString().isEmpty())
                abort(); // a failure must say why
            break;
        }
        in = in.sliced(n);
    }
    (void)decoder.buffered();
    (void)decoder.pendingFrameRemaining();
    return 0;
}
