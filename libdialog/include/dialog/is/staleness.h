#pragma once

#include "dialog/is/time.h"

#include <QJsonObject>
#include <QString>

namespace dialog::is {

/// Whether an IS object's value can still be trusted, as its IS server sees it. An object is
/// stale when the process that wrote it last was lost (killed or stopped, not cleanly gone) or
/// when it was not written within its type's expected interval (TypeInfo::expectedIntervalS);
/// its next write makes it fresh. A plain value class; every read from a server carries one
/// (Entry::staleness).
struct Staleness
{
    bool writerLost = false;      ///< the process that wrote the object last was declared lost
    bool overdue = false;         ///< older than its type's expected interval
    qint64 ageUs = -1;            ///< time since its last write when the server answered; -1: not known
    double expectedIntervalS = 0; ///< its type's expected interval; 0: none declared

    /// Stale: the writer was lost or the object is overdue.
    bool isStale() const { return writerLost || overdue; }
    /// "writer lost", "not updated for 3.2 s (expected every 1 s)", both joined by "; ", or empty.
    QString reason() const;
    /// Adds "stale" (bool), "age_s" (seconds, ms precision) when the age is known,
    /// "stale_reason" when stale and "expected_interval_s" when declared.
    void addTo(QJsonObject &json) const;

    /// An age for people: "4 s", "3 min", "2 h 5 min", "3 d".
    static QString ageText(qint64 us);
    /// The staleness at @p now of an object last written at @p lastWrite.
    static Staleness evaluate(bool writerLost, Time lastWrite, double expectedIntervalS, Time now);
};

} // namespace dialog::is
