#include "dialog/report.h"

#include "dialog/client.h"
#include "reportqueue_p.h"

#include <QCoreApplication>
#include <QDateTime>
#include <QDeadlineTimer>
#include <QElapsedTimer>
#include <QHostInfo>
#include <QPointer>
#include <QThread>
#include <QTimer>
#include <atomic>

namespace dialog {

namespace {

// The sender: lives in the client's thread (as its child), one batch in flight at a time.
class ReportSender : public QObject
{
public:
    explicit ReportSender(Client *client) : QObject(client), m_client(client)
    {
        m_timer.setInterval(50);
        connect(&m_timer, &QTimer::timeout, this, &ReportSender::tick);
        m_timer.start();
    }
    bool idle() const { return m_inFlightCount.load() == 0; }
    int inFlight() const { return m_inFlightCount.load(); }
    void tick();

private:
    void send();
    void answered(const Reply &reply);

    Client *m_client;
    QTimer m_timer;
    QList<LogRecord> m_inFlight;
    std::atomic<int> m_inFlightCount{0}; ///< m_inFlight.size(), for other threads
    bool m_awaiting = false;             ///< a request with m_inFlight is pending
    qint64 m_retryAtMs = 0;
};

struct Reporting
{
    ReportQueue queue;
    QString host = QHostInfo::localHostName();
    qint64 pid = QCoreApplication::applicationPid();
    std::atomic<quint32> run{0};
    QMutex lock; ///< guards options and sender
    ReportOptions options;
    QPointer<ReportSender> sender;
    QString lastError;
    /// The handler installed before ours: set once installed, read by every thread that logs.
    std::atomic<QtMessageHandler> previous{nullptr};
};

// Never destroyed: Qt messages may still arrive during static destruction.
Reporting &reporting()
{
    static Reporting *r = new Reporting;
    return *r;
}

qint64 nowMs()
{
    return QDateTime::currentMSecsSinceEpoch();
}

ReportOptions currentOptions()
{
    Reporting &g = reporting();
    QMutexLocker lock(&g.lock);
    return g.options;
}

void ReportSender::tick()
{
    if (m_awaiting || nowMs() < m_retryAtMs || m_client->state() != Client::State::Connected)
        return;
    if (m_inFlight.isEmpty()) {
        m_inFlight = reporting().queue.take(currentOptions().batchSize, nowMs());
        m_inFlightCount = int(m_inFlight.size());
    }
    if (!m_inFlight.isEmpty())
        send();
}

void ReportSender::send()
{
    Reporting &g = reporting();
    const QString name = m_client->name();
    for (LogRecord &r : m_inFlight) {
        r.process = name;
        if (r.host.isEmpty())
            r.host = g.host;
        if (!r.pid)
            r.pid = g.pid;
    }
    QByteArray data(1, logservice::StoreKind);
    data += encodeRecords(m_inFlight);
    m_awaiting = true;
    m_client->request(logservice::service(), data, currentOptions().requestTimeoutMs, this,
                      [this](const Reply &reply) { answered(reply); });
}

void ReportSender::answered(const Reply &reply)
{
    Reporting &g = reporting();
    m_awaiting = false;
    if (reply.isOk()) {
        g.queue.delivered(quint64(m_inFlight.size()), nowMs());
        m_inFlight.clear();
        m_inFlightCount = 0;
        tick();
        return;
    }
    const bool refused =
        reply.error() == Status::Code::Failed && reply.errorString() != logservice::busyError();
    const bool unsendable =
        reply.error() == Status::Code::InvalidName || reply.error() == Status::Code::MessageTooLarge;
    if (refused || unsendable) {
        // The logger could not store them (its database refuses writes), or the batch cannot be sent
        // at all: lost, and counted (sending it again would block the queue for ever).
        g.queue.countDropped(quint64(m_inFlight.size()));
        {
            QMutexLocker lock(&g.lock);
            g.lastError =
                refused ? reply.errorString() : QStringLiteral("batch not sent: ") + reply.errorString();
        }
        m_inFlight.clear();
        m_inFlightCount = 0;
    }
    // Otherwise (no logger yet, lost, busy or too slow) the same batch goes again at the next tick
    // after the pause; the logger ignores records it already stored (process, PID and sequence say so).
    m_retryAtMs = nowMs() + currentOptions().retryMs;
}

constexpr qsizetype MaxTextLength = 16 * 1024;

// A fatal message is followed by abort(): the sender gets up to @p timeoutMs to deliver it (from
// here if this is its thread, otherwise from its own thread while this one waits).
void deliverBeforeAbort(int timeoutMs)
{
    Reporting &g = reporting();
    QPointer<ReportSender> sender;
    {
        QMutexLocker lock(&g.lock);
        sender = g.sender;
    }
    if (!sender)
        return;
    if (QThread::currentThread() == sender->thread()) {
        flushReports(timeoutMs);
        return;
    }
    QDeadlineTimer deadline(timeoutMs);
    while (!deadline.hasExpired() && (g.queue.size() > 0 || !sender->idle()))
        QThread::msleep(5);
}

thread_local bool inHandler = false;

void messageHandler(QtMsgType type, const QMessageLogContext &context, const QString &text)
{
    Reporting &g = reporting();
    if (!inHandler && !(context.category && qstrcmp(context.category, "dialog.report") == 0)) {
        inHandler = true;
        LogRecord r;
        switch (type) {
        case QtDebugMsg:
            r.severity = Severity::Debug;
            break;
        case QtInfoMsg:
            r.severity = Severity::Info;
            break;
        case QtWarningMsg:
            r.severity = Severity::Warning;
            break;
        case QtCriticalMsg:
            r.severity = Severity::Error;
            break;
        case QtFatalMsg:
            r.severity = Severity::Fatal;
            break;
        }
        r.category = QString::fromUtf8(context.category ? context.category : "default");
        r.text = text;
        if (context.file) {
            r.file = QString::fromUtf8(context.file);
            r.line = context.line;
        }
        report(r);
        if (type == QtFatalMsg)
            deliverBeforeAbort(2000);
        inHandler = false;
    }
    if (const QtMessageHandler previous = g.previous.load(std::memory_order_acquire))
        previous(type, context, text);
}

} // namespace

void report(Severity severity, const QString &text, const QVariantMap &values)
{
    report(severity, QStringLiteral("default"), text, values);
}

void report(Severity severity, const QString &category, const QString &text, const QVariantMap &values)
{
    LogRecord r;
    r.severity = severity;
    r.category = category;
    r.text = text;
    r.values = values;
    report(r);
}

void report(const LogRecord &record)
{
    Reporting &g = reporting();
    LogRecord r = record;
    const qint64 now = nowMs();
    if (!r.timeMs)
        r.timeMs = now;
    if (r.host.isEmpty())
        r.host = g.host;
    if (!r.pid)
        r.pid = g.pid;
    if (!r.run)
        r.run = g.run.load(std::memory_order_relaxed);
    if (r.category.isEmpty())
        r.category = QStringLiteral("default");
    // A batch of the largest messages must stay below the largest message DIALOG carries.
    if (r.text.size() > MaxTextLength) {
        r.text.truncate(MaxTextLength);
        r.text += QStringLiteral(" … (truncated)");
    }
    g.queue.push(r, now);
}

void installMessageHandler()
{
    Reporting &g = reporting();
    QtMessageHandler old = qInstallMessageHandler(messageHandler);
    if (old != messageHandler)
        g.previous.store(old, std::memory_order_release);
}

void setReportRunNumber(quint32 run)
{
    reporting().run.store(run, std::memory_order_relaxed);
}

void setReportOptions(const ReportOptions &options)
{
    Reporting &g = reporting();
    {
        QMutexLocker lock(&g.lock);
        g.options = options;
    }
    ReportQueue::Options q;
    q.capacity = std::max(1, options.queueCapacity);
    q.collapseWindowMs = options.collapseWindowMs;
    g.queue.setOptions(q);
}

void startReporting(Client *client)
{
    Reporting &g = reporting();
    stopReporting();
    auto *sender = new ReportSender(client);
    QMutexLocker lock(&g.lock);
    g.sender = sender;
}

void stopReporting()
{
    Reporting &g = reporting();
    QPointer<ReportSender> old;
    {
        QMutexLocker lock(&g.lock);
        old = g.sender;
        g.sender = nullptr;
    }
    if (old)
        old->deleteLater();
}

bool flushReports(int timeoutMs)
{
    Reporting &g = reporting();
    g.queue.flushCollapsed(nowMs());
    QPointer<ReportSender> sender;
    {
        QMutexLocker lock(&g.lock);
        sender = g.sender;
    }
    QDeadlineTimer deadline(timeoutMs);
    while (!deadline.hasExpired()) {
        if (!sender)
            return g.queue.size() == 0;
        if (g.queue.size() == 0 && sender->idle())
            return true;
        sender->tick();
        QCoreApplication::processEvents(QEventLoop::AllEvents, 20);
        QThread::msleep(1);
    }
    return false;
}

QList<LogRecord> takeReports(int max)
{
    Reporting &g = reporting();
    {
        QMutexLocker lock(&g.lock);
        if (g.sender)
            return {};
    }
    const qint64 now = nowMs();
    QList<LogRecord> out = g.queue.take(max, now);
    // A count of drops (queue full) becomes a message of its own at the head, taken next time.
    g.queue.delivered(quint64(out.size()), now);
    return out;
}

ReportStatistics reportStatistics()
{
    Reporting &g = reporting();
    ReportStatistics s;
    s.reported = g.queue.reported();
    s.collapsed = g.queue.collapsed();
    s.dropped = g.queue.dropped();
    s.acknowledged = g.queue.acknowledged();
    s.queued = g.queue.size();
    QMutexLocker lock(&g.lock);
    if (g.sender)
        s.queued += g.sender->inFlight();
    s.lastError = g.lastError;
    return s;
}

} // namespace dialog
