// libFuzzer target: the partition JSON (dialogctl up, the supervisor, the run-control master) and
// the command lines built from it.
#include "fuzzcommon.h"

#include <dialog/rc/partition.h>

using namespace dialog::rc;

extern "C" int LLVMFuzzerInitialize(int *, char ***)
{
    dialog::fuzz::quietQt();
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    Partition p;
    const dialog::Status st =
        Partition::parse(dialog::fuzz::bytes(data, size).toByteArray(), QStringLiteral("fuzz.json"), &p);
    if (!st.isOk()) {
        if (st.message().isEmpty() || st.code() != dialog::Status::Code::InvalidObject)
            abort();
        return 0;
    }
    (void)p.controlServerAddress();
    for (const ProcessSpec &s : p.processes()) {
        (void)s.program();
        (void)s.arguments(p);
        (void)s.isLocal();
    }
    return 0;
}
