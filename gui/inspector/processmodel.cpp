#include "processmodel.h"

#include <QBrush>
#include <QDateTime>
#include <QFont>
#include <QJsonArray>
#include <QPalette>

namespace dialog::inspector {

namespace {
QStringList strings(const QJsonValue &v)
{
    QStringList l;
    for (const QJsonValue &x : v.toArray())
        l << x.toString();
    return l;
}

ProcessRow rowFrom(const QJsonObject &p)
{
    ProcessRow r;
    r.name = p.value(QStringLiteral("name")).toString();
    r.host = p.value(QStringLiteral("host")).toString();
    r.port = p.value(QStringLiteral("port")).toInt();
    r.pid = p.value(QStringLiteral("pid")).toInteger();
    r.services = strings(p.value(QStringLiteral("services")));
    r.subscriptions = strings(p.value(QStringLiteral("subscriptions")));
    r.commands = strings(p.value(QStringLiteral("commands")));
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

void ProcessModel::setDirectory(const QJsonObject &directory)
{
    QList<ProcessRow> rows;
    QStringList alive;
    for (const QJsonValue &v : directory.value(QStringLiteral("processes")).toArray()) {
        rows << rowFrom(v.toObject());
        alive << rows.last().name;
    }
    // Lost processes stay in the table, marked, unless a process of that name is alive again.
    for (const QJsonValue &v : directory.value(QStringLiteral("lost")).toArray()) {
        ProcessRow r = rowFrom(v.toObject());
        if (alive.contains(r.name))
            continue;
        r.lost = true;
        r.lostReason = v.toObject().value(QStringLiteral("reason")).toString();
        r.lostAtMs = v.toObject().value(QStringLiteral("lost_at_ms")).toInteger();
        auto same = std::find_if(rows.begin(), rows.end(), [&](const ProcessRow &x) { return x.name == r.name; });
        if (same != rows.end())
            *same = r; // the most recent loss wins
        else
            rows << r;
    }
    std::sort(rows.begin(), rows.end(), [](const ProcessRow &a, const ProcessRow &b) { return a.name < b.name; });
    beginResetModel();
    m_rows = rows;
    endResetModel();
}

int ProcessModel::rowOf(const QString &name) const
{
    for (int i = 0; i < m_rows.size(); ++i)
        if (m_rows.at(i).name == name)
            return i;
    return -1;
}

int ProcessModel::rowCount(const QModelIndex &parent) const { return parent.isValid() ? 0 : int(m_rows.size()); }

int ProcessModel::columnCount(const QModelIndex &parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant ProcessModel::data(const QModelIndex &index, int role) const
{
    if (!index.isValid() || index.row() >= m_rows.size())
        return {};
    const ProcessRow &r = m_rows.at(index.row());
    if (role == ListRole) {
        switch (index.column()) {
        case Provided: return r.services;
        case Subscribed: return r.subscriptions;
        case Commands: return r.commands;
        default: return {};
        }
    }
    if (role == Qt::DisplayRole) {
        switch (index.column()) {
        case Name: return r.name;
        case Address: return r.host;
        case Port: return r.port;
        case Pid: return r.pid;
        case Provided: return summary(r.services);
        case Subscribed: return summary(r.subscriptions);
        case Commands: return summary(r.commands);
        case State: return r.lost ? QStringLiteral("LOST") : QStringLiteral("alive");
        }
    }
    if (role == Qt::ToolTipRole) {
        if (r.lost)
            return QStringLiteral("lost at %1: %2")
                .arg(QDateTime::fromMSecsSinceEpoch(r.lostAtMs).toString(QStringLiteral("HH:mm:ss.zzz")), r.lostReason);
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
    if (o != Qt::Horizontal || role != Qt::DisplayRole)
        return QAbstractTableModel::headerData(section, o, role);
    static const char *names[] = {"Name of process", "Address", "Port", "PID", "Provided services",
                                  "Subscribed services", "Commands", "State"};
    return QString::fromLatin1(names[section]);
}

} // namespace dialog::inspector
