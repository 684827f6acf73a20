#pragma once

#include "commands.h"

#include "dialog/client.h"

#include <QCoreApplication>
#include <QTimer>
#include <cstdio>
#include <unistd.h>
#include <memory>

namespace dialog::tool {

inline QString processName(const OptionTable &p, const QString &verb)
{
    return p.isSet(QStringLiteral("name"))
               ? p.value(QStringLiteral("name"))
               : QStringLiteral("dialog-%1-%2")
                     .arg(QString(verb).replace(QLatin1Char(' '), QLatin1Char('-')))
                     .arg(QCoreApplication::applicationPid());
}

/// A Client named "dialog-VERB-PID" configured from the environment and the parsed options.
inline std::unique_ptr<Client> makeClient(const OptionTable &p, const QString &verb, QString *error)
{
    ClientOptions o = ClientOptions::fromEnvironment(processName(p, verb));
    o.exitOnRefusal = true; // a service name already provided elsewhere ends the command
    if (const Status st = o.applyParser(p.parser()); !st.isOk()) {
        *error = st.message();
        return nullptr;
    }
    auto c = std::make_unique<Client>(o);
    // Refused for its secret (none, another one) or its name's proof: said at once, and the command
    // ends, instead of waiting out its time-out with the reason hidden (main.cpp hides the chatter).
    QObject::connect(c.get(), &Client::errorOccurred, c.get(), [client = c.get(), verb](Status::Code) {
        if (client->state() != Client::State::Connected &&
            client->errorString().contains(QLatin1String("authentication failed"))) {
            QString why = client->errorString();
            if (const qsizetype next = why.indexOf(QLatin1String(" (next attempt")); next > 0)
                why.truncate(next); // there is no next attempt: the command ends here
            fail(verb, QStringLiteral("%1 (the partition's secret: --secret-file or $DIALOG_SECRET_FILE)").arg(why));
            std::fflush(stderr);
            ::_exit(1);
        }
    });
    if (!c->start()) {
        *error = c->errorString();
        return nullptr;
    }
    return c;
}

/// Runs the event loop until a handler quits it, or for at most @p timeoutMs: then @p rc is set to
/// the failure "VERB: WHAT the Control Server at ADDRESS within N ms" (@p what: "no answer from",
/// "not connected to"). Returns @p rc.
inline int execOrTimeOut(Client &client, const QString &verb, qint64 timeoutMs, const QString &what, int &rc)
{
    QTimer::singleShot(int(timeoutMs), &client, [&] {
        // The connection chatter is not shown (main.cpp): the last failure says why, if one did.
        const QString why = client.state() == Client::State::Connected || client.errorString().isEmpty()
                                ? QString()
                                : QStringLiteral(" (%1)").arg(client.errorString());
        rc = fail(verb, QStringLiteral("%1 the Control Server at %2 within %3 ms%4")
                            .arg(what, client.options().controlServers.join(QLatin1Char(',')))
                            .arg(timeoutMs)
                            .arg(why));
        QCoreApplication::quit();
    });
    QCoreApplication::exec();
    return rc;
}

} // namespace dialog::tool
