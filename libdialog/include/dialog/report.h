// Message reporting from any process: report() and Qt's own qDebug/qInfo/qWarning/qCritical/qFatal
// (after installMessageHandler()) go to a bounded in-process queue; startReporting() sends it to
// dialog-logger through a Client. Nothing here ever blocks the caller.
//
//     dialog::installMessageHandler();
//     dialog::Client client(QStringLiteral("Readout1"));
//     dialog::startReporting(&client);
//     dialog::report(dialog::Severity::Warning, QStringLiteral("link down"), {{QStringLiteral("link"), 3}});
#pragma once

#include "dialog/logrecord.h"

#include <QString>
#include <QVariantMap>

namespace dialog {

class Client;

/// Queues one message (time, host and PID are filled in; the process name when it is sent). A text
/// longer than 16 Ki characters is truncated (marked "… (truncated)").
/// Thread-safe, never blocks: when the queue is full the message is dropped and counted, and the
/// count is reported as a message of its own once the logger acknowledges a batch again. A message
/// identical (severity, category, text) to one reported less than the collapse window ago is
/// absorbed and counted; one summary "… (repeated N times in T s)" follows when the window ends.
void report(Severity severity, const QString &text, const QVariantMap &values = {});
/// Same, in a category (e.g. the component's QLoggingCategory name).
void report(Severity severity, const QString &category, const QString &text, const QVariantMap &values);
/// Queues a fully filled record (timeMs, host and pid are filled in when zero or empty).
void report(const LogRecord &record);

/// Forwards every qDebug/qInfo/qWarning/qCritical/qFatal of this process (category, file and line
/// when the build provides them) to report(), and still hands them to the previous handler (so they
/// are printed as before). Messages of the category "dialog.report" itself are not forwarded. Before
/// a qFatal aborts the process, the logger is given up to 2 s to acknowledge it.
void installMessageHandler();

/// The run number carried by messages reported from now on (0 = none).
void setReportRunNumber(quint32 run);

/// Options of the reporting queue (take effect at the next startReporting()).
struct ReportOptions
{
    int queueCapacity = 20000;    ///< messages waiting to be sent, beyond which new ones are dropped
    int collapseWindowMs = 10000; ///< identical messages within this time are collapsed
    int batchSize = 2000;         ///< messages per request to the logger
    int requestTimeoutMs = 5000;  ///< a batch unanswered this long is sent again
    int retryMs = 1000;           ///< pause after a failed attempt
};
void setReportOptions(const ReportOptions &options);

/// Sends the queued messages to dialog-logger through @p client (from @p client's thread, one batch
/// in flight at a time, so the logger stores them in the order reported), until the client is
/// destroyed or stopReporting(). Messages reported before this call were queued and go first.
void startReporting(Client *client);
void stopReporting();

/// Blocks (running the event loop of the calling thread, which must be the client's) until every
/// queued message was acknowledged by the logger, up to @p timeoutMs. For tools that exit after
/// reporting. False on time-out (the rest stays queued).
bool flushReports(int timeoutMs = 5000);

/// For a process that delivers its messages itself instead of through a Client (the Control Server,
/// which is the directory and has no Client, publishes them on logservice::controlServer()): moves
/// up to @p max queued messages out, oldest first, with their sequence numbers, host and PID set,
/// and counts them as acknowledged. Empty while startReporting() sends the queue.
QList<LogRecord> takeReports(int max);

/// Counters of this process' reporting since it started.
struct ReportStatistics
{
    quint64 reported = 0;     ///< report() calls (and forwarded Qt messages)
    quint64 collapsed = 0;    ///< absorbed into a "repeated" summary
    quint64 dropped = 0;      ///< lost: queue full, or refused by the logger
    quint64 acknowledged = 0; ///< stored by the logger
    int queued = 0;           ///< waiting to be sent (in-flight batch included)
    QString lastError;        ///< why the logger last refused a batch (empty if it never did)
};
ReportStatistics reportStatistics();

} // namespace dialog
