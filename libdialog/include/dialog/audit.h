// The audit trail: one record per command the Control Server relays and per IS write an IS server
// applies (or refuses), with its origin; written to a rotating file of JSON lines and reported to
// the message log (category "dialog.audit"). Read back by `dialogctl audit`.
#pragma once

#include "dialog/access.h"

#include <QFile>
#include <QJsonObject>
#include <QList>
#include <QString>
#include <QVariantMap>
#include <optional>

class QCommandLineParser;

namespace dialog {

/// One audited action.
struct AuditRecord
{
    qint64 timeMs = 0; ///< when the daemon decided, ms since the epoch
    QString daemon;    ///< the process that decided (the Control Server, IS.Server.NAME)
    /// A command sent, or an IS write.
    AccessList::Kind kind = AccessList::Kind::Command;
    QString name;      ///< the command, or the IS object (Server.Object)
    QString operation; ///< "send" for a command; "insert", "update", "upsert", "remove" for IS
    /// Who sent it.
    Origin origin;
    /// The decision.
    bool allowed = true;
    QString because; ///< the deciding rule ("rules[2]"), "default", or "" without an access list

    // The chain (AuditTrail::record): each record of a daemon holds the hash of its previous one, so
    // that a record altered, removed, inserted or back-dated later breaks the chain.
    QString chain;        ///< the chain's id: random, drawn when the daemon starts (empty: not chained)
    quint64 sequence = 0; ///< its place in the chain: 1, 2, … (0: not chained)
    QString previous;     ///< hash of the chain's previous record (empty for the first)
    QString hash;         ///< chainHash() as the daemon computed it
    bool keyed = false;   ///< the hash is an HMAC keyed by the partition's secret (auditKey())

    /// The hash this record must carry (hex): HMAC-SHA256 with @p key over every field above but
    /// hash, in a fixed order; SHA-256 without a key.
    QString chainHash(const QByteArray &key) const;
    /// The key of @p daemon's chain in a partition with the shared secret @p secret:
    /// HMAC-SHA256(secret, "DIALOG-AUDIT-1 " + daemon). Empty without a secret.
    static QByteArray auditKey(const QByteArray &secret, const QString &daemon);

    /// The record as the JSON line of an audit file.
    QJsonObject toJson() const;
    /// Parses what toJson() writes; nullopt when a field is missing or malformed.
    static std::optional<AuditRecord> fromJson(const QJsonObject &o);
    /// The record's fields as message-log values (see fromValues()).
    QVariantMap values() const;
    /// Parses what values() gives, with the message's time @p timeMs; nullopt when a field is missing.
    static std::optional<AuditRecord> fromValues(const QVariantMap &values, qint64 timeMs);
    /// "RunCtrl.Slave1.Command send by Master (daq@host1 127.0.0.1): allowed (rules[0])"
    QString text() const;
};

/// Writes audit records, in the thread that owns it, to a file of JSON lines that rotates when
/// it passes maxBytes (PATH -> PATH.1 -> … -> PATH.N (N = generations), the oldest dropped), and to the
/// message log (dialog::report, category "dialog.audit", refusals as warnings).
class AuditTrail
{
public:
    /// Where the trail goes and how much of it is kept.
    struct Options
    {
        QString path;                       ///< empty: message log only
        qint64 maxBytes = 10 * 1024 * 1024; ///< size past which the file rotates
        int generations = 5;                ///< rotated files kept
        /// The partition's shared secret (empty: none): records are chained with keyed hashes,
        /// which only holders of the secret can compute.
        QByteArray secret;
    };
    /// A trail with @p options; open() before record().
    explicit AuditTrail(const Options &options);

    /// Opens (appends to) the file; Status::Code::StorageError with the file's name and the OS's
    /// reason when it cannot be written. Ok at once without a file (Options::path empty).
    Status open();
    /// Chains @p r to the previous record (sets its chain, sequence, previous, hash and keyed) and
    /// writes it to the file (when open) and to the message log.
    void record(AuditRecord r);
    /// Records that could not be written to the file (disk full, …); they still went to the log.
    quint64 writeFailures() const { return m_writeFailures; }

    /// The records of the file @p path and its rotated generations, oldest first, at or after
    /// @p sinceMs. Unreadable lines are skipped and counted in @p skipped.
    static QList<AuditRecord> read(const QString &path, qint64 sinceMs, int *skipped = nullptr);

private:
    void rotate();

    Options m_options;
    QFile m_file;
    quint64 m_writeFailures = 0;
    quint64 m_sequence = 0;
    QString m_chain;    // drawn at construction
    QString m_previous; // hash of the last record written
};

/// What verifyAuditChains() found out about one record.
enum class AuditVerdict
{
    Verified,   ///< its keyed hash is right and it follows the previous record of its chain
    Chained,    ///< the same, with an unkeyed hash (no secret): consistent, but anyone could have made it
    Unverified, ///< no chain (not written by a daemon's AuditTrail), or keyed and no secret to check it
    Broken      ///< its hash is wrong, or it does not follow the previous record of its chain
};

/// The verdict on each of a list of records, and the breaks found.
struct AuditCheck
{
    QList<AuditVerdict> verdicts; ///< one per record, in the order given
    QStringList breaks;           ///< one line per break: daemon, chain, sequence, what is wrong
    int chains = 0;               ///< chains seen
};

/// Checks the chains of @p records (any order; records of several daemons and chains mixed) with the
/// partition's secret @p secret (empty: keyed records cannot be checked). A chain read from its
/// middle (records before --since left out) starts at its first record given.
AuditCheck verifyAuditChains(const QList<AuditRecord> &records, const QByteArray &secret);
/// "verified", "chained", "unverified" or "broken".
QString auditVerdictName(AuditVerdict v);

/// The access and audit settings of a daemon that checks commands or IS writes (the Control
/// Server, dialog-isserver): --access FILE, --audit, --audit-file PATH, --audit-file-bytes N,
/// --audit-files N.
struct AccessOptions
{
    AccessList access;  ///< empty: everything allowed
    bool audit = false; ///< keep an audit trail (message log, and trail.path when set)
    /// The audit file and its rotation (path empty: message log only).
    AuditTrail::Options trail;

    /// Adds --access, --audit, --audit-file, --audit-file-bytes and --audit-files to @p parser.
    static void addParserOptions(QCommandLineParser &parser);
    /// Reads the options added by addParserOptions(). A bad value is Status::Code::BadRequest naming
    /// the option and what it takes; an access file that cannot be read or is not a valid list keeps
    /// the code of AccessList::load() (StorageError, BadRequest), its message prefixed by "--access: ".
    Status applyParser(const QCommandLineParser &parser);
};

/// The category of audit records in the message log.
inline QString auditCategory()
{
    return QStringLiteral("dialog.audit");
}

} // namespace dialog
