// The value of one IS object as a tree: name, type, value, description (from the type's
// meta-information). Nested objects and vectors of objects are expandable; vectors of primitives
// are shown compactly (count and first elements; all of them in the tooltip).
#pragma once

#include "dialog/is/object.h"

#include <QAbstractItemModel>
#include <memory>
#include <vector>

namespace dialog::ismonitor {

class AttributeModel : public QAbstractItemModel
{
    Q_OBJECT
public:
    enum Column
    {
        Name,
        Type,
        Value,
        Description,
        ColumnCount
    };
    enum Role
    {
        ObjectRole = Qt::UserRole + 1
    }; ///< the nested is::Object of an object node

    explicit AttributeModel(QObject *parent = nullptr);
    ~AttributeModel() override;

    /// Shows @p object. An object of the same shape as the one shown updates the values in place
    /// (expanded nodes and the selection stay); another shape resets the model.
    void setObject(const is::Object &object);
    const is::Object &object() const { return m_object; }
    /// Shows the values greyed (the object is stale) or normally.
    void setStale(bool stale);
    bool isStale() const { return m_stale; }

    /// The index of the attribute at @p path ("a", "a.b", "list.2.c"), invalid if none.
    QModelIndex find(const QString &path) const;
    /// The dotted path of @p index (see find()).
    QString path(const QModelIndex &index) const;

    /// "[5] 1, 2, 3, 4, 5", at most @p maxShown elements.
    static QString compact(const QVariantList &list, int maxShown = 8);
    static QString formatScalar(const QVariant &value);

    QModelIndex index(int row, int column, const QModelIndex &parent = {}) const override;
    QModelIndex parent(const QModelIndex &child) const override;
    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation o, int role = Qt::DisplayRole) const override;

private:
    struct Node;
    static void build(Node *parent, const is::Object &object);
    static bool sameShape(const Node *a, const Node *b);
    void copyValues(Node *into, const Node *from, const QModelIndex &index);
    Node *nodeOf(const QModelIndex &index) const;

    is::Object m_object;
    std::unique_ptr<Node> m_root;
    bool m_stale = false;
};

} // namespace dialog::ismonitor
