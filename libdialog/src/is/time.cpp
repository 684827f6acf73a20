#include "dialog/is/time.h"

#include <QtNumeric>

namespace dialog::is {

Time Time::fromDateTime(const QDateTime &dateTime)
{
    if (!dateTime.isValid())
        return Time();
    qint64 us = 0;
    if (qMulOverflow(dateTime.toMSecsSinceEpoch(), qint64(1000), &us))
        return Time(); // beyond what microseconds since the epoch can hold
    return Time(us);
}

Time Time::currentTime()
{
    return fromDateTime(QDateTime::currentDateTimeUtc());
}

QDateTime Time::toDateTime() const
{
    // Floor division so that times before the epoch round towards the past.
    const qint64 ms = m_us >= 0 ? m_us / 1000 : -((-(m_us + 1)) / 1000) - 1;
    return QDateTime::fromMSecsSinceEpoch(ms, Qt::UTC);
}

QString Time::toString() const
{
    const qint64 secs = m_us >= 0 ? m_us / 1000000 : -((-(m_us + 1)) / 1000000) - 1;
    // Not m_us - secs * 1000000: for times near the ends of the range that product overflows.
    const qint64 frac = m_us % 1000000 < 0 ? m_us % 1000000 + 1000000 : m_us % 1000000;
    QString s = QDateTime::fromSecsSinceEpoch(secs, Qt::UTC).toString(Qt::ISODate);
    if (s.endsWith(QLatin1Char('Z')))
        s.chop(1);
    return s + QLatin1Char('.') + QStringLiteral("%1").arg(frac, 6, 10, QLatin1Char('0')) + QLatin1Char('Z');
}

} // namespace dialog::is
