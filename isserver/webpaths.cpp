#include "webpaths.h"

#include "dialog/is/dictionary.h"

namespace dialog::isd::web {

int httpStatus(const Status &s)
{
    using C = Status::Code;
    switch (s.code()) {
    case C::Ok:
        return 200;
    case C::NotFound:
    case C::UnknownServer:
    case C::UnknownType:
        return 404;
    case C::InvalidName:
    case C::TypeMismatch:
    case C::BadRequest:
        return 400;
    case C::Timeout:
        return 504;
    default:
        return 502;
    }
}

std::optional<QString> objectOf(const QString &server, const QString &name)
{
    QString srv, obj;
    if (!is::Dictionary::splitName(name, &srv, &obj) || srv != server)
        return std::nullopt;
    return obj;
}

WebAnswer badObjectName(const QString &server, const QString &name)
{
    return WebAnswer::error(
        400, QStringLiteral("the object must be named '%1.<Object>' (got '%2')").arg(server, name.left(200)));
}

} // namespace dialog::isd::web
