// dialog-slave: a run-control slave (front-end card supervisor or readout).
#include "controlslave.h"
#include "options.h"
#include "readoutslave.h"

#include "dialog/application.h"
#include "dialog/report.h"

#include <QCoreApplication>
#include <cstdio>
#include <memory>

using namespace dialog::daq;

int main(int argc, char *argv[])
{
    dialog::preferLowLatencyEventDispatcher();
    QCoreApplication app(argc, argv);
    QCoreApplication::setApplicationName(QStringLiteral("dialog-slave"));
    QCommandLineParser p;
    p.setApplicationDescription(QStringLiteral(
        "A run-control slave: follows the master's transitions (configure, start, pause, resume, stop, "
        "unconfigure, reset), publishes RunCtrl.<name>.State/.Log/.Status and its state and statistics to "
        "IS.\n"
        "  control: supervises a simulated front-end card (register map written on configure, checked "
        "periodically).\n"
        "  readout: a simulated multi-threaded readout (source with spill cycle, processing threads "
        "checking every event, bounded queues, optional output file)."));
    addCommonOptions(p, true);
    const auto opt = [&p](const char *name, const char *help, const char *value = nullptr,
                          const char *def = nullptr) {
        if (value)
            p.addOption({QString::fromLatin1(name), QString::fromLatin1(help), QString::fromLatin1(value),
                         def ? QString::fromLatin1(def) : QString()});
        else
            p.addOption({QString::fromLatin1(name), QString::fromLatin1(help)});
    };
    opt("kind", "control or readout.", "kind");
    opt("name", "Process name (unique in the DIALOG system).", "name");
    opt("daq-server", "IS server of the statistics objects DAQ.<name> (default DAQ).", "name", "DAQ");
    opt("registers", "control: size of the register map (default 16).", "n");
    opt("configure-ms", "control: time to write the register map (default 50).", "ms");
    opt("check-ms", "control: period of the register check (default 1000).", "ms");
    opt("upset-every-s", "control: flip a register bit this often, to show the check (default never).", "s");
    opt("threads", "readout: processing threads (default 10).", "n");
    opt("block-events", "readout: events per block (default 512).", "n");
    opt("event-size", "readout: mean event size in bytes (default 1024).", "bytes");
    opt("spill-s", "readout: spill duration (default 5).", "s");
    opt("off-s", "readout: time between spills (default 2; 0: continuous beam).", "s");
    opt("rate", "readout: event rate during the spill (default 0: as fast as possible).", "hz");
    opt("queue-blocks", "readout: capacity of each queue in blocks (default 32).", "n");
    opt("output-dir", "readout: write the events of each run to DIR/run<N>_<name>.raw.", "dir");
    opt("corrupt-every", "readout, for tests: corrupt one event in N (default 0: never).", "n");
    p.process(app);

    auto fail = [](const QString &why) {
        std::fprintf(stderr, "dialog-slave: %s\n", qPrintable(why));
        return 1;
    };
    if (!p.positionalArguments().isEmpty())
        return fail(
            QStringLiteral("unexpected argument '%1' (see --help)").arg(p.positionalArguments().first()));
    const QString kind = p.value(QStringLiteral("kind"));
    if (kind != QLatin1String("control") && kind != QLatin1String("readout"))
        return fail(kind.isEmpty()
                        ? QStringLiteral("--kind is required (control or readout)")
                        : QStringLiteral("invalid --kind '%1' (expected control or readout)").arg(kind));
    const QString name = p.value(QStringLiteral("name"));
    if (name.isEmpty() || !dialog::Client::isValidName(name))
        return fail(QStringLiteral("--name is required"));

    ControllableOptions o;
    o.client = dialog::ClientOptions::fromEnvironment(name);
    o.client.exitOnRefusal = true; // a second slave of that name must not run
    o.kind = kind;
    QString error;
    if (!applyCommonOptions(p, &o, true, &error) || !armCrash(p, &error))
        return fail(error);
    const QString daq = p.value(QStringLiteral("daq-server"));

    dialog::quitOnTerminationSignals();
    std::unique_ptr<Controllable> slave;
    double v = 0;
    if (kind == QLatin1String("control")) {
        for (const char *readoutOnly : {"threads", "block-events", "event-size", "spill-s", "off-s", "rate",
                                        "queue-blocks", "output-dir", "corrupt-every"})
            if (p.isSet(QString::fromLatin1(readoutOnly)))
                return fail(
                    QStringLiteral("--%1 applies to --kind readout only").arg(QLatin1String(readoutOnly)));
        ControlSlaveConfig c;
        if (!numberOption(p, QStringLiteral("registers"), 1, 65536, &(v = c.registers), &error))
            return fail(error);
        c.registers = int(v);
        if (!numberOption(p, QStringLiteral("configure-ms"), 0, 600000, &(v = c.configureMs), &error))
            return fail(error);
        c.configureMs = int(v);
        if (!numberOption(p, QStringLiteral("check-ms"), 10, 600000, &(v = c.checkMs), &error))
            return fail(error);
        c.checkMs = int(v);
        if (!numberOption(p, QStringLiteral("upset-every-s"), 0, 86400, &c.upsetEveryS, &error))
            return fail(error);
        slave = std::make_unique<ControlSlave>(o, c, daq);
    } else {
        for (const char *controlOnly : {"registers", "configure-ms", "check-ms", "upset-every-s"})
            if (p.isSet(QString::fromLatin1(controlOnly)))
                return fail(
                    QStringLiteral("--%1 applies to --kind control only").arg(QLatin1String(controlOnly)));
        ReadoutConfig c;
        struct Int
        {
            const char *name;
            int *value;
            double min, max;
        };
        for (const Int &i :
             {Int{"threads", &c.threads, 1, 256}, Int{"block-events", &c.blockEvents, 1, 1 << 20},
              Int{"event-size", &c.eventSize, 64, 16 << 20},
              Int{"queue-blocks", &c.queueBlocks, 1, 1 << 16}}) {
            v = *i.value;
            if (!numberOption(p, QString::fromLatin1(i.name), i.min, i.max, &v, &error))
                return fail(error);
            *i.value = int(v);
        }
        if (!numberOption(p, QStringLiteral("spill-s"), 0.01, 3600, &c.spillS, &error) ||
            !numberOption(p, QStringLiteral("off-s"), 0, 3600, &c.offS, &error))
            return fail(error);
        v = 0;
        if (!numberOption(p, QStringLiteral("rate"), 0, 1e9, &v, &error))
            return fail(error);
        c.rateHz = qint64(v);
        v = 0;
        if (!numberOption(p, QStringLiteral("corrupt-every"), 0, 1e12, &v, &error))
            return fail(error);
        c.corruptEvery = qint64(v);
        c.outputDir = p.value(QStringLiteral("output-dir"));
        slave = std::make_unique<ReadoutSlave>(o, c, daq);
    }
    if (!slave->client()->start())
        return fail(slave->client()->errorString());
    dialog::installMessageHandler();
    dialog::startReporting(slave->client());
    return app.exec();
}
