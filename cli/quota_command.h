// rpmpctl quota: per-prefix quotas, through the proxy leader (docs/cluster.md "Quotas"):
//   quota set PREFIX [--bytes SIZE] [--namespaces N]   set or replace (admin certificate)
//   quota rm PREFIX                                    remove (admin certificate)
//   quota ls                                           every quota with its use
// Exit status 0 ok, 1 refused or failed (one-line reason), 2 bad usage. Called from
// cluster_commands.cc on rpmpctl's main thread.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "proto/proxy_client.h"

namespace rpmp {

int RunQuotaCommand(ProxyClient& proxy, const std::vector<std::string>& words,
                    const std::map<std::string, std::string>& opts);

}  // namespace rpmp
