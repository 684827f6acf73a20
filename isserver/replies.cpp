#include "replies.h"

#include "dialog/client.h"
#include "is/protocol_p.h"

namespace dialog::isd {

void replyStatus(Client &client, const Request &request, Status::Code code, const QString &error)
{
    isproto::Reply r;
    r.set_code(quint32(code));
    if (!error.isEmpty())
        r.set_error(error.toStdString());
    client.reply(request, is::protocol::serialize(r));
}

} // namespace dialog::isd
