// Implementation of rpmpctl token issue (see token_issue_command.h).
#include "cli/token_issue_command.h"

#include <chrono>
#include <cstdio>
#include <ctime>

#include "cli/exit_codes.h"
#include "common/config_util.h"

namespace rpmp {

int RunTokenIssueCommand(ProxyClient& proxy, const std::vector<std::string>& w,
                         const std::map<std::string, std::string>& opts) {
  auto prefix = opts.find("--prefix");
  auto app = opts.find("--app");
  if (w.size() != 2 || w[1] != "issue" || prefix == opts.end() || app == opts.end())
    return cli::Bad("token issue needs --prefix P --app A [--ttl DURATION]");
  uint64_t ttl_seconds = 0;
  if (auto ttl = opts.find("--ttl"); ttl != opts.end()) {
    StatusOr<std::chrono::milliseconds> d = ParseDuration(ttl->second);
    if (!d.ok()) return cli::Bad("--ttl: " + d.status().message());
    if (d->count() < 1000) return cli::Bad("--ttl must be at least 1s");
    ttl_seconds = static_cast<uint64_t>(d->count() / 1000);
  }
  StatusOr<v1::Credential> c = proxy.IssueCredential(prefix->second, app->second, ttl_seconds);
  if (!c.ok()) return cli::Fail(c.status());
  std::printf("%s\n", c->token().c_str());
  std::time_t expiry = static_cast<std::time_t>(c->expiry_unix());
  char when[32];
  std::strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&expiry));
  std::fprintf(stderr, "credential for prefix %s (app %s) expires %s\n", c->prefix().c_str(), c->app().c_str(), when);
  return 0;
}

}  // namespace rpmp
