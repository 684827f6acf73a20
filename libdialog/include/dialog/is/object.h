#pragma once

#include "dialog/is/time.h"
#include "dialog/is/typeinfo.h"
#include "dialog/status.h"

#include <QList>
#include <QSharedDataPointer>
#include <QString>
#include <QVariant>
#include <type_traits>
#include <variant>

namespace dialog::is {

class ObjectData;
class TypeRegistry;
class Value;

/// An IS information value: a type name and one Value per attribute of the type's resolved
/// attribute list (base attributes first). Implicitly shared. Objects are created with create()
/// (every attribute at its default: 0, false, empty, epoch, nested objects at their defaults) or
/// by decode(); an Object() is invalid and has no attributes.
///
/// Access never crashes: an unknown attribute, an index out of range or a value of the wrong
/// type makes get() return a default-constructed T with *ok = false, and set() return
/// Status::Code::InvalidObject with the reason (the object unchanged). Types must match exactly
/// (set<quint32> for a u32 attribute; a nested object must be of exactly the attribute's type).
/// setVariant() converts when no value is lost.
class Object
{
public:
    Object();
    ///@{
    /// Copies and moves share the values (implicit sharing).
    Object(const Object &other);
    Object(Object &&other) noexcept;
    Object &operator=(const Object &other);
    Object &operator=(Object &&other) noexcept;
    ///@}
    ~Object();

    /// A new object of @p typeName with default values into @p out; Status::Code::UnknownType if
    /// @p registry does not know the type (@p out untouched).
    static Status create(const TypeRegistry &registry, const QString &typeName, Object *out);
    /// create() for a type known to be declared: the new object, or an invalid one (isValid() false)
    /// if the type is unknown.
    static Object create(const TypeRegistry &registry, const QString &typeName);

    /// False for a default-constructed object or one create() could not make.
    bool isValid() const;
    /// The object's type.
    QString typeName() const;
    /// The resolved attribute list (base attributes first).
    QList<AttributeInfo> attributes() const;
    /// The number of attributes (base attributes included).
    int attributeCount() const;
    /// -1 if there is no such attribute.
    int indexOf(const QString &attributeName) const;

    /// nullptr when @p index is out of range.
    const Value *valueAt(int index) const;
    /// The value of @p attributeName; nullptr when there is no such attribute.
    const Value *value(const QString &attributeName) const { return valueAt(indexOf(attributeName)); }
    ///@{
    /// Sets an attribute, by index or name, to @p value; Status::Code::InvalidObject (nothing changed)
    /// when there is no such attribute or the value is not of its type.
    Status setValue(int index, const Value &value);
    Status setValue(const QString &attributeName, const Value &value);
    ///@}

    ///@{
    /// The value of an attribute, by index or name, as the C++ type @p T of its IS type; a default T (and @p
    /// ok false) when there is no such attribute or it is of another type.
    template <typename T> T get(int index, bool *ok = nullptr) const;
    template <typename T> T get(const QString &attributeName, bool *ok = nullptr) const
    {
        return get<T>(indexOf(attributeName), ok);
        ///@}
    }
    ///@{
    /// Sets an attribute, by index or name, to @p value of the C++ type of its IS type;
    /// Status::Code::InvalidObject (nothing changed) when there is no such attribute or it is of
    /// another type.
    template <typename T> Status set(int index, T value);
    template <typename T> Status set(const QString &attributeName, T value);
    ///@}

    /// Generic access for tools that do not know the type at compile time: scalars as their C++
    /// type (quint32, Time, QString, Object...), vectors as QVariantList. Invalid QVariant on error.
    QVariant variant(int index) const;
    /// variant() by attribute name.
    QVariant variant(const QString &attributeName) const { return variant(indexOf(attributeName)); }
    /// Converts @p value to the attribute's type; Status::Code::InvalidObject (nothing changed) if
    /// there is no such attribute or the value does not fit (range, non-number...).
    Status setVariant(int index, const QVariant &value);
    /// setVariant() by attribute name.
    Status setVariant(const QString &attributeName, const QVariant &value);

