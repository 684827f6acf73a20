#include "writertracker.h"

#include "dialog/is/typeregistry.h"

namespace dialog::isd {

WriterTracker::WriterTracker(const is::TypeRegistry &types) : m_types(types) {}

void WriterTracker::written(const QString &object, const QString &process)
{
    {
        QMutexLocker locker(&m_lock);
        m_lost.remove(object);
    }
    m_writers.insert(object, process);
}

void WriterTracker::removed(const QString &object)
{
    {
        QMutexLocker locker(&m_lock);
        m_lost.remove(object);
    }
    m_writers.remove(object);
}

QStringList WriterTracker::lostWriters(const DirectorySnapshot &directory)
{
    const QStringList alive = directory.processNames();
    QSet<QString> lost;
    for (const ProcessEntry &p : directory.lost)
        if (!alive.contains(p.name))
            lost.insert(p.name);
    QStringList objects;
    if (lost.isEmpty())
        return objects;
    for (auto it = m_writers.begin(); it != m_writers.end();) {
        if (!lost.contains(it.value())) {
            ++it;
            continue;
        }
        objects << it.key();
        it = m_writers.erase(it);
    }
    QMutexLocker locker(&m_lock);
    for (const QString &object : std::as_const(objects))
        m_lost.insert(object);
    return objects;
}

bool WriterTracker::isWriterLost(const QString &object) const
{
    QMutexLocker locker(&m_lock);
    return m_lost.contains(object);
}

is::Staleness WriterTracker::staleness(const QString &object, const QString &type, is::Time lastWrite) const
{
    return is::Staleness::evaluate(isWriterLost(object), lastWrite, m_types.expectedIntervalS(type),
                                   is::Time::currentTime());
}

} // namespace dialog::isd
