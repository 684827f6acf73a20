#include "objectmodel.h"

#include <QBrush>
#include <QSet>

namespace dialog::ismonitor {

namespace {
// Above this many rows removed in one flush a reset is cheaper than one signal per row.
constexpr int ResetThreshold = 200;

} // namespace

void ObjectModel::clear()
{
    beginResetModel();
    m_rows.clear();
    m_index.clear();
    m_pending.clear();
    m_stale.clear();
    endResetModel();
}

void ObjectModel::add(const is::Event &event)
{
    Pending &p = m_pending[QString::fromUtf8(event.objectNameUtf8())];
    p.kind = event.kind();
    p.time = event.time();
    if (event.kind() != is::Event::Kind::Removed)
        p.type = event.typeName();
    ++p.count;
}

void ObjectModel::addEntries(const QList<is::Entry> &entries)
{
    // The listing is authoritative; events still queued are applied over it by the next flush().
    beginResetModel();
    m_rows.clear();
    m_index.clear();
    m_rows.reserve(entries.size());
    for (const is::Entry &e : entries) {
        QString object;
        is::Dictionary::splitName(e.name, nullptr, &object);
        m_index.insert(object, int(m_rows.size()));
        m_rows.append(ObjectRow{object, e.typeName, e.time, e.updateCount});
    }
    endResetModel();
}

void ObjectModel::reindexFrom(int row)
{
    for (int i = row; i < m_rows.size(); ++i)
        m_index[m_rows.at(i).name] = i;
}

bool ObjectModel::flush()
{
    if (m_pending.isEmpty())
        return false;
    const QHash<QString, Pending> pending = std::exchange(m_pending, {});
    QList<int> removals, changed;
    QList<ObjectRow> inserts;
    for (auto it = pending.cbegin(); it != pending.cend(); ++it) {
        const int r = m_index.value(it.key(), -1);
        if (it->kind == is::Event::Kind::Removed) {
            m_stale.remove(it.key());
            if (r >= 0)
                removals << r;
            continue;
        }
        if (r < 0) {
            inserts << ObjectRow{it.key(), it->type, it->time, it->count};
            continue;
        }
        ObjectRow &row = m_rows[r];
        if (it->time < row.time)
            continue; // older than what a listing already showed
        m_stale.remove(it.key()); // written: fresh
        row.type = it->type;
        row.time = it->time;
        row.updates += it->count;
        changed << r;
    }
    QStringList removedNames;
    std::sort(removals.begin(), removals.end(), std::greater<int>());
    if (removals.size() > ResetThreshold) {
        beginResetModel();
        for (int r : std::as_const(removals)) {
            removedNames << m_rows.at(r).name;
            m_rows.removeAt(r);
        }
        m_rows.append(inserts);
        m_index.clear();
        reindexFrom(0);
        endResetModel();
    } else {
        // Only the rows and columns that changed (the name never does): a view sorted by name
        // then has nothing to re-sort, and one spanning range would make a sorting proxy look at
        // every row in between. Measured with 10,000 objects: a reset costs 40-170 ms of GUI
        // thread, these signals a few ms.
        std::sort(changed.begin(), changed.end());
        for (qsizetype i = 0; i < changed.size();) {
            qsizetype j = i;
            while (j + 1 < changed.size() && changed.at(j + 1) == changed.at(j) + 1)
                ++j;
            Q_EMIT dataChanged(index(changed.at(i), Type), index(changed.at(j), ColumnCount - 1));
            i = j + 1;
        }
        for (int r : std::as_const(removals)) {
            beginRemoveRows({}, r, r);
            removedNames << m_rows.at(r).name;
            m_index.remove(m_rows.at(r).name);
            m_rows.removeAt(r);
            endRemoveRows();
        }
        if (!removals.isEmpty())
            reindexFrom(removals.last());
        // New objects are appended as one block, however many: a sorting proxy merges them into
        // its order far faster than it re-sorts everything after a reset.
        if (!inserts.isEmpty()) {
            const int first = int(m_rows.size());
            beginInsertRows({}, first, first + int(inserts.size()) - 1);
            m_rows.append(inserts);
            reindexFrom(first);
            endInsertRows();
        }
    }
    for (const QString &n : std::as_const(removedNames))
        Q_EMIT removed(n);
    return true;
}

void ObjectModel::setStale(const QList<is::Entry> &stale)
{
    QHash<QString, is::Staleness> now;
    for (const is::Entry &e : stale) {
        QString object;
        is::Dictionary::splitName(e.name, nullptr, &object);
        const int r = m_index.value(object, -1);
        // Written since the server answered (or not shown): fresh.
        if (r < 0 || e.time < m_rows.at(r).time || m_pending.contains(object))
            continue;
        now.insert(object, e.staleness);
    }
    QList<int> rows;
    for (auto it = m_stale.cbegin(); it != m_stale.cend(); ++it)
        if (!now.contains(it.key()))
            rows << m_index.value(it.key(), -1);
    for (auto it = now.cbegin(); it != now.cend(); ++it)
        rows << m_index.value(it.key(), -1); // new, or its age changed
    m_stale = now;
    // One signal per run of adjacent rows: thousands of stale objects age every second.
    rows.removeAll(-1);
    std::sort(rows.begin(), rows.end());
    rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
    for (qsizetype i = 0; i < rows.size();) {
        qsizetype j = i;
        while (j + 1 < rows.size() && rows.at(j + 1) == rows.at(j) + 1)
            ++j;
        Q_EMIT dataChanged(index(rows.at(i), Name), index(rows.at(j), ColumnCount - 1));
        i = j + 1;
    }
}

std::optional<is::Staleness> ObjectModel::staleness(const QString &name) const
{
    const auto it = m_stale.constFind(name);
    if (it == m_stale.cend())
        return std::nullopt;
    return *it;
}

int ObjectModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_rows.size());
}

int ObjectModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant ObjectModel::data(const QModelIndex &index, int role) const
{
    if (!index.isValid() || index.row() >= m_rows.size())
        return {};
    const ObjectRow &r = m_rows.at(index.row());
    const auto stale = m_stale.constFind(r.name);
    const bool isStale = stale != m_stale.cend();
    if (role == StaleRole)
        return isStale;
    if (isStale && role == Qt::ForegroundRole)
        return QBrush(Qt::gray);
    if (isStale && role == Qt::ToolTipRole)
        return QStringLiteral("Stale: %1\nLast update %2 (%3 s ago)")
            .arg(stale->reason(),
                 r.time.toDateTime().toLocalTime().toString(QStringLiteral("yyyy-MM-dd HH:mm:ss.zzz")),
                 QString::number(stale->ageUs / 1e6, 'f', 1));
    if (role == Qt::DisplayRole) {
        switch (index.column()) {
        case Name:
            return r.name;
        case Type:
            return r.type;
        case Updated:
            if (isStale) // the age tells more than the time: how long nothing came
                return QStringLiteral("%1 · stale %2")
                    .arg(r.time.toDateTime().toLocalTime().toString(QStringLiteral("HH:mm:ss.zzz")),
                         is::Staleness::ageText(stale->ageUs));
            return r.time.toDateTime().toLocalTime().toString(QStringLiteral("HH:mm:ss.zzz"));
        case Updates:
            return r.updates;
        }
    }
    if (role == SortRole) {
        switch (index.column()) {
        case Name:
            return r.name;
        case Type:
            return r.type;
        case Updated:
            return r.time.microsecondsSinceEpoch();
        case Updates:
            return r.updates;
        }
    }
    if (role == Qt::ToolTipRole && index.column() == Updated)
        return r.time.toDateTime().toLocalTime().toString(QStringLiteral("yyyy-MM-dd HH:mm:ss.zzz t"));
    if (role == Qt::TextAlignmentRole && index.column() == Updates)
        return int(Qt::AlignRight | Qt::AlignVCenter);
    return {};
}

QVariant ObjectModel::headerData(int section, Qt::Orientation o, int role) const
{
    if (o != Qt::Horizontal || role != Qt::DisplayRole)
        return QAbstractTableModel::headerData(section, o, role);
    static const char *names[] = {"Object", "Type", "Last update", "Updates"};
    return QString::fromLatin1(names[section]);
}

} // namespace dialog::ismonitor
