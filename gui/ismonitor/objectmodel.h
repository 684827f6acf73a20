// The objects of one IS server (name, type, last update), kept live from IS events.
#pragma once

#include "dialog/is/dictionary.h"
#include "dialog/is/receiver.h"

#include <QAbstractTableModel>
#include <QHash>
#include <optional>

namespace dialog::ismonitor {

struct ObjectRow
{
    QString name; ///< without the server prefix
    QString type;
    is::Time time;
    quint64 updates = 0;
};

/// A flat table of IS objects. Changes are queued by add()/addEntries() and applied by flush(), so
/// a burst of thousands of events costs one model update (the window flushes at most 10 times a
/// second). Rows are in arrival order; views sort through a proxy (SortRole holds raw values).
class ObjectModel : public QAbstractTableModel
{
    Q_OBJECT
public:
    enum Column
    {
        Name,
        Type,
        Updated,
        Updates,
        ColumnCount
    };
    enum Role
    {
        SortRole = Qt::UserRole + 1,
        StaleRole, ///< bool: the object is stale (greyed, its age shown)
    };

    using QAbstractTableModel::QAbstractTableModel;

    void clear();
    /// Queues an event (the last event of each object wins; updates are counted).
    void add(const is::Event &event);
    /// Replaces the rows with a listing (queued events stay queued, to be applied over it).
    void addEntries(const QList<is::Entry> &entries);
    /// Applies the queued events. Returns true if anything changed.
    bool flush();
    /// The stale objects as the server listed them (every other one is fresh): their rows are
    /// greyed and show their age. An object written after the listing was made stays fresh.
    void setStale(const QList<is::Entry> &stale);
    /// The staleness of @p name (without the server prefix), if it is stale.
    std::optional<is::Staleness> staleness(const QString &name) const;
    /// How many of the rows are stale.
    int staleCount() const { return int(m_stale.size()); }
    bool hasPending() const { return !m_pending.isEmpty(); }

    int rowOf(const QString &name) const { return m_index.value(name, -1); }
    const ObjectRow &row(int r) const { return m_rows.at(r); }

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation o, int role = Qt::DisplayRole) const override;

Q_SIGNALS:
    /// Emitted from flush() for every object removed.
    void removed(const QString &name);

private:
    struct Pending
    {
        is::Event::Kind kind;
        QString type;
        is::Time time;
        quint64 count = 0;
    };
    void reindexFrom(int row);

    QList<ObjectRow> m_rows;
    QHash<QString, int> m_index;
    QHash<QString, Pending> m_pending;
    QHash<QString, is::Staleness> m_stale; ///< object name → why and how old (stale ones only)
};

} // namespace dialog::ismonitor
