// The Control Server's directory: processes, services, commands and subscriptions.
// Pure logic, no I/O: the server turns its results into frames.
#pragma once

#include "dialog/directory.h"

#include <QDateTime>
#include <QHash>
#include <QJsonObject>
#include <QList>
#include <QSet>
#include <QString>
#include <QStringList>

namespace dialog::cs {

/// Communication figures a process reports with its heartbeats (dialog::Client::Statistics).
/// A process' communication figures (its name is not filled in here: the record holds it).
using ProcessStatistics = dialog::ProcessStatistics;

struct ProcessRecord
{
    QString name;
    QString host;
    quint16 port = 0;
    quint32 pid = 0;
    quint64 incarnation = 0;
    QString version; ///< its software version from the HELLO of its CONNECT's connection (empty: not said)
    /// Connect.session: a later CONNECT of this incarnation must show the same bytes.
    QByteArray session;
    /// net::PeerInfo::connectionId of the connection its CONNECT came by: its frames are believed
    /// from that connection only (0: not bound, for records made without a connection).
    quint64 via = 0;
    /// Connect.term / term_server: the highest term of a Control Server that accepted it, and
    /// where that one served (fencing: read by the server that steps down).
    quint64 term = 0;
    QString termServer;
    int heartbeatMs = 1000;
    qint64 connectedAtMs = 0;
    qint64 lastSeenMs = 0;
    QSet<QString> services;
    QSet<QString> commands;
    QSet<QString> requests;
    ProcessStatistics statistics;
};

struct LostRecord
{
    ProcessRecord process;
    qint64 lostAtMs = 0;
    QString reason;
    int omittedNames = 0; // names of its lists not kept (LostLimits::maxNames)
};

/// Bounds of the "lost" history: a lost process stays listed with its services for a while so
/// operators see what went, but the history never grows without limit.
struct LostLimits
{
    int maxCount = 100;        ///< lost processes listed; the oldest go first
    qint64 maxAgeMs = 3600000; ///< a lost process is forgotten after this long
    int maxNames = 100;        ///< names kept per list (services, commands, subscriptions)
};

class Directory
{
public:
    enum class ConnectResult
    {
        Accepted,  ///< a new process
        Refreshed, ///< the same incarnation connected again (its old registrations were dropped)
        NameInUse, ///< another live incarnation holds the name, or this one with another session
    };

    /// Adds a process (without its services/commands/requests: register them one by one).
    ConnectResult connectProcess(const ProcessRecord &p, QString *reason);
    void setLostLimits(const LostLimits &limits) { m_lostLimits = limits; }
    /// Forgets lost processes older than LostLimits::maxAgeMs; true if any went.
    bool expireLost(qint64 nowMs);
    int lostCount() const { return int(m_lost.size()); }
    /// Removes a process; returns its record (empty name if unknown). Its services become
    /// unavailable; requests of others for them stay queued. With a @p reason it is remembered
    /// as lost (within LostLimits; @p nowMs is then ms since the epoch).
    ProcessRecord removeProcess(const QString &name, const QString &reason, qint64 nowMs);

    const ProcessRecord *process(const QString &name) const;
    /// The connected process named @p name with this incarnation, or null.
    const ProcessRecord *connected(const QString &name, quint64 incarnation) const;
    QString processAt(const QString &host, quint16 port) const;
    QStringList processNames() const;

    /// False (with the current owner in @p owner) if another process provides the service.
    bool registerService(const QString &process, const QString &service, QString *owner);
    bool unregisterService(const QString &process, const QString &service);
    /// The process providing @p service, or null.
    const ProcessRecord *provider(const QString &service) const;

    void registerCommand(const QString &process, const QString &command);
    void unregisterCommand(const QString &process, const QString &command);
    /// Every process that registered @p command.
    QStringList commandTargets(const QString &command) const;

    void request(const QString &process, const QString &service);
    void cancelRequest(const QString &process, const QString &service);
    /// Every process waiting for or subscribed to @p service.
    QStringList requesters(const QString &service) const;
    /// Processes subscribed to any service of @p process (they get LOST_SENDER when it goes).
    QStringList subscribersOf(const ProcessRecord &process) const;
    /// Providers of the services @p process requested (they get LOST_RECEIVER when it goes).
    QStringList providersFor(const ProcessRecord &process) const;

    void heartbeat(const QString &process, qint64 nowMs);
    /// Records the figures @p process reported (ignored for an unknown process).
    void setStatistics(const QString &process, const ProcessStatistics &s);
    /// The latest figures of every connected process that reported some, as published to
    /// DIALOG.Statistics.
    StatisticsSnapshot statistics(qint64 nowMs) const;
    QJsonObject statisticsJson(qint64 nowMs) const;

    /// Processes silent for more than misses × their heartbeat interval.
    QStringList expired(qint64 nowMs, int misses) const;

    /// The whole directory (processes, recently lost processes) as published to DIALOG.Directory.
    DirectorySnapshot snapshot(qint64 nowMs) const;
    QJsonObject toJson(qint64 nowMs) const;
    int processCount() const { return int(m_processes.size()); }
    /// Every connected process, in no particular order (no copy, no sort: for per-change work).
    const QHash<QString, ProcessRecord> &processRecords() const { return m_processes; }
    int serviceCount() const { return int(m_providers.size()); }
    /// Command registrations plus requests (subscriptions) of every process.
    int nameCount() const { return m_names; }

private:
    QHash<QString, ProcessRecord> m_processes;
    QHash<QPair<QString, quint16>, QString> m_atEndpoint; // host, port -> process (processAt)
    QHash<QString, QString> m_providers;                  // service -> process
    QHash<QString, QSet<QString>> m_commands;             // command -> processes
    QHash<QString, QSet<QString>> m_requests;             // service -> processes
    QList<LostRecord> m_lost;                             // most recent last, bounded by m_lostLimits
    LostLimits m_lostLimits;
    int m_names = 0; // command registrations + requests
};

} // namespace dialog::cs
