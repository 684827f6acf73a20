// A bounded multi-producer multi-consumer queue: a full queue makes push() wait (back-pressure),
// nothing is ever dropped.
#pragma once

#include <QtGlobal>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>

namespace dialog::daq {

template <typename T> class BoundedQueue
{
public:
    explicit BoundedQueue(size_t capacity) : m_capacity(capacity ? capacity : 1) {}

    /// Waits for room. False (item not queued) only once close() was called. Counts the pushes that
    /// had to wait in waits().
    bool push(T item)
    {
        std::unique_lock lock(m_mutex);
        if (m_items.size() >= m_capacity && !m_closed) {
            ++m_waits;
            m_notFull.wait(lock, [&] { return m_items.size() < m_capacity || m_closed; });
        }
        if (m_closed)
            return false;
        m_items.push_back(std::move(item));
        lock.unlock();
        m_notEmpty.notify_one();
        return true;
    }

    /// Waits for an item; std::nullopt once the queue is closed and empty.
    std::optional<T> pop()
    {
        std::unique_lock lock(m_mutex);
        m_notEmpty.wait(lock, [&] { return !m_items.empty() || m_closed; });
        if (m_items.empty())
            return std::nullopt;
        T item = std::move(m_items.front());
        m_items.pop_front();
        lock.unlock();
        m_notFull.notify_one();
        return item;
    }

    /// No more pushes; pops drain what is left.
    void close()
    {
        {
            std::lock_guard lock(m_mutex);
            m_closed = true;
        }
        m_notEmpty.notify_all();
        m_notFull.notify_all();
    }

    size_t size() const
    {
        std::lock_guard lock(m_mutex);
        return m_items.size();
    }
    size_t capacity() const { return m_capacity; }
    quint64 waits() const
    {
        std::lock_guard lock(m_mutex);
        return m_waits;
    }

private:
    mutable std::mutex m_mutex;
    std::condition_variable m_notEmpty, m_notFull;
    std::deque<T> m_items;
    size_t m_capacity;
    quint64 m_waits = 0;
    bool m_closed = false;
};

} // namespace dialog::daq
