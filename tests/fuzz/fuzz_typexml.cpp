// libFuzzer target: the XML type parser (IS type definitions) and the registry's merge of what it
// parsed (bases, cycles, redefinitions), then the JSON form of the types and back.
#include "fuzzcommon.h"

#include <dialog/is/typeregistry.h>

#include <QJsonArray>

using namespace dialog::is;
using dialog::Status;

extern "C" int LLVMFuzzerInitialize(int *, char ***)
{
    dialog::fuzz::quietQt();
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    TypeRegistry registry;
    if (const Status st = registry.loadXml(dialog::fuzz::bytes(data, size), QStringLiteral("fuzz.xml")); !st.isOk()) {
        if (st.message().isEmpty())
            abort(); // a refusal always says why
        return 0;
    }
    const QJsonArray json = typesToJson(registry);
    QList<TypeInfo> types;
    if (!typesFromJson(json, &types).isOk())
        abort(); // what the registry holds must survive its own JSON form
    TypeRegistry again;
    if (!mergeTypes(again, types).isOk())
        abort();
    for (const QString &name : registry.typeNames())
        (void)registry.subtypesOf(name);
    return 0;
}
