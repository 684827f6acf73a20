#include "alarmbanner.h"

#include "dialog/is/dictionary.h"
#include "dialog/is/receiver.h"

namespace dialog::runcontrol {

namespace {
int severityRank(const QString &s)
{
    return s == QLatin1String("fatal")     ? 3
           : s == QLatin1String("error")   ? 2
           : s == QLatin1String("warning") ? 1
                                           : 0;
}
} // namespace

AlarmBanner::AlarmBanner(Client *client, const QString &isServer, QWidget *parent) : QLabel(parent)
{
    setObjectName(QStringLiteral("alarmBanner"));
    setWordWrap(true);
    setMargin(6);
    QFont f = font();
    f.setBold(true);
    setFont(f);
    hide();
    m_dictionary = std::make_unique<is::Dictionary>(client);
    m_receiver = std::make_unique<is::Receiver>(m_dictionary.get());
    m_receiver->setCallback([this](const is::Event &e) { onEvent(e); });
    m_receiver->subscribeWithSnapshot(isServer,
                                      is::Criteria(QStringLiteral("Alarm\\..*"), QStringLiteral("Alarm"),
                                                   is::Criteria::TypeSelector::Exactly));
}

AlarmBanner::~AlarmBanner()
{
    m_receiver.reset(); // it uses the dictionary
}

void AlarmBanner::onEvent(const is::Event &e)
{
    switch (e.kind()) {
    case is::Event::Kind::SnapshotBegin:
        m_inSnapshot = true;
        m_snapshot.clear();
        m_snapshotSeverities.clear();
        return;
    case is::Event::Kind::SnapshotEnd:
        m_inSnapshot = false;
        m_alarms = m_snapshot;
        m_severities = m_snapshotSeverities;
        return refresh();
    case is::Event::Kind::Removed:
        m_alarms.remove(e.name());
        m_severities.remove(e.name());
        return refresh();
    default:
        break;
    }
    const is::Object a = e.object();
    const QString severity = a.get<QString>(QStringLiteral("severity"));
    const QString line =
        QStringLiteral("%1: %2 — %3.%4 = %5")
            .arg(severity.toUpper(), a.get<QString>(QStringLiteral("text")),
                 a.get<QString>(QStringLiteral("object")), a.get<QString>(QStringLiteral("attribute")))
            .arg(a.get<double>(QStringLiteral("value")));
    if (m_inSnapshot) {
        m_snapshot.insert(e.name(), line);
        m_snapshotSeverities.insert(e.name(), severityRank(severity));
        return;
    }
    m_alarms.insert(e.name(), line);
    m_severities.insert(e.name(), severityRank(severity));
    refresh();
}

void AlarmBanner::refresh()
{
    if (m_alarms.isEmpty()) {
        hide();
        return;
    }
    int worst = 0;
    for (int s : std::as_const(m_severities))
        worst = qMax(worst, s);
    static const char *const colors[] = {"#2d6cdf", "#e0a000", "#d03030", "#8b0000"};
    setStyleSheet(QStringLiteral("QLabel#alarmBanner { background: %1; color: white; border-radius: 4px; }")
                      .arg(QLatin1String(colors[worst])));
    const QStringList lines = m_alarms.values();
    setText((lines.size() == 1 ? QStringLiteral("⚠ 1 active alarm\n")
                               : QStringLiteral("⚠ %1 active alarms\n").arg(lines.size())) +
            lines.join(QLatin1Char('\n')));
    show();
}

} // namespace dialog::runcontrol
