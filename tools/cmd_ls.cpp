#include "clientsetup.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTextStream>
#include <QTimer>
#include <algorithm>

namespace dialog::tool {

namespace {
void printTable(const QJsonObject &dir, const QString &self)
{
    QTextStream out(stdout);
    const QJsonArray procs = dir.value(QStringLiteral("processes")).toArray();
    out << QStringLiteral("%1 %2 %3 %4 %5 %6\n")
               .arg(QStringLiteral("PROCESS"), -24)
               .arg(QStringLiteral("ADDRESS"), -22)
               .arg(QStringLiteral("PID"), -8)
               .arg(QStringLiteral("SERVICES"), -9)
               .arg(QStringLiteral("COMMANDS"), -9)
               .arg(QStringLiteral("SUBSCRIPTIONS"));
    int shown = 0;
    for (const QJsonValue &v : procs) {
        const QJsonObject p = v.toObject();
        if (p.value(QStringLiteral("name")).toString() == self)
            continue;
        ++shown;
        const QJsonArray svc = p.value(QStringLiteral("services")).toArray();
        const QJsonArray cmd = p.value(QStringLiteral("commands")).toArray();
        const QJsonArray sub = p.value(QStringLiteral("subscriptions")).toArray();
        out << QStringLiteral("%1 %2 %3 %4 %5 %6\n")
                   .arg(p.value(QStringLiteral("name")).toString(), -24)
                   .arg(p.value(QStringLiteral("host")).toString() + QLatin1Char(':') +
                            QString::number(p.value(QStringLiteral("port")).toInt()),
                        -22)
                   .arg(p.value(QStringLiteral("pid")).toInteger(), -8)
                   .arg(svc.size(), -9)
                   .arg(cmd.size(), -9)
                   .arg(sub.size());
        for (const QJsonValue &s : svc)
            out << "    provides   " << s.toString() << '\n';
        for (const QJsonValue &c : cmd)
            out << "    command    " << c.toString() << '\n';
        for (const QJsonValue &s : sub)
            out << "    subscribes " << s.toString() << '\n';
    }
    const QJsonArray lost = dir.value(QStringLiteral("lost")).toArray();
    for (const QJsonValue &v : lost) {
        const QJsonObject p = v.toObject();
        out << QStringLiteral("%1 %2 lost: %3\n")
                   .arg(p.value(QStringLiteral("name")).toString(), -24)
                   .arg(p.value(QStringLiteral("host")).toString() + QLatin1Char(':') +
                            QString::number(p.value(QStringLiteral("port")).toInt()),
                        -22)
                   .arg(p.value(QStringLiteral("reason")).toString());
    }
    out << shown << " process(es)\n";
}
} // namespace

int ls(const QStringList &args)
{
    const QString verb = QStringLiteral("ls");
    QCommandLineParser p;
    p.setApplicationDescription(QStringLiteral("Lists the processes known to the Control Server, with their "
                                               "services, commands and subscriptions."));
    p.addOption({QStringLiteral("json"), QStringLiteral("Print the directory as one JSON object.")});
    p.addOption({QStringLiteral("timeout-ms"), QStringLiteral("Give up after this long (default 5000)."),
                 QStringLiteral("ms")});
    if (!parse(p, args, verb))
        return 1;
    qint64 timeout = 5000;
    if (!intOption(p, verb, QStringLiteral("timeout-ms"), 1, 3600000, timeout))
        return 1;
    QString error;
    auto client = makeClient(p, verb, &error);
    if (!client)
        return fail(verb, error);
    const QString self = client->name();
    int rc = 1;
    Subscription *sub = client->subscribe(QStringLiteral("DIALOG.Directory"));
    // Wait for a snapshot that lists ourselves: it was made after we registered, so it is current.
    QObject::connect(sub, &Subscription::messageReceived, client.get(), [&](const Message &m) {
        const QJsonObject dir = QJsonDocument::fromJson(m.data()).object();
        const QJsonArray all = dir.value(QStringLiteral("processes")).toArray();
        if (std::none_of(all.begin(), all.end(), [&](const QJsonValue &v) {
                return v.toObject().value(QStringLiteral("name")).toString() == self;
            }))
            return;
        if (p.isSet(QStringLiteral("json"))) {
            QJsonObject copy = dir;
            QJsonArray procs;
            for (const QJsonValue &v : dir.value(QStringLiteral("processes")).toArray())
                if (v.toObject().value(QStringLiteral("name")).toString() != self)
                    procs.append(v);
            copy.insert(QStringLiteral("processes"), procs);
            std::fputs(QJsonDocument(copy).toJson(QJsonDocument::Compact).append('\n').constData(), stdout);
        } else {
            printTable(dir, self);
        }
        rc = 0;
        QCoreApplication::quit();
    });
    QTimer::singleShot(int(timeout), client.get(), [&] {
        rc = fail(verb, QStringLiteral("no answer from the Control Server at %1 within %2 ms")
                            .arg(client->options().controlServers.join(QLatin1Char(',')))
                            .arg(timeout));
        QCoreApplication::quit();
    });
    QCoreApplication::exec();
    return rc;
}

} // namespace dialog::tool
