// dialog-alarmserver's notification hooks: a rule's "on_raise" runs a command (QProcess, with the
// alarm in its environment) and/or POSTs the alarm as JSON to a URL (QNetworkAccessManager) each
// time the alarm is raised. Nothing here waits: a hook runs at most --hook-timeout-s (a command is
// then killed with its process group, a POST aborted), at most --hook-max-running hooks run at
// once and a raise beyond that is dropped and counted; failures are counted and logged, at most one
// line per 10 s (the lines left out are counted in the next one).
#pragma once

#include <QElapsedTimer>
#include <QJsonObject>
#include <QObject>

class QNetworkAccessManager;

namespace dialog::alarm {

class AlarmTable;
struct AlarmEvent;

struct HookOptions
{
    int timeoutMs = 10000; ///< a hook still running then is killed / aborted
    int maxRunning = 4;    ///< hooks (commands and POSTs together) running at once
};

class HookRunner : public QObject
{
    Q_OBJECT
public:
    /// @p table must outlive the runner. Hooks start from the table's changed() signal.
    HookRunner(AlarmTable *table, const HookOptions &options, QObject *parent = nullptr);
    /// Kills the commands still running (and their process groups) and aborts the POSTs.
    ~HookRunner() override;

    /// The counters, for ALARM.Table ("hooks") and dialogctl alarm ls.
    QJsonObject figures() const;
    /// The counters in the Prometheus text format.
    QByteArray metrics() const;

    /// Counters per kind of hook.
    struct Counters
    {
        quint64 started = 0;   ///< began to run
        quint64 succeeded = 0; ///< exit code 0 / an HTTP 2xx answer
        quint64 failed = 0;    ///< could not start, non-zero exit, crashed, HTTP error, refused (timeouts included)
        quint64 timedOut = 0;  ///< killed or aborted after the time-out (also counted in failed)
        quint64 dropped = 0;   ///< not started: maxRunning hooks were running
    };
    const Counters &commands() const { return m_run; }
    const Counters &posts() const { return m_post; }
    int running() const { return m_running; }

Q_SIGNALS:
    /// Emitted once per hook when it ended (succeeded or not) or was dropped, in the runner's thread.
    void countersChanged();

private:
    void onChanged(const AlarmEvent &e);
    void runCommand(int alarm);
    void post(int alarm);
    void failed(const QString &what);
    void done();

    AlarmTable *m_table;
    HookOptions m_options;
    QNetworkAccessManager *m_network = nullptr;
    Counters m_run, m_post;
    int m_running = 0;
    QElapsedTimer m_sinceLog;  ///< since the last failure logged
    quint64 m_notLogged = 0;   ///< failures not logged since then
};

} // namespace dialog::alarm
