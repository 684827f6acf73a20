// Files into configuration documents, for `dialogctl config import` and `validate`.
#pragma once

#include "dialog/config.h"

namespace dialog::tool {

/// The documents of @p paths: partition files (partitions/NAME, NAME from the file; the slave
/// parameters among each slave's args become slaves/NAME or readout/NAME documents, and the
/// is_types_dir goes: the types are is-types/ documents), IS type files (is-types/BASENAME) and
/// directories laid out as resources/ (partitions/, is-types/, slaves/, readout/, segments/,
/// access/). False with the file and the reason when one cannot be read or is not understood.
bool importDocuments(const QStringList &paths, QList<config::Change> *out, QString *error);

} // namespace dialog::tool
