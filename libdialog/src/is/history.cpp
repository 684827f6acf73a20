#include "dialog/is/history.h"

#include "dialog/is/object.h"

#include <QHash>
#include <QMutex>
#include <QRegularExpression>
#include <QSharedPointer>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

namespace dialog::is {

QList<HistoryPoint> downsample(const QList<HistoryPoint> &points, qsizetype maxPoints)
{
    if (maxPoints <= 0 || points.size() <= maxPoints)
        return points;
    const qint64 first = points.first().time.microsecondsSinceEpoch();
    const qint64 span = points.last().time.microsecondsSinceEpoch() - first + 1;
    QList<HistoryPoint> out;
    out.reserve(maxPoints);
    qsizetype i = 0;
    while (i < points.size()) {
        // The bucket of point i, computed without overflow for long spans.
        const qint64 offset = points.at(i).time.microsecondsSinceEpoch() - first;
        const qint64 bucket = qint64((long double)offset * maxPoints / span);
        const qint64 end = first + qint64(std::ceil((long double)(bucket + 1) * span / maxPoints));
        double sum = 0, sumTime = 0, lo = points.at(i).min, hi = points.at(i).max;
        quint64 count = 0;
        for (; i < points.size() && points.at(i).time.microsecondsSinceEpoch() < end; ++i) {
            const HistoryPoint &p = points.at(i);
            sum += p.value * p.count;
            sumTime += double(p.time.microsecondsSinceEpoch() - first) * p.count;
            lo = qMin(lo, p.min);
            hi = qMax(hi, p.max);
            count += p.count;
        }
        HistoryPoint b;
        b.time = Time(first + qint64(sumTime / double(qMax<quint64>(count, 1))));
        b.value = count ? sum / double(count) : 0;
        b.min = lo;
        b.max = hi;
        b.count = quint32(qMin<quint64>(count, 0xffffffffu));
        out.append(b);
    }
    return out;
}

qint64 parseDurationUs(const QString &text)
{
    qint64 scale = 1;
    QString number = text.trimmed();
    const QChar unit = number.isEmpty() ? QChar() : number.back();
    if (unit == QLatin1Char('s') || unit == QLatin1Char('m') || unit == QLatin1Char('h') ||
        unit == QLatin1Char('d')) {
        scale = unit == QLatin1Char('s')   ? 1
                : unit == QLatin1Char('m') ? 60
                : unit == QLatin1Char('h') ? 3600
                                           : 86400;
        number.chop(1);
    }
    bool ok = false;
    const double v = number.toDouble(&ok);
    if (!ok || !(v >= 0) || v * double(scale) > 1000.0 * 86400)
        return -1;
    return qint64(v * double(scale) * 1e6);
}

namespace {

constexpr int BlockPoints = 128;
constexpr int Shards = 16;

enum class Kind : quint8
{
    Signed,
    Unsigned,
    Real,
};

struct Layout
{
    QList<QString> names;
    std::vector<quint16> index; // attribute index in the object
    std::vector<Kind> kinds;
};

using LayoutPtr = QSharedPointer<const Layout>;

LayoutPtr layoutOf(const Object &object)
{
    auto l = QSharedPointer<Layout>::create();
    const QList<AttributeInfo> attrs = object.attributes();
    for (int i = 0; i < attrs.size(); ++i) {
        const AttributeInfo &a = attrs.at(i);
        if (a.isVector())
            continue;
        Kind k;
        switch (a.type()) {
        case BasicType::Bool:
        case BasicType::U8:
        case BasicType::U16:
        case BasicType::U32:
        case BasicType::U64:
            k = Kind::Unsigned;
            break;
        case BasicType::S8:
        case BasicType::S16:
        case BasicType::S32:
        case BasicType::S64:
            k = Kind::Signed;
            break;
        case BasicType::Float:
        case BasicType::Double:
            k = Kind::Real;
            break;
        default:
            continue;
        }
        l->names.append(a.name());
        l->index.push_back(quint16(i));
        l->kinds.push_back(k);
    }
    return l;
}

/// The raw 64 bits of a numeric value: the integer (two's complement) or the float's bits.
quint64 rawBits(const Value *v)
{
    if (!v)
        return 0;
    return std::visit(
        [](const auto &x) -> quint64 {
            using T = std::decay_t<decltype(x)>;
            if constexpr (std::is_same_v<T, bool>)
                return x ? 1 : 0;
            else if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
                const float f = float(x);
                quint32 b;
                std::memcpy(&b, &f, 4);
                return b;
            } else if constexpr (std::is_integral_v<T>)
                return quint64(qint64(x));
            else
                return 0;
        },
        v->storage());
}

double toDouble(quint64 bits, Kind kind)
{
    switch (kind) {
    case Kind::Signed:
        return double(qint64(bits));
    case Kind::Unsigned:
        return double(bits);
    case Kind::Real: {
        float f;
        const quint32 b = quint32(bits);
        std::memcpy(&f, &b, 4);
        return f;
    }
    }
    return 0;
}

void putVarint(std::vector<quint8> &out, quint64 v)
{
    while (v >= 0x80) {
        out.push_back(quint8(v) | 0x80);
        v >>= 7;
    }
    out.push_back(quint8(v));
}

quint64 getVarint(const quint8 *&p, const quint8 *end)
{
    quint64 v = 0;
    int shift = 0;
    while (p < end && shift < 64) {
        const quint8 b = *p++;
        v |= quint64(b & 0x7f) << shift;
        if (!(b & 0x80))
            break;
        shift += 7;
    }
    return v;
}

quint64 zigzag(qint64 v)
{
    return (quint64(v) << 1) ^ quint64(v >> 63);
}
qint64 unzigzag(quint64 v)
{
    return qint64(v >> 1) ^ -qint64(v & 1);
}

/// Up to BlockPoints values of every numeric attribute of one object. The first point is written
/// whole (time in ms, values); the next ones relative to the previous one.
struct Block
{
    qint64 firstMs = 0, lastMs = 0;
    quint16 count = 0;
    std::vector<quint8> data;
};

struct Series
{
    QString typeName;
    LayoutPtr layout;
    HistoryLimits limits;
    std::vector<Block> blocks; // a handful: a deque would cost 600 bytes per object even when empty
    qint64 total = 0;
    // Encoder state of the open (last) block.
    qint64 prevMs = 0, prevDeltaMs = 0;
    std::vector<quint64> prev;

