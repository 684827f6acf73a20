// The cost bound of one scan of the repository (a list, a subscription's first values).
#pragma once

#include "dialog/is/criteria.h"
#include "dialog/is/repository.h"

#include <QElapsedTimer>
#include <QString>
#include <atomic>
#include <memory>

namespace dialog::isd {

/// Bounds one request's matching, whatever the number of names: a regular expression costs up to
/// its PCRE2 match limit on every name, so a per-name bound alone lets 2,000 names cost 2,000
/// times that. A scan stops, and its request is refused with "pattern too expensive", when its
/// matching has taken budgetMs in total or when one name ran out of the expression's match
/// limits; it stops silently when cancelled (its client left). Used by one scanning thread;
/// cancel() may be called from any thread.
class ScanBudget
{
public:
    /// @p budgetMs of matching for the whole scan; <= 0: no time bound.
    explicit ScanBudget(int budgetMs);

    /// The check to pass to is::Repository::list() / objects() for a scan with @p criteria.
    is::Repository::ScanCheck check(const is::Criteria &criteria);
    /// Stops the scan at the next name (thread-safe).
    void cancel() { m_cancelled->store(true); }
    /// A flag whose setting cancels this scan (shared with whoever sees the client leave).
    std::shared_ptr<std::atomic<bool>> cancelFlag() const { return m_cancelled; }
    /// After a scan with @p criteria that returned @p complete: true when the request is refused
    /// (the scan stopped early, or its last name ran out of the match limit).
    bool refused(const is::Criteria &criteria, bool complete);
    /// Why the scan stopped early ("pattern too expensive: …"), after a scan that did not complete.
    QString errorString() const;
    bool cancelled() const { return m_cancelled->load(); }

private:
    int m_budgetMs;
    QElapsedTimer m_timer;
    qint64 m_names = 0;
    bool m_exhausted = false;
    std::shared_ptr<std::atomic<bool>> m_cancelled = std::make_shared<std::atomic<bool>>(false);
};

} // namespace dialog::isd
