#include "alarmsummary.h"

#include "dialog/client.h"
#include "dialog/subscription.h"

#include <QCoreApplication>
#include <QDir>
#include <QHBoxLayout>
#include <QJsonArray>
#include <QJsonDocument>
#include <QLabel>
#include <QProcess>
#include <QPushButton>

using namespace Qt::StringLiterals;

namespace dialog::runcontrol {

namespace {
int rank(const QString &s)
{
    return s == u"invalid"_s ? 3 : s == u"major"_s ? 2 : s == u"minor"_s ? 1 : 0;
}
} // namespace

AlarmSummary::AlarmSummary(Client *client, QWidget *parent) : QFrame(parent), m_client(client)
{
    setObjectName(u"alarmSummary"_s);
    setFrameShape(QFrame::StyledPanel);
    auto *h = new QHBoxLayout(this);
    h->setContentsMargins(6, 3, 6, 3);
    m_label = new QLabel;
    m_label->setWordWrap(true);
    QFont f = m_label->font();
    f.setBold(true);
    m_label->setFont(f);
    h->addWidget(m_label, 1);
    m_open = new QPushButton(u"Alarms…"_s);
    m_open->setToolTip(u"Open the alarm GUI (dialog-alarms)"_s);
    connect(m_open, &QPushButton::clicked, this, [this] { openAlarms(); });
    h->addWidget(m_open);
    hide();
    Subscription *s =
        m_client->subscribe(u"ALARM.Table"_s, this, [this](const Message &m) { onTable(m.data()); });
    if (s)
        connect(s, &Subscription::stateChanged, this, [this](Subscription::State st) {
            if (st == Subscription::State::Lost && isVisible())
                m_label->setText(u"⚠ the alarm server was lost — "_s + m_label->text());
        });
}

QString AlarmSummary::text() const
{
    return isHidden() ? QString() : m_label->text();
}

void AlarmSummary::onTable(const QByteArray &data)
{
    const QJsonObject t = QJsonDocument::fromJson(data).object();
    if (t.isEmpty())
        return;
    m_worst = t.value(u"worst"_s).toString();
    const QJsonObject c = t.value(u"counts"_s).toObject();
    // The worst annunciated alarm: of the worst severity, the latest raised.
    QJsonObject worst;
    for (const QJsonValue &v : t.value(u"alarms"_s).toArray()) {
        const QJsonObject a = v.toObject();
        if (a.value(u"state"_s).toString() == u"normal"_s || a.value(u"shelved"_s).toBool() ||
            a.value(u"disabled"_s).toBool())
            continue;
        const int r = rank(a.value(u"severity"_s).toString()), w = rank(worst.value(u"severity"_s).toString());
        if (worst.isEmpty() || r > w ||
            (r == w && a.value(u"raised_ms"_s).toInteger() > worst.value(u"raised_ms"_s).toInteger()))
            worst = a;
    }
    m_worstAlarm = worst.value(u"path"_s).toString();
    QString text = u"Alarms: %1 active, %2 unacknowledged"_s.arg(c.value(u"active"_s).toInt())
                       .arg(c.value(u"unacknowledged"_s).toInt());
    if (c.value(u"shelved"_s).toInt() > 0)
        text += u", %1 shelved"_s.arg(c.value(u"shelved"_s).toInt());
    if (!worst.isEmpty())
        text += u" — worst %1 %2 (%3)"_s.arg(worst.value(u"severity"_s).toString().toUpper(), m_worstAlarm,
                                             worst.value(u"value"_s).toString());
    if (t.value(u"history"_s).toObject().contains(u"error"_s))
        text += u" — the alarm history database fails"_s;
    m_label->setText(text);
    static const char *const colors[] = {"#2e7d32", "#e0a000", "#d03030", "#a020a0"};
    setStyleSheet(u"QFrame#alarmSummary { background: %1; border-radius: 4px; } QLabel { color: white; }"_s.arg(
        QLatin1String(colors[rank(m_worst)])));
    show();
}

bool AlarmSummary::openAlarms(qint64 *pid)
{
    const QString program = QDir(QCoreApplication::applicationDirPath()).filePath(u"dialog-alarms"_s);
    const QStringList args{u"--control-server"_s, m_client->options().controlServers.join(u',')};
    qint64 started = 0;
    if (!QProcess::startDetached(program, args, QString(), &started)) {
        m_open->setStatusTip(u"cannot start %1"_s.arg(program));
        m_label->setText(m_label->text() + u" — cannot start %1"_s.arg(program));
        return false;
    }
    if (pid)
        *pid = started;
    return true;
}

} // namespace dialog::runcontrol
