#include "messagerates.h"

#include "dialog/subscription.h"

#include <QDateTime>
#include <algorithm>
#include <memory>

namespace dialog::runcontrol {

namespace {
constexpr int WindowS = 10;
}

MessageRateLabel::MessageRateLabel(Client *client, QWidget *parent) : QLabel(parent)
{
    m_clock.start();
    setToolTip(
        QStringLiteral("Messages stored by dialog-logger per second, by severity (last %1 s)").arg(WindowS));
    client->subscribe(logservice::live(), this, [this](const Message &m) { count(m.data()); });
    connect(&m_timer, &QTimer::timeout, this, &MessageRateLabel::refresh);
    m_timer.start(1000);
    refresh();
}

void MessageRateLabel::count(const QByteArray &batch)
{
    QList<LogRecord> decoded;
    if (!decodeRecords(batch, &decoded).isOk())
        return;
    const QList<LogRecord> *records = &decoded;
    m_seen = true;
    const qint64 now = m_clock.elapsed() / 1000;
    if (m_seconds.empty() || m_seconds.back().second != now)
        m_seconds.push_back(Second{now, {}});
    for (const LogRecord &r : *records)
        ++m_seconds.back().counts[std::clamp(int(r.severity), 0, 4)];
}

double MessageRateLabel::rate(Severity severity) const
{
    const qint64 now = m_clock.elapsed() / 1000;
    int n = 0;
    for (const Second &s : m_seconds)
        if (s.second > now - WindowS)
            n += s.counts[int(severity)];
    return double(n) / WindowS;
}

void MessageRateLabel::refresh()
{
    const qint64 now = m_clock.elapsed() / 1000;
    while (!m_seconds.empty() && m_seconds.front().second <= now - WindowS)
        m_seconds.pop_front();
    if (!m_seen) {
        setText(QStringLiteral("messages/s: no logger seen"));
        return;
    }
    QStringList parts;
    for (Severity s : {Severity::Info, Severity::Warning, Severity::Error, Severity::Fatal}) {
        const double r = rate(s);
        QString part = severityName(s) + QLatin1Char(' ') + QString::number(r, 'g', 3);
        if (r > 0 && s >= Severity::Warning)
            part = QStringLiteral("<b style=\"color:%1\">%2</b>")
                       .arg(s == Severity::Warning ? QStringLiteral("#a66d00") : QStringLiteral("#c62828"),
                            part);
        parts << part;
    }
    setText(QStringLiteral("messages/s: ") + parts.join(QStringLiteral(" · ")));
}

void fetchRecentMessages(Client *client, QObject *context, int limit, Severity minSeverity,
                         std::function<void(const QList<LogRecord> &)> done)
{
    // A request needs the Control Server: asked once the client is connected.
    if (client->state() != Client::State::Connected) {
        auto once = std::make_shared<QMetaObject::Connection>();
        *once = QObject::connect(
            client, &Client::stateChanged, context, [=, done = std::move(done)](Client::State s) mutable {
                if (s != Client::State::Connected)
                    return;
                QObject::disconnect(*once);
                fetchRecentMessages(client, context, limit, minSeverity, std::move(done));
            });
        return;
    }
    LogQuery q;
    q.limit = limit;
    q.minSeverity = minSeverity;
    q.sinceMs = QDateTime::currentMSecsSinceEpoch() - 3600000;
    client->request(logservice::service(), QByteArray(1, logservice::QueryKind) + q.encode(), 5000, context,
                    [done = std::move(done)](const Reply &reply) {
                        if (!reply.isOk())
                            return; // no logger: the pane shows what arrives live only
                        LogPage page;
                        if (!LogPage::decode(reply.data(), &page).isOk())
                            return;
                        QList<LogRecord> records = page.records;
                        std::reverse(records.begin(), records.end());
                        done(records);
                    });
}

} // namespace dialog::runcontrol
