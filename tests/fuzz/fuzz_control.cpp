// libFuzzer target: what the control plane parses from a peer: the protobuf payload of every
// control frame type (checked, then read as the Control Server and the client read it), and the
// JSON documents of the control services (directory, statistics, run-control state, transition
// requests, log messages and records).
#include "fuzzcommon.h"

#include "control_p.h"

#include <dialog/directory.h>
#include <dialog/logrecord.h>
#include <dialog/rc/staterecord.h>

using namespace dialog::wire_format;
namespace wire = dialog::wire;

extern "C" int LLVMFuzzerInitialize(int *, char ***)
{
    dialog::fuzz::quietQt();
    return 0;
}

namespace {

template <typename M> void read(const QByteArray &payload)
{
    M m;
    if (!parseControl(payload, m))
        abort(); // validControlPayload() said it parses
    (void)m.ByteSizeLong();
}

void control(Type type, const QByteArray &payload)
{
    if (!validControlPayload(type, payload))
        return;
    switch (type) {
    case Type::Hello:
        read<wire::Hello>(payload);
        break;
    case Type::ConnectToControlServer: {
        wire::Connect c;
        parseControl(payload, c);
        const QString name = qs(c.name()), host = qs(c.host());
        QStringList all;
        for (const auto &s : c.services())
            all.append(qs(s));
        for (const auto &s : c.commands())
            all.append(qs(s));
        for (const auto &s : c.requests())
            all.append(qs(s));
        break;
    }
    case Type::SuccessfullyConnected:
        read<wire::Connected>(payload);
        break;
    case Type::Heartbeat:
        read<wire::Heartbeat>(payload);
        break;
    case Type::InfoService: {
        wire::InfoService i;
        parseControl(payload, i);
        (void)qs(i.name());
        (void)qs(i.provider());
        break;
    }
    case Type::ConnectionLost:
        read<wire::ConnectionLost>(payload);
        break;
    case Type::LostSender:
    case Type::LostReceiver: {
        wire::LostProcess l;
        parseControl(payload, l);
        for (const auto &s : l.services())
            (void)qs(s);
        break;
    }
    case Type::Refused:
        read<wire::Refused>(payload);
        break;
    case Type::Disconnect:
        break;
    default:
        if (!isDataType(type)) {
            wire::Names n;
            if (parseControl(payload, n))
                (void)namesOf(n);
        }
        break;
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    const QByteArray payload = dialog::fuzz::bytes(data + 1, size - 1).toByteArray();
    if (!(data[0] & 0x80)) {
        control(Type(data[0] % (MaxType + 2)), payload); // 0 and MaxType + 1: unknown types
        return 0;
    }
    QString error;
    switch (data[0] & 7) {
    case 0:
        if (auto d = dialog::DirectorySnapshot::fromJson(payload, &error)) {
            (void)d->toJson();
            (void)d->toPages(dialog::DirectorySnapshot::MinPageBytes, 1);
        }
        {
            // Pages: the same bytes twice, as page 0 and then as what follows it.
            dialog::DirectoryAssembler pages;
            (void)pages.add(payload, &error);
            (void)pages.add(payload, &error);
        }
        break;
    case 1:
        (void)dialog::StatisticsSnapshot::fromJson(payload, &error);
        break;
    case 2:
        if (auto s = dialog::rc::StateRecord::fromJson(payload, &error))
            (void)s->toJson();
        break;
    case 3:
        (void)dialog::rc::LogMessage::fromJson(payload, &error);
        break;
    case 4:
        (void)dialog::rc::TransitionRequest::fromJson(payload, &error);
        break;
    case 5:
        (void)dialog::decodeRecords(payload, &error);
        break;
    case 6:
        (void)dialog::LogQuery::decode(payload, &error);
        break;
    default:
        (void)dialog::LogPage::decode(payload, &error);
        break;
    }
    return 0;
}
