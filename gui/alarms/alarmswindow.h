// dialog-alarms' window: the alarm table (every alarm of ALARM.Table that is not normal, sortable,
// coloured by severity, unacknowledged rows blinking), the tree that filters it, the counts and the
// state of the alarm server's history database, the details of the selected alarm (guidance and
// links), its actions (acknowledge, shelve, unshelve) and the history tab.
#pragma once

#include "actiondialog.h"
#include "alarmsession.h"

#include "dialog/client.h"

#include <QJsonObject>
#include <QMainWindow>
#include <QPointer>
#include <memory>

class QAction;
class QLabel;
class QTabWidget;
class QTableView;
class QTextBrowser;
class QTreeView;

namespace dialog::alarms {

class AlarmFilterModel;
class AlarmTableModel;
class AlarmTreeModel;
class HistoryView;

class AlarmsWindow : public QMainWindow
{
    Q_OBJECT
public:
    explicit AlarmsWindow(const ClientOptions &options, QWidget *parent = nullptr);
    ~AlarmsWindow() override;

    Client *client() const { return m_client.get(); }
    AlarmSession *session() const { return m_session; }
    AlarmTableModel *tableModel() const { return m_model; }
    AlarmFilterModel *filterModel() const { return m_filter; }
    AlarmTreeModel *treeModel() const { return m_tree; }
    QTableView *tableView() const { return m_view; }
    QTreeView *treeView() const { return m_treeView; }
    QTextBrowser *detailsPane() const { return m_details; }
    HistoryView *historyView() const { return m_history; }
    QTabWidget *tabs() const { return m_tabs; }
    /// The counts line ("worst major · 2 active, 1 unacknowledged, …").
    QString countsText() const;
    /// The line about the history database ("" while it works).
    QString historyProblemText() const;
    /// The last refusal of an action (the alarm server's reason), "" after one that was done.
    QString lastRefusal() const { return m_lastRefusal; }

    /// Selects the tree node (or alarm) @p path: the table shows what is at or below it.
    void selectNode(const QString &path);
    /// Selects the row of @p path in the table (the details follow); false if it is not shown.
    bool selectAlarm(const QString &path);
    /// The alarms of the selected rows.
    QStringList selectedPaths() const;

    /// Opens the dialog of @p op ("ack", "shelve", "unshelve") for the selected alarms (open(),
    /// no nested event loop); its accept sends the action. nullptr when nothing is selected.
    ActionDialog *startAction(const QString &op);
    /// The dialog opened by startAction() while it is open.
    ActionDialog *actionDialog() const { return m_dialog; }

Q_SIGNALS:
    /// Emitted once per action sent from a dialog, when every alarm of it was answered.
    void actionFinished(const QString &op, const QStringList &refusals);

private:
    void buildActions();
    void onTable();
    void updateCounts();
    void showDetails();
    void send(ActionDialog *dialog);
    void showRefusals(const QString &op, const QStringList &refusals);
    void updateActions();

    AlarmSession *m_session = nullptr;
    AlarmTableModel *m_model;
    AlarmFilterModel *m_filter;
    AlarmTreeModel *m_tree;
    QTableView *m_view = nullptr;
    QTreeView *m_treeView = nullptr;
    QTextBrowser *m_details = nullptr;
    HistoryView *m_history = nullptr;
    QTabWidget *m_tabs = nullptr;
    QLabel *m_counts = nullptr, *m_historyProblem = nullptr, *m_refusal = nullptr, *m_server = nullptr;
    QAction *m_ack = nullptr, *m_shelve = nullptr, *m_unshelve = nullptr;
    QPointer<ActionDialog> m_dialog;
    QString m_lastRefusal;
    QJsonObject m_detailsOf; ///< the alarm the details pane shows
    std::unique_ptr<Client> m_client; ///< destroyed first, before the widgets its callbacks touch
};

} // namespace dialog::alarms
