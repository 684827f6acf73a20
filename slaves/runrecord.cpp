#include "runrecord.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSaveFile>

namespace dialog::daq {

bool RunRecord::read(const QString &file, RunRecord *out, QString *error)
{
    *out = RunRecord();
    QFile f(file);
    if (!f.exists())
        return true;
    if (!f.open(QIODevice::ReadOnly)) {
        *error = QStringLiteral("cannot read the run number from %1: %2").arg(file, f.errorString());
        return false;
    }
    const QList<QByteArray> lines = f.read(1 << 20).split('\n');
    bool ok = false;
    const uint n = lines.value(0).trimmed().toUInt(&ok);
    if (!ok) {
        *error = QStringLiteral("%1 does not hold a run number; starting from 0").arg(file);
        return false;
    }
    // A field that does not parse is unknown (0), never a wrong value.
    const auto field = [&lines](int i) { return qMax<qint64>(0, lines.value(i).trimmed().toLongLong()); };
    out->number = n;
    out->startMs = field(1);
    out->activeMsBefore = field(2);
    out->runningSinceMs = field(3);
    out->disabled = QString::fromUtf8(lines.value(4).trimmed()).split(QLatin1Char(' '), Qt::SkipEmptyParts);
    const QJsonObject owners = QJsonDocument::fromJson(lines.value(5)).object();
    for (auto it = owners.begin(); it != owners.end(); ++it) {
        const QJsonObject o = it.value().toObject();
        if (const QString owner = o.value(QStringLiteral("owner")).toString(); !owner.isEmpty())
            out->owners.insert(
                it.key(),
                {owner, o.value(QStringLiteral("since_ms")).toInteger(),
                 quint32(qBound<qint64>(0, o.value(QStringLiteral("run")).toInteger(), 0xffffffffLL))});
    }
    return true;
}

bool RunRecord::write(const QString &file, QString *error) const
{
    QDir().mkpath(QFileInfo(file).absolutePath());
    QSaveFile f(file);
    QByteArray text;
    for (const qint64 v : {qint64(number), startMs, activeMsBefore, runningSinceMs})
        text += QByteArray::number(v) + '\n';
    text += disabled.join(QLatin1Char(' ')).toUtf8() + '\n';
    QJsonObject taken;
    for (auto it = owners.begin(); it != owners.end(); ++it)
        taken.insert(it.key(), QJsonObject{{QStringLiteral("owner"), it->owner},
                                           {QStringLiteral("since_ms"), it->sinceMs},
                                           {QStringLiteral("run"), qint64(it->run)}});
    text += QJsonDocument(taken).toJson(QJsonDocument::Compact) + '\n';
    if (!f.open(QIODevice::WriteOnly) || f.write(text) < 0 || !f.commit()) {
        *error = QStringLiteral("cannot save the run number to %1: %2").arg(file, f.errorString());
        return false;
    }
    return true;
}

qint64 RunRecord::activeMsAt(qint64 nowMs) const
{
    return activeMsBefore + (runningSinceMs > 0 ? qMax<qint64>(0, nowMs - runningSinceMs) : 0);
}

} // namespace dialog::daq
