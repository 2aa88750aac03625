// rpmpctl token issue: a per-application credential from the proxy leader
// (docs/security.md "Tenants"):
//   token issue --prefix P --app A [--ttl DURATION]
// With an admin certificate any prefix ("*" too); with an application certificate a
// prefix nobody else holds, which it then claims until the credential expires. The
// token goes to stdout alone (put it in a private file for RPMP_TOKEN_FILE); prefix
// and expiry go to stderr. Exit status 0 ok, 1 refused or failed (one-line reason), 2
// bad usage. Called from cluster_commands.cc on rpmpctl's main thread.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "proto/proxy_client.h"

namespace rpmp {

int RunTokenIssueCommand(ProxyClient& proxy, const std::vector<std::string>& words,
                         const std::map<std::string, std::string>& opts);

}  // namespace rpmp
