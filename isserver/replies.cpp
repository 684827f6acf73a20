#include "replies.h"

#include "dialog/client.h"
#include "dialog/is/protocol.h"

namespace dialog::isd {

void replyStatus(Client &client, const Request &request, Status::Code code, const QString &error)
{
    is::protocol::ReplyMessage r;
    r.code = code;
    r.error = error;
    client.reply(request, is::protocol::serializeReply(r));
}

} // namespace dialog::isd
