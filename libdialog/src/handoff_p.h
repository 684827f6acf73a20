// The thread hand-off helpers (dialog/handoff.h) under the net:: names, for the one file that still
// calls them so (clientcore.cpp); everything else, the daemons included, uses dialog/handoff.h.
// Goes once clientcore.cpp calls handoff::post().
#pragma once

#include "dialog/handoff.h"

namespace dialog::net {
using namespace dialog::handoff;
} // namespace dialog::net
