#include "treeview.h"

#include "runcontrolwindow.h"

#include "dialog/rc/protocol.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QJsonArray>
#include <QJsonDocument>
#include <QLabel>
#include <QPushButton>
#include <QTreeWidget>
#include <QVBoxLayout>

namespace dialog::runcontrol {

namespace {
constexpr int NodeRole = Qt::UserRole;        ///< the node's name
constexpr int RemovedRole = Qt::UserRole + 1; ///< removed from the run (recoverable once back)
constexpr int OwnerRole = Qt::UserRole + 2;   ///< who took it, empty if nobody
constexpr int EnabledRole = Qt::UserRole + 3; ///< in the run (not disabled)
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
    for (QTreeWidgetItemIterator it(m_tree); *it; ++it)
        if ((*it)->data(ColNode, NodeRole).toString() == node)
            return *it;
    return nullptr;
}

void TreeView::setState(const rc::StateRecord &state)
{
    // The operator's selection survives the rebuild; none is made for them.
    const QList<QTreeWidgetItem *> was = m_tree->selectedItems();
    const QString selected = was.isEmpty() ? QString() : was.first()->data(ColNode, NodeRole).toString();
    m_filling = true;
    m_segments = false;
    m_tree->clear();
    addNodes(nullptr, state.tree);
    m_tree->expandAll();
    if (QTreeWidgetItem *it = item(selected))
        m_tree->setCurrentItem(it);
    else
        m_tree->setCurrentItem(nullptr);
    updateCounts();
    m_filling = false;
    updateRecover();
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

void TreeView::addNodes(QTreeWidgetItem *parent, const QJsonArray &nodes)
{
    for (const QJsonValue &v : nodes) {
        const QJsonObject n = v.toObject();
        const QString name = n.value(QStringLiteral("name")).toString();
        const QString kind = n.value(QStringLiteral("kind")).toString();
        const bool present = n.value(QStringLiteral("present")).toBool();
        const bool lost = n.value(QStringLiteral("lost")).toBool();
        const bool enabled = n.value(QStringLiteral("enabled")).toBool(true);
        const bool removed = n.value(QStringLiteral("removed")).toBool();
        const bool busy = n.value(QStringLiteral("busy")).toBool();
        const auto state = rc::stateFromName(n.value(QStringLiteral("state")).toString());
        auto *it = parent ? new QTreeWidgetItem(parent) : new QTreeWidgetItem(m_tree);
        it->setData(ColNode, NodeRole, name);
        it->setData(ColNode, RemovedRole, removed && present);
        it->setData(ColNode, OwnerRole, n.value(QStringLiteral("owner")).toString());
        it->setData(ColNode, EnabledRole, enabled);
        it->setText(ColNode, name);
        it->setText(ColKind, kind);
        it->setText(ColState, present && state
                                  ? rc::stateName(*state) + (busy ? QStringLiteral("…") : QString())
                              : lost ? QStringLiteral("LOST")
                                     : QStringLiteral("absent"));
        // Out of the run (disabled, removed): the state shown, its colour muted.
        const QColor colour = present
                                  ? stateColor(state, busy)
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
        if (removed) {
            it->setForeground(ColDetails, QColor(0xc6, 0x28, 0x28));
            QFont f = it->font(ColNode);
            f.setItalic(true);
            it->setFont(ColNode, f);
        }
        if (!enabled || removed)
            it->setForeground(ColNode, QColor(0x75, 0x75, 0x75));
        Qt::ItemFlags flags = Qt::ItemIsEnabled | Qt::ItemIsSelectable;
        if (m_control)
            flags |= Qt::ItemIsUserCheckable;
        it->setFlags(flags);
        it->setCheckState(ColNode, enabled ? Qt::Checked : Qt::Unchecked);
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

void TreeView::requestAction(const QString &action, const QString &node)
{
    const QByteArray data =
        QJsonDocument(QJsonObject{{QStringLiteral("action"), action}, {QStringLiteral("node"), node}})
            .toJson(QJsonDocument::Compact);
    m_answer->setText(QStringLiteral("%1 %2…").arg(action, node));
    m_answer->setStyleSheet(QString());
    m_client->request(rc::treeService(m_master), data, 30000, this, [this, action, node](const Reply &r) {
        m_answer->setText(r.isOk() ? QStringLiteral("%1 %2: done").arg(action, node)
                                   : QStringLiteral("refused: %1").arg(r.errorString()));
        m_answer->setStyleSheet(r.isOk() ? QString() : QStringLiteral("color: #c62828"));
    });
}

} // namespace dialog::runcontrol
