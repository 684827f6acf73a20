// dialog-runcontrol: the run-control GUI. Drives the master (control mode, one in the whole
// system) or watches it (monitoring mode, any number).
#pragma once

#include "dialog/rc/staterecord.h"

#include "dialog/client.h"

#include <QHash>
#include <QJsonObject>
#include <QMainWindow>
#include <functional>
#include <optional>

class QComboBox;
class QHBoxLayout;
class QLabel;
class QLineEdit;
class QPushButton;
class QTableWidget;

namespace dialog::runcontrol {

class MessageRateLabel;
class AlarmBanner;
class AlarmSummary;
class CrashWatch;
class LastCrashLine;
class RunsView;
class TreeView;

class RunControlWindow : public QMainWindow
{
    Q_OBJECT
public:
    enum class Mode
    {
        Control,    ///< holds RunControl.Control; the transition buttons work
        Monitoring, ///< read-only
    };
    Q_ENUM(Mode)

    /// @p wantControl: try to take control (refused if another GUI has it: then monitoring).
    RunControlWindow(const ClientOptions &options, const QString &master, bool wantControl,
                     QWidget *parent = nullptr);
    ~RunControlWindow() override;

    Client *client() const { return m_client.get(); }
    Mode mode() const { return m_mode; }
    QPushButton *button(rc::Transition t) const { return m_buttons.value(int(t)); }
    QLabel *stateLabel() const { return m_stateLabel; }
    QLabel *runLabel() const { return m_runLabel; }
    /// The run's data-taking time, hh:mm:ss ("—" without a run).
    QLabel *durationLabel() const { return m_durationLabel; }
    /// The total event rate and MB/s of the readouts (of the whole tree when it has segments).
    QLabel *rateLabel() const { return m_rateLabel; }
    QTableWidget *slaveTable() const { return m_slaves; }
    /// The run-control tree (shown when the partition has segments).
    TreeView *treeView() const { return m_tree; }
    QTableWidget *messageTable() const { return m_messages; }
    QLineEdit *messageFilter() const { return m_filter; }
    MessageRateLabel *messageRates() const { return m_rates; }
    QComboBox *severityFilter() const { return m_severity; }
    /// The master's last state as published.
    /// The master's last published state (std::nullopt until one arrived).
    const std::optional<rc::StateRecord> &masterState() const { return m_state; }
    /// Asked before a run is stopped; the default shows a dialog. Tests replace it.
    void setConfirmation(std::function<bool(const QString &)> confirm) { m_confirm = std::move(confirm); }
    /// Sends @p t to the master (what the buttons do). False if not in control mode.
    bool requestTransition(rc::Transition t);
    /// Tries to take control again (monitoring mode).
    void takeControl();
    /// Shows a banner of the active alarms of the IS server @p isServer (dialog-isserver --alarms)
    /// above the buttons. Call once.
    void watchAlarms(const QString &isServer);
    /// The banner (nullptr before watchAlarms()).
    AlarmBanner *alarmBanner() const { return m_alarmBanner; }
    /// The alarm server's line (ALARM.Table: the count, the worst alarm, a button that opens
    /// dialog-alarms), beside the banner; hidden while no alarm server publishes its table.
    AlarmSummary *alarmSummary() const { return m_alarmSummary; }
    /// Puts the run control in a tab beside a Runs tab: the run registry of the configuration
    /// database served as CONFIG.<@p database>. Call once.
    void showRuns(const QString &database);
    /// The Runs tab (nullptr before showRuns()).
    RunsView *runsView() const { return m_runsView; }
    /// The line of the newest crash of a node (the host agents' reports; lastcrash.h).
    LastCrashLine *crashLine() const { return m_crashLine; }

Q_SIGNALS:
    void modeChanged(dialog::runcontrol::RunControlWindow::Mode mode);

private:
    QWidget *buildHeader();
    QWidget *buildButtons();
    QWidget *buildMessages();
    void setMode(Mode m, const QString &why);
    void onMasterState(const QByteArray &data);
    void onStatus(const QString &process, const QByteArray &data);
    void onLog(const QByteArray &data);
    /// Appends a message (or, @p atTop, inserts an older one from the logger's history above the rest).
    void addMessage(qint64 timeMs, const QString &process, const QString &severity, const QString &text,
                    bool atTop = false);
    void ensureSlaveRow(const QString &name, const QString &kind);
    /// The node's last crash as its row's tooltip.
    void markCrash(const QString &name);
    void updateButtons();
    void updateDuration();
    void applyFilter();

    std::unique_ptr<Client> m_client;
    QString m_master;
    Mode m_mode = Mode::Monitoring;
    bool m_wantControl = false;
    bool m_pending = false; // a request of ours is outstanding
    std::optional<rc::StateRecord> m_state;
    QHash<QString, int> m_rows;
    QHash<int, QPushButton *> m_buttons;
    QLabel *m_stateLabel = nullptr, *m_runLabel = nullptr, *m_durationLabel = nullptr, *m_modeLabel = nullptr,
           *m_detailLabel = nullptr, *m_rateLabel = nullptr;
    QPushButton *m_takeControl = nullptr;
    QTableWidget *m_slaves = nullptr, *m_messages = nullptr;
    MessageRateLabel *m_rates = nullptr;
    QLineEdit *m_filter = nullptr;
    QComboBox *m_severity = nullptr;
    QHash<QString, QJsonObject> m_status;
    std::function<bool(const QString &)> m_confirm;
    AlarmBanner *m_alarmBanner = nullptr;
    AlarmSummary *m_alarmSummary = nullptr;
    QHBoxLayout *m_alarmRow = nullptr; ///< the banner and the alarm server's line, side by side
    RunsView *m_runsView = nullptr;
    TreeView *m_tree = nullptr;
    CrashWatch *m_crashes = nullptr;
    LastCrashLine *m_crashLine = nullptr;
    QWidget *m_controlPage = nullptr; ///< header, buttons, slaves and messages (a tab with showRuns())
};

/// Background colour of a state (shared by the big label and the table).
/// The colour of a state (std::nullopt: absent or unknown).
QColor stateColor(std::optional<rc::State> state, bool busy);
/// A count with thousands separators ("1,234,567").
QString formatCount(qint64 n);

} // namespace dialog::runcontrol
