// The values of dialog::sampling: the sample's wire form and the consumers' criteria.
#include "dialog/sampling.h"

#include <QRegularExpression>
#include <QtEndian>
#include <cstring>

namespace dialog::sampling {

namespace {

constexpr quint32 SampleMagic = 0x31504d53; // "SMP1"

const QList<std::pair<QString, quint32>> &triggerNames()
{
    static const QList<std::pair<QString, quint32>> names{{QStringLiteral("physics"), Physics},
                                                          {QStringLiteral("calibration"), Calibration},
                                                          {QStringLiteral("random"), Random}};
    return names;
}

Status bad(const QString &why)
{
    return Status(Status::Code::BadRequest, why);
}

Status parseTriggers(const QString &value, QList<quint32> *out)
{
    QList<quint32> types;
    for (const QString &item : value.split(QLatin1Char(','), Qt::SkipEmptyParts)) {
        bool ok = false;
        const quint32 n = item.toUInt(&ok);
        if (ok && n > 0) {
            types.append(n);
            continue;
        }
        auto it = std::find_if(triggerNames().begin(), triggerNames().end(),
                               [&](const auto &p) { return p.first == item.toLower(); });
        if (it == triggerNames().end())
            return bad(QStringLiteral("unknown trigger type '%1' (physics, calibration, random or a number "
                                      "from 1)")
                           .arg(item));
        types.append(it->second);
    }
    if (types.isEmpty())
        return bad(QStringLiteral("trigger= names no trigger type"));
    *out = types;
    return {};
}

Status parseCount(const QString &key, const QString &value, quint64 min, quint64 *out)
{
    bool ok = false;
    const quint64 n = value.toULongLong(&ok);
    if (!ok || n < min)
        return bad(QStringLiteral("invalid %1=%2 (a whole number from %3)").arg(key, value).arg(min));
    *out = n;
    return {};
}

} // namespace

QString triggerName(quint32 type)
{
    for (const auto &[name, n] : triggerNames())
        if (n == type)
            return name;
    return QString::number(type);
}

QString samplerService(const QString &name)
{
    return name + QStringLiteral(".Sampler");
}

QByteArray Sample::encode() const
{
    QByteArray out(HeaderBytes + data.size(), Qt::Uninitialized);
    uchar *p = reinterpret_cast<uchar *>(out.data());
    qToLittleEndian<quint32>(SampleMagic, p);
    qToLittleEndian<quint32>(quint32(HeaderBytes), p + 4);
    qToLittleEndian<quint64>(header.eventNumber, p + 8);
    qToLittleEndian<quint32>(header.triggerType, p + 16);
    qToLittleEndian<quint32>(header.spill, p + 20);
    qToLittleEndian<qint64>(header.timeUs, p + 24);
    qToLittleEndian<quint64>(header.sequence, p + 32);
    qToLittleEndian<quint64>(header.dropped, p + 40);
    qToLittleEndian<quint32>(header.run, p + 48);
    qToLittleEndian<quint32>(0, p + 52);
    if (!data.isEmpty())
        std::memcpy(p + HeaderBytes, data.constData(), size_t(data.size()));
    return out;
}

Status Sample::decode(const QByteArray &bytes, Sample *out)
{
    if (bytes.size() < HeaderBytes)
        return bad(QStringLiteral("a sample of %1 bytes (its header alone is %2)").arg(bytes.size()).arg(HeaderBytes));
    const uchar *p = reinterpret_cast<const uchar *>(bytes.constData());
    if (qFromLittleEndian<quint32>(p) != SampleMagic)
        return bad(QStringLiteral("not a sample (wrong magic)"));
    const quint32 headerBytes = qFromLittleEndian<quint32>(p + 4);
    if (headerBytes < quint32(HeaderBytes) || headerBytes > quint32(bytes.size()))
        return bad(QStringLiteral("a sample header of %1 bytes").arg(headerBytes));
    Sample s;
    s.header.eventNumber = qFromLittleEndian<quint64>(p + 8);
    s.header.triggerType = qFromLittleEndian<quint32>(p + 16);
    s.header.spill = qFromLittleEndian<quint32>(p + 20);
    s.header.timeUs = qFromLittleEndian<qint64>(p + 24);
    s.header.sequence = qFromLittleEndian<quint64>(p + 32);
    s.header.dropped = qFromLittleEndian<quint64>(p + 40);
    s.header.run = qFromLittleEndian<quint32>(p + 48);
    s.data = bytes.mid(headerBytes);
    *out = s;
    return {};
}

Status Criteria::parse(const QString &text, Criteria *out)
{
    static const QRegularExpression separators(QStringLiteral("[\\s;]+"));
    Criteria c;
    for (const QString &item : text.split(separators, Qt::SkipEmptyParts)) {
        const qsizetype eq = item.indexOf(QLatin1Char('='));
        if (eq <= 0)
            return bad(QStringLiteral("criterion '%1' is not key=value").arg(item));
        const QString key = item.left(eq).toLower(), value = item.mid(eq + 1);
        Status s;
        if (key == QLatin1String("trigger") || key == QLatin1String("kind")) {
            s = parseTriggers(value, &c.triggerTypes);
        } else if (key == QLatin1String("spill")) {
            quint64 n = 0;
            s = parseCount(key, value, 0, &n);
            c.spill = qint64(n);
        } else if (key == QLatin1String("every")) {
            s = parseCount(key, value, 1, &c.everyNth);
        } else if (key == QLatin1String("count")) {
            s = parseCount(key, value, 1, &c.count);
        } else if (key == QLatin1String("rate")) {
            bool ok = false;
            c.maxRateHz = value.toDouble(&ok);
            if (!ok || !(c.maxRateHz > 0) || c.maxRateHz > 1e9)
                s = bad(QStringLiteral("invalid rate=%1 (samples per second, above 0)").arg(value));
        } else {
            s = bad(QStringLiteral("unknown criterion '%1' (known: trigger, kind, spill, every, rate, count)")
                        .arg(item.left(eq)));
        }
        if (!s.isOk())
            return s;
    }
    *out = c;
    return {};
}

QString Criteria::toString() const
{
    QStringList items;
    if (!triggerTypes.isEmpty()) {
        QStringList names;
        for (quint32 t : triggerTypes)
            names.append(triggerName(t));
        items.append(QStringLiteral("trigger=") + names.join(QLatin1Char(',')));
    }
    if (spill >= 0)
        items.append(QStringLiteral("spill=%1").arg(spill));
    if (everyNth > 1)
        items.append(QStringLiteral("every=%1").arg(everyNth));
    if (maxRateHz > 0)
        items.append(QStringLiteral("rate=%1").arg(maxRateHz));
    if (count > 0)
        items.append(QStringLiteral("count=%1").arg(count));
    return items.join(QLatin1Char(' '));
}

bool Criteria::selects(quint32 triggerType, quint32 eventSpill) const
{
    if (spill >= 0 && quint64(spill) != eventSpill)
        return false;
    return triggerTypes.isEmpty() || triggerTypes.contains(triggerType);
}

} // namespace dialog::sampling
