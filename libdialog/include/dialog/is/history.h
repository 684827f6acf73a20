#pragma once

#include "dialog/is/repository.h"
#include "dialog/is/time.h"
#include "dialog/status.h"

#include <QList>
#include <QMetaType>
#include <QString>
#include <memory>

namespace dialog::is {

class TypeRegistry;

/// One point of a history: a value at a time, or, once downsampled, the mean of @p count values
/// with their extremes (min/max/mean buckets).
struct HistoryPoint
{
    Time time;         ///< the value's time; for a bucket, the mean time of its values
    double value = 0;  ///< the value; for a bucket, the mean
    double min = 0;    ///< equal to value for a raw point
    double max = 0;    ///< equal to value for a raw point
    quint32 count = 1; ///< values summarised by this point
};

/// The history of one numeric attribute, oldest point first.
struct HistorySeries
{
    /// The attribute's name.
    QString attribute;
    /// Its values.
    QList<HistoryPoint> points;
};

/// The history of one object, as returned by Dictionary::history() and HistoryStore::query().
struct History
{
    QString name;     ///< "Server.Object" (the store answers with the bare object name)
    QString typeName; ///< type of the values held (empty when nothing is held)
    /// Time of the oldest value the server's ring holds (the epoch when it holds none): a query
    /// reaching before it is answered from the archive, when one runs.
    Time oldest;
    /// How many of the ring's values carry exactly the time @p oldest (the server stamps changes to
    /// the millisecond): the archive adds the others of that millisecond.
    quint32 oldestCount = 0;
    QList<HistorySeries> series; ///< one per numeric attribute asked for, in attribute order
};

/// Reduces @p points (sorted by time) to at most @p maxPoints with min/max/mean buckets: the span
/// of the points is cut into @p maxPoints buckets of equal duration; each non-empty bucket becomes
/// one point holding the count-weighted mean, the smallest min and the largest max of its points.
/// Points are returned as they are when there are no more than @p maxPoints (or maxPoints <= 0).
QList<HistoryPoint> downsample(const QList<HistoryPoint> &points, qsizetype maxPoints);

/// A duration as written on command lines and in URLs: "90", "90s", "10m", "2h", "7d" (a number,
/// optionally fractional, and a unit; seconds without one), in microseconds; -1 when @p text is not
/// such a duration (or is longer than 1,000 days).
qint64 parseDurationUs(const QString &text);

/// Bounds of the history of one object: the newest @p count values not older than @p seconds
/// (measured from the object's newest value). A count of 0 keeps no history.
struct HistoryLimits
{
    /// The newest values kept (0: no history).
    int count = 600;
    /// The age bound, in seconds from the object's newest value.
    int seconds = 3600;
    /// Equal when both bounds are.
    friend bool operator==(const HistoryLimits &a, const HistoryLimits &b)
    {
        return a.count == b.count && a.seconds == b.seconds;
    }
};

class HistoryStorePrivate;

/// The recent values of the numeric attributes of every object of an IS server (the IS server's
/// history ring), held compactly.
///
/// Only scalar numeric attributes are kept (bool, integers, float, double; not strings, times,
/// vectors or nested objects): they are what is plotted, and they compress to a few bytes per
/// value. Integers are kept exactly (zig-zag varint of the difference to the previous value);
/// float and double values are kept with float precision (about 7 significant digits: the XOR of
/// the previous value's bits, as a varint); times are kept to the millisecond (varint of the
/// difference of successive intervals). Values are appended to blocks of 128 points; the oldest
/// block is dropped once the newer ones hold the object's count or it is older than its age bound,
/// so an object holds at most count + 127 values and queries return the newest count.
///
/// Limits come from the defaults, overridden by rules (setRules(), parseRules()) chosen once per
/// object when its first value is recorded: the first rule matching the object's name (a regular
/// expression on the object name without the server prefix) or type wins.
///
/// Thread safety: every function may be called from any thread (the objects are spread over
/// independently locked shards).
class HistoryStore
{
public:
    /// The limits of the objects a name pattern or a type selects.
    struct Rule
    {
        /// What the pattern is matched against.
        enum class Match
        {
            Name, ///< @p pattern is a regular expression matched against the whole object name
            Type, ///< @p pattern is a type name (exactly that type)
        };
        /// Name or Type.
        Match match = Match::Name;
        /// The regular expression or the type name.
        QString pattern;
        /// The limits of the objects the rule selects.
        HistoryLimits limits;
    };

    /// A store whose objects get @p defaults unless a rule says otherwise.
    explicit HistoryStore(const HistoryLimits &defaults = HistoryLimits());
    ~HistoryStore();
    HistoryStore(const HistoryStore &) = delete;
    HistoryStore &operator=(const HistoryStore &) = delete;

    /// The limits of objects no rule selects.
    HistoryLimits defaults() const;
    /// Replaces the rules; objects already held keep the limits they were given.
    void setRules(const QList<Rule> &rules);
    /// Parses a rules file into @p rules (untouched on failure): one rule a line,
    /// `name REGEX [count=N] [seconds=S]` or `type TYPE [count=N] [seconds=S]` (an omitted bound is
    /// the default's), '#' starts a comment. Status::Code::BadRequest with the line and the reason.
    static Status parseRules(const QString &text, const HistoryLimits &defaults, QList<Rule> *rules);
    /// The limits an object of that name and type is given.
    HistoryLimits limitsFor(const QString &objectName, const QString &typeName) const;

    /// Records a change (a Repository listener): the numeric values of a created or updated object
    /// are appended to its history (which starts afresh if the object's type changed); a removed
    /// object's history is dropped.
    void record(const Change &change);
    /// Appends the numeric values of @p object at @p time to the history of @p objectName.
    void append(const QString &objectName, const Object &object, Time time);
    /// Drops the history of @p objectName.
    void remove(const QString &objectName);

    /// The history of @p objectName between @p from and @p to (inclusive) for @p attribute (empty:
    /// every numeric attribute), at most @p maxPoints per series (<= 0: all). NotFound when
    /// nothing is held for the object; BadRequest when @p attribute is not one of its numeric
    /// attributes.
    Status query(const QString &objectName, const QString &attribute, Time from, Time to, qsizetype maxPoints,
                 History *out) const;
    /// Replaces the history of @p objectName by @p history (raw points, as a mirror copies its
    /// master's), followed by the values held here that are newer than its last one. The series
    /// must be numeric attributes of @p prototype (an object of the history's type) and of the same
    /// length.
    Status restore(const QString &objectName, const Object &prototype, const History &history);

    /// Objects with a history held.
    qsizetype objectCount() const;
    /// Bytes of encoded values held (blocks only, without the bookkeeping of each object).
    qint64 encodedBytes() const;
    /// Bytes held for @p objectName: its blocks and its encoder state (0 when none is held). What
    /// an IS server counts against the quota of the object's owner.
    qint64 bytesOf(const QString &objectName) const;

private:
    std::unique_ptr<HistoryStorePrivate> const d;
};

} // namespace dialog::is

Q_DECLARE_METATYPE(dialog::is::History)
