// The filter fields of the DIALOG GUI (paper, Fig. 8) plus a free-text filter.
#pragma once

#include <QSortFilterProxyModel>

namespace dialog::inspector {

struct ProcessCriteria
{
    QString name, address, port, pid, provided, subscribed, command, text;
    bool isEmpty() const
    {
        return name.isEmpty() && address.isEmpty() && port.isEmpty() && pid.isEmpty() && provided.isEmpty()
            && subscribed.isEmpty() && command.isEmpty() && text.isEmpty();
    }
};

class ProcessFilter : public QSortFilterProxyModel
{
    Q_OBJECT
public:
    using QSortFilterProxyModel::QSortFilterProxyModel;
    /// Every non-empty field must match (case-insensitive substring; for lists, any element).
    void setCriteria(const ProcessCriteria &c);
    const ProcessCriteria &criteria() const { return m_criteria; }

protected:
    bool filterAcceptsRow(int sourceRow, const QModelIndex &sourceParent) const override;

private:
    ProcessCriteria m_criteria;
};

} // namespace dialog::inspector
