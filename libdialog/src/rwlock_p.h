// QReadLocker and QWriteLocker whose ordering ThreadSanitizer can see.
#pragma once

#include "dialog/handoff.h" // DIALOG_TSAN

#include <QReadWriteLock>

namespace dialog {

#ifdef DIALOG_TSAN
/// A QReadWriteLock is taken and given back with atomics and a futex inside libQt6Core, which is
/// not instrumented: under ThreadSanitizer every access it orders would look like a race (and
/// suppressing those would hide real ones). These lockers tell TSan what happens — a read or a
/// write lock of the mutex named by the QReadWriteLock's address, readers not ordered among
/// themselves — and are QReadLocker and QWriteLocker in other builds.
template <bool Write> class TsanLocker
{
public:
    explicit TsanLocker(QReadWriteLock *lock) : m_lock(lock) { relock(); }
    ~TsanLocker() { unlock(); }
    TsanLocker(const TsanLocker &) = delete;
    TsanLocker &operator=(const TsanLocker &) = delete;
    void unlock()
    {
        if (!m_locked)
            return;
        __tsan_mutex_pre_unlock(m_lock, Flags);
        m_lock->unlock();
        __tsan_mutex_post_unlock(m_lock, Flags);
        m_locked = false;
    }
    void relock()
    {
        if (m_locked)
            return;
        __tsan_mutex_pre_lock(m_lock, Flags);
        if constexpr (Write)
            m_lock->lockForWrite();
        else
            m_lock->lockForRead();
        __tsan_mutex_post_lock(m_lock, Flags, 0);
        m_locked = true;
    }

private:
    static constexpr unsigned Flags = Write ? 0u : unsigned(__tsan_mutex_read_lock);
    QReadWriteLock *m_lock;
    bool m_locked = false;
};
using ReadLocker = TsanLocker<false>;
using WriteLocker = TsanLocker<true>;
#else
using ReadLocker = QReadLocker;
using WriteLocker = QWriteLocker;
#endif

} // namespace dialog
