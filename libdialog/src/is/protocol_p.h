// The protobuf side of the IS wire protocol (dialog/is/protocol.h), for the library's own client
// code: conversions between is.proto messages and the IS value types.
#pragma once

#include "dialog/is/criteria.h"
#include "dialog/is/dictionary.h"
#include "dialog/is/history.h"
#include "dialog/is/protocol.h"
#include "dialog/is/repository.h"

#include "is.pb.h"

#include <QByteArray>
#include <QByteArrayView>

namespace dialog::is::protocol {

/// HISTORY replies: the series of @p history into @p out (type, oldest and series), and back.
void toProto(const History &history, isproto::Reply *out);
History historyFromProto(const isproto::Reply &reply);

Status statusFromReply(const isproto::Reply &reply);

void toProto(const Criteria &criteria, isproto::Criteria *out);
Criteria fromProto(const isproto::Criteria &criteria);

QByteArray serialize(const google::protobuf::MessageLite &message);

} // namespace dialog::is::protocol
