// The processes of the DIALOG system, as the Control Server publishes them (DIALOG.Directory).
#pragma once

#include "dialog/directory.h"

#include <QAbstractTableModel>
#include <QHash>
#include <QStringList>

namespace dialog::inspector {

/// One row of the table: a process as the directory lists it, alive or lost.
struct ProcessRow : ProcessEntry
{
    bool lost = false;
};

/// Communication figures of one process as the Control Server publishes them (DIALOG.Statistics),
/// with rates derived from the previous snapshot.
struct ProcessFigures
{
    double messagesOut = 0, bytesOut = 0, messagesIn = 0, bytesIn = 0;
    double dropped = 0, reconnects = 0, protocolErrors = 0, queuedBytes = 0;
    int outgoingConnections = 0, incomingConnections = 0;
    qint64 atMs = 0;                  ///< when the Control Server received them (ms since the epoch)
    double messagesOutPerSecond = -1; ///< -1 until two snapshots are known
    double bytesOutPerSecond = -1, messagesInPerSecond = -1, bytesInPerSecond = -1;
};

class ProcessModel : public QAbstractTableModel
{
    Q_OBJECT
public:
    enum Column
    {
        Name,
        Address,
        Port,
        Pid,
        Provided,
        Subscribed,
        Commands,
        OutRate,
        Out,
        InRate,
        In,
        Queued,
        Dropped,
        Reconnects, // from DIALOG.Statistics
        State,
        ColumnCount
    };
    enum Role
    {
        ListRole = Qt::UserRole + 1, ///< the full list behind the Provided/Subscribed/Commands cells
        SortRole,                    ///< numbers for the figure columns, the display text otherwise
    };
    static constexpr int FirstFigureColumn = OutRate, LastFigureColumn = Reconnects;

    using QAbstractTableModel::QAbstractTableModel;

    /// Replaces the content with a DIALOG.Directory snapshot. Rows are kept in name order; a process
    /// that disappears without being reported lost is removed, a lost one stays, marked.
    void setDirectory(const DirectorySnapshot &directory);
    /// Takes a DIALOG.Statistics snapshot: the figure columns change (one dataChanged), rows do not.
    void setStatistics(const StatisticsSnapshot &statistics);
    /// The latest figures of @p name, null if it reported none (not yet, lost, or an older release).
    const ProcessFigures *figures(const QString &name) const;
    const ProcessRow &row(int r) const { return m_rows.at(r); }

    static QString formatBytes(double bytes);
    static QString formatRate(double perSecond);
    int rowOf(const QString &name) const;

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation o, int role = Qt::DisplayRole) const override;

private:
    QVariant figureData(const ProcessFigures *f, int column, int role) const;

    QList<ProcessRow> m_rows;
    QHash<QString, ProcessFigures> m_figures;
};

} // namespace dialog::inspector
