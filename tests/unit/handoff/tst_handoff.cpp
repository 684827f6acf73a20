// The thread hand-off helpers (dialog/handoff.h): each runs the work in the thread it names and
// makes its effects visible where its contract says.
#include "dialog/handoff.h"

#include <QAtomicInt>
#include <QObject>
#include <QSignalSpy>
#include <QTest>
#include <QThread>
#include <QThreadPool>
#include <memory>

using namespace dialog;

namespace {
// An object living in a thread of its own, stopped and joined on destruction.
struct Worker
{
    QThread thread;
    QObject *object = new QObject;

    Worker()
    {
        object->moveToThread(&thread);
        handoff::startThread(thread);
    }
    ~Worker()
    {
        handoff::callBlocking(object, [o = object] { delete o; });
        thread.quit();
        thread.wait();
    }
};
} // namespace

class TestHandOff : public QObject
{
    Q_OBJECT

private slots:
    void postRunsInTheContextsThread();
    void postToOwnThreadRunsAtOnce();
    void postToDestroyedContextIsDropped();
    void callBlockingReturnsAfterTheWork();
    void handOffInQueuedConnection();
    void waitOnReturnsFalseAtTheDeadline();
    void waitOnIsWoken();
    void startInRunsEveryTaskBeforeWaitForDone();
    void forSocketKeepsTheBytes();
};

void TestHandOff::postRunsInTheContextsThread()
{
    Worker w;
    QThread *ranIn = nullptr;
    QObject receiver; // in this thread: the answer comes back here
    handoff::post(w.object, [&ranIn, &receiver] {
        QThread *here = QThread::currentThread();
        handoff::post(&receiver, [&ranIn, here] { ranIn = here; });
    });
    QTRY_VERIFY_WITH_TIMEOUT(ranIn != nullptr, 10000);
    QCOMPARE(ranIn, &w.thread);
}

void TestHandOff::postToOwnThreadRunsAtOnce()
{
    QObject here;
    bool ran = false;
    handoff::post(&here, [&ran] { ran = true; });
    QVERIFY(ran);
}

void TestHandOff::postToDestroyedContextIsDropped()
{
    Worker w;
    auto ran = std::make_shared<QAtomicInt>(0);
    QObject *victim = new QObject;
    victim->moveToThread(&w.thread);
    // The worker's thread is held until the deletion and then the call are both queued: the
    // context is gone when the call's turn comes.
    QMutex gate;
    gate.lock();
    handoff::post(w.object, [&gate] {
        gate.lock();
        gate.unlock();
    });
    handoff::post(w.object, [victim] { delete victim; });
    handoff::post(victim, [ran] { ran->storeRelease(1); });
    gate.unlock();
    handoff::callBlocking(w.object, [] {}); // everything queued before has had its turn
    QCOMPARE(ran->loadAcquire(), 0);
}

void TestHandOff::callBlockingReturnsAfterTheWork()
{
    Worker w;
    int value = 0; // plain int: callBlocking() orders the write before the read
    QThread *ranIn = nullptr;
    handoff::callBlocking(w.object, [&value, &ranIn] {
        value = 42;
        ranIn = QThread::currentThread();
    });
    QCOMPARE(value, 42);
    QCOMPARE(ranIn, &w.thread);
}

void TestHandOff::handOffInQueuedConnection()
{
    Worker w;
    QObject receiver;
    QThread *ranIn = nullptr;
    QObject emitter; // emits in the worker's thread while this one waits in callBlocking()
    connect(&emitter, &QObject::objectNameChanged, &receiver,
            handoff::handOff([&ranIn](const QString &) { ranIn = QThread::currentThread(); }),
            Qt::QueuedConnection);
    handoff::callBlocking(w.object, [&emitter] { emitter.setObjectName(QStringLiteral("changed")); });
    QTRY_VERIFY_WITH_TIMEOUT(ranIn != nullptr, 10000);
    QCOMPARE(ranIn, QThread::currentThread());
}

void TestHandOff::waitOnReturnsFalseAtTheDeadline()
{
    QMutex mutex;
    QWaitCondition condition;
    QMutexLocker locker(&mutex);
    // Nobody wakes it: an expired deadline gives false and the mutex back to the caller.
    QVERIFY(!handoff::waitOn(condition, mutex, QDeadlineTimer(0)));
    QVERIFY(!mutex.tryLock());
}

void TestHandOff::waitOnIsWoken()
{
    Worker w;
    QMutex mutex;
    QWaitCondition condition;
    bool ready = false; // guarded by mutex
    QMutexLocker locker(&mutex);
    handoff::post(w.object, [&] {
        QMutexLocker l(&mutex);
        ready = true;
        condition.wakeAll();
    });
    QDeadlineTimer deadline(30000);
    while (!ready && handoff::waitOn(condition, mutex, deadline)) {
    }
    QVERIFY(ready);
}

void TestHandOff::startInRunsEveryTaskBeforeWaitForDone()
{
    QThreadPool pool;
    pool.setMaxThreadCount(2);
    constexpr int tasks = 50;
    int done[tasks] = {}; // each task writes its own slot; waitForDone() orders them before the reads
    for (int i = 0; i < tasks; ++i)
        handoff::startIn(pool, [&done, i] { done[i] = i + 1; });
    handoff::waitForDone(pool);
    for (int i = 0; i < tasks; ++i)
        QCOMPARE(done[i], i + 1);
}

void TestHandOff::forSocketKeepsTheBytes()
{
    const QByteArray bytes("frame\0bytes", 11);
    QCOMPARE(QByteArray(handoff::forSocket(bytes)), bytes);
}

QTEST_GUILESS_MAIN(TestHandOff)
#include "tst_handoff.moc"
