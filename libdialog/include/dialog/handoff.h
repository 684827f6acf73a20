/// @file
/// Handing work from one thread to another in an order ThreadSanitizer can see.
///
/// Qt passes a queued call, a thread-pool task or a QThread start through code inside libQt6Core,
/// which a ThreadSanitizer build does not instrument: TSan then sees what the caller did before
/// and what the other thread does after as unordered, and reports races that cannot happen (and
/// suppressing them would hide real ones). The helpers below do what their Qt counterparts do and,
/// under ThreadSanitizer only, also tell TSan the order Qt guarantees. In other builds they are the
/// Qt calls themselves, at no cost. A program that hands work between its own threads (a daemon's
/// store thread, a worker pool) uses them instead of the bare Qt calls.
#pragma once

#include <QByteArray>
#include <QDeadlineTimer>
#include <QMetaObject>
#include <QMutex>
#include <QObject>
#include <QThread>
#include <QThreadPool>
#include <QWaitCondition>
#include <type_traits>
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

/// Thread hand-off helpers: Qt's queued calls, pools and threads with an order ThreadSanitizer
/// sees. Every helper may be called from any thread unless its comment says otherwise.
namespace dialog::handoff {

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

/// @p fn wrapped in a HandOff (see the other builds' handOff()).
template <typename F> HandOff<std::decay_t<F>> handOff(F &&fn)
{
    return HandOff<std::decay_t<F>>(std::decay_t<F>(std::forward<F>(fn)));
}

/// A copy of @p bytes of the socket's own (see the other builds' forSocket()).
inline QByteArray forSocket(const QByteArray &bytes)
{
    return QByteArray(bytes.constData(), bytes.size());
}
#else
/// @p fn made fit to be posted to another thread: pass the result where Qt queues a functor
/// (QMetaObject::invokeMethod, or a QObject::connect() slot with Qt::QueuedConnection). Under
/// ThreadSanitizer a wrapper that orders the poster's work, the call and the functor's destruction
/// in whichever thread Qt frees it; in other builds @p fn itself.
template <typename F> F &&handOff(F &&fn)
{
    return std::forward<F>(fn);
}

/// @p bytes as they should be given to QTcpSocket::write() in a thread other than the one that
/// made them. Since Qt 6 the socket's write buffer keeps a reference to the (implicitly shared)
/// array and may free it inside libQt6Core after the caller's own reference went in another
/// thread; under ThreadSanitizer the socket gets its own copy so that TSan sees every free. In
/// other builds the array itself, shared: no copy.
inline const QByteArray &forSocket(const QByteArray &bytes)
{
    return bytes;
}
#endif

/// Runs @p fn in @p context's thread: queued when that is another thread, at once when it is the
/// caller's (as QMetaObject::invokeMethod() with Qt::AutoConnection). @p fn is dropped unrun if
/// @p context is destroyed first.
template <typename F> void post(QObject *context, F &&fn)
{
    QMetaObject::invokeMethod(context, handOff(std::forward<F>(fn)));
}

/// Runs @p fn in @p context's thread and returns when it has run (Qt::BlockingQueuedConnection).
/// Never call it from @p context's own thread: that would deadlock. What @p fn did is visible to
/// the caller when it returns.
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

/// QWaitCondition::wait() on @p condition with @p mutex, which the caller holds: gives @p mutex
/// back while waiting and holds it again on return. Returns false when @p deadline passed first.
/// What the waker did under @p mutex is visible to the caller after it returns.
inline bool waitOn(QWaitCondition &condition, QMutex &mutex,
                   QDeadlineTimer deadline = QDeadlineTimer(QDeadlineTimer::Forever))
{
#ifdef DIALOG_TSAN
    // ThreadSanitizer sees QMutex's own lock and unlock (Qt annotates them inline) but not the
    // ones inside wait().
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

/// An order of the caller's own for ThreadSanitizer: what one thread did before tsanRelease(a)
/// comes before what another does after tsanAcquire(a) of the same address @p address, where the
/// program orders them by means TSan cannot see. Nothing in other builds.
inline void tsanRelease(const void *address)
{
#ifdef DIALOG_TSAN
    __tsan_release(const_cast<void *>(address));
#else
    Q_UNUSED(address);
#endif
}

/// The other half of tsanRelease(): what was done before tsanRelease(@p address) is ordered before
/// what the caller does next. Nothing in other builds.
inline void tsanAcquire(const void *address)
{
#ifdef DIALOG_TSAN
    __tsan_acquire(const_cast<void *>(address));
#else
    Q_UNUSED(address);
#endif
}

/// Runs @p fn in a thread of @p pool (QThreadPool::start()). What the caller did before is visible
/// to @p fn; what @p fn did is visible after waitForDone() of the same pool returns.
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

/// QThreadPool::waitForDone() without a deadline: returns when every task started with startIn()
/// has run, their work visible to the caller.
inline void waitForDone(QThreadPool &pool)
{
    pool.waitForDone();
    tsanAcquire(&pool);
}

/// QThread::start(): what the caller did before is visible to everything that runs in @p thread.
/// Call it from the thread that owns @p thread, once per start.
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

} // namespace dialog::handoff
