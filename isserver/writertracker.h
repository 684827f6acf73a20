// Who wrote each object of an IS server last, and which objects lost their writer.
#pragma once

#include "dialog/directory.h"
#include "dialog/is/staleness.h"
#include "dialog/is/time.h"

#include <QHash>
#include <QMutex>
#include <QSet>
#include <QString>
#include <QStringList>

namespace dialog::is {
class TypeRegistry;
}

namespace dialog::isd {

/// The process that wrote each object last. An object whose writer the Control Server declared
/// lost is stale (and leaves the sums) until it is written again.
///
/// Thread safety: written(), removed() and lostWriters() are called from one thread (the server's
/// main thread, which applies the writes); isWriterLost() and staleness() from any thread (reads
/// run on the worker pool and the web server).
class WriterTracker
{
public:
    /// @p types gives each type's expected update interval; it must outlive the tracker.
    explicit WriterTracker(const is::TypeRegistry &types);

    /// @p process wrote @p object (its object name): it is no longer stale for a lost writer.
    void written(const QString &object, const QString &process);
    /// @p object was removed.
    void removed(const QString &object);
    /// The objects whose last writer is among the lost processes of @p directory (and not alive
    /// again under that name); from now on they are stale. Each object is returned once per loss.
    QStringList lostWriters(const DirectorySnapshot &directory);

    /// Whether the process that wrote @p object last was declared lost since.
    bool isWriterLost(const QString &object) const;
    /// The staleness, now, of @p object of type @p type last written at @p lastWrite: its writer
    /// lost, or older than the type's expected interval.
    is::Staleness staleness(const QString &object, const QString &type, is::Time lastWrite) const;

private:
    const is::TypeRegistry &m_types;
    QHash<QString, QString> m_writers; // object -> process; main thread
    mutable QMutex m_lock;             // guards m_lost, read from any thread
    QSet<QString> m_lost;
};

} // namespace dialog::isd
