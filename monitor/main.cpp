// dialog-monitor: a monitoring consumer of event samples. It asks each readout (a sampler) for
// samples by --criteria and keeps, per readout, the event size, the per-channel occupancy and the
// 2D hit map as IS histograms (<is-server>.<readout>.eventSize / .occupancy / .hitMap); an IS
// server started with --sum adds them up over the farm.
#include "monitor.h"

#include "dialog/daemon.h"
#include "dialog/options.h"

using namespace Qt::StringLiterals;
using dialog::Option;
using dialog::OptionTable;

int main(int argc, char *argv[])
{
    dialog::DaemonApplication app(argc, argv, u"dialog-monitor"_s);
    OptionTable t(u"dialog-monitor"_s,
                  u"Turns event samples of readouts into IS histograms: for each --readout, the event size, "
                  "the hits per channel and the 2D hit map of its front-end, written every --publish-ms as "
                  "<is-server>.<readout>.eventSize, .occupancy and .hitMap (Histogram1D, Histogram2D). The "
                  "same binning for every readout, so that dialog-isserver --sum gives the farm's."_s);
    dialog::monitor::MonitorOptions o;
    QString name = u"Monitor"_s, criteria, readouts;
    qint64 publishMs = 1000, sizeBins = o.binning.sizeBins;
    double sizeMax = o.binning.sizeMax;
    dialog::ClientOptions co = dialog::ClientOptions::fromEnvironment();
    t.add({Option::list(u"readout"_s, u"name"_s,
                        u"A readout (sampler) to take samples from; repeatable, or names separated by commas. "
                        "Required."_s,
                        &o.readouts),
           Option::text(u"criteria"_s, u"text"_s,
                        u"Which samples (dialog::sampling criteria, e.g. \"every=100 trigger=physics\"; "
                        "default every=10)."_s,
                        &criteria),
           Option::text(u"is-server"_s, u"name"_s, u"IS server of the histograms (default Monitor)."_s,
                        &o.isServer),
           Option::duration(u"publish-ms"_s, u"ms"_s, u"How often the histograms are written (default 1000)."_s,
                            &publishMs, dialog::OptionUnit::Milliseconds, 50, 3600000),
           Option::integer(u"size-bins"_s, u"n"_s, u"Bins of the event size histogram (default 128)."_s,
                           &sizeBins, 1, 100000),
           Option::number(u"size-max"_s, u"bytes"_s,
                          u"Upper edge of the event size histogram (default 4096; larger events in the "
                          "last bin)."_s,
                          &sizeMax, 1, 1e12),
           Option::text(u"name"_s, u"name"_s, u"Process name (default Monitor)."_s, &name)});
    co.addTo(t);
    if (!t.process(app.arguments()))
        return 1;
    QStringList list;
    for (const QString &r : o.readouts)
        list += r.split(u',', Qt::SkipEmptyParts);
    o.readouts = list;
    if (o.readouts.isEmpty())
        return t.fail(u"--readout is required"_s);
    if (const dialog::Status st =
            dialog::sampling::Criteria::parse(criteria.isEmpty() ? u"every=10"_s : criteria, &o.criteria);
        !st.isOk())
        return t.fail(u"--criteria: "_s + st.message());
    if (!dialog::Client::isValidName(name))
        return t.fail(u"--name '%1' is not a valid process name"_s.arg(name));
    o.publishMs = int(publishMs);
    o.binning.sizeBins = int(sizeBins);
    o.binning.sizeMax = sizeMax;
    co.name = name;
    co.exitOnRefusal = true;

    app.beginService();
    dialog::Client client(co);
    dialog::monitor::Monitor monitor(&client, o);
    if (!client.start())
        return t.fail(client.errorString());
    monitor.start();
    app.serviceReady(&client);
    return app.exec();
}
