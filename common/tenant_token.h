// Tenant tokens: per-application credentials of the data plane (docs/security.md,
// "Tenants"). A token binds a namespace prefix and an application name to an expiry,
// under a key derived from the cluster secret, so any server holding the secret
// checks it offline:
//
//   K     = HKDF-SHA256(IKM = cluster secret, salt = "", info = "rpmp tenant tokens", 32)
//   MAC   = HMAC-SHA256(K, "rpmp-token-v1" \0 PREFIX \0 APP \0 EXPIRY)
//   token = "v1." b64url(PREFIX) "." b64url(APP) "." EXPIRY "." hex(MAC)
//
// (base64url without padding, EXPIRY decimal unix seconds, hex lowercase.) The Go proxy
// mints the same bytes. The public part (everything before ".MAC") travels in HELLO;
// the MAC never does: the client proves with it as the HMAC key (common/auth.h).
//
// Thread-safe, no shared state. Who calls it: server/ (checks), client-cpp/ (HELLO),
// cli/ (rpmpctl token mint).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"

namespace rpmp::tenant {

// The environment variable clients read a token file's path from.
constexpr const char* kTokenFileEnv = "RPMP_TOKEN_FILE";
// The prefix of an admin token: every namespace.
constexpr std::string_view kAllPrefix = "*";
constexpr int64_t kSkewSeconds = 60;  // an expired token is accepted this much longer
constexpr size_t kMacSize = 32;
constexpr size_t kMaxField = 255;     // prefix and app, in bytes (a namespace's limit)

struct Token {
  std::string prefix, app;
  int64_t expiry = 0;  // unix seconds
  std::string mac;     // kMacSize raw bytes; empty when parsed from a public part
};

// K from the cluster secret (kMacSize bytes).
std::string DeriveKey(std::string_view secret);
// MAC of the token's fields under K (kMacSize raw bytes).
std::string Mac(std::string_view key, std::string_view prefix, std::string_view app, int64_t expiry);
// The token string; InvalidArgument for an empty or overlong prefix or app, or expiry <= 0.
StatusOr<std::string> Mint(std::string_view secret, std::string_view prefix, std::string_view app,
                           int64_t expiry);
// A full token ("v1.P.A.E.MAC") or its public part ("v1.P.A.E"; then mac is empty).
// InvalidArgument, saying which field, for anything else (non-canonical base64 too).
StatusOr<Token> Parse(std::string_view text);
// "v1.P.A.E" of a token.
std::string PublicPart(const Token& t);
// PermissionDenied when `now` (unix seconds) is past expiry + kSkewSeconds.
Status CheckExpiry(const Token& t, int64_t now);
// Full check of a full token: the MAC (constant-time) under K, then the expiry.
Status Verify(std::string_view key, const Token& t, int64_t now);
// Whether a credential for `prefix` may act on namespace `ns`: ns starts with prefix,
// or ns + "/" == prefix; "*" authorizes all. An empty prefix authorizes nothing.
bool Authorizes(std::string_view prefix, std::string_view ns);
// Unix seconds now.
int64_t NowUnix();

// Reads a token file (same rules as the secret file: private, trailing whitespace
// dropped) and parses it as a full token.
StatusOr<std::string> LoadTokenFile(const std::string& path);
// The token named by $RPMP_TOKEN_FILE, or "" when the variable is unset/empty.
StatusOr<std::string> TokenFromEnvironment();

}  // namespace rpmp::tenant
