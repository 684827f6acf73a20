// The run-control GUI's banner of active alarms: the Alarm objects an IS server raises from its
// alarm rules (dialog-isserver --alarms).
#pragma once

#include <QLabel>
#include <QMap>
#include <memory>

namespace dialog {
class Client;
namespace is {
class Dictionary;
class Event;
class Receiver;
} // namespace is
} // namespace dialog

namespace dialog::runcontrol {

/// Hidden while the IS server has no active alarm; otherwise one line per alarm ("warning readout
/// errors — DAQ.RO1.errors = 2"), coloured by the worst severity. Follows the server through its
/// restarts (the subscription is made again with a snapshot).
class AlarmBanner : public QLabel
{
    Q_OBJECT
public:
    /// @p client must outlive the banner.
    AlarmBanner(Client *client, const QString &isServer, QWidget *parent = nullptr);
    ~AlarmBanner() override;

    /// The active alarms' lines, in name order.
    QStringList alarms() const { return m_alarms.values(); }

private:
    void onEvent(const is::Event &event);
    void refresh();

    std::unique_ptr<is::Dictionary> m_dictionary;
    std::unique_ptr<is::Receiver> m_receiver;
    QMap<QString, QString> m_alarms;   // alarm object -> line
    QMap<QString, int> m_severities;   // alarm object -> 0 info .. 3 fatal
    QMap<QString, QString> m_snapshot; // filled between SnapshotBegin and SnapshotEnd
    QMap<QString, int> m_snapshotSeverities;
    bool m_inSnapshot = false;
};

} // namespace dialog::runcontrol
