// Queued calls to another thread, made visible to ThreadSanitizer.
#pragma once

#include <QByteArray>
#include <QDeadlineTimer>
#include <QMetaObject>
#include <QMutex>
#include <QObject>
#include <QThread>
#include <QThreadPool>
#include <QWaitCondition>
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

/// Runs @p fn in @p context's thread (queued when that is another thread, as
/// QMetaObject::invokeMethod() does), in an order ThreadSanitizer can see.
template <typename F> void post(QObject *context, F &&fn)
{
    QMetaObject::invokeMethod(context, handOff(std::forward<F>(fn)));
}

/// Runs @p fn in @p context's thread and waits for it (Qt::BlockingQueuedConnection: never from
/// that thread). Qt wakes the caller with a QSemaphore inside libQt6Core; under ThreadSanitizer the
/// end of @p fn is also released to the caller explicitly.
template <typename F> void callBlocking(QObject *context, F &&fn)
{
#ifdef DIALOG_TSAN
    // fn is moved into the posted call: the other thread reads nothing on this thread's stack
    // (done is only an address to synchronise on).
    char done = 0;
    QMetaObject::invokeMethod(context,
                              handOff([fn = std::decay_t<F>(std::forward<F>(fn)), done = &done]() mutable {
                                  fn();
                                  __tsan_release(done);
                              }),
                              Qt::BlockingQueuedConnection);
    __tsan_acquire(&done);
#else
    QMetaObject::invokeMethod(context, std::forward<F>(fn), Qt::BlockingQueuedConnection);
#endif
}

/// QWaitCondition::wait(): gives @p mutex back while waiting and takes it again, inside libQt6Core.
/// ThreadSanitizer sees QMutex's own lock and unlock (Qt annotates them inline, qtsan_impl.h) but
/// not the ones inside wait(); under TSan they are said here, so what the waker did under the mutex
/// is ordered before what the waiter does after.
inline bool waitOn(QWaitCondition &condition, QMutex &mutex,
                   QDeadlineTimer deadline = QDeadlineTimer(QDeadlineTimer::Forever))
{
#ifdef DIALOG_TSAN
    __tsan_mutex_pre_unlock(&mutex, 0);
    __tsan_mutex_post_unlock(&mutex, 0);
    const bool woken = condition.wait(&mutex, deadline);
    __tsan_mutex_pre_lock(&mutex, 0);
    __tsan_mutex_post_lock(&mutex, 0, 0);
    return woken;
#else
    return condition.wait(&mutex, deadline);
#endif
}

/// An order of one's own for ThreadSanitizer (what was done before release() in one thread comes
/// before what is done after acquire() of the same address in another); nothing in other builds.
inline void tsanRelease(const void *address)
{
#ifdef DIALOG_TSAN
    __tsan_release(const_cast<void *>(address));
#else
    Q_UNUSED(address);
#endif
}
inline void tsanAcquire(const void *address)
{
#ifdef DIALOG_TSAN
    __tsan_acquire(const_cast<void *>(address));
#else
    Q_UNUSED(address);
#endif
}

/// QThreadPool::start(): Qt hands the task to a pool thread, and QThreadPool::waitForDone() waits
/// for it, with a mutex and a wait condition inside libQt6Core. With startIn() and waitForDone()
/// ThreadSanitizer sees both orders: start before the task, the task before waitForDone() returns.
template <typename F> void startIn(QThreadPool &pool, F &&fn)
{
#ifdef DIALOG_TSAN
    pool.start(handOff([&pool, fn = std::decay_t<F>(std::forward<F>(fn))]() mutable {
        fn();
        __tsan_release(&pool);
    }));
#else
    pool.start(std::forward<F>(fn));
#endif
}

inline void waitForDone(QThreadPool &pool)
{
    pool.waitForDone();
    tsanAcquire(&pool);
}

/// QThread::start(): the thread is created inside libQt6Core, whose calls ThreadSanitizer is told
/// not to follow (tests/sanitizers/tsan.supp), so what the caller did before would not be ordered
/// before what the new thread does. Under TSan the caller releases the thread object and the thread
/// acquires it as it starts (QThread::started, emitted in it).
inline void startThread(QThread &thread)
{
#ifdef DIALOG_TSAN
    // Nothing captured: the lambda reads nothing the thread's owner later frees.
    QObject::connect(
        &thread, &QThread::started, &thread, [] { __tsan_acquire(QThread::currentThread()); },
        Qt::DirectConnection);
    __tsan_release(&thread);
#endif
    thread.start();
}

} // namespace dialog::net
