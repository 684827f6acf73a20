#include "reportqueue_p.h"

#include <QMutexLocker>

namespace dialog {

ReportQueue::ReportQueue() = default;

ReportQueue::ReportQueue(const Options &options) : m_options(options) {}

void ReportQueue::setOptions(const Options &options)
{
    QMutexLocker lock(&m_lock);
    m_options = options;
}

QString ReportQueue::key(const LogRecord &r)
{
    return QString::number(int(r.severity)) + QLatin1Char('\x1f') + r.category + QLatin1Char('\x1f') + r.text;
}

LogRecord ReportQueue::summaryLocked(const Repeat &r) const
{
    LogRecord s = r.first;
    s.timeMs = r.lastMs;
    const double seconds = (r.lastMs - r.windowStartMs) / 1000.0;
    s.text = QStringLiteral("%1 (repeated %2 times in %3 s)")
                 .arg(r.first.text)
                 .arg(r.count)
                 .arg(QString::number(seconds, 'f', seconds < 10 ? 1 : 0));
    s.values.insert(QStringLiteral("repeated"), qint64(r.count));
    s.values.insert(QStringLiteral("firstMs"), r.windowStartMs);
    return s;
}

bool ReportQueue::push(const LogRecord &record, qint64 nowMs)
{
    QMutexLocker lock(&m_lock);
    ++m_reported;
    if (m_options.collapseWindowMs > 0 && record.category != category()) {
        const QString k = key(record);
        auto it = m_repeats.find(k);
        if (it != m_repeats.end()) {
            if (nowMs - it->windowStartMs < m_options.collapseWindowMs) {
                ++it->count;
                it->lastMs = nowMs;
                ++m_collapsed;
                return false;
            }
            // The window ended: its summary goes before this message, which opens a new window.
            if (it->count)
                m_queue.push_back(summaryLocked(*it));
            *it = Repeat{record, nowMs, nowMs, 0};
        } else if (m_repeats.size() < m_options.collapseTableSize) {
            m_repeats.insert(k, Repeat{record, nowMs, nowMs, 0});
        }
    }
    if (int(m_queue.size()) >= m_options.capacity) {
        ++m_dropped;
        ++m_dropsUnreported;
        return false;
    }
    m_queue.push_back(record);
    return true;
}

void ReportQueue::emitDueLocked(qint64 nowMs, bool all)
{
    for (auto it = m_repeats.begin(); it != m_repeats.end();) {
        if (all || nowMs - it->windowStartMs >= m_options.collapseWindowMs) {
            // Summaries are few (one per tracked message and window): they may exceed the capacity.
            if (it->count)
                m_queue.push_back(summaryLocked(*it));
            it = m_repeats.erase(it);
        } else {
            ++it;
        }
    }
}

QList<LogRecord> ReportQueue::take(int max, qint64 nowMs)
{
    QMutexLocker lock(&m_lock);
    emitDueLocked(nowMs, false);
    QList<LogRecord> out;
    const int n = std::min<int>(max, int(m_queue.size()));
    out.reserve(n);
    for (int i = 0; i < n; ++i) {
        out.append(std::move(m_queue.front()));
        m_queue.pop_front();
        out.back().sequence = m_nextSequence++;
    }
    return out;
}

void ReportQueue::flushCollapsed(qint64 nowMs)
{
    QMutexLocker lock(&m_lock);
    emitDueLocked(nowMs, true);
}

void ReportQueue::countDropped(quint64 n)
{
    QMutexLocker lock(&m_lock);
    m_dropped += n;
    m_dropsUnreported += n;
}

void ReportQueue::delivered(quint64 n, qint64 nowMs)
{
    QMutexLocker lock(&m_lock);
    m_acknowledged += n;
    if (!m_dropsUnreported)
        return;
    LogRecord r;
    r.timeMs = nowMs;
    r.severity = Severity::Warning;
    r.category = category();
    r.text =
        QStringLiteral("%1 messages of this process were dropped (queue full or logger unable to store them)")
            .arg(m_dropsUnreported);
    r.values.insert(QStringLiteral("dropped"), qint64(m_dropsUnreported));
    if (!m_queue.empty()) {
        r.host = m_queue.front().host;
        r.pid = m_queue.front().pid;
    }
    m_queue.push_front(r);
    m_dropsUnreported = 0;
}

int ReportQueue::size() const
{
    QMutexLocker lock(&m_lock);
    return int(m_queue.size());
}

bool ReportQueue::hasPendingCollapse() const
{
    QMutexLocker lock(&m_lock);
    for (const Repeat &r : m_repeats)
        if (r.count)
            return true;
    return false;
}

quint64 ReportQueue::reported() const
{
    QMutexLocker lock(&m_lock);
    return m_reported;
}
quint64 ReportQueue::collapsed() const
{
    QMutexLocker lock(&m_lock);
    return m_collapsed;
}
quint64 ReportQueue::dropped() const
{
    QMutexLocker lock(&m_lock);
    return m_dropped;
}
quint64 ReportQueue::acknowledged() const
{
    QMutexLocker lock(&m_lock);
    return m_acknowledged;
}

} // namespace dialog
