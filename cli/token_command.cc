// rpmpctl token mint (see token_command.h).
#include "cli/token_command.h"

#include <cstdio>

#include "cli/exit_codes.h"
#include "common/auth.h"
#include "common/config_util.h"
#include "common/tenant_token.h"

namespace rpmp {

int RunTokenCommand(const std::vector<std::string>& words,
                    const std::map<std::string, std::string>& opts) {
  if (words.size() != 2 || words[1] != "mint")
    return cli::Bad("usage: rpmpctl token mint --prefix P --app A [--ttl DURATION]");
  auto prefix = opts.find("--prefix"), app = opts.find("--app"), ttl = opts.find("--ttl");
  if (prefix == opts.end() || app == opts.end())
    return cli::Bad("token mint needs --prefix P and --app A");
  if (prefix->second.empty() || app->second.empty())
    return cli::Bad("token mint: --prefix and --app must not be empty");
  std::chrono::seconds life(24 * 3600);
  if (ttl != opts.end()) {
    StatusOr<std::chrono::milliseconds> d = ParseDuration(ttl->second);
    if (!d.ok()) return cli::Bad("--ttl: " + d.status().message());
    life = std::chrono::duration_cast<std::chrono::seconds>(*d);
    if (life.count() <= 0) return cli::Bad("--ttl must be at least 1s");
  }
  StatusOr<std::string> secret = auth::SecretFromEnvironment();
  if (!secret.ok()) return cli::Fail(secret.status());
  if (secret->empty())
    return cli::Fail(Status::InvalidArgument(
        std::string("token mint needs the cluster secret: set ") + auth::kSecretFileEnv));
  StatusOr<std::string> token =
      tenant::Mint(*secret, prefix->second, app->second, tenant::NowUnix() + life.count());
  if (!token.ok()) return cli::Bad(token.status().message());
  std::printf("%s\n", token->c_str());
  return std::fflush(stdout) == 0 ? 0 : cli::Fail(Status::IOError("stdout"));
}

}  // namespace rpmp
