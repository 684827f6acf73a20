// The status answer every part of dialog-isserver sends to an IS request.
#pragma once

#include "dialog/status.h"

#include <QString>

namespace dialog {
class Client;
class Request;
} // namespace dialog

namespace dialog::isd {

/// Answers @p request with @p code and, unless empty, @p error (an IS reply holding only a status).
/// Any thread: replying only queues a frame.
void replyStatus(Client &client, const Request &request, Status::Code code, const QString &error = {});

} // namespace dialog::isd
