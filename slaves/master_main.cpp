// dialog-master: the run-control master of a partition.
#include "master.h"
#include "dialog/rc/slave.h"

#include "dialog/daemon.h"

#include <QStandardPaths>

using namespace dialog::daq;
using namespace Qt::StringLiterals;
using dialog::Option;
using dialog::OptionTable;
using dialog::OptionUnit;

int main(int argc, char *argv[])
{
    dialog::DaemonApplication app(argc, argv, u"dialog-master"_s);
    OptionTable t(
        u"dialog-master"_s,
        u"The run-control master: reads a partition, drives its slaves through the transitions it is "
        "asked for (command RunCtrl.<name>.Command or a request on RunCtrl.<name>.State), publishes the "
        "aggregated state, owns the run number and publishes RunParams.RunInfo."_s);
    dialog::rc::SlaveOptions o;
    o.client = dialog::ClientOptions::fromEnvironment();
    o.client.exitOnRefusal = true; // a second master of the partition must not run
    o.kind = u"master"_s;
    QString config, runFile, configdb, configRef = u"head"_s, segment;
    dialog::rc::addCommonOptions(t, &o);
    dialog::AccessOptions::addParserOptions(t.parser());
    t.add({Option::text(u"config"_s, u"file"_s, u"Partition file (JSON)."_s, &config),
           Option::text(
               u"run-number-file"_s, u"file"_s,
               u"Where the last run number is kept (default: the partition's run_number_file, else the "
               "user's data directory)."_s,
               &runFile),
           Option::text(
               u"configdb"_s, u"name"_s,
               u"Take the slaves' parameters at every configure from the configuration database served as "
               "CONFIG.<name> (dialog-configdb), and run numbers from its run registry, which records every "
               "run (default: no database; run numbers from the run-number file). A segment controller "
               "takes its slaves' parameters only: the master numbers and records the runs."_s,
               &configdb),
           Option::text(
               u"segment"_s, u"name"_s,
               u"Be the controller of this segment of the partition's run-control tree (a \"segments\" "
               "object): drive its slaves and sub-segments for the controller above it (default: the "
               "partition's master, the root of the tree)."_s,
               &segment),
           Option::text(
               u"config-ref"_s, u"ref"_s,
               u"With --configdb: the version configured, a tag or a number, resolved at every configure "
               "(default head: the newest)."_s,
               &configRef)});
    if (!t.process(app.arguments()))
        return 1;
    if (config.isEmpty())
        return t.fail(u"--config PARTITION.json is required"_s);
    if (const dialog::Status st = o.access.applyParser(t.parser()); !st.isOk())
        return t.fail(st.message());
    dialog::rc::Partition partition;
    if (const dialog::Status st = dialog::rc::Partition::load(config, &partition); !st.isOk())
        return t.fail(st.message());
    o.client.name = partition.master.name;
    if (!segment.isEmpty()) {
        if (!partition.segment(segment))
            return t.fail(
                u"--segment %1: the partition %2 has no such segment"_s.arg(segment, partition.name));
        o.client.name = segment;
        o.kind = u"segment"_s; // with --configdb: its slaves' parameters; the master numbers the runs
        // Driven by its parent alone, as a slave is; its owner drives it through the parent.
        if (!t.isSet(u"master"_s))
            o.master = partition.parentOf(segment);
    }
    // The partition names the Control Server; $DIALOG_CONTROL_SERVER (set by `dialogctl up`, which may
    // override the port) and --control-server take precedence.
    if (qEnvironmentVariableIsEmpty("DIALOG_CONTROL_SERVER") && !t.isSet(u"control-server"_s))
        o.client.controlServers = partition.controlServerAddresses();
    if (!t.isSet(u"run-params-server"_s))
        o.runParamsServer = partition.runParamsServer;
    if (!t.isSet(u"is-types"_s) && !partition.isTypesDir.isEmpty())
        o.isTypesDir = partition.isTypesDir;
    // A segment keeps the number of its parent's run beside the master's file, for a takeover.
    const QString suffix = segment.isEmpty() ? QString() : u"."_s + segment;
    if (runFile.isEmpty() && !partition.runNumberFile.isEmpty())
        runFile = partition.runNumberFile + suffix;
    if (runFile.isEmpty())
        runFile = QStandardPaths::writableLocation(QStandardPaths::AppLocalDataLocation) + QLatin1Char('/') +
                  partition.name + suffix + u".runnumber"_s;

    app.beginService();
    Master master(o, partition, runFile, configdb, configRef);
    if (const dialog::Status st = master.openAccess(); !st.isOk())
        return t.fail(st.message());
    if (!master.client()->start())
        return t.fail(master.client()->errorString());
    app.serviceReady(master.client());
    return app.exec();
}
