// libFuzzer target: the IS journal reader (a segment file, then each record applied to a
// repository, as at a server's start). Half the inputs are taken as whole segment files; the other
// half as one record payload, wrapped by the target in a valid header and record frame (length and
// CRC right), so the fuzzer reaches the payload fields, the value decoder and the repository.
#include "fuzzcommon.h"

#include "is/journal_p.h"

#include <dialog/is/repository.h>

#include <QtEndian>
#include <memory>

using namespace dialog::is;

extern "C" int LLVMFuzzerInitialize(int *, char ***)
{
    dialog::fuzz::quietQt();
    (void)dialog::fuzz::registry();
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    const QByteArrayView in = dialog::fuzz::bytes(data + 1, size - 1);
    QByteArray file;
    if (data[0] & 1) {
        file = journalformat::encodeHeader(QStringLiteral("Fuzz"), 1);
        char b[4];
        qToLittleEndian(quint32(in.size()), b);
        file.append(b, 4);
        qToLittleEndian(journalformat::crc32(in), b);
        file.append(b, 4);
        file.append(in.data(), in.size());
    } else {
        file = in.toByteArray();
    }
    Repository repository(QStringLiteral("Fuzz"), dialog::fuzz::registry());
    qsizetype seen = 0;
    Layouts layouts;
    std::unique_ptr<Evolution> evolution;
    const journalformat::Decoded d =
        journalformat::decodeSegment(file, QStringLiteral("Fuzz"), [&](const journalformat::Record &r) {
            ++seen;
            // As the replay does: the values after a layout record are read with its layouts.
            Layouts more;
            if (r.kind == journalformat::RecordKind::Layout && Layouts::decode(r.value, &more).isOk()) {
                layouts.merge(more);
                evolution = std::make_unique<Evolution>(dialog::fuzz::registry(), layouts);
            }
            (void)JournalPrivate::apply(repository, r, evolution.get());
        });
    // What the reader says must add up, whatever the bytes.
    if (seen != d.records || d.goodBytes + d.droppedBytes != file.size() ||
        (d.droppedBytes > 0 && d.error.isEmpty()))
        abort();
    return 0;
}
