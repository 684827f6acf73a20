// Internals of dialog::is::Evolution shared with the decoder (codec.cpp): the conversion plan of
// each type whose stored layout differs from the current one.
#pragma once

#include "dialog/is/evolution.h"
#include "dialog/is/typeinfo.h"

#include <QHash>
#include <QList>

namespace dialog::is {

/// How the objects of one type, written with an older layout, become objects of its current type.
struct EvolvedType
{
    QList<AttributeInfo> source; ///< as written, in encoding order
    QList<AttributeInfo> target; ///< the current resolved attributes
    QList<int> from;             ///< per target attribute: its source index, or -1 (its default)
    QList<Conversion> how;       ///< per target attribute
    QList<Value> defaults;       ///< per target attribute, used where from is -1
    Status refusal;              ///< not Ok: objects of this type are not decoded
};
using EvolvedTypes = QHash<QString, EvolvedType>;

/// decode() against @p registry; objects of the types in @p evolved (may be null) are read with
/// their stored layout and converted, which sets @p converted.
Status decodeEvolving(QByteArrayView data, const TypeRegistry &registry, const EvolvedTypes *evolved,
                      Object &out, bool *converted);

/// @p value (held by an attribute of the stored layout) as a value of @p target.
Value convertValue(const Value &value, const AttributeInfo &target, Conversion how);

/// The value an attribute takes when nothing was stored for it: its default text parsed, or the
/// zero of its type (a fresh nested object for a scalar nested attribute).
Value defaultValue(const AttributeInfo &attribute, const TypeRegistry &registry);

/// Parses the default text of a primitive scalar @p attribute; false with @p why if it does not fit.
bool parseDefault(const AttributeInfo &attribute, const QString &text, Value *out, QString *why);

} // namespace dialog::is
