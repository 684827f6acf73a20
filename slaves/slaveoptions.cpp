#include "slaveoptions.h"

#include "dialog/rc/slave.h"

#include <QJsonDocument>

using namespace Qt::StringLiterals;

namespace dialog::daq {

namespace {

constexpr auto Seconds = OptionUnit::Seconds;
constexpr auto Milliseconds = OptionUnit::Milliseconds;

} // namespace

void addControlOptions(OptionTable &t, ControlSlaveConfig &c)
{
    t.add(
        {Option::integer(u"registers"_s, u"n"_s, u"control: size of the register map (default 16)."_s,
                         &c.registers, 1, 65536),
         Option::duration(u"configure-ms"_s, u"ms"_s,
                          u"control: time to write the register map (default 50)."_s, &c.configureMs,
                          Milliseconds, 0, 600000),
         Option::duration(u"check-ms"_s, u"ms"_s, u"control: period of the register check (default 1000)."_s,
                          &c.checkMs, Milliseconds, 10, 600000),
         Option::number(u"upset-every-s"_s, u"s"_s,
                        u"control: flip a register bit this often, to show the check (default never)."_s,
                        &c.upsetEveryS, 0, 86400, Seconds)});
}

void addReadoutOptions(OptionTable &t, ReadoutConfig &c)
{
    t.add({Option::integer(u"threads"_s, u"n"_s, u"readout: processing threads (default 10)."_s, &c.threads,
                           1, 256),
           Option::integer(u"block-events"_s, u"n"_s, u"readout: events per block (default 512)."_s,
                           &c.blockEvents, 1, 1 << 20),
           Option::size(u"event-size"_s, u"bytes"_s, u"readout: mean event size in bytes (default 1024)."_s,
                        &c.eventSize, 64, 16 << 20),
           Option::number(u"spill-s"_s, u"s"_s, u"readout: spill duration (default 5)."_s, &c.spillS, 0.01,
                          3600, Seconds),
           Option::number(u"off-s"_s, u"s"_s,
                          u"readout: time between spills (default 2; 0: continuous beam)."_s, &c.offS, 0,
                          3600, Seconds),
           Option::integer(u"rate"_s, u"hz"_s,
                           u"readout: event rate during the spill (default 0: as fast as possible)."_s,
                           &c.rateHz, 0, 1000000000),
           Option::integer(u"queue-blocks"_s, u"n"_s,
                           u"readout: capacity of each queue in blocks (default 32)."_s, &c.queueBlocks, 1,
                           1 << 16),
           Option::text(u"output-dir"_s, u"dir"_s,
                        u"readout: write the events of each run to DIR/run<N>_<name>.raw."_s, &c.outputDir),
           Option::integer(u"corrupt-every"_s, u"n"_s,
                           u"readout, for tests: corrupt one event in N (default 0: never)."_s,
                           &c.corruptEvery, 0, 1000000000000LL),
           Option::text(u"dead-channels"_s, u"list"_s,
                        u"readout, for tests: front-end channels (0..255, \"17,42\") that never fire."_s,
                        &c.deadChannels)});
}

Status applyParameters(const QJsonObject &parameters, ControlSlaveConfig *c)
{
    return rc::applyParameters(parameters, c, addControlOptions);
}

Status applyParameters(const QJsonObject &parameters, ReadoutConfig *c)
{
    return rc::applyParameters(parameters, c, addReadoutOptions);
}

} // namespace dialog::daq
