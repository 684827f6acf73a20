// Supervision of connected processes: their heartbeats (answered, so that they can tell a hung
// Control Server; the figures they carry recorded), a process silent for its misses × interval or
// unreachable declared lost and its partners told (LOST_SENDER to its subscribers, LOST_RECEIVER to
// the providers it subscribed to), and the server's own pauses: after it did not run for longer
// than processes wait for it, nobody is blamed for heartbeats it could not read.
#pragma once

#include "servercontext.h"

#include <QObject>

class QTimer;

namespace dialog::cs {

class Supervision : public QObject
{
    Q_OBJECT
public:
    explicit Supervision(ServerContext &context, QObject *parent = nullptr);

    /// Starts checking heartbeats.
    void start();
    void onHeartbeat(const net::Inbound &in);
    /// @p p connected: the server's own pauses are measured against the shortest interval.
    void admitted(const ProcessRecord &p);
    /// Declares @p name lost (an empty @p reason: it disconnected) and tells its partners.
    void lose(const QString &name, const QString &reason);
    /// The process listening at @p e cannot be reached: lost, unless it disconnects meanwhile.
    void unreachable(const net::Endpoint &e, const QString &why);
    /// Probes a process whose connection closed without DISCONNECT: a dead one refuses the probe.
    void probe(const QString &name, quint64 incarnation);
    /// While held (the standby is asked whether it took over), nobody is declared lost.
    void setHeld(bool held) { m_held = held; }

    /// True if a gap of @p gapMs between two checks is longer than processes wait for us:
    /// @p misses × the shorter of @p heartbeatMs and @p shortestMs (at least 200 ms).
    static bool stalled(qint64 gapMs, int misses, int heartbeatMs, int shortestMs);

Q_SIGNALS:
    /// Emitted exactly once per process removed, after the directory dropped it.
    void lost(const ProcessRecord &p);
    /// This server did not run for @p ms; every process got a fresh interval.
    void stalledFor(qint64 ms);
    /// Emitted on each periodic check while not held: time-outs of other parts are due.
    void checked();
    /// A heartbeat carried figures.
    void statisticsChanged();
    /// The directory changed; @p routes when processes with commands went.
    void directoryChanged(bool routes);

private:
    void checkHeartbeats();

    ServerContext &m_ctx;
    QTimer *m_timer = nullptr;
    qint64 m_lastCheckMs = -1;
    int m_shortestHeartbeatMs = 1 << 30; // of the processes admitted so far
    bool m_held = false;
};

} // namespace dialog::cs
