#include "control_p.h"

namespace dialog::wire_format {

bool validControlPayload(Type type, const QByteArray &payload)
{
    auto check = [&](auto msg) { return parseControl(payload, msg); };
    switch (type) {
    case Type::Hello:
        return check(wire::Hello());
    case Type::ConnectToControlServer:
        return check(wire::Connect());
    case Type::SuccessfullyConnected:
        return check(wire::Connected());
    case Type::Heartbeat:
        return check(wire::Heartbeat());
    case Type::RegisterService:
    case Type::UnregisterService:
    case Type::RequestService:
    case Type::CancelRequest:
    case Type::RegisterCommand:
    case Type::UnregisterCommand:
        return check(wire::Names());
    case Type::InfoService:
        return check(wire::InfoService());
    case Type::SubscribeService:
    case Type::UnsubscribeService:
        return check(wire::Subscribe());
    case Type::ConnectionLost:
        return check(wire::ConnectionLost());
    case Type::LostSender:
    case Type::LostReceiver:
        return check(wire::LostProcess());
    case Type::Refused:
        return check(wire::Refused());
    case Type::Auth:
        return check(wire::Auth());
    case Type::Disconnect:
        return payload.isEmpty();
    case Type::ServiceMessage:
    case Type::CommandMessage:
    case Type::Request:
    case Type::Reply:
        return true;
    }
    return false;
}

QByteArray namesFrame(Type type, const QStringList &names)
{
    wire::Names n;
    for (const QString &s : names)
        n.add_names(ss(s));
    return controlFrame(type, n);
}

QStringList namesOf(const wire::Names &n)
{
    QStringList out;
    out.reserve(n.names_size());
    for (const auto &s : n.names())
        out.append(qs(s));
    return out;
}

} // namespace dialog::wire_format
