#include "treeview.h"

#include "runcontrolwindow.h"

#include "dialog/rc/protocol.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QInputDialog>
#include <QJsonArray>
#include <QJsonDocument>
#include <QLabel>
#include <QMenu>
#include <QPushButton>
#include <QTreeWidget>
#include <QVBoxLayout>
#include <limits>

namespace dialog::runcontrol {

namespace {
constexpr int NodeRole = Qt::UserRole;        ///< the node's name
constexpr int RemovedRole = Qt::UserRole + 1; ///< removed from the run (recoverable once back)
constexpr int OwnerRole = Qt::UserRole + 2;   ///< who took it, empty if nobody
constexpr int EnabledRole = Qt::UserRole + 3; ///< in the run (not disabled)
constexpr int StateRole = Qt::UserRole + 4;   ///< its state's name, empty if it is not there
constexpr int BusyRole = Qt::UserRole + 5;    ///< in a transition
} // namespace

TreeView::TreeView(Client *client, const QString &master, QWidget *parent)
    : QWidget(parent), m_client(client), m_master(master)
{
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    m_tree = new QTreeWidget;
    m_tree->setColumnCount(Columns);
    m_tree->setHeaderLabels({QStringLiteral("Run-control tree"), QStringLiteral("Kind"),
                             QStringLiteral("State"), QStringLiteral("Events/s"), QStringLiteral("Events"),
                             QStringLiteral("Details")});
    m_tree->header()->setSectionResizeMode(ColDetails, QHeaderView::Stretch);
    m_tree->setColumnWidth(ColNode, 200);
    m_tree->setSelectionMode(QAbstractItemView::SingleSelection);
    // One line per node: no row's height is measured again when its texts change (a thousand nodes).
    m_tree->setUniformRowHeights(true);
    layout->addWidget(m_tree, 1);
    auto *row = new QHBoxLayout;
    m_recover = new QPushButton(QStringLiteral("Recover into the run"));
    m_recover->setToolTip(
        QStringLiteral("Bring the selected removed node, back again, into the running run"));
    row->addWidget(m_recover);
    m_take = new QPushButton(QStringLiteral("Take"));
    row->addWidget(m_take);
    m_answer = new QLabel;
    m_answer->setTextInteractionFlags(Qt::TextSelectableByMouse);
    row->addWidget(m_answer, 1);
    layout->addLayout(row);

    connect(m_tree, &QTreeWidget::itemChanged, this, [this](QTreeWidgetItem *it, int column) {
        if (m_filling || column != ColNode)
            return;
        requestAction(it->checkState(ColNode) == Qt::Checked ? QStringLiteral("enable")
                                                             : QStringLiteral("disable"),
                      it->data(ColNode, NodeRole).toString());
    });
    connect(m_tree, &QTreeWidget::itemSelectionChanged, this, [this] { updateRecover(); });
    // A taken node's transitions (commissioning), on its context menu.
    m_tree->setContextMenuPolicy(Qt::CustomContextMenu);
    connect(m_tree, &QTreeWidget::customContextMenuRequested, this, [this](const QPoint &pos) {
        const QTreeWidgetItem *it = m_tree->itemAt(pos);
        if (!it)
            return;
        QMenu *menu = nodeMenu(it->data(ColNode, NodeRole).toString());
        if (menu->isEmpty())
            menu->deleteLater();
        else
            menu->popup(m_tree->viewport()->mapToGlobal(pos));
    });
    m_askRunNumber = [this](const QString &node) -> std::optional<quint32> {
        bool ok = false;
        const int run = QInputDialog::getInt(this, QStringLiteral("Start %1").arg(node),
                                             QStringLiteral("Run number of %1's own run (0: numbered by its "
                                                            "controller's run registry)")
                                                 .arg(node),
                                             0, 0, std::numeric_limits<int>::max(), 1, &ok);
        return ok ? std::optional<quint32>(quint32(run)) : std::nullopt;
    };
    connect(m_take, &QPushButton::clicked, this, [this] {
        if (const QList<QTreeWidgetItem *> selected = m_tree->selectedItems(); !selected.isEmpty())
            requestAction(selected.first()->data(ColNode, OwnerRole).toString().isEmpty()
                              ? QStringLiteral("take")
                              : QStringLiteral("release"),
                          selected.first()->data(ColNode, NodeRole).toString());
    });
    connect(m_recover, &QPushButton::clicked, this, [this] {
        if (const QList<QTreeWidgetItem *> selected = m_tree->selectedItems(); !selected.isEmpty())
            requestAction(QStringLiteral("recover"), selected.first()->data(ColNode, NodeRole).toString());
    });
    updateRecover();
}

void TreeView::setControl(bool control)
{
    m_control = control;
    const QSignalBlocker block(m_tree);
    for (QTreeWidgetItemIterator it(m_tree); *it; ++it) {
        Qt::ItemFlags f = (*it)->flags();
        (*it)->setFlags(control ? f | Qt::ItemIsUserCheckable : f & ~Qt::ItemIsUserCheckable);
    }
    updateRecover();
}

QTreeWidgetItem *TreeView::item(const QString &node) const
{
    return m_items.value(node);
}

void TreeView::setState(const rc::StateRecord &state)
{
    m_filling = true;
    // A state message changes states, flags and texts, seldom the tree's shape: the items are
    // updated in place (a thousand nodes, several messages a second), rebuilt only when it changed.
    const int top = m_tree->topLevelItemCount();
    if (top == 0 || !updateNodes(nullptr, state.tree)) {
        // The operator's selection survives the rebuild; none is made for them.
        const QList<QTreeWidgetItem *> was = m_tree->selectedItems();
        const QString selected = was.isEmpty() ? QString() : was.first()->data(ColNode, NodeRole).toString();
        m_segments = false;
        m_items.clear();
        m_tree->clear();
        addNodes(nullptr, state.tree);
        m_tree->expandAll();
        if (QTreeWidgetItem *it = item(selected))
            m_tree->setCurrentItem(it);
        else
            m_tree->setCurrentItem(nullptr);
    }
    updateCounts();
    m_filling = false;
    updateRecover();
}

bool TreeView::updateNodes(QTreeWidgetItem *parent, const QJsonArray &nodes)
{
    const int count = parent ? parent->childCount() : m_tree->topLevelItemCount();
    if (count != nodes.size())
        return false;
    for (int i = 0; i < count; ++i) {
        QTreeWidgetItem *it = parent ? parent->child(i) : m_tree->topLevelItem(i);
        const QJsonObject n = nodes.at(i).toObject();
        if (it->data(ColNode, NodeRole).toString() != n.value(QStringLiteral("name")).toString() ||
            it->text(ColKind) != n.value(QStringLiteral("kind")).toString())
            return false;
        fillItem(it, n);
        if (!updateNodes(it, n.value(QStringLiteral("children")).toArray()))
            return false;
    }
    return true;
}

std::pair<qint64, qint64> TreeView::updateCounts(QTreeWidgetItem *it)
{
    const QString name = it->data(ColNode, NodeRole).toString();
    const bool readout = m_counts.contains(name);
    Counts sum = m_counts.value(name);
    bool counted = readout;
    for (int i = 0; i < it->childCount(); ++i) {
        const auto [rate, events] = updateCounts(it->child(i));
        sum.rate += rate;
        sum.events += events;
        counted = counted || it->child(i)->text(ColEvents).size() > 0;
    }
    it->setText(ColRate, counted ? formatCount(sum.rate) : QString());
    it->setText(ColEvents, counted ? formatCount(sum.events) : QString());
    for (int c : {ColRate, ColEvents})
        it->setTextAlignment(c, Qt::AlignRight | Qt::AlignVCenter);
    return {sum.rate, sum.events};
}

void TreeView::updateCounts()
{
    const bool filling = m_filling;
    m_filling = true; // texts set here are no check-box change of the operator
    for (int i = 0; i < m_tree->topLevelItemCount(); ++i)
        updateCounts(m_tree->topLevelItem(i));
    m_filling = filling;
}

void TreeView::fillItem(QTreeWidgetItem *it, const QJsonObject &n)
{
    const QString kind = n.value(QStringLiteral("kind")).toString();
    const bool present = n.value(QStringLiteral("present")).toBool();
    const bool lost = n.value(QStringLiteral("lost")).toBool();
    const bool enabled = n.value(QStringLiteral("enabled")).toBool(true);
    const bool removed = n.value(QStringLiteral("removed")).toBool();
    const bool busy = n.value(QStringLiteral("busy")).toBool();
    const auto state = rc::stateFromName(n.value(QStringLiteral("state")).toString());
    it->setData(ColNode, RemovedRole, removed && present);
    it->setData(ColNode, OwnerRole, n.value(QStringLiteral("owner")).toString());
    it->setData(ColNode, EnabledRole, enabled);
    it->setData(ColNode, StateRole, present && state ? rc::stateName(*state) : QString());
    it->setData(ColNode, BusyRole, busy);
    it->setText(ColKind, kind);
    it->setText(ColState, present && state ? rc::stateName(*state) + (busy ? QStringLiteral("…") : QString())
                          : lost           ? QStringLiteral("LOST")
                                           : QStringLiteral("absent"));
    // Out of the run (disabled, removed): the state shown, its colour muted.
    const QColor colour = present ? stateColor(state, busy)
                                  : stateColor(lost ? std::optional(rc::State::Error) : std::nullopt, false);
    it->setBackground(ColState, enabled && !removed ? colour : colour.lighter(130));
    QStringList details;
    if (!enabled)
        details << QStringLiteral("out of the run (disabled)");
    if (removed)
        details << QStringLiteral("REMOVED: ") + n.value(QStringLiteral("reason")).toString();
    else if (n.value(QStringLiteral("removable")).toBool())
        details << QStringLiteral("removable");
    if (const QString owner = n.value(QStringLiteral("owner")).toString(); !owner.isEmpty())
        details << QStringLiteral("taken by ") + owner;
    if (const QString error = n.value(QStringLiteral("error")).toString(); !error.isEmpty())
        details << error;
    it->setText(ColDetails, details.join(QStringLiteral("; ")));
    it->setForeground(ColDetails, removed ? QBrush(QColor(0xc6, 0x28, 0x28)) : QBrush());
    QFont f = it->font(ColNode);
    f.setItalic(removed);
    it->setFont(ColNode, f);
    it->setForeground(ColNode, !enabled || removed ? QBrush(QColor(0x75, 0x75, 0x75)) : QBrush());
    Qt::ItemFlags flags = Qt::ItemIsEnabled | Qt::ItemIsSelectable;
    if (m_control)
        flags |= Qt::ItemIsUserCheckable;
    // Set only when changed: each change is a signal through the view's model.
    if (it->flags() != flags)
        it->setFlags(flags);
    if (const Qt::CheckState check = enabled ? Qt::Checked : Qt::Unchecked; it->checkState(ColNode) != check)
        it->setCheckState(ColNode, check);
}

void TreeView::addNodes(QTreeWidgetItem *parent, const QJsonArray &nodes)
{
    for (const QJsonValue &v : nodes) {
        const QJsonObject n = v.toObject();
        const QString name = n.value(QStringLiteral("name")).toString();
        const QString kind = n.value(QStringLiteral("kind")).toString();
        auto *it = parent ? new QTreeWidgetItem(parent) : new QTreeWidgetItem(m_tree);
        it->setData(ColNode, NodeRole, name);
        it->setText(ColNode, name);
        m_items.insert(name, it);
        fillItem(it, n);
        if (kind == QLatin1String("segment"))
            m_segments = true;
        if (kind == QLatin1String("readout") && !m_counts.contains(name)) {
            m_counts.insert(name, {});
            m_client->subscribe(rc::statusService(name), this, [this, name](const Message &m) {
                const QJsonObject st = QJsonDocument::fromJson(m.data()).object();
                m_counts[name] = {st.value(QStringLiteral("rate_hz")).toInteger(),
                                  st.value(QStringLiteral("events")).toInteger(),
                                  st.value(QStringLiteral("mb_per_s")).toDouble()};
                updateCounts();
                Counts total;
                for (const Counts &c : std::as_const(m_counts)) {
                    total.rate += c.rate;
                    total.mbps += c.mbps;
                }
                Q_EMIT totalsChanged(total.rate, total.mbps);
            });
        }
        addNodes(it, n.value(QStringLiteral("children")).toArray());
    }
}

QMenu *TreeView::nodeMenu(const QString &node)
{
    auto *menu = new QMenu(this);
    menu->setAttribute(Qt::WA_DeleteOnClose);
    const QTreeWidgetItem *it = item(node);
    const QString owner = it ? it->data(ColNode, OwnerRole).toString() : QString();
    if (owner.isEmpty())
        return menu;
    menu->addSection(QStringLiteral("%1, taken by %2").arg(node, owner));
    const auto state = rc::stateFromName(it->data(ColNode, StateRole).toString());
    const bool busy = it->data(ColNode, BusyRole).toBool();
    for (const rc::Transition t :
         {rc::Transition::Configure, rc::Transition::Start, rc::Transition::Pause, rc::Transition::Resume,
          rc::Transition::Stop, rc::Transition::Unconfigure, rc::Transition::Reset}) {
        const QString name = rc::transitionName(t);
        QAction *a = menu->addAction(name.left(1).toUpper() + name.mid(1));
        a->setObjectName(name);
        a->setEnabled(m_control && state && !busy &&
                      (t == rc::Transition::Reset || rc::legalTransitions(*state).contains(t)));
        connect(a, &QAction::triggered, this, [this, node, t, name] {
            QJsonObject extra{{QStringLiteral("transition"), name}};
            if (t == rc::Transition::Start) {
                const std::optional<quint32> run = m_askRunNumber(node);
                if (!run)
                    return;
                extra.insert(QStringLiteral("run_number"), qint64(*run));
            }
            requestAction(QStringLiteral("transition"), node, extra);
        });
    }
    return menu;
}

void TreeView::updateRecover()
{
    const QList<QTreeWidgetItem *> selected = m_tree->selectedItems();
    const QTreeWidgetItem *it = selected.isEmpty() ? nullptr : selected.first();
    const bool recoverable = it && it->data(ColNode, RemovedRole).toBool();
    m_recover->setEnabled(m_control && recoverable);
    m_recover->setToolTip(!m_control ? QStringLiteral("monitoring mode: read-only")
                          : recoverable
                              ? QStringLiteral("Bring %1 into the running run").arg(it->text(ColNode))
                              : QStringLiteral("Select a removed node that is back"));
    const bool taken = it && !it->data(ColNode, OwnerRole).toString().isEmpty();
    m_take->setText(taken ? QStringLiteral("Release") : QStringLiteral("Take"));
    m_take->setEnabled(m_control && it && (taken || !it->data(ColNode, EnabledRole).toBool()));
    m_take->setToolTip(
        !m_control ? QStringLiteral("monitoring mode: read-only")
        : taken    ? QStringLiteral("Give %1 back (in Initial); it joins the next run").arg(it->text(ColNode))
        : it       ? QStringLiteral("Take %1, out of the run, to drive it alone (commissioning)")
                   .arg(it->text(ColNode))
             : QStringLiteral("Select a disabled node"));
}

void TreeView::requestAction(const QString &action, const QString &node, const QJsonObject &extra)
{
    QJsonObject request = extra;
    request.insert(QStringLiteral("action"), action);
    request.insert(QStringLiteral("node"), node);
    // What is asked, as the operator would say it ("start CAL").
    const QString what = extra.value(QStringLiteral("transition")).toString(action);
    m_answer->setText(QStringLiteral("%1 %2…").arg(what, node));
    m_answer->setStyleSheet(QString());
    m_client->request(rc::treeService(m_master), QJsonDocument(request).toJson(QJsonDocument::Compact), 30000,
                      this, [this, what, node](const Reply &r) {
                          m_answer->setText(r.isOk() ? QStringLiteral("%1 %2: done").arg(what, node)
                                                     : QStringLiteral("refused: %1").arg(r.errorString()));
                          m_answer->setStyleSheet(r.isOk() ? QString() : QStringLiteral("color: #c62828"));
                      });
}

} // namespace dialog::runcontrol