    void append(qint64 ms, const Object &object)
    {
        if (blocks.empty() || blocks.back().count >= BlockPoints) {
            if (!blocks.empty())
                blocks.back().data.shrink_to_fit();
            blocks.emplace_back();
            Block &b = blocks.back();
            b.firstMs = ms;
            putVarint(b.data, zigzag(ms));
            prevDeltaMs = 0;
            prev.assign(layout->index.size(), 0);
        } else {
            const qint64 delta = ms - prevMs;
            putVarint(blocks.back().data, zigzag(delta - prevDeltaMs));
            prevDeltaMs = delta;
        }
        Block &b = blocks.back();
        for (size_t a = 0; a < layout->index.size(); ++a) {
            const quint64 bits = rawBits(object.valueAt(layout->index[a]));
            if (layout->kinds[a] == Kind::Real)
                putVarint(b.data, bits ^ prev[a]);
            else
                putVarint(b.data, zigzag(qint64(bits - prev[a])));
            prev[a] = bits;
        }
        prevMs = ms;
        b.lastMs = ms;
        ++b.count;
        ++total;
        // Bounds: whole blocks go, once the newer ones are enough or the block is too old.
        const qint64 oldestKept = ms - qint64(limits.seconds) * 1000;
        while (blocks.size() > 1 &&
               (total - blocks.front().count >= limits.count || blocks.front().lastMs < oldestKept)) {
            total -= blocks.front().count;
            blocks.erase(blocks.begin());
        }
    }

