#include "clientsetup.h"

#include "dialog/directory.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

namespace dialog::tool {

namespace {
// Exit codes of `dialogctl send` (documented in its --help and the README).
constexpr int Delivered = 0; // handed to every registrant's connection by the Control Server
constexpr int Usage = 1;     // bad arguments: nothing was sent
constexpr int Refused = 2;   // the Control Server refused it: nobody registered the command, …
constexpr int Lost = 3;      // not delivered, or not known to be: see stderr
constexpr int Denied = 4;    // the partition's access list does not let this sender send it

int failWith(int code, const QString &verb, const QString &why)
{
    fail(verb, why);
    return code;
}

/// The exit code and message for the Control Server's answer to a command request.
int outcome(const Reply &r, const QString &verb, const QString &command, qint64 timeoutMs,
            const Client &client, bool connected)
{
    switch (r.error()) {
    case Status::Code::Ok:
        break;
    case Status::Code::Failed:
        return failWith(Refused, verb, QStringLiteral("refused: %1").arg(r.status().message()));
    case Status::Code::PermissionDenied:
        return failWith(Denied, verb, QStringLiteral("denied: %1").arg(r.status().message()));
    case Status::Code::InvalidName:
    case Status::Code::MessageTooLarge:
        return failWith(Refused, verb, QStringLiteral("refused: %1").arg(r.status().message()));
    case Status::Code::Timeout:
        if (!connected)
            return failWith(
                Lost, verb,
                QStringLiteral("lost: not connected to the Control Server at %1 within %2 ms; '%3' "
                               "was not sent")
                    .arg(client.options().controlServers.join(QLatin1Char(',')))
                    .arg(timeoutMs)
                    .arg(command));
        return failWith(
            Lost, verb,
            QStringLiteral("lost: no answer from the Control Server within %1 ms; '%2' may or may "
                           "not have been delivered")
                .arg(timeoutMs)
                .arg(command));
    default:
        return failWith(
            Lost, verb,
            QStringLiteral("lost: '%1' was not confirmed: %2").arg(command, r.status().message()));
    }
    const QJsonObject o = QJsonDocument::fromJson(r.data()).object();
    const QJsonArray delivered = o.value(QLatin1String("delivered")).toArray();
    const QJsonArray failed = o.value(QLatin1String("failed")).toArray();
    if (failed.isEmpty() && !delivered.isEmpty())
        return Delivered;
    QStringList why;
    for (const QJsonValue &f : failed)
        why << QStringLiteral("%1 (%2)").arg(f[QLatin1String("name")].toString(),
                                             f[QLatin1String("reason")].toString());
    if (delivered.isEmpty() && failed.isEmpty())
        why << QStringLiteral("unreadable answer from the Control Server");
    return failWith(Lost, verb,
                    QStringLiteral("lost: '%1' delivered to %2 process(es), not to %3")
                        .arg(command)
                        .arg(delivered.size())
                        .arg(why.join(QStringLiteral(", "))));
}
} // namespace

int send(const QStringList &args)
{
    const QString verb = QStringLiteral("send");
    qint64 timeout = 5000;
    OptionTable p(program(verb));
    p.setDescription(QStringLiteral(
        "Sends a command to every process that registered it, through the Control Server, and waits "
        "for its answer.\n"
        "Exit status: 0 delivered (the Control Server handed it to every registrant's connection); "
        "1 bad arguments, nothing sent; 2 refused (no process registered the command, invalid name, too "
        "large); 3 lost (not connected to the Control Server, no answer within --timeout-ms, or not "
        "handed to some registrant); 4 denied (the partition's access list does not let this user, host or "
        "process send it). On failure, one line on stderr says which and why."));
    p.addPositional(QStringLiteral("command"), QStringLiteral("Command name."));
    p.addPositional(QStringLiteral("data"), QStringLiteral("Command data (text), optional."),
                    QStringLiteral("[data]"));
    p.add(
        Option::flag(QStringLiteral("hex"), QStringLiteral("The data is hexadecimal (e.g. 'de ad be ef').")));
    p.add(Option::duration(
        QStringLiteral("timeout-ms"), QStringLiteral("ms"),
        QStringLiteral("Give up connecting or waiting for the answer after this long (default 5000)."),
        &timeout, OptionUnit::Milliseconds, 1, 3600000));
    if (!parse(p, args))
        return Usage;
    const QStringList pos = p.positionalArguments();
    if (pos.isEmpty() || pos.size() > 2)
        return fail(verb, QStringLiteral("expected a command name and optional data (see --help)"));
    QByteArray data = pos.size() > 1 ? pos.at(1).toUtf8() : QByteArray();
    if (p.isSet(QStringLiteral("hex"))) {
        const QByteArray clean = QByteArray(data).replace(' ', "");
        if (clean.size() % 2 || QByteArray::fromHex(clean).toHex() != clean.toLower())
            return fail(verb, QStringLiteral("data is not hexadecimal"));
        data = QByteArray::fromHex(clean);
    }
    const QString command = pos.first();
    if (command.isEmpty() || command.toUtf8().size() > 1024 || command.contains(QChar(0)))
        return failWith(Refused, verb,
                        QStringLiteral("refused: invalid command name (empty or over 1024 bytes)"));
    QString error;
    auto client = makeClient(p, verb, &error);
    if (!client)
        return fail(verb, error);
    int rc = Lost;
    bool connected = false;
    QObject::connect(client.get(), &Client::connected, client.get(), [&] { connected = true; });
    // A request to the Control Server's DIALOG.Command: it forwards the command to every registrant
    // and answers whom it was handed to, so the exit status says what happened.
    client->request(commandServiceName(), commandRequestData(command, data), int(timeout), client.get(),
                    [&](const Reply &r) {
                        rc = outcome(r, verb, command, timeout, *client, connected);
                        QCoreApplication::quit();
                    });
    QTimer::singleShot(int(timeout) + 1000, client.get(), [&] {
        // The request's own time-out normally answers first; this bounds a request never sent.
        rc = failWith(Lost, verb,
                      QStringLiteral("lost: not connected to the Control Server at %1 within %2 ms")
                          .arg(client->options().controlServers.join(QLatin1Char(',')))
                          .arg(timeout));
        QCoreApplication::quit();
    });
    QCoreApplication::exec();
    return rc;
}

} // namespace dialog::tool
