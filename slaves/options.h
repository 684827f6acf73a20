// Command-line options shared by dialog-slave and dialog-master.
#pragma once

#include "controllable.h"

#include "dialog/options.h"

namespace dialog::daq {

/// Adds --is-types, --run-params-server, --no-is and the DIALOG client options to @p table, written
/// to @p o when it parses (set o->client from the environment first). With @p crashAfterS (the
/// misbehaviour of slaves for tests) also --fail-on, --hang-on and --crash-after-s.
void addCommonOptions(dialog::OptionTable &table, ControllableOptions *o, double *crashAfterS = nullptr);
/// --crash-after-s: the process kills itself with SIGKILL @p seconds from now (a crash without a
/// core file); nothing when @p seconds is 0.
void armCrash(double seconds);
/// Where the IS types are by default (the source tree's resources/is-types).
QString defaultIsTypesDir();

} // namespace dialog::daq
