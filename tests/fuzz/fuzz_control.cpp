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
    switch (data[0] & 7) {
    case 0:
        if (dialog::DirectorySnapshot d; dialog::DirectorySnapshot::fromJson(payload, &d).isOk()) {
            (void)d.toJson();
            (void)d.toPages(dialog::DirectorySnapshot::MinPageBytes, 1);
        }
        {
            // Pages: the same bytes twice, as page 0 and then as what follows it.
            dialog::DirectoryAssembler pages;
            std::optional<dialog::DirectorySnapshot> whole;
            (void)pages.add(payload, &whole);
            (void)pages.add(payload, &whole);
        }
        break;
    case 1: {
        dialog::StatisticsSnapshot s;
        (void)dialog::StatisticsSnapshot::fromJson(payload, &s);
        break;
    }
    case 2:
        if (dialog::rc::StateRecord s; dialog::rc::StateRecord::fromJson(payload, &s).isOk())
            (void)s.toJson();
        break;
    case 3: {
        dialog::rc::LogMessage m;
        (void)dialog::rc::LogMessage::fromJson(payload, &m);
        break;
    }
    case 4: {
        dialog::rc::TransitionRequest r;
        (void)dialog::rc::TransitionRequest::fromJson(payload, &r);
        break;
    }
    case 5: {
        QList<dialog::LogRecord> records;
        (void)dialog::decodeRecords(payload, &records);
        break;
    }
    case 6: {
        dialog::LogQuery q;
        (void)dialog::LogQuery::decode(payload, &q);
        break;
    }
    default: {
        dialog::LogPage p;
        (void)dialog::LogPage::decode(payload, &p);
        break;
    }
    }
    return 0;
}
