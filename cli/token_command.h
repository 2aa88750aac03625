// rpmpctl token: tenant tokens (docs/security.md "Tenants"):
//   token mint --prefix P --app A [--ttl DURATION]   print a token for namespaces under P
// Needs the cluster secret (RPMP_SECRET_FILE), like a server; talks to nobody. The
// token goes to stdout; give it to the application in a private file (RPMP_TOKEN_FILE).
// Exit status 0 ok, 1 failed (one-line reason), 2 bad usage. Called from rpmpctl.cc.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace rpmp {

int RunTokenCommand(const std::vector<std::string>& words,
                    const std::map<std::string, std::string>& opts);

}  // namespace rpmp
