#include "clientsetup.h"

#include "dialog/directory.h"

#include <QTextStream>

namespace dialog::tool {

namespace {
QString address(const ProcessEntry &p)
{
    return p.host + QLatin1Char(':') + QString::number(p.port);
}

void printTable(const DirectorySnapshot &dir)
{
    QTextStream out(stdout);
    out << QStringLiteral("%1 %2 %3 %4 %5 %6\n")
               .arg(QStringLiteral("PROCESS"), -24)
               .arg(QStringLiteral("ADDRESS"), -22)
               .arg(QStringLiteral("PID"), -8)
               .arg(QStringLiteral("SERVICES"), -9)
               .arg(QStringLiteral("COMMANDS"), -9)
               .arg(QStringLiteral("SUBSCRIPTIONS"));
    for (const ProcessEntry &p : dir.processes) {
        out << QStringLiteral("%1 %2 %3 %4 %5 %6\n")
                   .arg(p.name, -24)
                   .arg(address(p), -22)
                   .arg(p.pid, -8)
                   .arg(p.services.size(), -9)
                   .arg(p.commands.size(), -9)
                   .arg(p.subscriptions.size());
        for (const QString &s : p.services)
            out << "    provides   " << s << '\n';
        for (const QString &c : p.commands)
            out << "    command    " << c << '\n';
        for (const QString &s : p.subscriptions)
            out << "    subscribes " << s << '\n';
    }
    for (const ProcessEntry &p : dir.lost)
        out << QStringLiteral("%1 %2 lost: %3\n").arg(p.name, -24).arg(address(p), -22).arg(p.lostReason);
    out << dir.processes.size() << " process(es)\n";
}
} // namespace

int ls(const QStringList &args)
{
    const QString verb = QStringLiteral("ls");
    qint64 timeout = 5000;
    OptionTable p(program(verb));
    p.setDescription(QStringLiteral("Lists the processes known to the Control Server, with their "
                                    "services, commands and subscriptions."));
    p.add(Option::flag(QStringLiteral("json"), QStringLiteral("Print the directory as one JSON object.")));
    p.add(Option::duration(QStringLiteral("timeout-ms"), QStringLiteral("ms"),
                           QStringLiteral("Give up after this long (default 5000)."), &timeout,
                           OptionUnit::Milliseconds, 1, 3600000));
    if (!parse(p, args))
        return 1;
    QString error;
    auto client = makeClient(p, verb, &error);
    if (!client)
        return fail(verb, error);
    const QString self = client->name();
    int rc = 1;
    Subscription *sub = client->subscribe(directoryServiceName());
    DirectoryAssembler pages; // a large directory comes in pages
    // Wait for a snapshot that lists ourselves: it was made after we registered, so it is current.
    QObject::connect(sub, &Subscription::messageReceived, client.get(), [&](const Message &m) {
        std::optional<DirectorySnapshot> dir;
        if (const Status read = pages.add(m.data(), &dir); !read.isOk()) {
            rc = fail(verb, read.message());
            QCoreApplication::quit();
            return;
        }
        if (!dir)
            return;
        if (!dir->process(self))
            return;
        // This tool is not part of the system it lists.
        dir->processes.removeIf([&](const ProcessEntry &e) { return e.name == self; });
        if (p.isSet(QStringLiteral("json")))
            std::fputs(dir->toJson().append('\n').constData(), stdout);
        else
            printTable(*dir);
        rc = 0;
        QCoreApplication::quit();
    });
    return execOrTimeOut(*client, verb, timeout, QStringLiteral("no answer from"), rc);
}

} // namespace dialog::tool
