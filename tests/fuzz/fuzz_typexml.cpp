// libFuzzer target: the XML type parser (IS type definitions) and the registry's merge of what it
// parsed (bases, cycles, redefinitions), then the JSON form of the types and back.
#include "fuzzcommon.h"

#include <dialog/is/typeregistry.h>

#include <QJsonArray>

using namespace dialog::is;

extern "C" int LLVMFuzzerInitialize(int *, char ***)
{
    dialog::fuzz::quietQt();
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    TypeRegistry registry;
    QString error;
    if (!registry.loadXml(dialog::fuzz::bytes(data, size), QStringLiteral("fuzz.xml"), &error)) {
        if (error.isEmpty())
            abort();
        return 0;
    }
    const QJsonArray json = typesToJson(registry);
    QList<TypeInfo> types;
    if (!typesFromJson(json, &types, &error))
        abort(); // what the registry holds must survive its own JSON form
    TypeRegistry again;
    if (!mergeTypes(again, types, &error))
        abort();
    for (const QString &name : registry.typeNames())
        (void)registry.subtypesOf(name);
    return 0;
}
