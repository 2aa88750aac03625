// Implementation of rpmpctl quota (see quota_command.h).
#include "cli/exit_codes.h"
#include "cli/quota_command.h"

#include <cinttypes>
#include <cstdio>
#include <cstdlib>

#include "common/config_util.h"

namespace rpmp {
namespace {

using cli::Bad;
using cli::Fail;

// "used of max" for one dimension, "-" for no limit.
std::string Limit(uint64_t max, const std::string& max_text) { return max == 0 ? "-" : max_text; }

// One line per quota: PREFIX BYTES (use/quota) NAMESPACES (use/quota) STATE SESSIONS
// (the per-server session quota; its use is per server: rpmp_server_sessions metrics).
void PrintQuota(const v1::Quota& q) {
  bool over_bytes = q.max_bytes() > 0 && q.used_bytes() >= q.max_bytes();
  bool full_ns = q.max_namespaces() > 0 && q.namespaces() >= q.max_namespaces();
  std::string bytes = HumanBytes(q.used_bytes()) + " / " + Limit(q.max_bytes(), HumanBytes(q.max_bytes()));
  std::string ns = std::to_string(q.namespaces()) + " / " +
                   Limit(q.max_namespaces(), std::to_string(q.max_namespaces()));
  std::string sessions = Limit(q.max_sessions(), std::to_string(q.max_sessions()) + "/server");
  std::printf("%-32s  %-24s  %-16s  %-15s  %s\n", q.prefix().c_str(), bytes.c_str(), ns.c_str(),
              over_bytes ? "OVER_BYTES" : full_ns ? "FULL_NAMESPACES" : "OK", sessions.c_str());
}

void PrintHeader() {
  std::printf("%-32s  %-24s  %-16s  %-15s  %s\n", "PREFIX", "BYTES(USED/QUOTA)", "NAMESPACES", "STATE", "SESSIONS");
}

int Set(ProxyClient& proxy, const std::string& prefix, const std::map<std::string, std::string>& opts) {
  uint64_t bytes = 0, namespaces = 0;
  uint32_t sessions = 0;
  if (auto it = opts.find("--bytes"); it != opts.end()) {
    StatusOr<uint64_t> b = ParseSize(it->second);
    if (!b.ok()) return Bad("--bytes: " + b.status().message());
    if (*b == 0) return Bad("--bytes must be above 0 (quota rm removes a quota)");
    bytes = *b;
  }
  if (auto it = opts.find("--namespaces"); it != opts.end()) {
    char* end = nullptr;
    unsigned long long n = std::strtoull(it->second.c_str(), &end, 10);
    if (it->second.empty() || *end != '\0' || it->second[0] == '-' || n == 0)
      return Bad("--namespaces '" + it->second + "' is not a number above 0");
    namespaces = n;
  }
  if (auto it = opts.find("--sessions"); it != opts.end()) {
    char* end = nullptr;
    unsigned long long n = std::strtoull(it->second.c_str(), &end, 10);
    if (it->second.empty() || *end != '\0' || it->second[0] == '-' || n == 0 || n > UINT32_MAX)
      return Bad("--sessions '" + it->second + "' is not a number from 1 to " + std::to_string(UINT32_MAX));
    sessions = static_cast<uint32_t>(n);
  }
  if (bytes == 0 && namespaces == 0 && sessions == 0)
    return Bad("quota set needs --bytes SIZE, --namespaces N and/or --sessions N");
  StatusOr<v1::Quota> q = proxy.SetQuota(prefix, bytes, namespaces, sessions);
  if (!q.ok()) return Fail(q.status());
  PrintHeader();
  PrintQuota(*q);
  return 0;
}

}  // namespace

int RunQuotaCommand(ProxyClient& proxy, const std::vector<std::string>& w,
                    const std::map<std::string, std::string>& opts) {
  if (w.size() == 3 && w[1] == "set") return Set(proxy, w[2], opts);
  if (w.size() == 3 && w[1] == "rm") {
    StatusOr<v1::ClearQuotaReply> r = proxy.ClearQuota(w[2]);
    if (!r.ok()) return Fail(r.status());
    std::printf("removed quota of %s\n", r->quota().prefix().c_str());
    return 0;
  }
  if (w.size() == 2 && w[1] == "ls") {
    StatusOr<v1::ListQuotasReply> l = proxy.ListQuotas();
    if (!l.ok()) return Fail(l.status());
    PrintHeader();
    for (const v1::Quota& q : l->quotas()) PrintQuota(q);
    return 0;
  }
  return Bad("quota needs: set PREFIX [--bytes SIZE] [--namespaces N] [--sessions N] | rm PREFIX | ls");
}

}  // namespace rpmp
