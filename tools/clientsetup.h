#pragma once

#include "commands.h"

#include "dialog/client.h"

#include <QCoreApplication>
#include <memory>

namespace dialog::tool {

inline QString processName(const QCommandLineParser &p, const QString &verb)
{
    return p.isSet(QStringLiteral("name"))
               ? p.value(QStringLiteral("name"))
               : QStringLiteral("dialog-%1-%2").arg(QString(verb).replace(QLatin1Char(' '), QLatin1Char('-'))).arg(QCoreApplication::applicationPid());
}

/// A Client named "dialog-VERB-PID" configured from the environment and the parsed options.
inline std::unique_ptr<Client> makeClient(const QCommandLineParser &p, const QString &verb, QString *error)
{
    ClientOptions o = ClientOptions::fromEnvironment(processName(p, verb));
    o.exitOnRefusal = true; // a service name already provided elsewhere ends the command
    if (!o.applyParser(p, error))
        return nullptr;
    auto c = std::make_unique<Client>(o);
    if (!c->start()) {
        *error = c->errorString();
        return nullptr;
    }
    return c;
}

} // namespace dialog::tool
