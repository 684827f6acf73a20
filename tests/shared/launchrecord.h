// The process record `dialogctl up` keeps in its run directory (processes.json), as tests read it:
// to find a process's pid, its status, and every pid that cleanup must see gone.
#pragma once

#include <QDir>
#include <QFile>
#include <QHash>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSet>
#include <QString>

namespace dialog::test {

/// The entries of @p runDir's record by process name (empty when there is none yet); the pid of
/// each is added to @p pids, so that a test reaps what was started even when a check fails later.
inline QHash<QString, QJsonObject> launchRecord(const QString &runDir, QSet<qint64> *pids = nullptr)
{
    QHash<QString, QJsonObject> out;
    QFile f(QDir(runDir).filePath(QStringLiteral("processes.json")));
    if (!f.open(QIODevice::ReadOnly))
        return out;
    for (const QJsonValue &v :
         QJsonDocument::fromJson(f.readAll()).object().value(QStringLiteral("processes")).toArray()) {
        const QJsonObject o = v.toObject();
        out.insert(o.value(QStringLiteral("name")).toString(), o);
        if (const qint64 pid = o.value(QStringLiteral("pid")).toInteger(); pid && pids)
            pids->insert(pid);
    }
    return out;
}

} // namespace dialog::test
