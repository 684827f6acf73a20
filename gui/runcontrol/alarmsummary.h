// The run-control GUI's line of the alarm server (dialog-alarmserver): the count and the worst
// alarm from ALARM.Table, and a button that opens the alarm GUI dialog-alarms. Hidden until an
// alarm server publishes its table.
#pragma once

#include <QFrame>
#include <QJsonObject>

class QLabel;
class QPushButton;

namespace dialog {
class Client;
}

namespace dialog::runcontrol {

class AlarmSummary : public QFrame
{
    Q_OBJECT
public:
    /// @p client must outlive the widget; subscribes to ALARM.Table at once.
    explicit AlarmSummary(Client *client, QWidget *parent = nullptr);

    /// The line as shown ("" before the first table).
    QString text() const;
    /// The worst annunciated severity ("ok", "minor", "major", "invalid"; "" before the first table).
    QString worst() const { return m_worst; }
    /// The path of the worst annunciated alarm (the latest raised of the worst severity), "" if none.
    QString worstAlarm() const { return m_worstAlarm; }
    QPushButton *openButton() const { return m_open; }

    /// Starts dialog-alarms, the sibling of this program, detached, on the same Control Server.
    /// False (and the reason in the status tip) when it cannot be started; @p pid when given.
    bool openAlarms(qint64 *pid = nullptr);

private:
    void onTable(const QByteArray &data);

    Client *m_client;
    QLabel *m_label;
    QPushButton *m_open;
    QString m_worst, m_worstAlarm;
};

} // namespace dialog::runcontrol
