// libFuzzer target: the IS checkpoint loader. Half the inputs are taken as whole files (magic,
// header, checksums); the other half as the uncompressed payload, wrapped by the target in a
// valid header with correct checksums so the fuzzer reaches the object records and the
// repository's validation (what a damaged file with intact checksums, or a file written by a
// broken build, would give): format 1 (the object list alone) or, with bit 2 of the first byte,
// format 2 (the type layouts, then the objects: the evolution of older layouts).
#include "fuzzcommon.h"

#include "is/checkpointformat_p.h"
#include "is/crc32_p.h"
#include "zstdcodec_p.h"

#include <dialog/is/checkpoint.h>
#include <dialog/is/repository.h>

#include <QtEndian>
#include <array>

using namespace dialog::is;

namespace {

template <typename T> void put(QByteArray &out, T v)
{
    char b[sizeof(T)];
    qToLittleEndian(v, b);
    out.append(b, sizeof(T));
}

// The file format of checkpoint.h around @p payload (the object records, uncompressed).
QByteArray wrap(QByteArrayView payload, quint64 objectCount, quint32 version)
{
    QByteArray compressed;
    if (!dialog::zstd::compress(payload, 1, compressed))
        return QByteArray();
    const QByteArray server("Fuzz");
    QByteArray file("DIALOGIS", 8);
    put(file, version);
    put(file, quint32(8 + 4 + 4 + 2 + server.size() + 8 + 8 + 8 + 8 + 4 + 4));
    put(file, quint16(server.size()));
    file.append(server);
    put(file, objectCount);
    put(file, qint64(1700000000000000));
    put(file, quint64(payload.size()));
    put(file, quint64(compressed.size()));
    put(file, crc32(compressed));
    put(file, crc32(file));
    return file + compressed;
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***)
{
    dialog::fuzz::quietQt();
    (void)dialog::fuzz::registry();
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    const QByteArrayView in = dialog::fuzz::bytes(data + 2, size - 2);
    const QString path = QStringLiteral("Fuzz.is");
    const QByteArray file = data[0] & 1 ? wrap(in, data[1], data[0] & 2 ? 2 : 1) : in.toByteArray();

    (void)checkpointformat::checkIntegrity(file, path);
    QList<StoredObject> objects;
    const checkpointformat::Parsed p =
        checkpointformat::decode(file, path, QStringLiteral("Fuzz"), dialog::fuzz::registry(), objects);
    if (p.problem != checkpointformat::Problem::None) {
        if (p.error.isEmpty())
            abort();
        return 0;
    }
    Repository repository(QStringLiteral("Fuzz"), dialog::fuzz::registry());
    if (repository.replaceAll(objects).isOk() &&
        repository.size() != objects.size())
        abort();
    return 0;
}
