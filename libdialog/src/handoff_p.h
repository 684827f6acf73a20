// The thread hand-off helpers (dialog/handoff.h) under the names the library's own network code
// has always used (net::post, net::handOff, …), so that it and the public facility are one code.
#pragma once

#include <dialog/handoff.h>

namespace dialog::net {
using namespace dialog::handoff;
} // namespace dialog::net
