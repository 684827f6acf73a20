#include "evolution_p.h"
#include "object_p.h"

#include "dialog/is/typeregistry.h"

namespace dialog::is {

namespace {

template <std::size_t... I> Value::Storage makeStorage(std::size_t index, std::index_sequence<I...>)
{
    Value::Storage s;
    (void)((index == I ? (s.template emplace<I>(), true) : false) || ...);
    return s;
}

QString describeValue(const Value &v)
{
    if (v.isNull())
        return QStringLiteral("empty");
    const QString element =
        v.type() == BasicType::Object ? QStringLiteral("object") : basicTypeName(v.type());
    return v.isVector() ? QStringLiteral("vector of ") + element : element;
}

// Nested objects must be valid and of exactly the attribute's type.
bool checkNested(const AttributeInfo &attribute, const Value &value, QString *bad)
{
    const auto ok = [&](const Object &o) {
        if (o.typeName() == attribute.typeName())
            return true;
        *bad = o.isValid() ? o.typeName() : QStringLiteral("an invalid object");
        return false;
    };
    if (const Object *o = value.getIf<Object>())
        return ok(*o);
    if (const QList<Object> *list = value.getIf<QList<Object>>()) {
        for (const Object &o : *list) {
            if (!ok(o))
                return false;
        }
    }
    return true;
}

} // namespace

Value::Storage defaultStorage(std::size_t index)
{
    return makeStorage(index, std::make_index_sequence<std::variant_size_v<Value::Storage>>());
}

QString describe(const AttributeInfo &attribute)
{
    return attribute.isVector() ? QStringLiteral("vector of ") + attribute.typeName() : attribute.typeName();
}

Object::Object() : d(new ObjectData) {}
Object::Object(const Object &other) = default;
Object::Object(Object &&other) noexcept = default;
Object &Object::operator=(const Object &other) = default;
Object &Object::operator=(Object &&other) noexcept = default;
Object::~Object() = default;

Object Object::create(const TypeRegistry &registry, const QString &typeName)
{
    Object o;
    (void)create(registry, typeName, &o);
    return o;
}

Status Object::create(const TypeRegistry &registry, const QString &typeName, Object *out)
{
    const TypeInfo type = registry.type(typeName);
    if (!type.isValid())
        return Status(Status::Code::UnknownType, QStringLiteral("unknown type '%1'").arg(typeName));
    const QList<AttributeInfo> attributes = type.allAttributes();
    QList<Value> values;
    values.reserve(attributes.size());
    for (const AttributeInfo &a : attributes) {
        // Nested types cannot contain themselves (checked on declaration), so this terminates.
        values.append(defaultValue(a, registry));
    }
    *out = ObjectBuilder::make(typeName, attributes, values);
    return {};
}

bool Object::isValid() const
{
    return !d->typeName.isEmpty();
}

QString Object::typeName() const
{
    return d->typeName;
}

QList<AttributeInfo> Object::attributes() const
{
    return d->attributes;
}

int Object::attributeCount() const
{
    return int(d->attributes.size());
}

int Object::indexOf(const QString &attributeName) const
{
    for (int i = 0; i < d->attributes.size(); ++i) {
        if (d->attributes.at(i).name() == attributeName)
            return i;
    }
    return -1;
}

const Value *Object::valueAt(int index) const
{
    return index >= 0 && index < d->values.size() ? &d->values.at(index) : nullptr;
}

Status Object::noAttribute(const QString &attributeName) const
{
    return Status(Status::Code::InvalidObject,
                  QStringLiteral("no attribute '%1' in type '%2'").arg(attributeName, d->typeName));
}

Status Object::setValue(int index, const Value &value)
{
    if (index < 0 || index >= d->values.size())
        return Status(Status::Code::InvalidObject,
                      QStringLiteral("attribute index %1 out of range for type '%2' (%3 attributes)")
                          .arg(index)
                          .arg(d->typeName)
                          .arg(d->values.size()));
    const AttributeInfo &a = d->attributes.at(index);
    if (value.storage().index() != storageIndex(a))
        return Status(Status::Code::InvalidObject, QStringLiteral("attribute '%1' of type '%2' is %3, not %4")
                                                       .arg(a.name(), d->typeName, describe(a), describeValue(value)));
    QString bad;
    if (a.type() == BasicType::Object && !checkNested(a, value, &bad))
        return Status(Status::Code::InvalidObject, QStringLiteral("attribute '%1' of type '%2' holds %3 objects, not %4")
                                                       .arg(a.name(), d->typeName, a.typeName(), bad));
    d->values[index] = value;
    d->encoded.clear();
    return {};
}

Status Object::setValue(const QString &attributeName, const Value &value)
{
    const int index = indexOf(attributeName);
    if (index < 0)
        return noAttribute(attributeName);
    return setValue(index, value);
}

QVariant Object::variant(int index) const
{
    const Value *v = valueAt(index);
    return v ? v->toVariant() : QVariant();
}

Status Object::setVariant(const QString &attributeName, const QVariant &value)
{
    const int index = indexOf(attributeName);
    if (index < 0)
        return noAttribute(attributeName);
    return setVariant(index, value);
}

Status Object::asBase(const TypeRegistry &registry, const QString &baseName, Object *out) const
{
    if (!registry.contains(baseName))
        return Status(Status::Code::UnknownType, QStringLiteral("unknown type '%1'").arg(baseName));
    if (!registry.isSameOrDerived(d->typeName, baseName))
        return Status(Status::Code::TypeMismatch,
                      QStringLiteral("type '%1' is not '%2' nor derived from it").arg(d->typeName, baseName));
    const QList<AttributeInfo> attributes = registry.type(baseName).allAttributes();
    // Base attributes come first in a derived type, so the base's view is a prefix.
    *out = ObjectBuilder::make(baseName, attributes, d->values.mid(0, attributes.size()));
    return {};
}

bool operator==(const Object &a, const Object &b)
{
    return a.d == b.d || (a.d->typeName == b.d->typeName && a.d->values == b.d->values);
}

} // namespace dialog::is
