// The library reports errors as dialog::Status, values through out-parameters
// (Status T::fromJson(data, T *out)). QVERIFY_OK checks a Status and prints it when it is not ok; a
// test that only asks "does it read, and as what" takes a reader's result as a std::optional.
#pragma once

#include "dialog/status.h"

#include <QByteArray>
#include <QDebug>
#include <QTest>
#include <optional>

/// Verifies that the dialog::Status @p expr is ok; the failure message is the status.
#define QVERIFY_OK(expr)                                                                                \
    do {                                                                                                \
        const ::dialog::Status verifiedStatus_ = (expr);                                                \
        QVERIFY2(verifiedStatus_.isOk(), qPrintable(verifiedStatus_.toString()));                       \
    } while (false)

namespace dialog::test {

/// The code of @p status, its message in @p message: to compare both, as QCOMPARE(split(f(), &why),
/// Status::Code::NotFound) then QCOMPARE(why, …).
inline Status::Code split(const Status &status, QString *message)
{
    *message = status.message();
    return status.code();
}

/// @p data read by T::fromJson(); std::nullopt (and a warning with the status) if it does not read.
template <typename T> std::optional<T> fromJson(const QByteArray &data)
{
    T out;
    if (const Status s = T::fromJson(data, &out); !s.isOk()) {
        qWarning() << "does not read:" << s.toString();
        return std::nullopt;
    }
    return out;
}

/// @p data read by T::decode(); std::nullopt (and a warning with the status) if it does not read.
template <typename T> std::optional<T> decode(const QByteArray &data)
{
    T out;
    if (const Status s = T::decode(data, &out); !s.isOk()) {
        qWarning() << "does not read:" << s.toString();
        return std::nullopt;
    }
    return out;
}

} // namespace dialog::test
