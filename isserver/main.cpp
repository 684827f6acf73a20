// dialog-isserver: an IS server (ATLAS Information Service) in a DIALOG system.
#include "isserver.h"

#include "dialog/application.h"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QThread>
#include <cstdio>

int main(int argc, char *argv[])
{
    dialog::preferLowLatencyEventDispatcher();
    QCoreApplication app(argc, argv);
    QCoreApplication::setApplicationName(QStringLiteral("dialog-isserver"));
    QCommandLineParser p;
    p.setApplicationDescription(QStringLiteral(
        "An IS server: typed information objects named Server.Object, held in memory, read, updated, "
        "iterated and subscribed by criteria; persisted to --data-dir."));
    p.addHelpOption();
    p.addOption({QStringLiteral("name"), QStringLiteral("Server name, unique in the DIALOG system (required)."),
                 QStringLiteral("name")});
    p.addOption({QStringLiteral("threads"),
                 QStringLiteral("Worker threads for reads and delivery (default: the number of cores)."),
                 QStringLiteral("n")});
    p.addOption({QStringLiteral("data-dir"),
                 QStringLiteral("Directory of the checkpoint file <name>.is (default: no persistence)."),
                 QStringLiteral("dir")});
    p.addOption({QStringLiteral("types"), QStringLiteral("Directory of IS type XML files to load."),
                 QStringLiteral("dir")});
    p.addOption({QStringLiteral("checkpoint-s"),
                 QStringLiteral("Checkpoint interval in seconds (default 10; 0: only at exit)."),
                 QStringLiteral("s"), QStringLiteral("10")});
    p.addOption({QStringLiteral("subscriber-queue"),
                 QStringLiteral("Bound of a slow subscriber's own queue, in notifications (default 10000)."),
                 QStringLiteral("n"), QStringLiteral("10000")});
    dialog::ClientOptions::addParserOptions(p);
    p.process(app);

    auto fail = [](const QString &why) {
        std::fprintf(stderr, "dialog-isserver: %s\n", qPrintable(why));
        return 1;
    };
    if (!p.positionalArguments().isEmpty())
        return fail(QStringLiteral("unexpected argument '%1' (see --help)").arg(p.positionalArguments().first()));
    dialog::isd::ServerOptions o;
    o.name = p.value(QStringLiteral("name"));
    if (o.name.isEmpty())
        return fail(QStringLiteral("--name is required"));
    bool ok = true;
    o.threads = p.isSet(QStringLiteral("threads")) ? p.value(QStringLiteral("threads")).toInt(&ok)
                                                   : qMax(1, QThread::idealThreadCount());
    if (!ok || o.threads < 1 || o.threads > 256)
        return fail(QStringLiteral("invalid --threads '%1' (1..256)").arg(p.value(QStringLiteral("threads"))));
    o.checkpointS = p.value(QStringLiteral("checkpoint-s")).toInt(&ok);
    if (!ok || o.checkpointS < 0)
        return fail(QStringLiteral("invalid --checkpoint-s '%1'").arg(p.value(QStringLiteral("checkpoint-s"))));
    o.queueRecords = p.value(QStringLiteral("subscriber-queue")).toInt(&ok);
    if (!ok || o.queueRecords < 1)
        return fail(QStringLiteral("invalid --subscriber-queue '%1'").arg(p.value(QStringLiteral("subscriber-queue"))));
    o.dataDir = p.value(QStringLiteral("data-dir"));
    o.typesDir = p.value(QStringLiteral("types"));
    o.client = dialog::ClientOptions::fromEnvironment(QStringLiteral("IS.Server.") + o.name);
    o.client.maxQueueBytes = 4 * 1024 * 1024; // per subscriber process; a slow one costs at most this
    QString why;
    if (!o.client.applyParser(p, &why))
        return fail(why);
    o.client.name = QStringLiteral("IS.Server.") + o.name;

    dialog::quitOnTerminationSignals();
    dialog::isd::IsServer server(o);
    if (!server.start(&why))
        return fail(why);
    const int rc = app.exec();
    if (!server.saveNow(&why))
        return fail(QStringLiteral("final checkpoint failed: %1").arg(why));
    return rc;
}
