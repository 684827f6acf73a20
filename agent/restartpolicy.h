// When the agent starts a process again after it ended: the policy a start request gives
// ("restart", back-off, limit per minute) and the bookkeeping that applies it, apart from any
// process, so that it is tested with numbers only.
#pragma once

#include "dialog/status.h"

#include <QJsonObject>
#include <QList>
#include <QString>
#include <optional>

namespace dialog::agent {

/// The restart policy of one managed process, as a start request gives it:
///     "restart": "on-failure" | "always" | "no", "restart_delay_ms": 200,
///     "restart_max_delay_ms": 30000, "restart_limit_per_minute": 5
struct RestartPolicy
{
    enum class Mode
    {
        No,        ///< never started again
        OnFailure, ///< again after a non-zero exit code or a death by a signal
        Always,    ///< again after any end the agent did not ask for
    };
    Mode mode = Mode::No;
    qint64 delayMs = 200;       ///< first restart after this long; doubled for each quick failure
    qint64 maxDelayMs = 30000;  ///< the back-off never waits longer
    int limitPerMinute = 5;     ///< more restarts than this within 60 s: given up

    /// Reads the fields of a start request (missing ones keep their defaults); BadRequest names the
    /// field and its range.
    static Status fromJson(const QJsonObject &o, RestartPolicy *out);
    QJsonObject toJson() const;
    static QString modeName(Mode m);
};

/// Applies a RestartPolicy to the ends of one process. Not thread-safe; times are in ms of any
/// monotonic clock the caller keeps.
class RestartTracker
{
public:
    explicit RestartTracker(const RestartPolicy &policy = {}) : m_policy(policy) {}

    /// What to do after the process ended (@p failed: non-zero exit code or a signal) after
    /// running @p runMs, at @p nowMs: the delay after which to start it again, or nullopt (the
    /// policy says no, or the limit per minute is reached: gaveUp() is then true).
    std::optional<qint64> onExit(bool failed, qint64 runMs, qint64 nowMs);
    /// The process was started on request (not by the policy): the history starts afresh.
    void reset();
    /// onExit() refused because of the limit per minute.
    bool gaveUp() const { return m_gaveUp; }
    /// Restarts the policy made so far.
    int restarts() const { return m_restarts; }
    /// Carries the count of an agent before this one on (its state file).
    void setRestarts(int n) { m_restarts = n; }
    const RestartPolicy &policy() const { return m_policy; }

private:
    RestartPolicy m_policy;
    QList<qint64> m_recent; // times of the restarts within the last minute
    qint64 m_nextDelayMs = -1;
    int m_restarts = 0;
    bool m_gaveUp = false;
};

} // namespace dialog::agent
