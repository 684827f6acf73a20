#pragma once

#include <QMetaType>
#include <QObject>
#include <QString>

namespace dialog {

/// The outcome of a DIALOG operation: one code from the library's single table of errors plus a
/// human-readable detail. Used by Client (error()), Reply (status()), Stream (send()), the IS API
/// (Dictionary, Repository) and everything built on them, so a caller learns one vocabulary.
/// Errors from the OS, zstd and protobuf are translated into a Code at the boundary; their raw text
/// stays in message(). Cheap to copy (a null message costs nothing).
class Status
{
    Q_GADGET
public:
    /// One table for the whole library. The values up to ServerError travel in IS replies
    /// (is.proto): never renumber them; add new codes at the end.
    enum class Code
    {
        Ok,              ///< no error
        NotFound,        ///< no such object
        AlreadyExists,   ///< insert of an existing object
        TypeMismatch,    ///< update with another type; get as an unrelated type
        UnknownType,     ///< a type the server (or this process) does not know
        InvalidName,     ///< a name that is empty, too long (over 1024 bytes) or of another server
        InvalidObject,   ///< a value that does not match its type
        ReadOnly,        ///< the IS server is a mirror
        UnknownServer,   ///< no IS server of that name answered
        Timeout,         ///< no answer in time
        BadRequest,      ///< a malformed request, a bad regular expression, …
        ServerError,     ///< anything else a server reported
        ListenFailed,    ///< the receiving socket could not be opened
        InvalidAddress,  ///< a Control Server address does not parse
        ServiceRefused,  ///< a service name is already provided by another process
        ProtocolError,   ///< a peer sent malformed frames (its connection was closed)
        MessageTooLarge, ///< data larger than ClientOptions::maxMessageSize
        NotConnected,    ///< the client is not started or not connected to a Control Server
        Failed,          ///< the provider of a service answered a request with an error
        NotAccepted,     ///< the provider does not take requests for this service
        ProviderLost,    ///< the provider was lost while a request was pending
        Cancelled,       ///< the caller cancelled the operation
        QueueFull,       ///< the destination's queue is at its bound; nothing was queued
        Broken,          ///< the destination could not be reached or its connection broke
        StorageError,    ///< a file could not be read or written, or is damaged (checkpoints)
        QuotaExceeded,   ///< a write over a limit of what one client (or the server) may store
        /// the partition's access list refuses the command or IS write to the sender
        PermissionDenied,
        SecurityError,   ///< the secret file or the TLS files cannot be used (see dialog/security.h)
    };
    Q_ENUM(Code)

    Status() = default;
    /// A status with @p code and the detail @p message.
    Status(Code code, const QString &message = {}) : m_code(code), m_message(message) {}

    /// True for Code::Ok.
    bool isOk() const { return m_code == Code::Ok; }
    /// What happened, from the one code table.
    Code code() const { return m_code; }
    /// The detail (the server's reason, the OS error text, …); may be empty.
    QString message() const { return m_message; }
    /// "ok", or the code's name followed by the detail: "not found: DAQ.Missing".
    QString toString() const;
    /// A short lower-case name of @p code ("not found", "time-out", …).
    static QString codeName(Code code);

    /// Equal when the codes and the messages are.
    friend bool operator==(const Status &a, const Status &b)
    {
        return a.m_code == b.m_code && a.m_message == b.m_message;
    }
    /// Not equal when the codes or the messages differ.
    friend bool operator!=(const Status &a, const Status &b) { return !(a == b); }

private:
    Code m_code = Code::Ok;
    QString m_message;
};

} // namespace dialog

Q_DECLARE_METATYPE(dialog::Status)
