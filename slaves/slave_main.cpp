// dialog-slave: a run-control slave (front-end card supervisor or readout).
#include "controlslave.h"
#include "readoutslave.h"
#include "slaveoptions.h"

#include "dialog/daemon.h"
#include "dialog/rc/slave.h"

#include <memory>

using namespace dialog::daq;
using namespace Qt::StringLiterals;
using dialog::Option;
using dialog::OptionTable;
using dialog::OptionUnit;

namespace {

const QStringList controlOnly = {u"registers"_s, u"configure-ms"_s, u"check-ms"_s, u"upset-every-s"_s};
const QStringList readoutOnly = {u"threads"_s,      u"block-events"_s, u"event-size"_s,
                                 u"spill-s"_s,      u"off-s"_s,        u"rate"_s,
                                 u"queue-blocks"_s, u"output-dir"_s,   u"corrupt-every"_s,
                                 u"dead-channels"_s};

// An option of the other kind given: its name, or empty.
QString otherKindOption(const OptionTable &t, const QString &kind)
{
    for (const QString &name : kind == QLatin1String("control") ? readoutOnly : controlOnly)
        if (t.isSet(name))
            return name;
    return QString();
}

} // namespace

int main(int argc, char *argv[])
{
    dialog::DaemonApplication app(argc, argv, u"dialog-slave"_s);
    OptionTable t(
        u"dialog-slave"_s,
        u"A run-control slave: follows the master's transitions (configure, start, pause, resume, stop, "
        "unconfigure, reset), publishes RunCtrl.<name>.State/.Log/.Status and its state and statistics to "
        "IS.\n"
        "  control: supervises a simulated front-end card (register map written on configure, checked "
        "periodically).\n"
        "  readout: a simulated multi-threaded readout (source with spill cycle, processing threads checking "
        "every event, bounded queues, optional output file)."_s);
    dialog::rc::SlaveOptions o;
    o.client = dialog::ClientOptions::fromEnvironment();
    o.client.exitOnRefusal = true; // a second slave of that name must not run
    ControlSlaveConfig control;
    ReadoutConfig readout;
    dialog::rc::addCommonOptions(t, &o);
    dialog::rc::addSlaveOptions(t, &o);
    t.add(Option::choice(u"kind"_s, u"kind"_s, u"control or readout."_s, &o.kind, {u"control"_s, u"readout"_s}));
    addControlOptions(t, control);
    addReadoutOptions(t, readout);
    if (!t.process(app.arguments()))
        return 1;
    if (o.kind.isEmpty())
        return t.fail(u"--kind is required (control or readout)"_s);
    if (o.client.name.isEmpty() || !dialog::Client::isValidName(o.client.name))
        return t.fail(u"--name is required"_s);
    if (const QString other = otherKindOption(t, o.kind); !other.isEmpty())
        return t.fail(u"--%1 applies to --kind %2 only"_s.arg(
            other, o.kind == QLatin1String("control") ? u"readout"_s : u"control"_s));
    if (QString why; !event::parseChannels(readout.deadChannels, nullptr, &why))
        return t.fail(u"--dead-channels: "_s + why);
    dialog::rc::armCrash(o.crashAfterS);

    app.beginService();
    std::unique_ptr<dialog::rc::Slave> slave;
    if (o.kind == QLatin1String("control"))
        slave = std::make_unique<ControlSlave>(o, control, o.daqServer);
    else
        slave = std::make_unique<ReadoutSlave>(o, readout, o.daqServer);
    if (!slave->client()->start())
        return t.fail(slave->client()->errorString());
    app.serviceReady(slave->client());
    return app.exec();
}
