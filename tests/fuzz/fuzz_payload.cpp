// libFuzzer target: the payload of one data frame (service, command, request, reply) and zstd data
// as a peer could send them, decompressed within a bound; what decompresses must round-trip.
#include "fuzzcommon.h"

#include "inbounddecoder_p.h"
#include "payload_p.h"
#include "zstdcodec_p.h"

using namespace dialog::wire_format;

extern "C" int LLVMFuzzerInitialize(int *, char ***)
{
    dialog::fuzz::quietQt();
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    static const Type types[] = {Type::ServiceMessage, Type::CommandMessage, Type::Request, Type::Reply};
    const Type type = types[data[0] & 3];
    const quint8 flags = (data[0] >> 2) & 3; // includes an unknown flag now and then
    const bool keep = data[0] & 0x10;
    const qint64 maxData = data[0] & 0x20 ? 1 << 20 : 4096;
    const QByteArrayView payload = dialog::fuzz::bytes(data + 1, size - 1);

    DataParts parts;
    QString error;
    const bool owned = data[0] & 0x40;
    QByteArray frame = payload.toByteArray();
    if (!decodeData(type, flags, payload, owned ? &frame : nullptr, maxData, keep, parts, &error)) {
        if (error.isEmpty())
            abort();
    } else if (parts.data.size() > maxData && !(keep && (flags & Compressed))) {
        abort(); // the bound was not applied
    }

    // The data part alone as a zstd frame.
    QByteArray out;
    if (dialog::zstd::decompress(payload, out, maxData, &error)) {
        if (out.size() > maxData)
            abort();
        QByteArray again, back;
        if (!dialog::zstd::compress(out, 1, again) || !dialog::zstd::decompress(again, back, maxData) ||
            back != out)
            abort();
    }
    (void)dialog::zstd::contentSize(payload);
    return 0;
}
