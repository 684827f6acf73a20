// The reporting queue of one process: bounded, collapsing repeats, counting drops. No network, no
// clock of its own (callers pass the time), so its logic is unit-tested directly.
#pragma once

#include "dialog/logrecord.h"

#include <QHash>
#include <QList>
#include <QMutex>
#include <deque>

namespace dialog {

class ReportQueue
{
public:
    struct Options
    {
        int capacity = 20000;
        int collapseWindowMs = 10000;
        int collapseTableSize = 512; ///< distinct messages tracked for collapsing
    };
    ReportQueue();
    explicit ReportQueue(const Options &options);

    void setOptions(const Options &options);

    /// Queues @p record (any thread; called with m_lock not held). Returns false when it was
    /// absorbed by collapsing or dropped because the queue is full.
    bool push(const LogRecord &record, qint64 nowMs);
    /// Moves up to @p max records out, oldest first, with sequence numbers assigned; due "repeated"
    /// summaries are queued first (their window ended before @p nowMs).
    QList<LogRecord> take(int max, qint64 nowMs);
    /// Emits every pending "repeated" summary now (at shutdown or flush).
    void flushCollapsed(qint64 nowMs);
    /// Counts @p n records lost after take() (refused by the logger).
    void countDropped(quint64 n);
    /// The logger acknowledged a batch: drops counted since the last report become a message of
    /// their own, at the head of the queue.
    void delivered(quint64 n, qint64 nowMs);

    int size() const;
    bool hasPendingCollapse() const;
    quint64 reported() const;
    quint64 collapsed() const;
    quint64 dropped() const;
    quint64 acknowledged() const;

    /// The category of the queue's own messages (drop and collapse reports).
    static QString category() { return QStringLiteral("dialog.report"); }

private:
    struct Repeat
    {
        LogRecord first;
        qint64 windowStartMs = 0;
        qint64 lastMs = 0;
        quint64 count = 0; ///< absorbed since windowStartMs
    };
    static QString key(const LogRecord &r);
    void emitDueLocked(qint64 nowMs, bool all);
    LogRecord summaryLocked(const Repeat &r) const;

    mutable QMutex m_lock;
    Options m_options;
    std::deque<LogRecord> m_queue;
    QHash<QString, Repeat> m_repeats;
    quint64 m_reported = 0, m_collapsed = 0, m_dropped = 0, m_acknowledged = 0;
    quint64 m_dropsUnreported = 0;
    quint64 m_nextSequence = 1;
};

} // namespace dialog
