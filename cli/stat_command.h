// rpmpctl stat: statistics of one server (--server) or of a whole cluster (proxies).
// A cluster prints its totals first (the sum of the nodes that answered), then one line
// per node of the node map. Output on stdout, a one-line reason on stderr. Called from
// rpmpctl.cc's main thread.
#pragma once

#include "rpmp/client.h"

namespace rpmp {

// Returns the exit status (0 ok, 1 failed).
int RunStat(Client& c);

}  // namespace rpmp
