// dialog-master: the run-control master of a partition.
#include "master.h"
#include "options.h"

#include "dialog/application.h"
#include "dialog/report.h"

#include <QCoreApplication>
#include <QStandardPaths>
#include <cstdio>

using namespace dialog::daq;

int main(int argc, char *argv[])
{
    dialog::preferLowLatencyEventDispatcher();
    QCoreApplication app(argc, argv);
    QCoreApplication::setApplicationName(QStringLiteral("dialog-master"));
    QCommandLineParser p;
    p.setApplicationDescription(QStringLiteral(
        "The run-control master: reads a partition, drives its slaves through the transitions it is asked "
        "for (command RunCtrl.<name>.Command or a request on RunCtrl.<name>.State), publishes the "
        "aggregated state, owns the run number and publishes RunParams.RunInfo."));
    addCommonOptions(p, false);
    p.addOption({QStringLiteral("config"), QStringLiteral("Partition file (JSON)."), QStringLiteral("file")});
    p.addOption(
        {QStringLiteral("run-number-file"),
         QStringLiteral("Where the last run number is kept (default: the partition's run_number_file, "
                        "else the user's data directory)."),
         QStringLiteral("file")});
    p.process(app);
    auto fail = [](const QString &why) {
        std::fprintf(stderr, "dialog-master: %s\n", qPrintable(why));
        return 1;
    };
    if (!p.positionalArguments().isEmpty())
        return fail(
            QStringLiteral("unexpected argument '%1' (see --help)").arg(p.positionalArguments().first()));
    if (!p.isSet(QStringLiteral("config")))
        return fail(QStringLiteral("--config PARTITION.json is required"));
    dialog::rc::Partition partition;
    QString error;
    if (!dialog::rc::Partition::load(p.value(QStringLiteral("config")), &partition, &error))
        return fail(error);

    ControllableOptions o;
    o.client = dialog::ClientOptions::fromEnvironment(partition.master.name);
    o.client.exitOnRefusal = true; // a second master of the partition must not run
    // The partition names the Control Server; $DIALOG_CONTROL_SERVER (set by `dialog up`, which may
    // override the port) and --control-server take precedence.
    if (qEnvironmentVariableIsEmpty("DIALOG_CONTROL_SERVER"))
        o.client.controlServers = {partition.controlServerAddress()};
    o.kind = QStringLiteral("master");
    if (!applyCommonOptions(p, &o, false, &error))
        return fail(error);
    o.client.name = partition.master.name;
    if (!p.isSet(QStringLiteral("run-params-server")))
        o.runParamsServer = partition.runParamsServer;
    if (!p.isSet(QStringLiteral("is-types")) && !partition.isTypesDir.isEmpty())
        o.isTypesDir = partition.isTypesDir;
    QString runFile = p.value(QStringLiteral("run-number-file"));
    if (runFile.isEmpty())
        runFile = partition.runNumberFile;
    if (runFile.isEmpty())
        runFile = QStandardPaths::writableLocation(QStandardPaths::AppLocalDataLocation) + QLatin1Char('/') +
                  partition.name + QStringLiteral(".runnumber");

    dialog::quitOnTerminationSignals();
    Master master(o, partition, runFile);
    if (!master.client()->start())
        return fail(master.client()->errorString());
    dialog::installMessageHandler();
    dialog::startReporting(master.client());
    return app.exec();
}
