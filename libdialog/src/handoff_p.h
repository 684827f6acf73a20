// Queued calls to another thread, made visible to ThreadSanitizer.
#pragma once

#include <QByteArray>
#include <utility>

#if defined(__SANITIZE_THREAD__)
#define DIALOG_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define DIALOG_TSAN 1
#endif
#endif

#ifdef DIALOG_TSAN
#include <sanitizer/tsan_interface.h>
#endif

namespace dialog::net {

#ifdef DIALOG_TSAN
/// A functor posted to another thread (QMetaObject::invokeMethod, queued). Qt frees the posted
/// functor in whichever thread drops the last reference to it, the poster or the receiver, and
/// orders that with an atomic reference count inside uninstrumented libQt6Core; TSan sees neither.
/// The wrapper says it: the functor is published (release) once it sits where Qt keeps it, the
/// receiver acquires before reading it and releases when done, and its destruction acquires.
template <typename F> class HandOff
{
public:
    explicit HandOff(F &&fn) : m_fn(std::move(fn)) { __tsan_release(this); }
    HandOff(HandOff &&o) : m_fn(std::move(o.m_fn)) { __tsan_release(this); }
    HandOff(const HandOff &o) : m_fn(o.m_fn) { __tsan_release(this); }
    ~HandOff() { __tsan_acquire(this); }
    void operator()()
    {
        __tsan_acquire(this);
        m_fn();
        __tsan_release(this);
    }

private:
    F m_fn;
};

template <typename F> HandOff<std::decay_t<F>> handOff(F &&fn)
{
    return HandOff<std::decay_t<F>>(std::decay_t<F>(std::forward<F>(fn)));
}
/// A QByteArray for QTcpSocket::write(). Since Qt 6 the socket's write buffer keeps a reference to
/// the (implicitly shared) array and drops it, freeing the array when it is the last, inside
/// uninstrumented libQt6Core: when our own reference went first, in another thread, TSan sees that
/// free unordered with our atomic release of the count. Under TSan the socket gets its own copy, so
/// every reference to the caller's array is dropped in instrumented code.
inline QByteArray forSocket(const QByteArray &bytes)
{
    return QByteArray(bytes.constData(), bytes.size());
}
#else
/// Without ThreadSanitizer the array itself, shared: no copy.
inline const QByteArray &forSocket(const QByteArray &bytes)
{
    return bytes;
}

/// Without ThreadSanitizer the functor itself: no cost.
template <typename F> F &&handOff(F &&fn)
{
    return std::forward<F>(fn);
}
#endif

} // namespace dialog::net
