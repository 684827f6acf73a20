#include "snapshotreader.h"

#include <QMetaObject>

namespace dialog::inspector {

SnapshotReader::SnapshotReader(QObject *context, std::function<void()> ready)
    : m_context(context), m_ready(std::move(ready))
{
    m_thread = std::thread([this] { run(); });
}

SnapshotReader::~SnapshotReader()
{
    {
        std::lock_guard l(m_lock);
        m_stop = true;
    }
    m_wake.notify_one();
    m_thread.join();
}

void SnapshotReader::addDirectory(const QByteArray &message)
{
    {
        std::lock_guard l(m_lock);
        m_pages.push_back(message);
    }
    m_wake.notify_one();
}

void SnapshotReader::addStatistics(const QByteArray &message)
{
    {
        std::lock_guard l(m_lock);
        m_statistics = message;
    }
    m_wake.notify_one();
}

std::optional<DirectorySnapshot> SnapshotReader::takeDirectory()
{
    std::lock_guard l(m_lock);
    m_notified = false;
    return std::exchange(m_directory, std::nullopt);
}

std::optional<StatisticsSnapshot> SnapshotReader::takeStatistics()
{
    std::lock_guard l(m_lock);
    m_notified = false;
    return std::exchange(m_stats, std::nullopt);
}

void SnapshotReader::discard(DirectorySnapshot &&old)
{
    {
        std::lock_guard l(m_lock);
        m_discarded.push_back(std::move(old));
    }
    m_wake.notify_one();
}

quint64 SnapshotReader::unreadable() const
{
    std::lock_guard l(m_lock);
    return m_unreadable;
}

QString SnapshotReader::lastError() const
{
    std::lock_guard l(m_lock);
    return m_error;
}

void SnapshotReader::notifyLocked()
{
    if (m_notified)
        return;
    m_notified = true;
    // A call still queued when the context is destroyed is dropped with it.
    QMetaObject::invokeMethod(m_context, m_ready, Qt::QueuedConnection);
}

void SnapshotReader::run()
{
    std::unique_lock l(m_lock);
    for (;;) {
        m_wake.wait(l, [this] {
            return m_stop || !m_pages.empty() || !m_statistics.isEmpty() || !m_discarded.empty();
        });
        if (m_stop)
            return;
        // One message at a time (pages in order, then the newest statistics); reading and freeing
        // happen unlocked.
        std::vector<DirectorySnapshot> discarded = std::exchange(m_discarded, {});
        std::optional<QByteArray> page;
        QByteArray statistics;
        if (!m_pages.empty()) {
            page = std::move(m_pages.front());
            m_pages.pop_front();
        } else {
            statistics = std::exchange(m_statistics, QByteArray());
        }
        l.unlock();
        discarded.clear();
        Status read;
        std::optional<DirectorySnapshot> directory;
        std::optional<StatisticsSnapshot> stats;
        if (page) {
            read = m_assembler.add(*page, &directory);
        } else if (!statistics.isEmpty()) {
            StatisticsSnapshot s;
            read = StatisticsSnapshot::fromJson(statistics, &s);
            if (read.isOk())
                stats = std::move(s);
        }
        l.lock();
        if (!read.isOk()) {
            ++m_unreadable;
            m_error = read.message();
        }
        if (directory)
            std::swap(m_directory, directory); // the one not taken, if any, is freed below
        if (stats)
            m_stats = std::move(stats);
        if (m_directory || m_stats)
            notifyLocked();
        l.unlock();
        directory.reset();
        l.lock();
    }
}

} // namespace dialog::inspector
