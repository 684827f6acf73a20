// Typed snapshots of what the Control Server publishes about the system: the directory of
// processes (service DIALOG.Directory) and their communication figures (DIALOG.Statistics).
// The Control Server writes them and every reader (tools, GUIs, the IS API, tests) parses them
// through these types, so the JSON shape lives in one place.
#pragma once

#include <QByteArray>
#include <QJsonObject>
#include <QList>
#include <QString>
#include <QStringList>
#include <optional>

namespace dialog {

/// "DIALOG.Directory": the processes, their services, commands and subscriptions; published by the
/// Control Server on every change.
QString directoryServiceName();
/// "DIALOG.Statistics": every process' communication figures; published at most once a second,
/// only while someone subscribes.
QString statisticsServiceName();

/// One process in the directory (alive, or lost with when and why).
struct ProcessEntry
{
    QString name;
    QString host; ///< the address the process advertises (where others reach it)
    quint16 port = 0;
    qint64 pid = 0;
    QStringList services;      ///< sorted
    QStringList commands;      ///< sorted
    QStringList subscriptions; ///< services it asked for (sorted)
    qint64 connectedAtMs = 0;  ///< ms since the epoch
    qint64 lostAtMs = 0;       ///< lost entries only: when it was declared lost
    QString lostReason;        ///< lost entries only: why

    bool operator==(const ProcessEntry &o) const;
};

/// The content of DIALOG.Directory.
struct DirectorySnapshot
{
    qint64 timeMs = 0;             ///< when the Control Server made it (ms since the epoch)
    QList<ProcessEntry> processes; ///< alive, in name order
    QList<ProcessEntry> lost;      ///< recently lost, oldest first (a name may appear again)

    /// The live process named @p name, or nullptr.
    const ProcessEntry *process(const QString &name) const;
    /// The names of the live processes, in order.
    QStringList processNames() const;

    QJsonObject toJsonObject() const;
    QByteArray toJson() const;
    /// Parses what toJson() writes; std::nullopt (with a one-line @p error) for anything that is
    /// not a JSON object with a "processes" array. Unknown keys are ignored.
    static std::optional<DirectorySnapshot> fromJson(const QByteArray &json, QString *error = nullptr);

    bool operator==(const DirectorySnapshot &o) const;
};

/// One process' communication figures, as it reports them in its heartbeats (cumulative counters
/// since the process started).
struct ProcessStatistics
{
    QString name;
    qint64 atMs = 0; ///< when the Control Server received them (ms since the epoch)
    quint64 messagesOut = 0, bytesOut = 0, messagesIn = 0, bytesIn = 0;
    quint64 dropped = 0, reconnects = 0, protocolErrors = 0;
    qint64 queuedBytes = 0;
    int outgoingConnections = 0, incomingConnections = 0;

    bool operator==(const ProcessStatistics &o) const;
};

/// The content of DIALOG.Statistics. Counters travel as JSON numbers: exact up to 2^53.
struct StatisticsSnapshot
{
    qint64 timeMs = 0;
    QList<ProcessStatistics> processes; ///< in name order; processes that reported figures only

    const ProcessStatistics *process(const QString &name) const;

    QJsonObject toJsonObject() const;
    QByteArray toJson() const;
    static std::optional<StatisticsSnapshot> fromJson(const QByteArray &json, QString *error = nullptr);
};

} // namespace dialog
