#include "dialog/is/staleness.h"

namespace dialog::is {

namespace {

QString seconds(double s)
{
    // 0.25 s, 3.2 s, 45 s, 1234 s: enough digits to read, no more.
    return QString::number(s, 'f', s < 1 ? 2 : s < 10 ? 1 : 0);
}

} // namespace

QString Staleness::reason() const
{
    QStringList why;
    if (writerLost)
        why << QStringLiteral("writer lost");
    if (overdue)
        why << QStringLiteral("not updated for %1 s (expected every %2 s)")
                   .arg(seconds(ageUs / 1e6), QString::number(expectedIntervalS));
    return why.join(QLatin1String("; "));
}

void Staleness::addTo(QJsonObject &json) const
{
    json.insert(QStringLiteral("stale"), isStale());
    if (ageUs >= 0)
        json.insert(QStringLiteral("age_s"), double(ageUs / 1000) / 1000.0);
    if (isStale())
        json.insert(QStringLiteral("stale_reason"), reason());
    if (expectedIntervalS > 0)
        json.insert(QStringLiteral("expected_interval_s"), expectedIntervalS);
}

Staleness Staleness::evaluate(bool writerLost, Time lastWrite, double expectedIntervalS, Time now)
{
    Staleness s;
    s.writerLost = writerLost;
    s.expectedIntervalS = expectedIntervalS > 0 ? expectedIntervalS : 0;
    // A clock that went back (or a mirror's master ahead of it) gives no negative age.
    s.ageUs = qMax<qint64>(0, now.microsecondsSinceEpoch() - lastWrite.microsecondsSinceEpoch());
    s.overdue = s.expectedIntervalS > 0 && double(s.ageUs) > s.expectedIntervalS * 1e6;
    return s;
}

QString Staleness::ageText(qint64 us)
{
    const qint64 s = qMax<qint64>(0, us / 1000000);
    if (s < 120)
        return QStringLiteral("%1 s").arg(s);
    if (s < 3600)
        return QStringLiteral("%1 min").arg(s / 60);
    if (s < 86400)
        return QStringLiteral("%1 h %2 min").arg(s / 3600).arg(s % 3600 / 60);
    return QStringLiteral("%1 d").arg(s / 86400);
}

} // namespace dialog::is
