#include "clientsetup.h"

namespace dialog::tool {

int send(const QStringList &args)
{
    const QString verb = QStringLiteral("send");
    QCommandLineParser p;
    p.setApplicationDescription(QStringLiteral("Sends a command to every process that registered it."));
    p.addPositionalArgument(QStringLiteral("command"), QStringLiteral("Command name."));
    p.addPositionalArgument(QStringLiteral("data"), QStringLiteral("Command data (text), optional."),
                            QStringLiteral("[data]"));
    p.addOption({QStringLiteral("hex"), QStringLiteral("The data is hexadecimal (e.g. 'de ad be ef').")});
    p.addOption({QStringLiteral("timeout-ms"),
                 QStringLiteral("Give up connecting after this long (default 5000)."), QStringLiteral("ms")});
    if (!parse(p, args, verb))
        return 1;
    const QStringList pos = p.positionalArguments();
    if (pos.isEmpty() || pos.size() > 2)
        return fail(verb, QStringLiteral("expected a command name and optional data (see --help)"));
    qint64 timeout = 5000;
    if (!intOption(p, verb, QStringLiteral("timeout-ms"), 1, 3600000, timeout))
        return 1;
    QByteArray data = pos.size() > 1 ? pos.at(1).toUtf8() : QByteArray();
    if (p.isSet(QStringLiteral("hex"))) {
        const QByteArray clean = QByteArray(data).replace(' ', "");
        if (clean.size() % 2 || QByteArray::fromHex(clean).toHex() != clean.toLower())
            return fail(verb, QStringLiteral("data is not hexadecimal"));
        data = QByteArray::fromHex(clean);
    }
    QString error;
    auto client = makeClient(p, verb, &error);
    if (!client)
        return fail(verb, error);
    int rc = 1;
    QObject::connect(client.get(), &Client::connected, client.get(), [&] {
        if (!client->sendCommand(pos.first(), data))
            rc = fail(verb, client->errorString().isEmpty() ? QStringLiteral("could not queue the command")
                                                            : client->errorString());
        else if (!client->flush(int(timeout)))
            rc = fail(verb, QStringLiteral("the command could not be written to the Control Server"));
        else
            rc = 0;
        QCoreApplication::quit();
    });
    return execOrTimeOut(*client, verb, timeout, QStringLiteral("not connected to"), rc);
}

} // namespace dialog::tool
