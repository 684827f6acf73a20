// Who may command what: a partition's access list (which processes, users and hosts may send which
// commands and write which IS objects), checked by the Control Server and the IS servers, and the
// audit trail of every command and IS write they see (audit.h).
#pragma once

#include "dialog/status.h"

#include <QList>
#include <QRegularExpression>
#include <QString>
#include <optional>

namespace dialog {

/// Where a command or an IS write comes from. The process name, user and host name are what the
/// sender claims in its HELLO (trustworthy when the partition has a shared secret: only holders of
/// the secret can connect); the address is where its connection came from.
struct Origin
{
    /// The process name it claims.
    QString process;
    /// The OS user it claims.
    QString user;
    /// The host name it claims.
    QString host;
    /// The address its connection came from.
    QString address;
};

/// An ordered list of allow/deny rules; the first rule that matches decides, and when none matches
/// the default decides ("allow" unless the list says "default": "deny"). An empty list allows
/// everything. Read from JSON:
///
///     { "default": "allow",
///       "rules": [
///         { "allow": "command",  "name": "RunCtrl.*.Command", "process": "RunControl*" },
///         { "allow": "command",  "name": "RunCtrl.*.Command", "process": "Master" },
///         { "deny":  "command",  "name": "RunCtrl.*.Command" },
///         { "allow": "is-write", "name": "RunParams.*", "user": "daq", "host": "daq-*" },
///         { "deny":  "is-write", "name": "RunParams.*" } ] }
///
/// A rule has "allow" or "deny" with what it is about ("command", "is-write", "transition" or "*"),
/// and glob patterns (dialog/glob.h: '*' any characters, '?' one, "[...]" one of a set; whole
/// string) "name" (the command, the IS object as Server.Object, or the run-control state service
/// RunCtrl.<P>.State a transition is asked of), "process", "user" and "host" (the claimed host name
/// or the connection's address); a pattern left out matches anything.
/// Immutable once loaded: safe to use from any thread.
class AccessList
{
public:
    /// What an access rule is about.
    enum class Kind
    {
        Command,    ///< sending a command (COMMAND_MESSAGE or DIALOG.Command)
        IsWrite,    ///< inserting, updating or removing an IS object
        Transition, ///< asking a run-control process for a transition (a request on RunCtrl.<P>.State)
    };
    /// The outcome of check(): whether the action is allowed, and which rule said so.
    struct Decision
    {
        /// True when the action may go ahead.
        bool allowed = true;
        int rule = -1;   ///< index of the deciding rule; -1: the default
        QString because; ///< "rules[2]" or "default"
    };

    /// Reads the list from the JSON file @p path into @p out. Status::Code::StorageError when the
    /// file cannot be read, Status::Code::BadRequest when it is not a valid list, with the message
    /// "PATH: where: why"; @p out is then unchanged.
    static Status load(const QString &path, AccessList *out);
    /// Parses @p json (@p source names it in errors); errors as load().
    static Status parse(const QByteArray &json, const QString &source, AccessList *out);

    /// True when the list allows everything (no rule, default allow).
    bool isEmpty() const { return m_rules.isEmpty() && m_defaultAllows; }
    /// The number of rules.
    int ruleCount() const { return int(m_rules.size()); }
    /// Decides whether @p origin may do @p kind on @p name (a command, or an IS object Server.Object): the
    /// first matching rule, else the default.
    Decision check(Kind kind, const QString &name, const Origin &origin) const;

private:
    struct Rule
    {
        bool allow = true;
        bool anyKind = false;
        Kind kind = Kind::Command;
        QRegularExpression name, process, user, host; // invalid: matches anything
    };
    QList<Rule> m_rules;
    bool m_defaultAllows = true;
};

/// "command", "is-write" or "transition".
QString accessKindName(AccessList::Kind kind);
/// The kind accessKindName() names @p name; nullopt for any other text.
std::optional<AccessList::Kind> accessKindFromName(const QString &name);

} // namespace dialog
