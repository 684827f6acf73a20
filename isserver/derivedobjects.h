// Objects an IS server makes from the others: farm sums (--sum) and alarms (--alarms).
#pragma once

#include "serveroptions.h"

#include <QString>
#include <memory>
#include <vector>

namespace dialog::is {
class Repository;
class TypeRegistry;
} // namespace dialog::is

namespace dialog::isd {

class AlarmEvaluator;
class Summer;

/// The Summers and the AlarmEvaluator of a server: listeners of the repository's changes that
/// write objects of their own. Main thread.
class DerivedObjects
{
public:
    /// @p types and @p repository must outlive this object.
    DerivedObjects(const ServerOptions &options, is::TypeRegistry &types, is::Repository &repository);
    ~DerivedObjects();

    /// Starts the sums and reads the alarm rules. False with a reason (a bad rule, a sum on a mirror).
    bool start(QString *error);
    /// The writer of @p object was lost: it leaves the sums until written again.
    void writerLost(const QString &object);

private:
    bool startSums(QString *error);
    bool startAlarms(QString *error);

    const ServerOptions &m_options;
    is::TypeRegistry &m_types;
    is::Repository &m_repository;
    std::vector<std::unique_ptr<Summer>> m_summers;
    std::unique_ptr<AlarmEvaluator> m_alarms;
};

} // namespace dialog::isd
