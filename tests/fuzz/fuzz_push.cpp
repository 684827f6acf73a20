// libFuzzer target: the mirror side of the push-mirror protocol (isserver/pushprotocol.h and
// pushcopy.h), as a mirror takes what an accepted master sends: the byte stream cut into frames as
// PushReceiver cuts it, the Types and Records frames applied to a fresh copy that holds the
// master's hello types. Half the inputs are the raw stream (headers, magic, lengths); the other half
// a list of (type, length, payload) pieces that the target frames correctly, so that the fuzzer
// reaches the payloads. What must hold: a refused stream says why, no frame larger than MaxPayload
// is taken, and the copy never holds an object whose type its registry does not know.
#include "fuzzcommon.h"

#include "pushcopy.h"
#include "pushprotocol.h"

#include <dialog/is/repository.h>
#include <dialog/is/typeregistry.h>

#include <QJsonArray>
#include <QJsonDocument>
#include <QtEndian>
#include <memory>

using namespace dialog;
namespace push = dialog::isd::push;

namespace {

/// The master's types, as its hello carries them.
const QJsonArray &helloTypes()
{
    static const QJsonArray types = is::typesToJson(fuzz::registry());
    return types;
}

/// The raw stream of @p in, or (@p framed) the stream the pieces of @p in make: each piece a type
/// byte, a 16-bit little-endian length and that many payload bytes (fewer at the end).
QByteArray stream(QByteArrayView in, bool framed)
{
    if (!framed)
        return in.toByteArray();
    QByteArray out;
    while (in.size() >= 3) {
        const auto type = push::Type(quint8(in[0]));
        const qsizetype length = qMin<qsizetype>(qFromLittleEndian<quint16>(in.data() + 1), in.size() - 3);
        out += push::encode(type, in.sliced(3, length).toByteArray());
        in = in.sliced(3 + length);
    }
    return out;
}

void refusedWithReason(const QString &error)
{
    if (error.isEmpty())
        abort(); // a refusal that does not say why
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***)
{
    dialog::fuzz::quietQt();
    (void)helloTypes();
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    QByteArray buffer = stream(dialog::fuzz::bytes(data + 1, size - 1), data[0] & 1);
    const auto types = std::make_unique<is::TypeRegistry>();
    is::Repository copyOf(QStringLiteral("FuzzMirror"), *types);
    isd::PushCopy copy(copyOf, *types, [](const QString &) {});
    QString error;
    if (!copy.takeTypes(helloTypes(), &error)) {
        fprintf(stderr, "fuzz_push: the hello's types are refused: %s\n", qPrintable(error));
        abort();
    }
    for (bool more = true; more;) {
        push::Frame f;
        error.clear();
        switch (push::take(buffer, &f, &error)) {
        case push::Take::Incomplete:
            more = false;
            break;
        case push::Take::Error:
            refusedWithReason(error);
            more = false;
            break;
        case push::Take::Frame:
            if (f.payload.size() > qsizetype(push::MaxPayload))
                abort();
            if (f.type == push::Type::Records) {
                more = copy.records(f.payload, &error);
            } else if (f.type == push::Type::Types) {
                const QJsonDocument doc = QJsonDocument::fromJson(f.payload);
                more = doc.isArray() && copy.takeTypes(doc.array(), &error);
                if (!doc.isArray())
                    error = QStringLiteral("types that are not a JSON array");
            } else if (f.type == push::Type::Hello) {
                (void)QJsonDocument::fromJson(f.payload).object();
            }
            if (!more)
                refusedWithReason(error);
            break;
        }
    }
    for (const is::ObjectInfo &o : copyOf.list())
        if (!types->contains(o.typeName))
            abort();
    return 0;
}
