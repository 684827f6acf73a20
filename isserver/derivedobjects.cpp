#include "derivedobjects.h"
#include "alarms.h"
#include "summer.h"

#include <QFile>

namespace dialog::isd {

DerivedObjects::DerivedObjects(const ServerOptions &options, is::TypeRegistry &types,
                               is::Repository &repository)
    : m_options(options), m_types(types), m_repository(repository)
{
}

DerivedObjects::~DerivedObjects()
{
    m_summers.clear();
    m_alarms.reset();
}

bool DerivedObjects::start(QString *error)
{
    return startSums(error) && startAlarms(error);
}

bool DerivedObjects::startSums(QString *error)
{
    for (const auto &rule : std::as_const(m_options.sums)) {
        if (!m_options.mirrorOf.isEmpty()) {
            *error = QStringLiteral("--sum is not available on a mirror (its objects are the master's)");
            return false;
        }
        auto summer = std::make_unique<Summer>(m_repository, rule.first, rule.second);
        if (!summer->start(error))
            return false;
        for (const auto &other : m_summers)
            if (other->into() == summer->into()) {
                *error = QStringLiteral("--into %1 is given twice").arg(rule.second);
                return false;
            }
        m_summers.push_back(std::move(summer));
    }
    return true;
}

bool DerivedObjects::startAlarms(QString *error)
{
    if (m_options.alarmsFile.isEmpty())
        return true;
    QFile f(m_options.alarmsFile);
    if (!f.open(QIODevice::ReadOnly)) {
        *error = QStringLiteral("cannot read --alarms %1: %2").arg(m_options.alarmsFile, f.errorString());
        return false;
    }
    QList<AlarmRule> rules;
    if (const Status st = AlarmRule::parse(QString::fromUtf8(f.readAll()), &rules); !st.isOk()) {
        *error = QStringLiteral("--alarms %1:%2").arg(m_options.alarmsFile, st.message());
        return false;
    }
    if (const Status st = AlarmEvaluator::declareType(m_types); !st.isOk()) {
        *error = st.message();
        return false;
    }
    m_alarms = std::make_unique<AlarmEvaluator>(m_repository, rules);
    m_alarms->start();
    return true;
}

void DerivedObjects::writerLost(const QString &object)
{
    for (const auto &summer : m_summers)
        summer->partLost(object);
}

} // namespace dialog::isd
