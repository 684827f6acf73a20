#include "dialog/status.h"

namespace dialog {

QString Status::codeName(Code code)
{
    switch (code) {
    case Code::Ok:
        return QStringLiteral("ok");
    case Code::NotFound:
        return QStringLiteral("not found");
    case Code::AlreadyExists:
        return QStringLiteral("already exists");
    case Code::TypeMismatch:
        return QStringLiteral("type mismatch");
    case Code::UnknownType:
        return QStringLiteral("unknown type");
    case Code::InvalidName:
        return QStringLiteral("invalid name");
    case Code::InvalidObject:
        return QStringLiteral("invalid object");
    case Code::ReadOnly:
        return QStringLiteral("read-only");
    case Code::UnknownServer:
        return QStringLiteral("unknown server");
    case Code::Timeout:
        return QStringLiteral("time-out");
    case Code::BadRequest:
        return QStringLiteral("bad request");
    case Code::ServerError:
        return QStringLiteral("server error");
    case Code::ListenFailed:
        return QStringLiteral("listen failed");
    case Code::InvalidAddress:
        return QStringLiteral("invalid address");
    case Code::ServiceRefused:
        return QStringLiteral("service refused");
    case Code::ProtocolError:
        return QStringLiteral("protocol error");
    case Code::MessageTooLarge:
        return QStringLiteral("message too large");
    case Code::NotConnected:
        return QStringLiteral("not connected");
    case Code::Failed:
        return QStringLiteral("failed");
    case Code::NotAccepted:
        return QStringLiteral("not accepted");
    case Code::ProviderLost:
        return QStringLiteral("provider lost");
    case Code::Cancelled:
        return QStringLiteral("cancelled");
    case Code::QueueFull:
        return QStringLiteral("queue full");
    case Code::Broken:
        return QStringLiteral("broken");
    case Code::StorageError:
        return QStringLiteral("storage error");
    case Code::QuotaExceeded:
        return QStringLiteral("quota exceeded");
    case Code::PermissionDenied:
        return QStringLiteral("permission denied");
    case Code::SecurityError:
        return QStringLiteral("security error");
    }
    return QStringLiteral("error");
}

QString Status::toString() const
{
    if (m_message.isEmpty())
        return codeName(m_code);
    return codeName(m_code) + QStringLiteral(": ") + m_message;
}

} // namespace dialog
