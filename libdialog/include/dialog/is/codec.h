#pragma once

#include "dialog/is/object.h"
#include "dialog/status.h"

#include <QByteArray>
#include <QByteArrayView>
#include <QJsonObject>

namespace dialog::is {

/// Version byte written first by encode(); decode() rejects any other.
constexpr quint8 EncodingVersion = 1;
/// Deepest nesting of objects decode() accepts (vectors of a type inside itself allow trees).
constexpr int MaxNestingDepth = 32;

/// Binary encoding of an object, little-endian:
///   u8 version (EncodingVersion) | object
///   object := u16 typeNameLen | UTF-8 type name | u16 attributeCount | attribute*
///   attribute := u8 tag (BasicType, | 0x80 for a vector) | value
///   value := scalar | u32 count | scalar*          (vector)
///   scalar := bool u8 (0/1) | integers, float, double in their size | time s64 microseconds
///             | string: u32 byteLen | UTF-8 | nested: object
/// Attribute values are in the type's resolved attribute order.
QByteArray encode(const Object &object);

/// Decodes an encode() result against the types of @p registry into @p out. Every length is
/// checked against the input left, so hostile input gives an error, never a crash or a large
/// allocation. The type, attribute count and tags must match the registry's type exactly.
/// Errors: Status::Code::UnknownType when the input names a type (or a nested type) the registry
/// does not know, Status::Code::InvalidObject for anything else; @p out is then unchanged.
Status decode(QByteArrayView data, const TypeRegistry &registry, Object &out);
/// Same, and @p out keeps @p data (shared, not copied): encode() of it, or of a copy of it not
/// changed since, returns these bytes instead of encoding again. This is how a value is validated
/// once and its bytes carried to every consumer (an IS server's journal, subscribers and mirrors).
Status decode(const QByteArray &data, const TypeRegistry &registry, Object &out);

/// JSON view of an object: attribute name -> value; time as ISO-8601 UTC with microseconds;
/// vectors as arrays; nested objects as objects; 64-bit integers as numbers when |v| <= 2^53,
/// otherwise as decimal strings; non-finite floats as strings ("nan", "inf", "-inf").
QJsonObject toJson(const Object &object);
/// Same; the registry is not needed (an Object carries its attributes) but kept for symmetry.
inline QJsonObject toJson(const Object &object, const TypeRegistry &)
{
    return toJson(object);
}

} // namespace dialog::is
