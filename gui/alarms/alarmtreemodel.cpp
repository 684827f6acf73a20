#include "alarmtreemodel.h"

#include "alarmtablemodel.h"

using namespace Qt::StringLiterals;

namespace dialog::alarms {

namespace {
const char *const SeverityNames[] = {"ok", "minor", "major", "invalid"};

QString parentOf(const QString &path)
{
    const qsizetype slash = path.lastIndexOf(u'/');
    return slash < 0 ? QString() : path.left(slash);
}
} // namespace

AlarmTreeModel::AlarmTreeModel(QObject *parent) : QStandardItemModel(0, ColumnCount, parent)
{
    setHorizontalHeaderLabels({u"Path"_s, u"Worst"_s, u"Active"_s, u"Unack."_s, u"Alarms"_s});
    QStandardItem *root = ensure(QString(), false);
    root->setText(u"All alarms"_s);
}

QStandardItem *AlarmTreeModel::ensure(const QString &path, bool leaf)
{
    if (QStandardItem *i = m_items.value(path))
        return i;
    QStandardItem *parentItem = path.isEmpty() ? invisibleRootItem() : ensure(parentOf(path), false);
    QList<QStandardItem *> row;
    for (int c = 0; c < ColumnCount; ++c) {
        auto *i = new QStandardItem;
        i->setEditable(false);
        i->setData(path, PathRole);
        i->setData(leaf, LeafRole);
        if (c != Name)
            i->setTextAlignment(Qt::AlignCenter);
        row.append(i);
    }
    row[Name]->setText(path.isEmpty() ? u"All alarms"_s : path.section(u'/', -1));
    row[Worst]->setData(u"ok"_s, WorstRole);
    if (!leaf)
        for (int c : {Active, Unacknowledged})
            row[c]->setText(u"0"_s);
    // Children in name order, nodes and alarms alike.
    int at = parentItem->rowCount();
    for (int r = 0; r < parentItem->rowCount(); ++r)
        if (parentItem->child(r, Name)->text() > row[Name]->text()) {
            at = r;
            break;
        }
    parentItem->insertRow(at, row);
    m_items.insert(path, row[Name]);
    return row[Name];
}

void AlarmTreeModel::addFromJson(const QJsonObject &node)
{
    const QString path = node.value(u"path"_s).toString();
    const bool leaf = !node.contains(u"children"_s);
    if (!path.isEmpty())
        ensure(path, leaf);
    if (leaf) {
        m_items.value(path)->setToolTip(node.value(u"description"_s).toString());
        return;
    }
    for (const QJsonValue &c : node.value(u"children"_s).toArray())
        addFromJson(c.toObject());
}

void AlarmTreeModel::setStructure(const QJsonObject &tree)
{
    addFromJson(tree);
    m_structured = true;
    countAlarms();
}

void AlarmTreeModel::countAlarms()
{
    QHash<QString, int> counts;
    for (auto it = m_items.cbegin(); it != m_items.cend(); ++it) {
        if (!it.value()->data(LeafRole).toBool())
            continue;
        QString p = it.key();
        do {
            p = parentOf(p);
            ++counts[p];
        } while (!p.isEmpty());
    }
    for (auto it = m_items.cbegin(); it != m_items.cend(); ++it) {
        if (it.value()->data(LeafRole).toBool())
            continue;
        QStandardItem *parentItem = it.value()->parent() ? it.value()->parent() : invisibleRootItem();
        parentItem->child(it.value()->row(), Alarms)->setText(QString::number(counts.value(it.key())));
    }
}

void AlarmTreeModel::setTable(const QJsonArray &alarms)
{
    QHash<QString, Figures> figures;
    QHash<QString, QString> leafState;
    bool added = false;
    for (const QJsonValue &v : alarms) {
        const QJsonObject a = v.toObject();
        const QString path = a.value(u"path"_s).toString();
        if (path.isEmpty())
            continue;
        if (!m_items.contains(path)) {
            ensure(path, true);
            added = true;
        }
        QString state = a.value(u"state"_s).toString();
        const bool shelved = a.value(u"shelved"_s).toBool(), disabled = a.value(u"disabled"_s).toBool();
        if (shelved)
            state += u" (shelved)"_s;
        if (disabled)
            state += u" (disabled)"_s;
        leafState.insert(path, state);
        const bool annunciated = a.value(u"state"_s).toString() != u"normal"_s && !shelved && !disabled;
        if (!annunciated)
            continue;
        const int rank = severityRank(a.value(u"severity"_s).toString());
        const bool unack = isUnacknowledged(a);
        Figures &leaf = figures[path];
        leaf.worst = rank;
        leaf.active = 1;
        leaf.unacknowledged = unack ? 1 : 0;
        QString p = path;
        do {
            p = parentOf(p);
            Figures &f = figures[p];
            f.worst = std::max(f.worst, rank);
            ++f.active;
            f.unacknowledged += unack ? 1 : 0;
        } while (!p.isEmpty());
    }
    if (added)
        countAlarms();
    // Only nodes whose figures changed are touched: a large tree costs what changed.
    for (auto it = figures.cbegin(); it != figures.cend(); ++it)
        if (!m_shown.contains(it.key()) || !(m_shown.value(it.key()) == it.value()))
            show(it.key(), it.value());
    const QStringList shown = m_shown.keys();
    for (const QString &p : shown)
        if (!figures.contains(p))
            show(p, Figures());
    for (auto it = leafState.cbegin(); it != leafState.cend(); ++it)
        if (m_leafState.value(it.key()) != it.value())
            if (QStandardItem *i = m_items.value(it.key()))
                (i->parent() ? i->parent() : invisibleRootItem())->child(i->row(), Active)->setText(it.value());
    for (auto it = m_leafState.cbegin(); it != m_leafState.cend(); ++it)
        if (!leafState.contains(it.key()))
            if (QStandardItem *i = m_items.value(it.key()))
                (i->parent() ? i->parent() : invisibleRootItem())->child(i->row(), Active)->setText(QString());
    m_leafState = std::move(leafState);
}

void AlarmTreeModel::show(const QString &path, const Figures &f)
{
    QStandardItem *name = m_items.value(path);
    if (!name)
        return;
    if (f == Figures())
        m_shown.remove(path);
    else
        m_shown.insert(path, f);
    QStandardItem *parentItem = name->parent() ? name->parent() : invisibleRootItem();
    const int row = name->row();
    const bool leaf = name->data(LeafRole).toBool();
    const QString worst = QString::fromLatin1(SeverityNames[std::clamp(f.worst, 0, 3)]);
    QStandardItem *w = parentItem->child(row, Worst);
    w->setData(worst, WorstRole);
    w->setText(f.worst > 0 ? worst : QString());
    const QColor c = severityColor(worst);
    for (int col = 0; col < ColumnCount; ++col)
        parentItem->child(row, col)->setData(c.isValid() ? QVariant(c) : QVariant(), Qt::BackgroundRole);
    QFont font;
    font.setBold(f.unacknowledged > 0);
    name->setFont(font);
    if (!leaf) {
        parentItem->child(row, Active)->setText(QString::number(f.active));
        parentItem->child(row, Unacknowledged)->setText(QString::number(f.unacknowledged));
    }
}

QModelIndex AlarmTreeModel::indexOf(const QString &path) const
{
    QStandardItem *i = m_items.value(path);
    return i ? i->index() : QModelIndex();
}

QString AlarmTreeModel::worst(const QString &path) const
{
    const QModelIndex i = indexOf(path);
    return i.isValid() ? i.siblingAtColumn(Worst).data(WorstRole).toString() : QString();
}

int AlarmTreeModel::count(const QString &path, Column column) const
{
    const QModelIndex i = indexOf(path);
    return i.isValid() ? i.siblingAtColumn(column).data().toInt() : -1;
}

} // namespace dialog::alarms
