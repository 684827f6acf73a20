// The parameters of the two kinds of slave: command-line options of dialog-slave, and the same
// options read from a slaves/ or readout/ document of the configuration database at configure.
#pragma once

#include "controlslave.h"
#include "readoutengine.h"

#include "dialog/options.h"

#include <QJsonObject>

namespace dialog::daq {

/// --registers, --configure-ms, --check-ms, --upset-every-s into @p c.
void addControlOptions(OptionTable &t, ControlSlaveConfig &c);
/// --threads, --block-events, --event-size, --spill-s, --off-s, --rate, --queue-blocks,
/// --output-dir, --corrupt-every into @p c.
void addReadoutOptions(OptionTable &t, ReadoutConfig &c);
/// Applies @p parameters (a parameter document's object: the option names with '_' for '-') onto
/// @p c with the options' bounds; BadRequest naming the option and its range (@p c unchanged).
Status applyParameters(const QJsonObject &parameters, ControlSlaveConfig *c);
///@copydoc applyParameters(const QJsonObject &, ControlSlaveConfig *)
Status applyParameters(const QJsonObject &parameters, ReadoutConfig *c);

} // namespace dialog::daq
