#include "attributemodel.h"

#include "dialog/histogram.h"
#include "dialog/is/time.h"

#include <QBrush>
#include <QFont>

namespace dialog::ismonitor {

struct AttributeModel::Node
{
    QString name, type, value, tooltip, description;
    is::Object object; // for object nodes
    Node *parent = nullptr;
    int row = 0;
    std::vector<std::unique_ptr<Node>> children;

    Node *add(std::unique_ptr<Node> child)
    {
        child->parent = this;
        child->row = int(children.size());
        children.push_back(std::move(child));
        return children.back().get();
    }
};

AttributeModel::AttributeModel(QObject *parent) : QAbstractItemModel(parent), m_root(std::make_unique<Node>())
{
}

AttributeModel::~AttributeModel() = default;

QString AttributeModel::formatScalar(const QVariant &v)
{
    if (v.metaType() == QMetaType::fromType<is::Time>())
        return v.value<is::Time>().toString();
    if (v.metaType() == QMetaType::fromType<double>() || v.metaType() == QMetaType::fromType<float>())
        return QString::number(v.toDouble(), 'g', 10);
    if (v.metaType() == QMetaType::fromType<bool>())
        return v.toBool() ? QStringLiteral("true") : QStringLiteral("false");
    return v.toString();
}

QString AttributeModel::compact(const QVariantList &list, int maxShown)
{
    QStringList parts;
    for (int i = 0; i < list.size() && i < maxShown; ++i)
        parts << formatScalar(list.at(i));
    if (list.size() > maxShown)
        parts << QStringLiteral("…");
    return QStringLiteral("[%1] %2").arg(list.size()).arg(parts.join(QStringLiteral(", ")));
}

namespace {
QString objectSummary(const is::Object &o)
{
    Histogram h;
    if (Histogram::fromObject(o, &h).isOk())
        return h.kind == Histogram::Kind::TwoD
                   ? QStringLiteral("%1×%2 bins, %3 entries").arg(h.xBins).arg(h.yBins).arg(h.entries)
                   : QStringLiteral("%1 bins, %2 entries").arg(h.xBins).arg(h.entries);
    return QStringLiteral("{%1 attributes}").arg(o.attributeCount());
}
} // namespace

void AttributeModel::build(Node *parent, const is::Object &object)
{
    const QList<is::AttributeInfo> attrs = object.attributes();
    for (int i = 0; i < attrs.size(); ++i) {
        const is::AttributeInfo &a = attrs.at(i);
        const is::Value *v = object.valueAt(i);
        auto n = std::make_unique<Node>();
        n->name = a.name();
        n->type = a.isVector() ? a.typeName() + QStringLiteral("[]") : a.typeName();
        n->description = a.description();
        if (!v) {
            parent->add(std::move(n));
            continue;
        }
        if (a.type() == is::BasicType::Object && !a.isVector()) {
            if (const is::Object *o = v->getIf<is::Object>()) {
                n->object = *o;
                n->value = objectSummary(*o);
                build(n.get(), *o);
            }
        } else if (a.type() == is::BasicType::Object) {
            if (const auto *list = v->getIf<QList<is::Object>>()) {
                n->value = QStringLiteral("[%1 objects]").arg(list->size());
                Node *self = n.get();
                for (int j = 0; j < list->size(); ++j) {
                    auto e = std::make_unique<Node>();
                    e->name = QString::number(j);
                    e->type = list->at(j).typeName();
                    e->object = list->at(j);
                    e->value = objectSummary(list->at(j));
                    build(e.get(), list->at(j));
                    self->add(std::move(e));
                }
            }
        } else if (a.isVector()) {
            const QVariantList list = v->toVariant().toList();
            n->value = compact(list);
            n->tooltip = compact(list, 500);
        } else {
            n->value = formatScalar(v->toVariant());
        }
        parent->add(std::move(n));
    }
}

bool AttributeModel::sameShape(const Node *a, const Node *b)
{
    if (a->children.size() != b->children.size() || a->type != b->type || a->name != b->name)
        return false;
    for (size_t i = 0; i < a->children.size(); ++i)
        if (!sameShape(a->children[i].get(), b->children[i].get()))
            return false;
    return true;
}

void AttributeModel::copyValues(Node *into, const Node *from, const QModelIndex &index)
{
    into->value = from->value;
    into->tooltip = from->tooltip;
    into->object = from->object;
    if (into->children.empty())
        return;
    for (size_t i = 0; i < into->children.size(); ++i)
        copyValues(into->children[i].get(), from->children[i].get(), this->index(int(i), 0, index));
    Q_EMIT dataChanged(this->index(0, Value, index),
                       this->index(int(into->children.size()) - 1, Value, index));
}

void AttributeModel::setObject(const is::Object &object)
{
    auto root = std::make_unique<Node>();
    root->type = object.typeName();
    if (object.isValid())
        build(root.get(), object);
    if (m_object.isValid() && object.isValid() && sameShape(root.get(), m_root.get())) {
        m_object = object;
        copyValues(m_root.get(), root.get(), {});
        return;
    }
    beginResetModel();
    m_object = object;
    m_root = std::move(root);
    endResetModel();
}

AttributeModel::Node *AttributeModel::nodeOf(const QModelIndex &index) const
{
    return index.isValid() ? static_cast<Node *>(index.internalPointer()) : m_root.get();
}

QModelIndex AttributeModel::find(const QString &path) const
{
    QModelIndex at;
    for (const QString &part : path.split(QLatin1Char('.'))) {
        const Node *n = nodeOf(at);
        auto it = std::find_if(n->children.begin(), n->children.end(),
                               [&](const auto &c) { return c->name == part; });
        if (it == n->children.end())
            return {};
        at = index((*it)->row, 0, at);
    }
    return at;
}

QString AttributeModel::path(const QModelIndex &index) const
{
    QStringList parts;
    for (const Node *n = index.isValid() ? nodeOf(index) : nullptr; n && n != m_root.get(); n = n->parent)
        parts.prepend(n->name);
    return parts.join(QLatin1Char('.'));
}

QModelIndex AttributeModel::index(int row, int column, const QModelIndex &parent) const
{
    const Node *p = nodeOf(parent);
    if (row < 0 || column < 0 || column >= ColumnCount || size_t(row) >= p->children.size())
        return {};
    return createIndex(row, column, p->children[size_t(row)].get());
}

QModelIndex AttributeModel::parent(const QModelIndex &child) const
{
    if (!child.isValid())
        return {};
    const Node *p = nodeOf(child)->parent;
    if (!p || p == m_root.get())
        return {};
    return createIndex(p->row, 0, const_cast<Node *>(p));
}

int AttributeModel::rowCount(const QModelIndex &parent) const
{
    if (parent.isValid() && parent.column() != 0)
        return 0;
    return int(nodeOf(parent)->children.size());
}

int AttributeModel::columnCount(const QModelIndex &) const
{
    return ColumnCount;
}

QVariant AttributeModel::data(const QModelIndex &index, int role) const
{
    if (!index.isValid())
        return {};
    const Node *n = nodeOf(index);
    if (role == Qt::DisplayRole) {
        switch (index.column()) {
        case Name:
            return n->name;
        case Type:
            return n->type;
        case Value:
            return n->value;
        case Description:
            return n->description;
        }
    }
    if (role == Qt::ToolTipRole) {
        if (index.column() == Value)
            return n->tooltip.isEmpty() ? n->value : n->tooltip;
        return n->description.isEmpty() ? QVariant() : QVariant(n->description);
    }
    if (role == ObjectRole && n->object.isValid())
        return QVariant::fromValue(n->object);
    if (role == Qt::ForegroundRole && index.column() == Description)
        return QBrush(Qt::darkGray);
    if (role == Qt::ForegroundRole && m_stale)
        return QBrush(Qt::gray);
    if (role == Qt::FontRole && index.column() == Name && !n->children.empty()) {
        QFont f;
        f.setBold(true);
        return f;
    }
    return {};
}

void AttributeModel::setStale(bool stale)
{
    if (stale == m_stale)
        return;
    m_stale = stale;
    // The views repaint what they show; nested rows follow from their parents' signal.
    const int rows = rowCount();
    if (rows > 0)
        Q_EMIT dataChanged(index(0, 0), index(rows - 1, ColumnCount - 1), {Qt::ForegroundRole});
}

QVariant AttributeModel::headerData(int section, Qt::Orientation o, int role) const
{
    if (o != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    static const char *names[] = {"Attribute", "Type", "Value", "Description"};
    return QString::fromLatin1(names[section]);
}

} // namespace dialog::ismonitor
