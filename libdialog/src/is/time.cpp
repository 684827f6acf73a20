#include "dialog/is/time.h"

namespace dialog::is {

Time Time::fromDateTime(const QDateTime &dateTime)
{
    if (!dateTime.isValid())
        return Time();
    return Time(dateTime.toMSecsSinceEpoch() * 1000);
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
    const qint64 frac = m_us - secs * 1000000;
    QString s = QDateTime::fromSecsSinceEpoch(secs, Qt::UTC).toString(Qt::ISODate);
    if (s.endsWith(QLatin1Char('Z')))
        s.chop(1);
    return s + QLatin1Char('.') + QStringLiteral("%1").arg(frac, 6, 10, QLatin1Char('0')) + QLatin1Char('Z');
}

} // namespace dialog::is
