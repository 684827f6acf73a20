#include "alarmtablemodel.h"

#include <QDateTime>
#include <QFont>
#include <QSet>

using namespace Qt::StringLiterals;

namespace dialog::alarms {

namespace {
constexpr int DefaultBlinkMs = 600;
// Row removals one by one cost a re-index each: past this many, the model is reset instead.
constexpr int ResetAbove = 64;

int stateRank(const QString &state)
{
    return state == u"active"_s ? 0 : state == u"latched"_s ? 1 : state == u"acknowledged"_s ? 2 : 3;
}
} // namespace

int severityRank(const QString &s)
{
    return s == u"invalid"_s ? 3 : s == u"major"_s ? 2 : s == u"minor"_s ? 1 : 0;
}

QColor severityColor(const QString &severity, bool strong)
{
    switch (severityRank(severity)) {
    case 3:
        return strong ? QColor(0xd0, 0x40, 0xd0) : QColor(0xf3, 0xc6, 0xf3); // magenta: cannot be trusted
    case 2:
        return strong ? QColor(0xe5, 0x39, 0x35) : QColor(0xff, 0xc8, 0xc8); // red
    case 1:
        return strong ? QColor(0xf9, 0xc0, 0x20) : QColor(0xff, 0xf0, 0xb0); // amber
    }
    return {};
}

bool isUnacknowledged(const QJsonObject &a)
{
    const QString state = a.value(u"state"_s).toString();
    return (state == u"active"_s || state == u"latched"_s) && !a.value(u"shelved"_s).toBool() &&
           !a.value(u"disabled"_s).toBool();
}

QString timeText(qint64 ms)
{
    return ms > 0 ? QDateTime::fromMSecsSinceEpoch(ms).toString(u"yyyy-MM-dd HH:mm:ss"_s) : QString();
}

AlarmTableModel::AlarmTableModel(QObject *parent) : QAbstractTableModel(parent)
{
    connect(&m_blink, &QTimer::timeout, this, &AlarmTableModel::toggleBlink);
    m_blink.start(DefaultBlinkMs);
}

int AlarmTableModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_data.size());
}

int AlarmTableModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

AlarmTableModel::Row AlarmTableModel::rowFrom(const QJsonObject &o)
{
    Row r;
    r.json = o;
    r.path = o.value(u"path"_s).toString();
    r.severity = o.value(u"severity"_s).toString();
    r.state = o.value(u"state"_s).toString();
    r.value = o.value(u"value"_s).toString();
    r.description = o.value(u"description"_s).toString();
    r.timeMs = o.value(u"raised_ms"_s).toInteger(o.value(u"changed_ms"_s).toInteger());
    r.shelved = o.value(u"shelved"_s).toBool();
    r.disabled = o.value(u"disabled"_s).toBool();
    r.unacknowledged = isUnacknowledged(o);
    return r;
}

QVariant AlarmTableModel::display(const Row &r, int column) const
{
    switch (column) {
    case Time:
        return timeText(r.timeMs);
    case Severity:
        return r.severity;
    case State: {
        QString s = r.state;
        if (r.shelved)
            s += u" (shelved)"_s;
        if (r.disabled)
            s += u" (disabled)"_s;
        return s;
    }
    case Path:
        return r.path;
    case Value:
        return r.value;
    case Description:
        return r.description;
    }
    return {};
}

QVariant AlarmTableModel::sortKey(const Row &r, int column) const
{
    switch (column) {
    case Time:
        return r.timeMs;
    case Severity:
        return severityRank(r.severity);
    case State:
        return stateRank(r.state) + (r.shelved ? 10 : 0) + (r.disabled ? 20 : 0);
    default:
        return display(r, column);
    }
}

QVariant AlarmTableModel::data(const QModelIndex &index, int role) const
{
    if (!index.isValid() || index.row() >= m_data.size())
        return {};
    const Row &r = m_data.at(index.row());
    switch (role) {
    case Qt::DisplayRole:
        return display(r, index.column());
    case Qt::ToolTipRole:
        return index.column() == Description || index.column() == Value ? display(r, index.column())
                                                                        : QVariant();
    case SortRole:
        return sortKey(r, index.column());
    case PathRole:
        return r.path;
    case UnacknowledgedRole:
        return r.unacknowledged;
    case BlinkRole:
        return r.unacknowledged && m_blinkOn;
    case Qt::BackgroundRole:
        // Shelved and disabled alarms are not annunciated: grey, whatever their severity.
        if (r.shelved || r.disabled)
            return QColor(0xe4, 0xe4, 0xe4);
        if (r.state == u"normal"_s)
            return {};
        return severityColor(r.severity, r.unacknowledged && m_blinkOn);
    case Qt::ForegroundRole:
        if (r.shelved || r.disabled)
            return QColor(0x70, 0x70, 0x70);
        return r.unacknowledged && m_blinkOn && severityRank(r.severity) >= 2 ? QColor(Qt::white)
                                                                              : QVariant();
    case Qt::FontRole:
        if (r.unacknowledged && index.column() == State) {
            QFont f;
            f.setBold(true);
            return f;
        }
        return {};
    }
    return {};
}

