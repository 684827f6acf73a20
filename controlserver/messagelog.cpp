#include "messagelog.h"

#include "dialog/report.h"

namespace dialog::cs {

namespace {
qsizetype weight(const LogRecord &r)
{
    return 64 + r.text.size() + r.category.size() + r.file.size();
}
} // namespace

MessageLog::MessageLog(const QString &process, const Options &options, QObject *parent)
    : QObject(parent), m_process(process), m_options(options)
{
    m_timer.setInterval(m_options.intervalMs);
    connect(&m_timer, &QTimer::timeout, this, &MessageLog::collect);
    m_timer.start();
}

void MessageLog::setService(const ServiceStatePtr &service)
{
    m_service = service;
    m_changed = !m_ring.empty();
    collect();
}

void MessageLog::collect()
{
    for (;;) {
        const QList<LogRecord> taken = takeReports(500);
        if (taken.isEmpty())
            break;
        for (const LogRecord &r : taken) {
            m_ring.push_back(r);
            m_ring.back().process = m_process;
            m_bytes += weight(r);
        }
        m_changed = true;
    }
    while (!m_ring.empty() && (int(m_ring.size()) > m_options.ringRecords || m_bytes > m_options.ringBytes)) {
        m_bytes -= weight(m_ring.front());
        m_ring.pop_front();
    }
    if (!m_changed || !m_service)
        return;
    m_changed = false;
    // The whole ring each time: the logger ignores what it stored before (sequence numbers), and a
    // logger that missed updates, or subscribes only now, still gets every message kept.
    m_service->publish(encodeRecords(QList<LogRecord>(m_ring.cbegin(), m_ring.cend())));
}

} // namespace dialog::cs
