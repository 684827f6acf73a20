#include "scanbudget.h"

namespace dialog::isd {

ScanBudget::ScanBudget(int budgetMs) : m_budgetMs(budgetMs) {}

is::Repository::ScanCheck ScanBudget::check(const is::Criteria &criteria)
{
    m_timer.start();
    m_names = 0;
    // Only an expression on names costs: a type condition alone is a string comparison.
    const bool costly = !criteria.regex().isEmpty();
    return [this, criteria, costly] {
        if (m_cancelled->load())
            return false;
        if (!costly)
            return true;
        if (criteria.exhausted()) {
            m_exhausted = true;
            return false;
        }
        if (m_budgetMs > 0 && m_timer.elapsed() > m_budgetMs)
            return false;
        ++m_names;
        return true;
    };
}

bool ScanBudget::refused(const is::Criteria &criteria, bool complete)
{
    m_exhausted = m_exhausted || criteria.exhausted();
    return !complete || m_exhausted;
}

QString ScanBudget::errorString() const
{
    if (m_cancelled->load())
        return QStringLiteral("the scan was cancelled");
    if (m_exhausted)
        return QStringLiteral("pattern too expensive: matching one object name ran out of the regular "
                              "expression's match limit (--regex-match-limit); simplify the pattern");
    return QStringLiteral("pattern too expensive: matching took more than this request's budget of %1 ms "
                          "(--scan-budget-ms), stopped after %2 names; simplify the pattern or narrow the "
                          "type")
        .arg(m_budgetMs)
        .arg(m_names);
}

} // namespace dialog::isd
