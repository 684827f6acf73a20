// Internal to the partition parser: the checks of the run-control tree (partitiontree.cpp).
#pragma once

#include "dialog/rc/partition.h"

namespace dialog::rc {

/// Checks the run-control tree of @p p (every reference names a slave or segment of the partition,
/// each node has one parent, no segment contains itself) and orders p->tree parents first. False
/// with the offending @p field ("segments[1].slaves") and @p why otherwise.
bool checkTree(Partition *p, QString *field, QString *why);

} // namespace dialog::rc
