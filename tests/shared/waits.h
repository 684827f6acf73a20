// Waiting in tests, always bounded: for an effect to show (waitUntil, pollUntil), for a stretch
// of time that shows that something does not happen (expectNothingFor), or for time itself where
// its passing is the step (letTimePass, pauseThread). A fixed sleep waits either too long or, on a
// loaded machine, not long enough; these wait for what they are about, and say which.
// tests/waits.cmake checks that tests wait through these only.
#pragma once

#include <QDeadlineTimer>
#include <QDebug>
#include <QElapsedTimer>
#include <QTest>
#include <QThread>

namespace dialog::test {

/// Polls @p done every @p stepMs, the event loop turning in between, until it returns true (true)
/// or @p timeoutMs passes (false). The QTRY_* macros of a function body, for helpers that return.
template <typename Predicate> bool waitUntil(Predicate done, int timeoutMs, int stepMs = 10)
{
    QElapsedTimer t;
    t.start();
    while (!done()) {
        if (t.elapsed() >= timeoutMs)
            return false;
        QTest::qWait(stepMs);
    }
    return true;
}

/// As waitUntil(), but this thread sleeps between polls and its event loop does not turn: for
/// tests in which this thread must not take what is delivered to it while the effect happens
/// elsewhere (in a library's own threads).
template <typename Predicate> bool pollUntil(Predicate done, int timeoutMs, int stepMs = 1)
{
    const QDeadlineTimer deadline(timeoutMs);
    while (!done()) {
        if (deadline.hasExpired())
            return false;
        QThread::msleep(ulong(stepMs));
    }
    return true;
}

/// Turns the event loop for @p ms and returns true if @p happened stayed false all along: the one
/// way a test shows that something does not happen (no message, no answer, no second attempt),
/// where only time passing can show it. @p why names what must not happen; it is printed, with the
/// time it took, when it happens after all. A loaded machine can only make it miss a late event
/// (pass wrongly), never see one that did not occur.
template <typename Predicate> bool expectNothingFor(int ms, Predicate happened, const char *why)
{
    QElapsedTimer t;
    t.start();
    for (;;) {
        if (happened()) {
            qWarning().nospace() << "happened after " << t.elapsed() << " ms, but should not: " << why;
            return false;
        }
        const qint64 left = ms - t.elapsed();
        if (left <= 0)
            return true;
        QTest::qWait(int(qMin<qint64>(left, 10)));
    }
}

/// Lets @p ms pass with the event loop turning, where the passing of time is itself the step of a
/// test: an idle time-out to run out, a process kept stopped, a cable kept out, writes paced, a
/// history to accumulate for a picture. Never a wait for an effect (waitUntil) nor the proof that
/// something does not happen (expectNothingFor): a loaded machine only makes the stretch longer.
/// @p why names what the time is for.
inline void letTimePass(int ms, const char *why)
{
    Q_UNUSED(why);
    QTest::qWait(ms);
}

/// As letTimePass(), but this thread sleeps and its event loop does not turn (a thread of the
/// test's own, or a step during which this thread must not take what is delivered to it).
inline void pauseThread(int ms, const char *why)
{
    Q_UNUSED(why);
    QThread::msleep(ulong(ms));
}

} // namespace dialog::test
