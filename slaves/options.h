// Command-line options shared by dialog-slave and dialog-master.
#pragma once

#include "controllable.h"

#include <QCommandLineParser>

namespace dialog::daq {

/// Adds --fail-on, --hang-on, --crash-after-s, --is-types, --run-params-server, --no-is and the
/// DIALOG client options.
void addCommonOptions(QCommandLineParser &p, bool misbehaviour);
/// Fills @p o from the parsed options; false with @p error on a bad value.
bool applyCommonOptions(const QCommandLineParser &p, ControllableOptions *o, bool misbehaviour,
                        QString *error);
/// Arms --crash-after-s: the process kills itself with SIGKILL after that long (a crash without a
/// core file). False with @p error on a bad value.
bool armCrash(const QCommandLineParser &p, QString *error);
/// Reads a number option in [min, max]; false with @p error if not.
bool numberOption(const QCommandLineParser &p, const QString &name, double min, double max, double *out,
                  QString *error);
/// Where the IS types are by default (the source tree's resources/is-types).
QString defaultIsTypesDir();

} // namespace dialog::daq
