#include "listenmodel.h"

#include <QFontDatabase>

namespace dialog::inspector {

ListenModel::ListenModel(QObject *parent) : QAbstractTableModel(parent)
{
    m_timer.setInterval(100);
    connect(&m_timer, &QTimer::timeout, this, &ListenModel::flush);
    m_timer.start();
    m_clock.start();
}

void ListenModel::add(const Heard &h)
{
    m_pending.append(h);
    if (m_pending.size() > MaxRows)
        m_pending.removeFirst();
    ++m_sinceLastFlush;
    ++m_total;
}

void ListenModel::clear()
{
    beginResetModel();
    m_rows.clear();
    m_pending.clear();
    m_total = 0;
    m_sinceLastFlush = 0;
    m_recent.clear();
    m_clock.restart();
    m_rate = 0;
    endResetModel();
}

void ListenModel::flush()
{
    // A rate over a few seconds: a service updated once a second reads 1/s, not 0 or 10.
    const qint64 now = m_clock.elapsed();
    if (m_recent.isEmpty())
        m_recent.append({0, 0}); // listening began at the last clear()
    m_recent.append({now, m_sinceLastFlush});
    m_sinceLastFlush = 0;
    while (m_recent.size() > 2 && m_recent.at(1).first < now - 5000)
        m_recent.removeFirst(); // the first entry stays as the start of the window
    qint64 messages = 0;
    for (qsizetype i = 1; i < m_recent.size(); ++i)
        messages += m_recent.at(i).second;
    m_rate = messages * 1000.0 / double(qMax<qint64>(1, now - m_recent.first().first));
    if (m_pending.isEmpty()) {
        Q_EMIT flushed();
        return;
    }
    const qsizetype overflow = m_rows.size() + m_pending.size() - MaxRows;
    if (overflow > 0) {
        const int drop = int(qMin<qsizetype>(overflow, m_rows.size()));
        if (drop > 0) {
            beginRemoveRows({}, 0, drop - 1);
            m_rows.remove(0, drop);
            endRemoveRows();
        }
    }
    beginInsertRows({}, int(m_rows.size()), int(m_rows.size() + m_pending.size() - 1));
    m_rows.append(m_pending);
    m_pending.clear();
    endInsertRows();
    Q_EMIT flushed();
}

QString ListenModel::preview(const QByteArray &data, int max)
{
    const QByteArray head = data.left(max);
    const QString text = QString::fromUtf8(head);
    const bool printable = text.toUtf8() == head && std::all_of(head.cbegin(), head.cend(), [](char c) {
                               return uchar(c) >= 0x20 || c == '\t';
                           });
    QString out = printable ? text : QStringLiteral("hex: ") + QString::fromLatin1(head.toHex(' '));
    if (data.size() > max)
        out += QStringLiteral(" …");
    return out;
}

int ListenModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_rows.size());
}

int ListenModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant ListenModel::data(const QModelIndex &index, int role) const
{
    if (!index.isValid() || index.row() >= m_rows.size())
        return {};
    const Heard &h = m_rows.at(index.row());
    if (role == Qt::DisplayRole) {
        switch (index.column()) {
        case Time:
            return h.time.toString(QStringLiteral("HH:mm:ss.zzz"));
        case Source:
            return h.source;
        case Detail:
            return h.detail;
        case Size:
            return h.data.size();
        case Data:
            return preview(h.data);
        }
    }
    if (role == Qt::ToolTipRole && index.column() == Data)
        return preview(h.data, 4096);
    if (role == Qt::FontRole && index.column() == Data)
        return QFontDatabase::systemFont(QFontDatabase::FixedFont);
    return {};
}

QVariant ListenModel::headerData(int section, Qt::Orientation o, int role) const
{
    if (o != Qt::Horizontal || role != Qt::DisplayRole)
        return QAbstractTableModel::headerData(section, o, role);
    static const char *names[] = {"Time", "Service / command", "Sequence / origin", "Bytes", "Data"};
    return QString::fromLatin1(names[section]);
}

} // namespace dialog::inspector
