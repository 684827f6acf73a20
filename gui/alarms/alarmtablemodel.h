// dialog-alarms' table: the alarms of ALARM.Table (every one that is not normal, or is shelved or
// disabled), one row each, updated in place from each message of the table so that the selection
// and the scroll position stay; rows of unacknowledged alarms blink.
#pragma once

#include <QAbstractTableModel>
#include <QColor>
#include <QHash>
#include <QJsonArray>
#include <QJsonObject>
#include <QSortFilterProxyModel>
#include <QTimer>

namespace dialog::alarms {

/// 0 ok, 1 minor, 2 major, 3 invalid (as the alarm server orders them).
int severityRank(const QString &severity);
/// The row colour of a severity ("ok": none); @p strong is the blinking phase's colour.
QColor severityColor(const QString &severity, bool strong = false);
/// Whether the alarm (an entry of ALARM.Table) waits for an acknowledgement: active or latched,
/// annunciated (not shelved, not disabled).
bool isUnacknowledged(const QJsonObject &alarm);
/// "yyyy-MM-dd HH:mm:ss" in local time, "" for 0.
QString timeText(qint64 ms);

class AlarmTableModel : public QAbstractTableModel
{
    Q_OBJECT
public:
    enum Column
    {
        Time,
        Severity,
        State,
        Path,
        Value,
        Description,
        ColumnCount
    };
    Q_ENUM(Column)
    enum Role
    {
        SortRole = Qt::UserRole + 1, ///< time in ms, severity rank, state rank, or the text
        PathRole,                    ///< the alarm's path (any column)
        UnacknowledgedRole,          ///< bool: isUnacknowledged()
        BlinkRole,                   ///< bool: the row shows its blinking colour now
    };

    explicit AlarmTableModel(QObject *parent = nullptr);

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

    /// Makes the rows those of @p alarms (the "alarms" of an ALARM.Table message): rows of alarms
    /// that are gone are removed, changed ones updated (dataChanged), new ones appended.
    void setAlarms(const QJsonArray &alarms);
    /// The entry of the table at @p row (an empty object out of range).
    QJsonObject alarm(int row) const;
    /// The row of @p path, -1 if it is not in the table.
    int rowOf(const QString &path) const { return m_rows.value(path, -1); }
    QJsonObject alarm(const QString &path) const { return alarm(rowOf(path)); }

    /// The blinking of unacknowledged rows: on by default, every @p intervalMs.
    void setBlinkInterval(int intervalMs);
    bool isBlinking() const { return m_blink.isActive(); }
    /// One blink step: the unacknowledged rows switch colour (what the timer does).
    void toggleBlink();

private:
    struct Row
    {
        QJsonObject json;
        QString path, severity, state, value, description;
        qint64 timeMs = 0;
        bool unacknowledged = false, shelved = false, disabled = false;
    };
    static Row rowFrom(const QJsonObject &o);
    QVariant display(const Row &r, int column) const;
    QVariant sortKey(const Row &r, int column) const;
    void reindex(int from);

    QList<Row> m_data;
    QHash<QString, int> m_rows;
    QTimer m_blink;
    bool m_blinkOn = false;
};

/// The table as shown: sorted by the SortRole of the column, and only the alarms at or below a
/// path of the tree ("" for all).
class AlarmFilterModel : public QSortFilterProxyModel
{
    Q_OBJECT
public:
    explicit AlarmFilterModel(QObject *parent = nullptr);
    void setPathFilter(const QString &path);
    QString pathFilter() const { return m_path; }

protected:
    bool filterAcceptsRow(int sourceRow, const QModelIndex &sourceParent) const override;

private:
    QString m_path;
};

} // namespace dialog::alarms
