// The processes of the DIALOG system, as the Control Server publishes them (DIALOG.Directory).
#pragma once

#include <QAbstractTableModel>
#include <QJsonObject>
#include <QStringList>

namespace dialog::inspector {

struct ProcessRow
{
    QString name, host;
    int port = 0;
    qint64 pid = 0;
    QStringList services, subscriptions, commands;
    bool lost = false;
    QString lostReason;
    qint64 lostAtMs = 0;
};

class ProcessModel : public QAbstractTableModel
{
    Q_OBJECT
public:
    enum Column { Name, Address, Port, Pid, Provided, Subscribed, Commands, State, ColumnCount };
    enum Role { ListRole = Qt::UserRole + 1 }; ///< the full list behind the Provided/Subscribed/Commands cells

    using QAbstractTableModel::QAbstractTableModel;

    /// Replaces the content with a DIALOG.Directory snapshot. Rows are kept in name order; a process
    /// that disappears without being reported lost is removed, a lost one stays, marked.
    void setDirectory(const QJsonObject &directory);
    const ProcessRow &row(int r) const { return m_rows.at(r); }
    int rowOf(const QString &name) const;

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation o, int role = Qt::DisplayRole) const override;

private:
    QList<ProcessRow> m_rows;
};

} // namespace dialog::inspector
