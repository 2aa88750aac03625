// rpmpctl's cluster commands, which talk to rpmp-proxy only (never to a server):
//   nodes                                      the node map and the leader
//   nodes rm NODE_ID                           remove a DEAD node (admin certificate)
//   ns create NAME [--replicas R] [--min-replicas M] [--ttl DURATION]
//   ns ls [PREFIX] | ns show NAME | ns rm NAME [--recursive]
//   drain NODE_ID [--cancel]
//   quota set|rm|ls ...                        per-prefix quotas (quota_command.h)
// Output on stdout, one-line reasons on stderr. Called from rpmpctl.cc's main thread.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace rpmp {

bool IsClusterCommand(const std::string& cmd);
// Returns the exit status (0 ok, 1 failed, 2 bad usage).
int RunClusterCommand(const std::vector<std::string>& proxies, const std::vector<std::string>& words,
                      const std::map<std::string, std::string>& opts);

}  // namespace rpmp