    /// This object read as its base type @p baseName (the IS inheritance rule) into @p out: the first
    /// N values, where N is the base's attribute count, under the base's name.
    /// Status::Code::UnknownType if @p registry does not know @p baseName, TypeMismatch if the type is
    /// not @p baseName nor derived from it (@p out untouched).
    Status asBase(const TypeRegistry &registry, const QString &baseName, Object *out) const;

    /// Equal when the types and every value are.
    friend bool operator==(const Object &a, const Object &b);
    /// Not equal when the types or a value differ.
    friend bool operator!=(const Object &a, const Object &b) { return !(a == b); }

private:
    friend class ObjectBuilder;
    Status noAttribute(const QString &attributeName) const;
    QSharedDataPointer<ObjectData> d;
};

/// One attribute value: empty, or a scalar / vector of one of the IS types. Cheap to copy.
class Value
{
public:
    // Alternative index = 1 + BasicType for scalars, 1 + BasicTypeCount + BasicType for vectors.
    /// Every scalar and vector of the IS types, and the empty value (std::monostate).
    using Storage =
        std::variant<std::monostate, bool, qint8, quint8, qint16, quint16, qint32, quint32, qint64, quint64,
                     float, double, QString, Time, Object, QList<bool>, QList<qint8>, QList<quint8>,
                     QList<qint16>, QList<quint16>, QList<qint32>, QList<quint32>, QList<qint64>,
                     QList<quint64>, QList<float>, QList<double>, QList<QString>, QList<Time>, QList<Object>>;

    template <typename T>
    /// True for the C++ types a Value can hold.
    static constexpr bool isStorable =
        !std::is_same_v<T, std::monostate> && std::is_constructible_v<Storage, std::in_place_type_t<T>, T>;

    Value() = default;
    template <typename T, std::enable_if_t<isStorable<std::decay_t<T>>, int> = 0>
    /// A value holding @p v (one of the IS types).
    Value(T &&v) : m_data(std::in_place_type<std::decay_t<T>>, std::forward<T>(v))
    {
    }
    /// A string value from UTF-8.
    Value(const char *utf8) : m_data(QString::fromUtf8(utf8)) {}

    /// The empty value of a default-constructed Value (never held by a valid Object).
    bool isNull() const { return m_data.index() == 0; }
    /// Element type for vectors. Meaningless when isNull().
    BasicType type() const { return BasicType((m_data.index() - 1) % BasicTypeCount); }
    /// True for a vector of values.
    bool isVector() const { return m_data.index() > BasicTypeCount; }
    /// Type name of the nested object (or of the vector's first element, else empty).
    QString nestedTypeName() const;

    /// The held value as a @p T, or nullptr when it holds another type.
    template <typename T> const T *getIf() const { return std::get_if<T>(&m_data); }
    ///@{
    /// The held value as a std::variant.
    const Storage &storage() const { return m_data; }
    Storage &storage() { return m_data; }
    ///@}

    /// See Object::variant().
    QVariant toVariant() const;

    /// Equal when the types and the values are.
    friend bool operator==(const Value &a, const Value &b) { return a.m_data == b.m_data; }
    /// Not equal when the types or the values differ.
    friend bool operator!=(const Value &a, const Value &b) { return !(a == b); }

private:
    Storage m_data;
};

template <typename T> T Object::get(int index, bool *ok) const
{
    const Value *v = valueAt(index);
    const T *p = v ? v->getIf<T>() : nullptr;
    if (ok)
        *ok = p != nullptr;
    return p ? *p : T{};
}

template <typename T> Status Object::set(int index, T value)
{
    static_assert(Value::isStorable<T> || std::is_same_v<T, const char *>, "not an IS value type");
    return setValue(index, Value(std::move(value)));
}

template <typename T> Status Object::set(const QString &attributeName, T value)
{
    const int index = indexOf(attributeName);
    if (index < 0)
        return noAttribute(attributeName);
    return set<T>(index, std::move(value));
}

} // namespace dialog::is

Q_DECLARE_METATYPE(dialog::is::Object)
