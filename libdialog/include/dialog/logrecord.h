// The message log's records and queries, as reporters, dialog-logger and its clients exchange
// them. The encoding (CBOR maps with the short keys below) lives here only.
#pragma once

#include "dialog/status.h"

#include <QByteArray>
#include <QJsonObject>
#include <QList>
#include <QMetaType>
#include <QString>
#include <QVariantMap>
#include <optional>

namespace dialog {

/// How bad a reported message is; ordered, so "at least Warning" is a comparison.
enum class Severity
{
    Debug,   ///< qDebug
    Info,    ///< qInfo
    Warning, ///< qWarning
    Error,   ///< qCritical
    Fatal,   ///< qFatal
};

/// "debug", "info", "warning", "error", "fatal".
QString severityName(Severity severity);
/// Parses severityName() (also "critical" for Error); std::nullopt for anything else.
std::optional<Severity> severityFromName(const QString &name);

/// One reported message.
struct LogRecord
{
    qint64 timeMs = 0; ///< when it was reported, ms since the epoch (the reporter's clock)
    QString process;   ///< the DIALOG process name (set by the logger from the request's origin)
    /// The host the reporter runs on.
    QString host;
    /// The reporter's operating-system process id.
    qint64 pid = 0;
    /// Debug, Info, Warning, Error or Fatal.
    Severity severity = Severity::Info;
    QString category; ///< the QLoggingCategory, or "default"
    /// The message.
    QString text;
    QString file; ///< source file and line, when the reporter knew them
    /// The line in file (0: not known).
    int line = 0;
    quint32 run = 0;      ///< run number, 0 = none
    QVariantMap values;   ///< the reporter's key/values
    quint64 sequence = 0; ///< per reporting process, increasing in the order of delivery
    qint64 id = 0;        ///< the logger's row id (in query answers)

    /// The record as the JSON object of `dialogctl log … --json` and the logger's web interface.
    QJsonObject toJson() const;
    /// Equal when every field is.
    bool operator==(const LogRecord &o) const;
};

/// A point in time as searches take it: "2h", "30m", "10s", "3d", "500ms" ago, ISO 8601
/// (2026-11-23T18:00:00), or ms since the epoch; std::nullopt for anything else.
std::optional<qint64> parseLogTime(const QString &text);

/// A batch of records: what a reporter sends to the logger and what the logger answers to queries.
QByteArray encodeRecords(const QList<LogRecord> &records);
/// Parses encodeRecords() into @p out (untouched on failure); Status::Code::BadRequest with a reason for
/// malformed input.
Status decodeRecords(const QByteArray &data, QList<LogRecord> *out);

/// A search of the stored messages. Empty / zero fields do not filter.
struct LogQuery
{
    ///@{
    /// Time range, inclusive, ms since the epoch (0: open).
    qint64 sinceMs = 0, untilMs = 0; ///< time range, inclusive, ms since the epoch
    ///@}
    /// Only records of this severity or higher.
    Severity minSeverity = Severity::Debug;
    ///@{
    /// Glob patterns (*, ?, [..]) on the process name, the host and the category, case-sensitive.
    QString process, host, category; ///< glob patterns (*, ?, [..]), case-sensitive
    ///@}
    QString text;                    ///< substring of the text, case-insensitive for ASCII
    /// Only records reported during this run (0: any).
    quint32 run = 0;
    int limit = 100;     ///< at most this many records (1…10000), newest first
    qint64 beforeId = 0; ///< paging: only records older than this row id (the last one of a page)
    qint64 afterId = 0;  ///< only records newer than this row id (catching up after a gap)

    /// The query as the payload of a query request.
    QByteArray encode() const;
    /// Parses what encode() writes into @p out (untouched on failure); Status::Code::BadRequest with a
    /// reason for malformed input or a field out of range.
    static Status decode(const QByteArray &data, LogQuery *out);
};

/// The answer to a LogQuery: records newest first, and whether older ones match too (ask again with
/// beforeId = the last record's id).
struct LogPage
{
    /// The matching records, newest first.
    QList<LogRecord> records;
    /// True when older records match too.
    bool more = false;

    /// The page as the payload of a query's answer.
    QByteArray encode() const;
    /// Parses what encode() writes into @p out (untouched on failure); Status::Code::BadRequest with a
    /// reason for malformed input.
    static Status decode(const QByteArray &data, LogPage *out);
};

/// Names of dialog-logger's services. Reporters send batches (requests with an "s" envelope) and
/// clients send queries ("q") to Service; every stored batch is published on Live.
namespace logservice {
/// The logger's service: reporters' batches and queries are requests to it.
inline QString service()
{
    return QStringLiteral("DIALOG.Logger");
}
/// Every stored batch is published on this service (encodeRecords()).
inline QString live()
{
    return QStringLiteral("DIALOG.Logger.Live");
}
/// The Control Server's own messages (it has no Client to send them with): the newest ones as one
/// encodeRecords() value, published as they come; dialog-logger subscribes and stores the new ones.
inline QString controlServer()
{
    return QStringLiteral("DIALOG.ControlServer.Log");
}
/// Request envelopes: a one-byte kind then the payload.
///@{
constexpr char StoreKind = 's';
constexpr char QueryKind = 'q';
constexpr char StatsKind = 'i';
///@}
/// The error a busy logger answers; reporters keep the batch and send it again later.
inline QString busyError()
{
    return QStringLiteral("busy");
}
} // namespace logservice

} // namespace dialog
Q_DECLARE_METATYPE(dialog::LogRecord)
