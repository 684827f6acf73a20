#include "processmodel.h"

#include <QBrush>
#include <QDateTime>
#include <QFont>
#include <QPalette>

#include <algorithm>

namespace dialog::inspector {

namespace {
ProcessRow rowFrom(const ProcessEntry &p, bool lost)
{
    ProcessRow r;
    static_cast<ProcessEntry &>(r) = p;
    r.lost = lost;
    return r;
}

QString summary(const QStringList &l)
{
    if (l.isEmpty())
        return QStringLiteral("—");
    if (l.size() <= 2)
        return l.join(QStringLiteral(", "));
    return QStringLiteral("%1, %2 (+%3)").arg(l.at(0), l.at(1)).arg(l.size() - 2);
}
} // namespace

void ProcessModel::setDirectory(const DirectorySnapshot &directory)
{
    QList<ProcessRow> rows;
    rows.reserve(directory.processes.size() + directory.lost.size());
    QHash<QString, qsizetype> at; // name -> row (thousands of processes: no linear searches)
    at.reserve(rows.capacity());
    for (const ProcessEntry &p : directory.processes) {
        at.insert(p.name, rows.size());
        rows << rowFrom(p, false);
    }
    // Lost processes stay in the table, marked, unless a process of that name is alive again.
    const qsizetype aliveRows = rows.size();
    for (const ProcessEntry &p : directory.lost) {
        const auto same = at.constFind(p.name);
        if (same == at.cend()) {
            at.insert(p.name, rows.size());
            rows << rowFrom(p, true);
        } else if (*same >= aliveRows) {
            rows[*same] = rowFrom(p, true); // the most recent loss wins
        }
    }
    std::sort(rows.begin(), rows.end(),
              [](const ProcessRow &a, const ProcessRow &b) { return a.name < b.name; });
    beginResetModel();
    m_rows.swap(rows);
    endResetModel();
}

void ProcessModel::setStatistics(const StatisticsSnapshot &statistics)
{
    QHash<QString, ProcessFigures> next;
    for (const ProcessStatistics &s : statistics.processes) {
        ProcessFigures f;
        f.messagesOut = double(s.messagesOut);
        f.bytesOut = double(s.bytesOut);
        f.messagesIn = double(s.messagesIn);
        f.bytesIn = double(s.bytesIn);
        f.dropped = double(s.dropped);
        f.reconnects = double(s.reconnects);
        f.protocolErrors = double(s.protocolErrors);
        f.queuedBytes = double(s.queuedBytes);
        f.outgoingConnections = s.outgoingConnections;
        f.incomingConnections = s.incomingConnections;
        f.atMs = s.atMs;
        const QString &name = s.name;
        const auto before = m_figures.constFind(name);
        if (before != m_figures.cend() && f.atMs > before->atMs && f.messagesOut >= before->messagesOut &&
            f.messagesIn >= before->messagesIn) {
            const double seconds = double(f.atMs - before->atMs) / 1000.0;
            f.messagesOutPerSecond = (f.messagesOut - before->messagesOut) / seconds;
            f.bytesOutPerSecond = (f.bytesOut - before->bytesOut) / seconds;
            f.messagesInPerSecond = (f.messagesIn - before->messagesIn) / seconds;
            f.bytesInPerSecond = (f.bytesIn - before->bytesIn) / seconds;
        } else if (before != m_figures.cend() && f.atMs == before->atMs) {
            f = *before; // no new heartbeat from it since: keep its rates
        }
        next.insert(name, f);
    }
    m_figures.swap(next);
    if (!m_rows.isEmpty())
        Q_EMIT dataChanged(index(0, FirstFigureColumn), index(int(m_rows.size()) - 1, LastFigureColumn));
}

const ProcessFigures *ProcessModel::figures(const QString &name) const
{
    const auto it = m_figures.constFind(name);
    return it == m_figures.cend() ? nullptr : &*it;
}

QString ProcessModel::formatBytes(double bytes)
{
    static const char *units[] = {"B", "kB", "MB", "GB", "TB"};
    int u = 0;
    while (bytes >= 1000 && u < 4) {
        bytes /= 1000;
        ++u;
    }
    return u == 0
               ? QStringLiteral("%1 B").arg(qint64(bytes))
               : QStringLiteral("%1 %2").arg(bytes, 0, 'f', bytes < 10 ? 2 : 1).arg(QLatin1String(units[u]));
}

QString ProcessModel::formatRate(double perSecond)
{
    if (perSecond < 0)
        return QStringLiteral("…");
    return QString::number(perSecond, 'f', perSecond < 100 ? 1 : 0);
}

QVariant ProcessModel::figureData(const ProcessFigures *f, int column, int role) const
{
    if (!f)
        return role == Qt::DisplayRole ? QVariant(QStringLiteral("—"))
                                       : (role == SortRole ? QVariant(-1.0) : QVariant());
    if (role == SortRole) {
        switch (column) {
        case OutRate:
            return f->messagesOutPerSecond;
        case Out:
            return f->messagesOut;
        case InRate:
            return f->messagesInPerSecond;
        case In:
            return f->messagesIn;
        case Queued:
            return f->queuedBytes;
        case Dropped:
            return f->dropped;
        case Reconnects:
            return f->reconnects;
        }
    }
    if (role == Qt::DisplayRole) {
        switch (column) {
        case OutRate:
            return formatRate(f->messagesOutPerSecond);
        case Out:
            return QStringLiteral("%1 / %2").arg(qint64(f->messagesOut)).arg(formatBytes(f->bytesOut));
        case InRate:
            return formatRate(f->messagesInPerSecond);
        case In:
            return QStringLiteral("%1 / %2").arg(qint64(f->messagesIn)).arg(formatBytes(f->bytesIn));
        case Queued:
            return formatBytes(f->queuedBytes);
        case Dropped:
            return qint64(f->dropped);
        case Reconnects:
            return qint64(f->reconnects);
        }
    }
    if (role == Qt::ToolTipRole) {
        return QStringLiteral("out: %1 messages, %2 bytes (%3 msg/s, %4/s)\n"
                              "in: %5 messages, %6 bytes (%7 msg/s, %8/s)\n"
                              "queued: %9 bytes; dropped: %10; reconnects: %11; protocol errors: %12\n"
                              "connections: %13 out, %14 in; reported %15")
            .arg(qint64(f->messagesOut))
            .arg(qint64(f->bytesOut))
            .arg(formatRate(f->messagesOutPerSecond))
            .arg(f->bytesOutPerSecond < 0 ? QStringLiteral("…") : formatBytes(f->bytesOutPerSecond))
            .arg(qint64(f->messagesIn))
            .arg(qint64(f->bytesIn))
            .arg(formatRate(f->messagesInPerSecond))
            .arg(f->bytesInPerSecond < 0 ? QStringLiteral("…") : formatBytes(f->bytesInPerSecond))
            .arg(qint64(f->queuedBytes))
            .arg(qint64(f->dropped))
            .arg(qint64(f->reconnects))
            .arg(qint64(f->protocolErrors))
            .arg(f->outgoingConnections)
            .arg(f->incomingConnections)
            .arg(QDateTime::fromMSecsSinceEpoch(f->atMs).toString(QStringLiteral("HH:mm:ss")));
    }
    if (role == Qt::TextAlignmentRole)
        return int(Qt::AlignRight | Qt::AlignVCenter);
    if (role == Qt::ForegroundRole &&
        ((column == Dropped && f->dropped > 0) || (column == Reconnects && f->reconnects > 0)))
        return QBrush(QColor(0xb0, 0x50, 0x00));
    return {};
}

int ProcessModel::rowOf(const QString &name) const
{
    // Rows are in name order (setDirectory), names unique.
    const auto it = std::lower_bound(m_rows.cbegin(), m_rows.cend(), name,
                                     [](const ProcessRow &r, const QString &n) { return r.name < n; });
    return it != m_rows.cend() && it->name == name ? int(it - m_rows.cbegin()) : -1;
}

int ProcessModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_rows.size());
}

int ProcessModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant ProcessModel::data(const QModelIndex &index, int role) const
{
    if (!index.isValid() || index.row() >= m_rows.size())
        return {};
    const ProcessRow &r = m_rows.at(index.row());
    // A lost process's last figures are history: its row shows dashes, in the lost style below.
    const bool lostStyle = r.lost && (role == Qt::ForegroundRole || role == Qt::FontRole);
    if (index.column() >= FirstFigureColumn && index.column() <= LastFigureColumn && !lostStyle)
        return figureData(r.lost ? nullptr : figures(r.name), index.column(), role);
    if (role == SortRole)
        return data(index, Qt::DisplayRole);
    if (role == ListRole) {
        switch (index.column()) {
        case Provided:
            return r.services;
        case Subscribed:
            return r.subscriptions;
        case Commands:
            return r.commands;
        default:
            return {};
        }
    }
    if (role == Qt::DisplayRole) {
        switch (index.column()) {
        case Name:
            return r.name;
        case Address:
            return r.host;
        case Port:
            return r.port;
        case Pid:
            return r.pid;
        case Provided:
            return summary(r.services);
        case Subscribed:
            return summary(r.subscriptions);
        case Commands:
            return summary(r.commands);
        case State:
            return r.lost ? QStringLiteral("LOST") : QStringLiteral("alive");
        }
    }
    if (role == Qt::ToolTipRole) {
        if (r.lost)
            return QStringLiteral("lost at %1: %2")
                .arg(QDateTime::fromMSecsSinceEpoch(r.lostAtMs).toString(QStringLiteral("HH:mm:ss.zzz")),
                     r.lostReason);
        const QVariant list = data(index, ListRole);
        if (list.isValid())
            return list.toStringList().join(QLatin1Char('\n'));
    }
    if (role == Qt::ForegroundRole && r.lost)
        return QBrush(Qt::darkRed);
    if (role == Qt::FontRole && r.lost) {
        QFont f;
        f.setItalic(true);
        return f;
    }
    if (role == Qt::TextAlignmentRole && (index.column() == Port || index.column() == Pid))
        return int(Qt::AlignRight | Qt::AlignVCenter);
    return {};
}

