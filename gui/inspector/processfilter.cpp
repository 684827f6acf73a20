#include "processfilter.h"

#include "processmodel.h"

namespace dialog::inspector {

void ProcessFilter::setCriteria(const ProcessCriteria &c)
{
    m_criteria = c;
    invalidateFilter();
}

bool ProcessFilter::filterAcceptsRow(int sourceRow, const QModelIndex &sourceParent) const
{
    const QAbstractItemModel *m = sourceModel();
    const auto cell = [&](int column) { return m->index(sourceRow, column, sourceParent); };
    const auto text = [&](int column) { return cell(column).data().toString(); };
    const auto list = [&](int column) { return cell(column).data(ProcessModel::ListRole).toStringList(); };
    const auto has = [](const QString &haystack, const QString &needle) {
        return needle.isEmpty() || haystack.contains(needle.trimmed(), Qt::CaseInsensitive);
    };
    const auto anyHas = [&](const QStringList &l, const QString &needle) {
        return needle.isEmpty() || std::any_of(l.cbegin(), l.cend(), [&](const QString &s) { return has(s, needle); });
    };
    const ProcessCriteria &c = m_criteria;
    if (!has(text(ProcessModel::Name), c.name) || !has(text(ProcessModel::Address), c.address)
        || !has(text(ProcessModel::Port), c.port) || !has(text(ProcessModel::Pid), c.pid)
        || !anyHas(list(ProcessModel::Provided), c.provided) || !anyHas(list(ProcessModel::Subscribed), c.subscribed)
        || !anyHas(list(ProcessModel::Commands), c.command))
        return false;
    if (c.text.isEmpty())
        return true;
    QStringList all{text(ProcessModel::Name), text(ProcessModel::Address), text(ProcessModel::Port),
                    text(ProcessModel::Pid), text(ProcessModel::State)};
    all += list(ProcessModel::Provided) + list(ProcessModel::Subscribed) + list(ProcessModel::Commands);
    return anyHas(all, c.text);
}

} // namespace dialog::inspector
