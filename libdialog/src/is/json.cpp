// JSON view of IS objects (dialog::is::toJson).
#include "dialog/is/codec.h"

#include <QJsonArray>
#include <cmath>

namespace dialog::is {

namespace {

constexpr quint64 MaxExactDouble = quint64(1) << 53;

template <typename T> QJsonValue toJsonValue(const T &x)
{
    if constexpr (std::is_same_v<T, std::monostate>) {
        return QJsonValue();
    } else if constexpr (std::is_same_v<T, bool>) {
        return x;
    } else if constexpr (std::is_same_v<T, qint64>) {
        if (x >= -qint64(MaxExactDouble) && x <= qint64(MaxExactDouble))
            return double(x);
        return QString::number(x);
    } else if constexpr (std::is_same_v<T, quint64>) {
        return x <= MaxExactDouble ? QJsonValue(double(x)) : QJsonValue(QString::number(x));
    } else if constexpr (std::is_floating_point_v<T>) {
        if (std::isnan(x))
            return QStringLiteral("nan");
        if (std::isinf(x))
            return x > 0 ? QStringLiteral("inf") : QStringLiteral("-inf");
        return double(x);
    } else if constexpr (std::is_arithmetic_v<T>) {
        return double(x);
    } else if constexpr (std::is_same_v<T, QString>) {
        return x;
    } else if constexpr (std::is_same_v<T, Time>) {
        return x.toString();
    } else if constexpr (std::is_same_v<T, Object>) {
        return toJson(x);
    } else {
        QJsonArray array;
        for (const auto &e : x)
            array.append(toJsonValue(e));
        return array;
    }
}

} // namespace

QJsonObject toJson(const Object &object)
{
    QJsonObject json;
    const QList<AttributeInfo> attrs = object.attributes();
    for (int i = 0; i < attrs.size(); ++i)
        json.insert(attrs.at(i).name(),
                    std::visit([](const auto &x) { return toJsonValue(x); }, object.valueAt(i)->storage()));
    return json;
}

} // namespace dialog::is
