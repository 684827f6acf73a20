// libFuzzer target: the web IS's look at every request head of a connection (HttpHeadGuard), fed
// in fuzzer-chosen pieces: several requests, bodies, conflicting lengths, upgrades, endless heads.
// What must hold: a refusal names a status and says why, and a decision is never taken back.
#include "fuzzcommon.h"

#include "httpheadguard.h"

#include <cstdlib>

using dialog::isd::HttpHeadGuard;

extern "C" int LLVMFuzzerInitialize(int *, char ***)
{
    dialog::fuzz::quietQt();
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    const qsizetype piece = data[0] + 1;
    QByteArrayView in = dialog::fuzz::bytes(data + 1, size - 1);
    HttpHeadGuard guard;
    while (!in.isEmpty()) {
        const QByteArrayView now = in.first(qMin(piece, in.size()));
        in = in.sliced(now.size());
        const int before = guard.requests();
        const HttpHeadGuard::Verdict v = guard.feed(now.toByteArray());
        if (guard.requests() < before)
            std::abort();
        if (v == HttpHeadGuard::Verdict::Refuse) {
            if (guard.status().isEmpty() || !guard.body().startsWith(guard.status()))
                std::abort();
            return 0;
        }
        if (v == HttpHeadGuard::Verdict::WebSocket) {
            if (guard.requests() != 1 || !HttpHeadGuard::isUpgradeToWebSocket(guard.head()))
                std::abort();
            return 0;
        }
    }
    return 0;
}
