// Readout slaves of the tests (the project's front-end simulation and first event sampler):
// dialog-slave --kind readout started on a fixture and driven through its run-control transitions
// by requests to its state service.
#pragma once

#include "processfixture.h"

#include "dialog/client.h"
#include "dialog/rc/protocol.h"

#include <optional>

namespace dialog::test {

/// Sends the run-control request @p request ("configure", or a JSON transition with parameters) to
/// @p readout and waits (bounded) for its answer; Timeout when none came.
inline Status rcTransition(Client &client, const QString &readout, const QByteArray &request)
{
    std::optional<Reply> reply;
    client.request(rc::stateService(readout), request, 10000, &client, [&](const Reply &r) { reply = r; });
    if (!waitUntil([&] { return reply.has_value(); }, 15000))
        return Status(Status::Code::Timeout, QStringLiteral("no answer from %1").arg(readout));
    return reply->status();
}

/// Starts readout slave @p name (one thread, 5 kHz, no IS, no pause between spills) with @p extra
/// options, configured and running; false with a test failure when a transition failed.
inline bool startReadout(ProcessFixture &fx, Client &client, const QString &name,
                         const QStringList &extra = {})
{
    fx.start(QStringLiteral("dialog-slave"),
             QStringList{QStringLiteral("--kind"), QStringLiteral("readout"), QStringLiteral("--name"), name,
                         QStringLiteral("--no-is"), QStringLiteral("--threads"), QStringLiteral("1"),
                         QStringLiteral("--rate"), QStringLiteral("5000"), QStringLiteral("--off-s"),
                         QStringLiteral("0")} +
                 extra)
        ->setProcessChannelMode(QProcess::ForwardedErrorChannel);
    for (const char *t : {"configure", "start"})
        if (const Status s = rcTransition(client, name, t); !s.isOk()) {
            qWarning().noquote() << name << t << s.toString();
            return false;
        }
    return true;
}

} // namespace dialog::test
