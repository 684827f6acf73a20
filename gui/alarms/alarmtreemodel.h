// dialog-alarms' tree: the area/system paths of the alarm server's rules (its "tree" answer) with
// each node's worst annunciated severity below it and its counts, kept current from ALARM.Table.
#pragma once

#include <QHash>
#include <QJsonArray>
#include <QJsonObject>
#include <QStandardItemModel>

namespace dialog::alarms {

class AlarmTreeModel : public QStandardItemModel
{
    Q_OBJECT
public:
    enum Column
    {
        Name,
        Worst,
        Active,         ///< annunciated alarms below the node
        Unacknowledged, ///< of them, active or latched
        Alarms,         ///< every alarm below the node (rules)
        ColumnCount
    };
    enum Role
    {
        PathRole = Qt::UserRole + 1, ///< the node's path ("" for the root "All alarms")
        WorstRole,                   ///< "ok", "minor", "major", "invalid"
        LeafRole,                    ///< bool: an alarm, not a node
    };

    explicit AlarmTreeModel(QObject *parent = nullptr);

    /// The structure from the alarm server's answer to {"op": "tree"} (the whole tree).
    void setStructure(const QJsonObject &tree);
    bool hasStructure() const { return m_structured; }
    /// The figures from the "alarms" of an ALARM.Table message (alarms missing there are normal);
    /// paths not in the structure yet are added.
    void setTable(const QJsonArray &alarms);

    /// The item of the Name column of @p path ("" the root), nullptr if unknown.
    QStandardItem *item(const QString &path) const { return m_items.value(path); }
    QModelIndex indexOf(const QString &path) const;
    /// The figures of a node as shown: worst, active, unacknowledged, alarms.
    QString worst(const QString &path) const;
    int count(const QString &path, Column column) const;

private:
    struct Figures
    {
        int worst = 0, active = 0, unacknowledged = 0;
        bool operator==(const Figures &o) const
        {
            return worst == o.worst && active == o.active && unacknowledged == o.unacknowledged;
        }
    };
    QStandardItem *ensure(const QString &path, bool leaf);
    void addFromJson(const QJsonObject &node);
    void show(const QString &path, const Figures &f);
    void countAlarms();

    QHash<QString, QStandardItem *> m_items;
    QHash<QString, Figures> m_shown; ///< nodes whose figures are not all zero
    QHash<QString, QString> m_leafState;
    bool m_structured = false;
};

} // namespace dialog::alarms
