// The run-control GUI's link to dialog-logger: a label with the rate of stored messages per severity
// (from DIALOG.Logger.Live, over the last 10 s) and the fetch of the recent history for the message pane.
#pragma once

#include "dialog/client.h"
#include "dialog/logrecord.h"

#include <QElapsedTimer>
#include <QLabel>
#include <QTimer>
#include <array>
#include <deque>
#include <functional>

namespace dialog::runcontrol {

/// "messages/s: info 12 · warning 1.5 · error 0 · fatal 0", or "no logger" while nothing arrives.
class MessageRateLabel : public QLabel
{
    Q_OBJECT
public:
    /// Subscribes through @p client (which must outlive this label).
    explicit MessageRateLabel(Client *client, QWidget *parent = nullptr);
    /// Messages per second of @p severity over the window.
    double rate(Severity severity) const;

private:
    void count(const QByteArray &batch);
    void refresh();

    struct Second
    {
        qint64 second;
        std::array<int, 5> counts{};
    };
    std::deque<Second> m_seconds; ///< the last 10 s with messages, oldest first
    QElapsedTimer m_clock;
    QTimer m_timer;
    bool m_seen = false;
};

/// Asks the logger for the newest @p limit messages of at least @p minSeverity from the last hour;
/// @p done gets them oldest first (nothing if no logger answers). Sent once @p client is connected.
void fetchRecentMessages(Client *client, QObject *context, int limit, Severity minSeverity,
                         std::function<void(const QList<LogRecord> &)> done);

} // namespace dialog::runcontrol
