// Shared internals of dialog::is::Object and Value.
#pragma once

#include "dialog/is/object.h"

#include <QSharedData>
#include <utility>

namespace dialog::is {

class ObjectData : public QSharedData
{
public:
    QString typeName;
    QList<AttributeInfo> attributes; // resolved: base attributes first
    QList<Value> values;             // parallel to attributes
    /// The bytes this object was decoded from (decode() of a QByteArray), handed out by encode()
    /// instead of encoding again: a server validates a written value once and passes the same
    /// bytes to its journal, subscribers and mirrors. Cleared by every change of a value.
    QByteArray encoded;
};

/// Builds Objects without going through the checked setters (decoder, asBase).
class ObjectBuilder
{
public:
    static Object make(const QString &typeName, const QList<AttributeInfo> &attributes, QList<Value> values)
    {
        Object o;
        o.d->typeName = typeName;
        o.d->attributes = attributes;
        o.d->values = std::move(values);
        return o;
    }
    static const QByteArray &encoded(const Object &o) { return o.d->encoded; }
    /// @p o was just decoded from @p bytes (not shared yet: no copy of its data is made).
    static void setEncoded(Object &o, const QByteArray &bytes) { o.d->encoded = bytes; }
};

/// The Value::Storage alternative index that holds values of @p attribute.
inline std::size_t storageIndex(const AttributeInfo &attribute)
{
    return 1 + std::size_t(attribute.type()) + (attribute.isVector() ? BasicTypeCount : 0);
}

/// An empty value of the given alternative (zero, false, empty string or list, epoch, invalid Object).
Value::Storage defaultStorage(std::size_t index);

/// "u32", "vector of double", "Histogram1D", ...
QString describe(const AttributeInfo &attribute);

} // namespace dialog::is
