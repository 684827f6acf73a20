// The mirror side of a push mirror: what the master's frames change in the copy.
#pragma once

#include "dialog/is/evolution.h"
#include "dialog/is/repository.h"
#include "dialog/is/typeinfo.h"

#include <QByteArray>
#include <QJsonArray>
#include <QList>
#include <QObject>
#include <QSet>
#include <functional>
#include <memory>

namespace dialog::is {
class TypeRegistry;
}

namespace dialog::isd {

/// Applies what a push master sends to @p repository: its type declarations, and its records
/// (created, updated, removed; a snapshot's end removes what the snapshot did not name, so the copy
/// equals the master's content). Knows nothing of connections: PushReceiver hands it the frames of
/// the accepted one. An object that cannot be copied is reported through @p report and skipped; a
/// malformed frame is an error of the connection. Lives in the thread of the repository's writes.
class PushCopy : public QObject
{
    Q_OBJECT
public:
    PushCopy(is::Repository &repository, is::TypeRegistry &types, std::function<void(const QString &)> report,
             QObject *parent = nullptr);

    /// Merges the master's types @p json into the registry; false with @p error if they do not
    /// parse or clash with types the registry has.
    bool takeTypes(const QJsonArray &json, QString *error);
    /// Applies one Records frame; false with @p error if it is malformed (the records before the
    /// error are applied).
    bool records(const QByteArray &payload, QString *error);
    /// The connection is gone or replaced: a snapshot it had begun does not end.
    void interrupt() { m_inSnapshot = false; }

Q_SIGNALS:
    /// Types of the master that this registry did not have (to be kept with a checkpoint).
    void typesAdded(const QList<dialog::is::TypeInfo> &types);
    /// Emitted at the end of every snapshot: the copy equals the master's content at that point.
    void synchronised(qsizetype objects);

private:
    is::Repository &m_repository;
    is::TypeRegistry &m_types;
    const std::function<void(const QString &)> m_report;
    QSet<QString> m_seen; // object names received since SnapshotBegin
    bool m_inSnapshot = false;
    quint64 m_snapshots = 0;
    std::unique_ptr<is::Evolution> m_evolution; // from the master's layouts to ours
    QStringList m_evolutionReported;            // its changes, reported once
};

} // namespace dialog::isd