QVariant ProcessModel::headerData(int section, Qt::Orientation o, int role) const
{
    if (o == Qt::Horizontal && role == Qt::ToolTipRole) {
        switch (section) {
        case OutRate:
            return QStringLiteral("Messages sent per second (all frames, to every destination)");
        case Out:
            return QStringLiteral("Messages and bytes sent since the process started");
        case InRate:
            return QStringLiteral("Messages received per second");
        case In:
            return QStringLiteral("Messages and bytes received since the process started");
        case Queued:
            return QStringLiteral("Bytes queued to destinations, not yet written to their sockets");
        case Dropped:
            return QStringLiteral("Messages dropped (a full queue, an unreachable destination)");
        case Reconnects:
            return QStringLiteral("Connections to destinations opened again after a failure or idle close");
        default:
            break;
        }
    }
    if (o != Qt::Horizontal || role != Qt::DisplayRole)
        return QAbstractTableModel::headerData(section, o, role);
    static const char *names[] = {"Name of process",
                                  "Address",
                                  "Port",
                                  "PID",
                                  "Provided services",
                                  "Subscribed services",
                                  "Commands",
                                  "Out/s",
                                  "Out",
                                  "In/s",
                                  "In",
                                  "Queued",
                                  "Drops",
                                  "Reconn.",
                                  "State"};
    static_assert(sizeof(names) / sizeof(*names) == ColumnCount);
    return QString::fromLatin1(names[section]);
}

} // namespace dialog::inspector
