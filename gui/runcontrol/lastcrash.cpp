#include "lastcrash.h"

#include "dialog/client.h"

#include <QDateTime>
#include <QJsonArray>
#include <QJsonDocument>
#include <QRegularExpression>

namespace dialog::runcontrol {

namespace {
const QString AgentPrefix = QStringLiteral("DIALOG.Agent.");
constexpr int RequestTimeoutMs = 5000;
} // namespace

CrashWatch::CrashWatch(Client *client, int intervalMs, QObject *parent) : QObject(parent), m_client(client)
{
    m_client->subscribe(directoryServiceName(), this, [this](const Message &m) {
        std::optional<DirectorySnapshot> dir;
        if (!m_assembler.add(m.data(), &dir).isOk() || !dir)
            return;
        QStringList agents;
        for (const ProcessEntry &p : std::as_const(dir->processes))
            if (p.name.startsWith(AgentPrefix))
                agents << p.name;
        const bool added = !QSet<QString>(agents.cbegin(), agents.cend()).subtract(QSet<QString>(m_agents.cbegin(), m_agents.cend())).isEmpty();
        m_agents = agents;
        if (added)
            poll(); // a new agent's reports at once
    });
    m_timer.setInterval(intervalMs);
    connect(&m_timer, &QTimer::timeout, this, &CrashWatch::poll);
    m_timer.start();
}

std::optional<QJsonObject> CrashWatch::lastCrash(const QString &process) const
{
    const auto it = m_last.constFind(process);
    return it == m_last.constEnd() ? std::nullopt : std::optional(*it);
}

void CrashWatch::poll()
{
    for (const QString &agent : std::as_const(m_agents)) {
        if (m_asking.contains(agent))
            continue;
        m_asking.insert(agent);
        const QJsonObject request{{QStringLiteral("op"), QStringLiteral("crashes")},
                                  {QStringLiteral("since"), m_since.value(agent, 0)}};
        m_client->request(agent, QJsonDocument(request).toJson(QJsonDocument::Compact), RequestTimeoutMs, this,
                          [this, agent](const Reply &r) {
                              m_asking.remove(agent);
                              if (!r.isOk())
                                  return; // an agent that is gone or busy: asked again next time
                              const QJsonArray crashes =
                                  QJsonDocument::fromJson(r.data()).object().value(QStringLiteral("crashes")).toArray();
                              for (const QJsonValue &v : crashes) {
                                  const QJsonObject c = v.toObject();
                                  const qint64 t = c.value(QStringLiteral("time")).toInteger();
                                  m_since[agent] = qMax(m_since.value(agent), t + 1);
                                  const QString process = c.value(QStringLiteral("process")).toString();
                                  if (m_last.contains(process) && m_last.value(process).value(QStringLiteral("time")).toInteger() >= t)
                                      continue;
                                  m_last.insert(process, c);
                                  Q_EMIT crashed(process, c);
                              }
                          });
    }
}

QString CrashWatch::crashingFunction(const QString &backtrace)
{
    // "#3  0x000055d1c0a3b2f4 in fill (this=…) at /src/readout.cpp:120" or "#0  raise (…) from /lib/…"
    static const QRegularExpression frame(
        QStringLiteral("^#\\d+\\s+(?:0x[0-9a-fA-F]+ in )?(\\S+) \\(.*?\\)(?: at (\\S+))?"), QRegularExpression::MultilineOption);
    // The crashing thread's backtrace comes first (the agent's "bt"): its innermost frame with a name.
    for (auto it = frame.globalMatch(backtrace); it.hasNext();) {
        const QRegularExpressionMatch m = it.next();
        const QString function = m.captured(1), source = m.captured(2);
        if (function == QLatin1String("??"))
            continue;
        return source.isEmpty() ? function : QStringLiteral("%1 (%2)").arg(function, source.section(QLatin1Char('/'), -1));
    }
    return {};
}

QString CrashWatch::describe(const QJsonObject &c)
{
    const QString when =
        QDateTime::fromMSecsSinceEpoch(c.value(QStringLiteral("time")).toInteger()).toString(QStringLiteral("HH:mm:ss"));
    const QString function = crashingFunction(c.value(QStringLiteral("backtrace")).toString());
    return QStringLiteral("%1 %2: %3%4 on %5 (PID %6)")
        .arg(when, c.value(QStringLiteral("process")).toString(), c.value(QStringLiteral("signal_name")).toString(),
             function.isEmpty() ? QStringLiteral(" (no backtrace)") : QStringLiteral(" in ") + function,
             c.value(QStringLiteral("host")).toString())
        .arg(c.value(QStringLiteral("pid")).toInteger());
}

LastCrashLine::LastCrashLine(CrashWatch *watch, std::function<bool(const QString &)> shown, QWidget *parent)
    : QLabel(parent)
{
    hide();
    setTextInteractionFlags(Qt::TextSelectableByMouse);
    setStyleSheet(QStringLiteral("QLabel { background: #fbe3e1; color: #8a1c12; padding: 3px 6px; border-radius: 3px; }"));
    connect(watch, &CrashWatch::crashed, this, [this, shown](const QString &process, const QJsonObject &crash) {
        const qint64 t = crash.value(QStringLiteral("time")).toInteger();
        if (t < m_newestMs || (shown && !shown(process)))
            return;
        m_newestMs = t;
        setText(QStringLiteral("Last crash: ") + CrashWatch::describe(crash));
        setToolTip(crash.value(QStringLiteral("backtrace")).toString().left(4000));
        show();
    });
}

} // namespace dialog::runcontrol
