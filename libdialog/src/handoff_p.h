// The thread hand-off helpers (dialog/handoff.h) under the net:: names the library's own network
// code calls them by (net::post, net::handOff, …): one implementation for the library and its users.
#pragma once

#include "dialog/handoff.h"

namespace dialog::net {
using namespace dialog::handoff;
} // namespace dialog::net