    /// Calls @p fn(ms, values) for every point held, oldest first.
    template <typename Fn> void decode(Fn fn) const
    {
        std::vector<quint64> values(layout->index.size());
        for (const Block &b : blocks) {
            const quint8 *p = b.data.data();
            const quint8 *end = p + b.data.size();
            qint64 ms = 0, delta = 0;
            std::fill(values.begin(), values.end(), 0);
            for (int i = 0; i < b.count; ++i) {
                if (i == 0) {
                    ms = unzigzag(getVarint(p, end));
                } else {
                    delta += unzigzag(getVarint(p, end));
                    ms += delta;
                }
                for (size_t a = 0; a < values.size(); ++a) {
                    const quint64 v = getVarint(p, end);
                    if (layout->kinds[a] == Kind::Real)
                        values[a] ^= v;
                    else
                        values[a] += quint64(unzigzag(v));
                }
                fn(ms, values);
            }
        }
    }
};

struct Shard
{
    mutable QMutex lock;
    QHash<QString, Series> series;
};

} // namespace

class HistoryStorePrivate
{
public:
    HistoryLimits defaults;
    mutable QMutex rulesLock;
    QList<HistoryStore::Rule> rules;
    QList<QRegularExpression> patterns; // one per rule (unused for type rules)
    std::array<Shard, Shards> shards;
    mutable QMutex layoutsLock;
    QHash<QString, LayoutPtr> layouts; // by type name: shared by every object of the type

    LayoutPtr layout(const Object &object)
    {
        QMutexLocker l(&layoutsLock);
        LayoutPtr &p = layouts[object.typeName()];
        if (!p)
            p = layoutOf(object);
        return p;
    }

    Shard &shardOf(const QString &name) { return shards[qHash(name) % Shards]; }
    const Shard &shardOf(const QString &name) const { return shards[qHash(name) % Shards]; }
};

HistoryStore::HistoryStore(const HistoryLimits &defaults) : d(std::make_unique<HistoryStorePrivate>())
{
    d->defaults = defaults;
}

HistoryStore::~HistoryStore() = default;

HistoryLimits HistoryStore::defaults() const
{
    return d->defaults;
}

void HistoryStore::setRules(const QList<Rule> &rules)
{
    QList<QRegularExpression> patterns;
    for (const Rule &r : rules)
        patterns.append(r.match == Rule::Match::Name
                            ? QRegularExpression(QRegularExpression::anchoredPattern(r.pattern))
                            : QRegularExpression());
    QMutexLocker l(&d->rulesLock);
    d->rules = rules;
    d->patterns = patterns;
}

Status HistoryStore::parseRules(const QString &text, const HistoryLimits &defaults, QList<Rule> *rules)
{
    QList<Rule> out;
    const QStringList lines = text.split(QLatin1Char('\n'));
    for (int n = 0; n < lines.size(); ++n) {
        QString line = lines.at(n);
        const qsizetype hash = line.indexOf(QLatin1Char('#'));
        if (hash >= 0)
            line.truncate(hash);
        const QStringList words = line.simplified().split(QLatin1Char(' '), Qt::SkipEmptyParts);
        if (words.isEmpty())
            continue;
        const auto bad = [&](const QString &why) {
            return Status(Status::Code::BadRequest, QStringLiteral("line %1: %2").arg(n + 1).arg(why));
        };
        Rule r;
        r.limits = defaults;
        if (words.at(0) == QLatin1String("name"))
            r.match = Rule::Match::Name;
        else if (words.at(0) == QLatin1String("type"))
            r.match = Rule::Match::Type;
        else
            return bad(QStringLiteral("expected 'name REGEX' or 'type TYPE', not '%1'").arg(words.at(0)));
        if (words.size() < 2)
            return bad(QStringLiteral("'%1' needs a pattern").arg(words.at(0)));
        r.pattern = words.at(1);
        if (r.match == Rule::Match::Name) {
            const QRegularExpression re(r.pattern);
            if (!re.isValid())
                return bad(
                    QStringLiteral("invalid regular expression '%1': %2").arg(r.pattern, re.errorString()));
        }
        for (int w = 2; w < words.size(); ++w) {
            const QString &word = words.at(w);
            const qsizetype eq = word.indexOf(QLatin1Char('='));
            bool ok = false;
            const int v = eq > 0 ? word.mid(eq + 1).toInt(&ok) : 0;
            const QString key = word.left(eq);
            if (!ok || v < 0 || (key != QLatin1String("count") && key != QLatin1String("seconds")))
                return bad(QStringLiteral("expected count=N or seconds=S (N, S >= 0), not '%1'").arg(word));
            (key == QLatin1String("count") ? r.limits.count : r.limits.seconds) = v;
        }
        out.append(r);
    }
    *rules = out;
    return {};
}

