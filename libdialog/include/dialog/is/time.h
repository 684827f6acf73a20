#pragma once

#include <QDateTime>
#include <QMetaType>
#include <QString>

namespace dialog::is {

/// An IS `time` attribute: a UTC timestamp with microsecond resolution (QDateTime only has
/// milliseconds). The default value is the Unix epoch.
class Time
{
public:
    constexpr Time() = default;
    /// The time @p microsecondsSinceEpoch µs after the Unix epoch.
    constexpr explicit Time(qint64 microsecondsSinceEpoch) : m_us(microsecondsSinceEpoch) {}

    /// From a QDateTime (millisecond precision); an invalid QDateTime gives the epoch.
    static Time fromDateTime(const QDateTime &dateTime);
    /// Now, from the system clock (microsecond precision).
    static Time currentTime();

    /// Microseconds since the Unix epoch (UTC).
    constexpr qint64 microsecondsSinceEpoch() const { return m_us; }
    /// UTC, truncated to milliseconds.
    QDateTime toDateTime() const;
    /// ISO-8601 in UTC with six fractional digits, e.g. "2024-05-01T12:00:00.123456Z".
    QString toString() const;

    ///@{
    /// Comparisons of the instants.
    friend constexpr bool operator==(Time a, Time b) { return a.m_us == b.m_us; }
    friend constexpr bool operator!=(Time a, Time b) { return a.m_us != b.m_us; }
    friend constexpr bool operator<(Time a, Time b) { return a.m_us < b.m_us; }
    ///@}

private:
    qint64 m_us = 0;
};

} // namespace dialog::is

Q_DECLARE_METATYPE(dialog::is::Time)
