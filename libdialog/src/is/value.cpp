// Value and the QVariant bridge of Object (generic access for tools that do not know the type).
#include "object_p.h"

#include <QDateTime>
#include <cmath>
#include <limits>

namespace dialog::is {

namespace {

template <typename T> struct IsList : std::false_type
{
};
template <typename T> struct IsList<QList<T>> : std::true_type
{
    using Element = T;
};

bool isSignedId(int id)
{
    return id == QMetaType::Int || id == QMetaType::LongLong || id == QMetaType::Short ||
           id == QMetaType::SChar || id == QMetaType::Long || id == QMetaType::Char;
}

bool isUnsignedId(int id)
{
    return id == QMetaType::UInt || id == QMetaType::ULongLong || id == QMetaType::UShort ||
           id == QMetaType::UChar || id == QMetaType::ULong;
}

// Integers from integer, integral floating-point or decimal-string variants, range-checked.
template <typename T>
bool fromVariant(const QVariant &v, T &out, std::enable_if_t<std::is_integral_v<T>, int> = 0)
{
    const int id = v.typeId();
    if (id == QMetaType::Bool) {
        if constexpr (std::is_same_v<T, bool>) {
            out = v.toBool();
            return true;
        }
        return false;
    }
    if constexpr (std::is_same_v<T, bool>) {
        return false;
    } else {
        bool ok = false;
        bool negative = false;
        quint64 magnitude = 0;
        if (isSignedId(id) || isUnsignedId(id) || id == QMetaType::QString) {
            const bool asSigned = isSignedId(id) || (id == QMetaType::QString &&
                                                     v.toString().trimmed().startsWith(QLatin1Char('-')));
            if (asSigned) {
                const qint64 x = v.toLongLong(&ok);
                negative = x < 0;
                magnitude = negative ? quint64(-(x + 1)) + 1 : quint64(x);
            } else {
                magnitude = v.toULongLong(&ok);
            }
        } else if (id == QMetaType::Double || id == QMetaType::Float) {
            const double x = v.toDouble();
            ok = std::isfinite(x) && x == std::trunc(x) && std::fabs(x) < 18446744073709551616.0;
            negative = x < 0;
            magnitude = ok ? quint64(std::fabs(x)) : 0;
        }
        if (!ok)
            return false;
        if (negative) {
            if constexpr (std::is_unsigned_v<T>) {
                return false;
            } else {
                if (magnitude > quint64(std::numeric_limits<T>::max()) + 1)
                    return false;
                out = T(-qint64(magnitude - 1) - 1);
                return true;
            }
        }
        if (magnitude > quint64(std::numeric_limits<T>::max()))
            return false;
        out = T(magnitude);
        return true;
    }
}

template <typename T>
bool fromVariant(const QVariant &v, T &out, std::enable_if_t<std::is_floating_point_v<T>, int> = 0)
{
    const int id = v.typeId();
    if (id == QMetaType::Bool || !(isSignedId(id) || isUnsignedId(id) || id == QMetaType::Double ||
                                   id == QMetaType::Float || id == QMetaType::QString))
        return false;
    bool ok = false;
    const double x = v.toDouble(&ok);
    if (!ok)
        return false;
    if constexpr (std::is_same_v<T, float>) {
        if (std::isfinite(x) && std::fabs(x) > double(std::numeric_limits<float>::max()))
            return false;
    }
    out = T(x);
    return true;
}

bool fromVariant(const QVariant &v, QString &out)
{
    if (v.typeId() == QMetaType::QString)
        out = v.toString();
    else if (v.typeId() == QMetaType::QByteArray)
        out = QString::fromUtf8(v.toByteArray());
    else
        return false;
    return true;
}

bool fromVariant(const QVariant &v, Time &out)
{
    if (v.typeId() == qMetaTypeId<Time>())
        out = v.value<Time>();
    else if (v.typeId() == QMetaType::QDateTime && v.toDateTime().isValid())
        out = Time::fromDateTime(v.toDateTime());
    else
        return false;
    return true;
}

bool fromVariant(const QVariant &v, Object &out)
{
    if (v.typeId() != qMetaTypeId<Object>())
        return false;
    out = v.value<Object>();
    return true;
}

template <typename T> bool fromVariant(const QVariant &v, QList<T> &out)
{
    if (v.typeId() == qMetaTypeId<QList<T>>()) {
        out = v.value<QList<T>>();
        return true;
    }
    if (!v.canConvert<QVariantList>())
        return false;
    const QVariantList list = v.toList();
    out.clear();
    out.reserve(list.size());
    for (const QVariant &e : list) {
        T x{};
        if (!fromVariant(e, x))
            return false;
        out.append(x);
    }
    return true;
}

} // namespace

QString Value::nestedTypeName() const
{
    if (const Object *o = getIf<Object>())
        return o->typeName();
    if (const QList<Object> *list = getIf<QList<Object>>())
        return list->isEmpty() ? QString() : list->first().typeName();
    return {};
}

QVariant Value::toVariant() const
{
    return std::visit(
        [](const auto &x) -> QVariant {
            using T = std::decay_t<decltype(x)>;
            if constexpr (std::is_same_v<T, std::monostate>) {
                return QVariant();
            } else if constexpr (IsList<T>::value) {
                QVariantList list;
                list.reserve(x.size());
                for (const auto &e : x)
                    list.append(QVariant::fromValue(e));
                return list;
            } else {
                return QVariant::fromValue(x);
            }
        },
        m_data);
}

Status Object::setVariant(int index, const QVariant &value)
{
    if (index < 0 || index >= attributeCount())
        return setValue(index, Value()); // reports the range error
    const AttributeInfo a = d->attributes.at(index);
    Value v;
    v.storage() = defaultStorage(storageIndex(a));
    const bool converted = std::visit(
        [&](auto &x) {
            if constexpr (std::is_same_v<std::decay_t<decltype(x)>, std::monostate>)
                return false;
            else
                return fromVariant(value, x);
        },
        v.storage());
    if (!converted)
        return Status(Status::Code::InvalidObject,
                      QStringLiteral("cannot convert %1 to %2 for attribute '%3' of type '%4'")
                          .arg(QString::fromLatin1(value.typeName() ? value.typeName() : "an invalid QVariant"),
                               describe(a), a.name(), d->typeName));
    return setValue(index, v);
}

} // namespace dialog::is