HistoryLimits HistoryStore::limitsFor(const QString &objectName, const QString &typeName) const
{
    QMutexLocker l(&d->rulesLock);
    for (int i = 0; i < d->rules.size(); ++i) {
        const Rule &r = d->rules.at(i);
        if (r.match == Rule::Match::Type ? r.pattern == typeName
                                         : d->patterns.at(i).match(objectName).hasMatch())
            return r.limits;
    }
    return d->defaults;
}

void HistoryStore::record(const Change &change)
{
    if (change.kind == Change::Kind::Removed)
        remove(change.name);
    else
        append(change.name, change.object, change.time);
}

void HistoryStore::append(const QString &objectName, const Object &object, Time time)
{
    if (!object.isValid())
        return;
    Shard &shard = d->shardOf(objectName);
    QMutexLocker l(&shard.lock);
    auto it = shard.series.find(objectName);
    if (it == shard.series.end() || it->typeName != object.typeName()) {
        const QString type = object.typeName();
        l.unlock(); // the rules and the layouts have their own locks; never hold two
        const HistoryLimits limits = limitsFor(objectName, type);
        LayoutPtr layout = d->layout(object);
        l.relock();
        if (limits.count <= 0 || layout->index.empty()) {
            shard.series.remove(objectName);
            return;
        }
        Series s;
        s.typeName = type;
        s.layout = std::move(layout);
        s.limits = limits;
        it = shard.series.insert(objectName, std::move(s));
    }
    it->append(time.microsecondsSinceEpoch() / 1000, object);
}

void HistoryStore::remove(const QString &objectName)
{
    Shard &shard = d->shardOf(objectName);
    QMutexLocker l(&shard.lock);
    shard.series.remove(objectName);
}

Status HistoryStore::query(const QString &objectName, const QString &attribute, Time from, Time to,
                           qsizetype maxPoints, History *out) const
{
    *out = History();
    out->name = objectName;
    const Shard &shard = d->shardOf(objectName);
    QMutexLocker l(&shard.lock);
    const auto it = shard.series.constFind(objectName);
    if (it == shard.series.cend())
        return Status(Status::Code::NotFound, QStringLiteral("no history of %1").arg(objectName));
    const Series &s = *it;
    out->typeName = s.typeName;
    std::vector<int> wanted;
    if (attribute.isEmpty()) {
        for (int a = 0; a < s.layout->names.size(); ++a)
            wanted.push_back(a);
    } else {
        const int a = int(s.layout->names.indexOf(attribute));
        if (a < 0)
            return Status(Status::Code::BadRequest,
                          QStringLiteral("'%1' is not a numeric attribute of %2 (type %3)")
                              .arg(attribute, objectName, s.typeName));
        wanted.push_back(a);
    }
    // Within the bounds: the newest count values, not older than the age bound.
    const qint64 newestMs = s.blocks.back().lastMs;
    const qint64 skip = qMax<qint64>(0, s.total - s.limits.count);
    const qint64 fromUs = qMax<qint64>(from.microsecondsSinceEpoch(), 0);
    const qint64 fromMs = qMax((fromUs + 999) / 1000, newestMs - qint64(s.limits.seconds) * 1000);
    const qint64 toMs = to.microsecondsSinceEpoch() / 1000;
    QList<QList<HistoryPoint>> points(qsizetype(wanted.size()));
    qint64 n = 0;
    bool first = true;
    s.decode([&](qint64 ms, const std::vector<quint64> &values) {
        if (n++ < skip || ms < fromMs)
            return;
        if (first) {
            out->oldest = Time(ms * 1000);
            first = false;
        }
        if (ms * 1000 == out->oldest.microsecondsSinceEpoch())
            ++out->oldestCount;
        if (ms > toMs)
            return;
        for (size_t w = 0; w < wanted.size(); ++w) {
            const double v = toDouble(values[size_t(wanted[w])], s.layout->kinds[size_t(wanted[w])]);
            points[qsizetype(w)].append(HistoryPoint{Time(ms * 1000), v, v, v, 1});
        }
    });
    if (first) {
        // Nothing in bounds after the requested start: the oldest value held is still reported.
        qint64 m = 0;
        s.decode([&](qint64 ms, const std::vector<quint64> &) {
            if (m++ == skip)
                out->oldest = Time(qMax(ms, newestMs - qint64(s.limits.seconds) * 1000) * 1000);
        });
    }
    const QList<QString> names = s.layout->names;
    l.unlock();
    for (size_t w = 0; w < wanted.size(); ++w)
        out->series.append(
            HistorySeries{names.at(wanted[w]), downsample(points.at(qsizetype(w)), maxPoints)});
    return Status();
}

