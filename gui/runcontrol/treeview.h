// The run-control tree in the run-control GUI: segments and slaves with their states, in or out of
// the run (check boxes), removed nodes and why, and their recovery.
#pragma once

#include "dialog/client.h"
#include "dialog/rc/staterecord.h"

#include <QHash>
#include <QJsonObject>
#include <QWidget>
#include <functional>
#include <optional>

class QLabel;
class QMenu;
class QPushButton;
class QTreeWidget;
class QTreeWidgetItem;

namespace dialog::runcontrol {

/// Shows the master's `tree` (every node below it, segments with their children, a segment's events
/// and rate the sums of its readouts'). A node's check box
/// says whether it takes part in the runs; in control mode, ticking or clearing it asks the master
/// to enable or disable the node, and Recover asks it to bring the selected removed node back into
/// the running run, and Take / Release takes a disabled node to drive it alone or gives it back
/// (requests on RunCtrl.<master>.Tree). The master's answer, or its refusal with the
/// reason, is shown below the tree.
class TreeView : public QWidget
{
    Q_OBJECT
public:
    enum Column
    {
        ColNode,
        ColKind,
        ColState,
        ColRate,   ///< events/s of a readout, the sum of its readouts for a segment
        ColEvents, ///< events of the run, likewise
        ColDetails,
        Columns
    };

    TreeView(Client *client, const QString &master, QWidget *parent = nullptr);

    /// Shows @p state's tree (the master's last published state).
    void setState(const rc::StateRecord &state);
    /// In control mode the check boxes and Recover act; else they are read-only.
    void setControl(bool control);
    /// True when the tree has a segment (a flat partition's tree is its slave table).
    bool hasSegments() const { return m_segments; }

    QTreeWidget *tree() const { return m_tree; }
    QPushButton *recoverButton() const { return m_recover; }
    /// Take (a disabled node, to drive it alone) or release (one this operator took) the selected node.
    QPushButton *takeButton() const { return m_take; }
    /// The last answer of the master to an action of this view.
    QLabel *answerLabel() const { return m_answer; }
    /// The item of @p node (nullptr if the tree has no such node).
    QTreeWidgetItem *item(const QString &node) const;
    /// Sends @p action ("enable", "disable", "recover", "take", "release", "transition") of @p node
    /// to the master, with @p extra in the request (a transition's "transition", "run_number").
    void requestAction(const QString &action, const QString &node, const QJsonObject &extra = {});
    /// The menu of @p node (its context menu): for a node taken by someone, its transitions from its
    /// state (the owner's commissioning runs, `dialogctl rc TRANSITION --node`): the master lets the
    /// owner's through, refuses anyone else's with the reason shown below the tree. Empty for a node
    /// nobody took. Deleted when closed.
    QMenu *nodeMenu(const QString &node);
    /// Asks the operator the run number of a taken node's own run (default: a dialog; tests replace
    /// it); std::nullopt cancels the start, 0 lets the node's controller number it.
    void setRunNumberAsker(std::function<std::optional<quint32>(const QString &node)> ask)
    {
        m_askRunNumber = std::move(ask);
    }

Q_SIGNALS:
    /// The whole tree's readouts: their events/s and MB/s summed (emitted in the GUI thread with
    /// every status of one of them).
    void totalsChanged(qint64 rate, double mbps);

private:
    void addNodes(QTreeWidgetItem *parent, const QJsonArray &nodes);
    /// Writes node @p n of the state's tree into its item @p it (texts, colours, check box).
    void fillItem(QTreeWidgetItem *it, const QJsonObject &n);
    /// Updates the items of @p nodes in place; false if the tree's shape changed (then rebuilt).
    bool updateNodes(QTreeWidgetItem *parent, const QJsonArray &nodes);
    /// The buttons for the selected node.
    void updateRecover();
    /// Writes the rate and events of @p it (its readouts' sums for a segment); returns them.
    std::pair<qint64, qint64> updateCounts(QTreeWidgetItem *it);
    void updateCounts();

    struct Counts
    {
        qint64 rate = 0, events = 0;
        double mbps = 0;
    };
    QHash<QString, Counts> m_counts; ///< per readout slave, from its RunCtrl.<name>.Status

    std::function<std::optional<quint32>(const QString &node)> m_askRunNumber;
    QHash<QString, QTreeWidgetItem *> m_items; ///< by node name

    Client *m_client;
    QString m_master;
    bool m_control = false;
    bool m_segments = false;
    bool m_filling = false; ///< items are being rebuilt: their check boxes are not the operator's
    QTreeWidget *m_tree = nullptr;
    QPushButton *m_recover = nullptr;
    QPushButton *m_take = nullptr;
    QLabel *m_answer = nullptr;
};

} // namespace dialog::runcontrol