QVariant AlarmTableModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    static const char *const names[] = {"Time", "Severity", "State", "Path", "Value", "Description"};
    return section >= 0 && section < ColumnCount ? QString::fromLatin1(names[section]) : QVariant();
}

void AlarmTableModel::reindex(int from)
{
    for (int i = from; i < m_data.size(); ++i)
        m_rows.insert(m_data.at(i).path, i);
}

void AlarmTableModel::setAlarms(const QJsonArray &alarms)
{
    QList<Row> incoming;
    incoming.reserve(alarms.size());
    QSet<QString> present;
    for (const QJsonValue &v : alarms) {
        Row r = rowFrom(v.toObject());
        if (r.path.isEmpty() || present.contains(r.path))
            continue;
        present.insert(r.path);
        incoming.append(std::move(r));
    }
    QList<int> gone;
    for (int i = 0; i < m_data.size(); ++i)
        if (!present.contains(m_data.at(i).path))
            gone.append(i);
    if (gone.size() > ResetAbove) {
        // An alarm storm cleared: one reset rather than hundreds of removals.
        beginResetModel();
        QHash<QString, int> order;
        for (int i = 0; i < m_data.size(); ++i)
            order.insert(m_data.at(i).path, i);
        std::stable_sort(incoming.begin(), incoming.end(), [&](const Row &a, const Row &b) {
            return order.value(a.path, INT_MAX) < order.value(b.path, INT_MAX);
        });
        m_data = std::move(incoming);
        m_rows.clear();
        reindex(0);
        endResetModel();
        return;
    }
    // Removed from the end, a contiguous run at a time.
    for (int k = int(gone.size()) - 1; k >= 0;) {
        int last = gone.at(k), first = last;
        while (k > 0 && gone.at(k - 1) == first - 1)
            first = gone.at(--k);
        --k;
        beginRemoveRows({}, first, last);
        for (int i = last; i >= first; --i)
            m_rows.remove(m_data.at(i).path);
        m_data.remove(first, last - first + 1);
        endRemoveRows();
    }
    if (!gone.isEmpty())
        reindex(gone.first());
    QList<Row> added;
    for (Row &r : incoming) {
        const int i = m_rows.value(r.path, -1);
        if (i < 0) {
            added.append(std::move(r));
            continue;
        }
        if (m_data.at(i).json == r.json)
            continue;
        m_data[i] = std::move(r);
        Q_EMIT dataChanged(index(i, 0), index(i, ColumnCount - 1));
    }
    if (!added.isEmpty()) {
        const int first = int(m_data.size());
        beginInsertRows({}, first, first + int(added.size()) - 1);
        m_data.append(std::move(added));
        reindex(first);
        endInsertRows();
    }
}

QJsonObject AlarmTableModel::alarm(int row) const
{
    return row >= 0 && row < m_data.size() ? m_data.at(row).json : QJsonObject();
}

void AlarmTableModel::setBlinkInterval(int intervalMs)
{
    if (intervalMs <= 0) {
        m_blink.stop();
        if (m_blinkOn)
            toggleBlink();
        return;
    }
    m_blink.start(intervalMs);
}

void AlarmTableModel::toggleBlink()
{
    m_blinkOn = !m_blinkOn;
    // Only the rows that wait for an acknowledgement change; one signal for their span.
    int first = -1, last = -1;
    for (int i = 0; i < m_data.size(); ++i)
        if (m_data.at(i).unacknowledged) {
            if (first < 0)
                first = i;
            last = i;
        }
    if (first >= 0)
        Q_EMIT dataChanged(index(first, 0), index(last, ColumnCount - 1),
                           {Qt::BackgroundRole, Qt::ForegroundRole, BlinkRole});
}

AlarmFilterModel::AlarmFilterModel(QObject *parent) : QSortFilterProxyModel(parent)
{
    setSortRole(AlarmTableModel::SortRole);
    setDynamicSortFilter(true);
}

void AlarmFilterModel::setPathFilter(const QString &path)
{
    if (path == m_path)
        return;
    m_path = path;
    invalidateFilter();
}

bool AlarmFilterModel::filterAcceptsRow(int sourceRow, const QModelIndex &sourceParent) const
{
    if (m_path.isEmpty())
        return true;
    const QString path =
        sourceModel()->index(sourceRow, 0, sourceParent).data(AlarmTableModel::PathRole).toString();
    return path == m_path || (path.startsWith(m_path) && path.at(m_path.size()) == u'/');
}

} // namespace dialog::alarms