Status HistoryStore::restore(const QString &objectName, const Object &prototype, const History &history)
{
    if (!prototype.isValid())
        return Status(Status::Code::InvalidObject,
                      QStringLiteral("no object to restore the history of %1 into").arg(objectName));
    if (history.series.isEmpty())
        return Status();
    // The values recorded here since the history was taken (after its last one) are kept.
    History local;
    const Time last =
        history.series.first().points.isEmpty() ? Time() : history.series.first().points.last().time;
    query(objectName, {}, Time(last.microsecondsSinceEpoch() + 1), Time(std::numeric_limits<qint64>::max()),
          0, &local);
    remove(objectName);
    const qsizetype n = history.series.first().points.size();
    QList<int> index;
    for (const HistorySeries &s : history.series) {
        const int i = prototype.indexOf(s.attribute);
        if (i < 0 || s.points.size() != n)
            return Status(Status::Code::InvalidObject,
                          QStringLiteral("the history of %1 does not fit its type %2 (attribute '%3')")
                              .arg(objectName, prototype.typeName(), s.attribute));
        index.append(i);
    }
    Object o = prototype;
    for (qsizetype p = 0; p < n; ++p) {
        for (qsizetype a = 0; a < index.size(); ++a)
            o.setVariant(index.at(a), history.series.at(a).points.at(p).value);
        append(objectName, o, history.series.first().points.at(p).time);
    }
    if (local.typeName == prototype.typeName() && !local.series.isEmpty()) {
        for (qsizetype p = 0; p < local.series.first().points.size(); ++p) {
            for (const HistorySeries &s : std::as_const(local.series))
                o.setVariant(prototype.indexOf(s.attribute), s.points.at(p).value);
            append(objectName, o, local.series.first().points.at(p).time);
        }
    }
    return Status();
}

qsizetype HistoryStore::objectCount() const
{
    qsizetype n = 0;
    for (const Shard &s : d->shards) {
        QMutexLocker l(&s.lock);
        n += s.series.size();
    }
    return n;
}

qint64 HistoryStore::encodedBytes() const
{
    qint64 n = 0;
    for (const Shard &s : d->shards) {
        QMutexLocker l(&s.lock);
        for (const Series &series : s.series)
            for (const Block &b : series.blocks)
                n += qint64(b.data.capacity());
    }
    return n;
}

qint64 HistoryStore::bytesOf(const QString &objectName) const
{
    const Shard &shard = d->shardOf(objectName);
    QMutexLocker l(&shard.lock);
    const auto it = shard.series.constFind(objectName);
    if (it == shard.series.cend())
        return 0;
    qint64 n = qint64(it->prev.capacity() * sizeof(quint64) + it->blocks.capacity() * sizeof(Block));
    for (const Block &b : it->blocks)
        n += qint64(b.data.capacity());
    return n;
}

} // namespace dialog::is
