// Typed snapshots of what the Control Server publishes about the system: the directory of
// processes (service DIALOG.Directory) and their communication figures (DIALOG.Statistics).
// The Control Server writes them and every reader (tools, GUIs, the IS API, tests) parses them
// through these types, so the JSON shape lives in one place.
#pragma once

#include "dialog/status.h"

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
/// "DIALOG.Command": a request to it is a command the Control Server forwards to every process
/// that registered it, as it forwards COMMAND_MESSAGE, and then answers: Ok with
/// {"delivered":[names],"failed":[{"name":…,"reason":…}]} (failed: a registrant's queue was full),
/// or Failed with the reason it was refused (no process registered the command, invalid name).
/// "Delivered" means handed to the registrant's connection by the Control Server.
QString commandServiceName();
/// The data of a request to DIALOG.Command: the command name (UTF-8), a NUL byte, the command data.
QByteArray commandRequestData(const QString &command, const QByteArray &data);
/// Splits what commandRequestData() makes; false if there is no NUL byte.
bool splitCommandRequest(const QByteArray &request, QByteArray &command, QByteArray &data);

/// One process in the directory (alive, or lost with when and why).
struct ProcessEntry
{
    /// The process name (unique in the partition).
    QString name;
    QString host; ///< the address the process advertises (where others reach it)
    /// The port it listens on for other processes.
    quint16 port = 0;
    /// Its operating-system process id.
    qint64 pid = 0;
    /// Its software version (dialog::version() in its HELLO); empty: not said (an older peer).
    QString version;
    QStringList services;      ///< sorted
    QStringList commands;      ///< sorted
    QStringList subscriptions; ///< services it asked for (sorted)
    qint64 connectedAtMs = 0;  ///< ms since the epoch
    qint64 lostAtMs = 0;       ///< lost entries only: when it was declared lost
    QString lostReason;        ///< lost entries only: why
    /// Lost entries only: names (services, commands, subscriptions) the Control Server no longer
    /// keeps for it (each list of a lost process is bounded, see --lost-max-names).
    int omittedNames = 0;

    /// Equal when every field is.
    bool operator==(const ProcessEntry &o) const;
};

/// The content of DIALOG.Directory. The Control Server publishes it as one or more pages, each
/// a JSON object of this shape below its size limit (a message never exceeds the message limit):
/// read them with DirectoryAssembler. A directory that fits one page is one message, as before.
struct DirectorySnapshot
{
    qint64 timeMs = 0;             ///< when the Control Server made it (ms since the epoch)
    QList<ProcessEntry> processes; ///< alive, in name order
    QList<ProcessEntry> lost;      ///< recently lost, oldest first (a name may appear again)

    /// The live process named @p name, or nullptr.
    const ProcessEntry *process(const QString &name) const;
    /// The names of the live processes, in order.
    QStringList processNames() const;

    /// The snapshot as the JSON object of DIALOG.Directory.
    QJsonObject toJsonObject() const;
    /// toJsonObject(), compact UTF-8.
    QByteArray toJson() const;
    /// Parses what toJson() writes into @p out (untouched on failure); Status::Code::BadRequest with a
    /// one-line reason for anything that is not a JSON object with a "processes" array. Unknown keys
    /// are ignored.
    static Status fromJson(const QByteArray &json, DirectorySnapshot *out);

    /// The snapshot as pages of at most @p maxBytes each (UTF-8 JSON; at least MinPageBytes), all
    /// marked with @p generation, page number and page count. Processes are kept whole where they
    /// fit; a process whose lists do not fit one page is continued on the next ones. Every page is
    /// itself a valid snapshot (a reader that knows nothing of pages sees part of the directory).
    QList<QByteArray> toPages(qint64 maxBytes, quint64 generation) const;
    /// The smallest page toPages() makes.
    static constexpr qint64 MinPageBytes = 64 * 1024;

    /// Equal when every process entry is.
    bool operator==(const DirectorySnapshot &o) const;
};

/// Puts the pages of DIALOG.Directory back together: feed it every message of the subscription,
/// in order; it returns the whole directory when the last page of a generation arrives and every
/// page of it was seen. Pages of an older generation are forgotten when a newer one starts; a
/// message without page fields is a whole directory. Not thread-safe (one per subscription).
class DirectoryAssembler
{
public:
    /// Takes one message: @p complete is set to the whole directory when it completes one, reset while
    /// pages are missing. A malformed message is Status::Code::BadRequest with a one-line reason (and is
    /// otherwise ignored; @p complete is reset).
    Status add(const QByteArray &message, std::optional<DirectorySnapshot> *complete);

private:
    quint64 m_generation = 0;
    int m_pages = 0;
    int m_next = 0; // the page expected next
    DirectorySnapshot m_partial;
};

/// One process' communication figures, as it reports them in its heartbeats (cumulative counters
/// since the process started).
struct ProcessStatistics
{
    /// The process name.
    QString name;
    qint64 atMs = 0; ///< when the Control Server received them (ms since the epoch)
    ///@{
    /// Frames and bytes sent and received (control frames included), as Client::Statistics.
    quint64 messagesOut = 0, bytesOut = 0, messagesIn = 0, bytesIn = 0;
    /// Messages dropped for full queues, connections opened again, malformed frames refused, as
    /// Client::Statistics.
    quint64 dropped = 0, reconnects = 0, protocolErrors = 0;
    /// Bytes handed over and not yet written, as Client::Statistics.
    qint64 queuedBytes = 0;
    /// Open connections to and from other processes, as Client::Statistics.
    int outgoingConnections = 0, incomingConnections = 0;
    ///@}

    /// Equal when every figure is.
    bool operator==(const ProcessStatistics &o) const;
};

/// The content of DIALOG.Statistics. Counters travel as JSON numbers: exact up to 2^53.
struct StatisticsSnapshot
{
    /// When the Control Server published the snapshot (ms since the epoch).
    qint64 timeMs = 0;
    QList<ProcessStatistics> processes; ///< in name order; processes that reported figures only

    /// The figures of the process named @p name, or nullptr.
    const ProcessStatistics *process(const QString &name) const;

    /// The snapshot as the JSON object of DIALOG.Statistics.
    QJsonObject toJsonObject() const;
    /// toJsonObject(), compact UTF-8.
    QByteArray toJson() const;
    /// Parses what toJson() writes into @p out (untouched on failure); Status::Code::BadRequest with a
    /// one-line reason for anything that is not a JSON object with a "processes" array.
    static Status fromJson(const QByteArray &json, StatisticsSnapshot *out);
};

} // namespace dialog
