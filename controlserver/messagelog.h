// The Control Server's own messages for the message log. It is the directory and has no
// dialog::Client, so it cannot send them to dialog-logger as every other process does; instead its
// Qt messages (dialog::installMessageHandler() in main) are taken from the reporting queue and
// published on the service logservice::controlServer(), whose value is the newest of them (a bounded
// ring). dialog-logger subscribes to it and stores the records it has not seen: it gets the ring when
// it subscribes (so what happened before it started is stored too), and a logger that falls behind
// gets the latest ring.
#pragma once

#include "controlprotocol_p.h"

#include "dialog/logrecord.h"

#include <QObject>
#include <QTimer>
#include <deque>

namespace dialog::cs {

class MessageLog : public QObject
{
public:
    struct Options
    {
        int ringRecords = 1000;           ///< messages kept in the published value
        qsizetype ringBytes = 256 * 1024; ///< and at most this many bytes of text
        int intervalMs = 200;             ///< how often the queue is looked at (one update at most)
    };
    /// Starts collecting (the timer runs in this thread); @p process names the records.
    MessageLog(const QString &process, const Options &options, QObject *parent = nullptr);

    /// Publishes on @p service from now on (at once if messages are kept).
    void setService(const ServiceStatePtr &service);
    /// Takes what was reported and publishes the ring if anything new came.
    void collect();

private:
    QString m_process;
    Options m_options;
    ServiceStatePtr m_service;
    QTimer m_timer;
    std::deque<LogRecord> m_ring;
    qsizetype m_bytes = 0;
    bool m_changed = false;
};

} // namespace dialog::cs
