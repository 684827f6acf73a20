#include "restartpolicy.h"

namespace dialog::agent {

namespace {

/// A run at least this long counts as healthy: the back-off starts again from the first delay.
constexpr qint64 HealthyRunMs = 10000;

Status readInteger(const QJsonObject &o, const char *key, qint64 min, qint64 max, qint64 *out)
{
    const QJsonValue v = o.value(QLatin1String(key));
    if (v.isUndefined() || v.isNull())
        return {};
    if (!v.isDouble() || v.toDouble() != double(v.toInteger()) || v.toInteger() < min || v.toInteger() > max)
        return Status(Status::Code::BadRequest,
                      QStringLiteral("%1: expected an integer from %2 to %3").arg(QLatin1String(key)).arg(min).arg(max));
    *out = v.toInteger();
    return {};
}

} // namespace

QString RestartPolicy::modeName(Mode m)
{
    switch (m) {
    case Mode::No:
        return QStringLiteral("no");
    case Mode::OnFailure:
        return QStringLiteral("on-failure");
    case Mode::Always:
        return QStringLiteral("always");
    }
    return {};
}

Status RestartPolicy::fromJson(const QJsonObject &o, RestartPolicy *out)
{
    RestartPolicy p;
    const QJsonValue mode = o.value(QStringLiteral("restart"));
    if (!mode.isUndefined() && !mode.isNull()) {
        const QString m = mode.toString();
        if (m == QLatin1String("no"))
            p.mode = Mode::No;
        else if (m == QLatin1String("on-failure"))
            p.mode = Mode::OnFailure;
        else if (m == QLatin1String("always"))
            p.mode = Mode::Always;
        else
            return Status(Status::Code::BadRequest,
                          QStringLiteral("restart: expected \"no\", \"on-failure\" or \"always\""));
    }
    qint64 limit = p.limitPerMinute;
    for (Status st : {readInteger(o, "restart_delay_ms", 0, 3600000, &p.delayMs),
                      readInteger(o, "restart_max_delay_ms", 0, 3600000, &p.maxDelayMs),
                      readInteger(o, "restart_limit_per_minute", 1, 1000, &limit)})
        if (!st.isOk())
            return st;
    p.limitPerMinute = int(limit);
    p.maxDelayMs = qMax(p.maxDelayMs, p.delayMs);
    *out = p;
    return {};
}

QJsonObject RestartPolicy::toJson() const
{
    return {{QStringLiteral("restart"), modeName(mode)},
            {QStringLiteral("restart_delay_ms"), delayMs},
            {QStringLiteral("restart_max_delay_ms"), maxDelayMs},
            {QStringLiteral("restart_limit_per_minute"), limitPerMinute}};
}

std::optional<qint64> RestartTracker::onExit(bool failed, qint64 runMs, qint64 nowMs)
{
    if (m_policy.mode == RestartPolicy::Mode::No || (m_policy.mode == RestartPolicy::Mode::OnFailure && !failed))
        return std::nullopt;
    m_recent.removeIf([nowMs](qint64 t) { return nowMs - t >= 60000; });
    if (m_recent.size() >= m_policy.limitPerMinute) {
        m_gaveUp = true;
        return std::nullopt;
    }
    if (m_nextDelayMs < 0 || runMs >= HealthyRunMs)
        m_nextDelayMs = m_policy.delayMs;
    const qint64 delay = m_nextDelayMs;
    m_nextDelayMs = qMin(m_policy.maxDelayMs, qMax<qint64>(1, m_nextDelayMs) * 2);
    m_recent.append(nowMs + delay);
    ++m_restarts;
    return delay;
}

void RestartTracker::reset()
{
    m_recent.clear();
    m_nextDelayMs = -1;
    m_gaveUp = false;
}

} // namespace dialog::agent
