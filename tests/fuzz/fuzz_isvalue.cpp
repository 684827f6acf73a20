// libFuzzer target: the IS value codec and the notification records of a subscription stream, as
// an IS server or a subscriber decodes what a peer sent. A value that decodes must re-encode to
// the same object and have a JSON view.
#include "fuzzcommon.h"

#include "is/protocol_p.h"

#include <dialog/is/codec.h>
#include <dialog/is/object.h>

using namespace dialog::is;

extern "C" int LLVMFuzzerInitialize(int *, char ***)
{
    dialog::fuzz::quietQt();
    (void)dialog::fuzz::registry();
    return 0;
}

namespace {

void value(QByteArrayView data)
{
    Object o;
    if (const dialog::Status st = decode(data, dialog::fuzz::registry(), o); !st.isOk()) {
        if (st.message().isEmpty())
            abort();
        return;
    }
    // Invalid UTF-8 in a string decodes to U+FFFD, so the input may differ from its re-encoding;
    // from there on the encoding is stable: decode(encode(o)) == o, byte for byte.
    const QByteArray once = encode(o);
    Object again;
    if (!decode(once, dialog::fuzz::registry(), again).isOk() || encode(again) != once) {
        fprintf(stderr, "input   %s\nencoded %s\n", data.toByteArray().toHex().constData(),
                once.toHex().constData());
        abort();
    }
    (void)toJson(o);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    const QByteArrayView in = dialog::fuzz::bytes(data + 1, size - 1);
    if (!(data[0] & 1)) {
        value(in);
        return 0;
    }
    // A stream message: records, each value decoded as a subscriber does.
    qsizetype pos = 0;
    protocol::RecordView r;
    while (pos < in.size() && protocol::nextRecord(in, pos, r).isOk()) {
        if (pos > in.size() || r.nameOffset + r.nameLength > in.size() ||
            r.typeOffset + r.typeLength > in.size() || r.valueOffset + qsizetype(r.valueLength) > in.size())
            abort(); // a record view must stay inside the batch
        (void)QString::fromUtf8(in.sliced(r.nameOffset, r.nameLength));
        if (r.kind == protocol::Created || r.kind == protocol::Updated)
            value(in.sliced(r.valueOffset, r.valueLength));
    }
    return 0;
}
