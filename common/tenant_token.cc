// Tenant tokens (see tenant_token.h): HKDF and HMAC from OpenSSL's libcrypto, base64
// by EVP_EncodeBlock with the URL alphabet swapped in.
#include "common/tenant_token.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/kdf.h>

#include <chrono>
#include <cstdlib>

#include "common/auth.h"

namespace rpmp::tenant {
namespace {

constexpr std::string_view kVersion = "v1";
constexpr std::string_view kInfo = "rpmp tenant tokens";
constexpr std::string_view kMacLabel = "rpmp-token-v1";

std::string B64Url(std::string_view in) {
  std::string out(4 * ((in.size() + 2) / 3) + 1, '\0');
  int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(in.data()), static_cast<int>(in.size()));
  out.resize(static_cast<size_t>(n));
  while (!out.empty() && out.back() == '=') out.pop_back();
  for (char& c : out) c = c == '+' ? '-' : c == '/' ? '_' : c;
  return out;
}

// Only the canonical encoding of some bytes is accepted (so each token has one spelling).
bool FromB64Url(std::string_view in, std::string* out) {
  if (in.size() % 4 == 1) return false;
  std::string std_b64(in);
  for (char& c : std_b64) {
    if (c == '+' || c == '/' || c == '=') return false;
    c = c == '-' ? '+' : c == '_' ? '/' : c;
  }
  size_t pad = (4 - std_b64.size() % 4) % 4;
  std_b64.append(pad, '=');
  std::string bytes(std_b64.size() / 4 * 3, '\0');
  int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(bytes.data()),
                          reinterpret_cast<const unsigned char*>(std_b64.data()),
                          static_cast<int>(std_b64.size()));
  if (n < 0 || static_cast<size_t>(n) < pad) return false;
  bytes.resize(static_cast<size_t>(n) - pad);
  if (B64Url(bytes) != in) return false;
  *out = std::move(bytes);
  return true;
}

std::string Hex(std::string_view b) {
  static const char* kDigits = "0123456789abcdef";
  std::string out;
  for (unsigned char c : b) {
    out += kDigits[c >> 4];
    out += kDigits[c & 15];
  }
  return out;
}

bool FromHex(std::string_view h, std::string* out) {
  if (h.size() % 2 != 0) return false;
  auto val = [](char c) { return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1; };
  out->clear();
  for (size_t i = 0; i < h.size(); i += 2) {
    int hi = val(h[i]), lo = val(h[i + 1]);
    if (hi < 0 || lo < 0) return false;
    out->push_back(static_cast<char>(hi * 16 + lo));
  }
  return true;
}

Status Bad(const std::string& why) { return Status::InvalidArgument("malformed tenant token: " + why); }

Status CheckFields(std::string_view prefix, std::string_view app, int64_t expiry) {
  if (prefix.empty()) return Bad("empty prefix");
  if (prefix.size() > kMaxField) return Bad("prefix longer than 255 bytes");
  if (app.empty()) return Bad("empty application name");
  if (app.size() > kMaxField) return Bad("application name longer than 255 bytes");
  if (expiry <= 0) return Bad("expiry must be positive unix seconds");
  return Status::Ok();
}

}  // namespace

std::string DeriveKey(std::string_view secret) {
  std::string key(kMacSize, '\0');
  size_t len = key.size();
  EVP_PKEY_CTX* ctx = EVP_PKEY_CTX_new_id(EVP_PKEY_HKDF, nullptr);
  bool ok = ctx != nullptr && EVP_PKEY_derive_init(ctx) > 0 &&
            EVP_PKEY_CTX_set_hkdf_md(ctx, EVP_sha256()) > 0 &&
            EVP_PKEY_CTX_set1_hkdf_key(ctx, reinterpret_cast<const unsigned char*>(secret.data()),
                                       static_cast<int>(secret.size())) > 0 &&
            EVP_PKEY_CTX_add1_hkdf_info(ctx, reinterpret_cast<const unsigned char*>(kInfo.data()),
                                        static_cast<int>(kInfo.size())) > 0 &&
            EVP_PKEY_derive(ctx, reinterpret_cast<unsigned char*>(key.data()), &len) > 0 &&
            len == kMacSize;
  EVP_PKEY_CTX_free(ctx);
  if (!ok) std::abort();  // libcrypto without HKDF: never fall back to a weaker key
  return key;
}

std::string Mac(std::string_view key, std::string_view prefix, std::string_view app, int64_t expiry) {
  std::string m(kMacLabel);
  m += '\0';
  m += prefix;
  m += '\0';
  m += app;
  m += '\0';
  m += std::to_string(expiry);
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(m.data()), m.size(), out, &len);
  return std::string(reinterpret_cast<char*>(out), len);
}

std::string PublicPart(const Token& t) {
  return std::string(kVersion) + "." + B64Url(t.prefix) + "." + B64Url(t.app) + "." +
         std::to_string(t.expiry);
}

StatusOr<std::string> Mint(std::string_view secret, std::string_view prefix, std::string_view app,
                           int64_t expiry) {
  RPMP_RETURN_IF_ERROR(CheckFields(prefix, app, expiry));
  Token t{std::string(prefix), std::string(app), expiry, {}};
  return PublicPart(t) + "." + Hex(Mac(DeriveKey(secret), prefix, app, expiry));
}

StatusOr<Token> Parse(std::string_view text) {
  std::string_view parts[5];
  size_t n = 0;
  while (true) {
    size_t dot = text.find('.');
    if (n == 5) return Bad("more than five dot-separated fields");
    parts[n++] = text.substr(0, dot);
    if (dot == std::string_view::npos) break;
    text.remove_prefix(dot + 1);
  }
  if (n < 4) return Bad("fewer than four dot-separated fields");
  if (parts[0] != kVersion) return Bad("unknown version '" + std::string(parts[0].substr(0, 8)) + "' (this build reads v1)");
  Token t;
  if (!FromB64Url(parts[1], &t.prefix)) return Bad("prefix is not base64url");
  if (!FromB64Url(parts[2], &t.app)) return Bad("application name is not base64url");
  std::string_view e = parts[3];
  if (e.empty() || e.size() > 18 || e[0] == '0') return Bad("expiry is not a decimal number");
  for (char c : e)
    if (c < '0' || c > '9') return Bad("expiry is not a decimal number");
  t.expiry = std::strtoll(std::string(e).c_str(), nullptr, 10);
  RPMP_RETURN_IF_ERROR(CheckFields(t.prefix, t.app, t.expiry));
  if (n == 5 && (parts[4].size() != 2 * kMacSize || !FromHex(parts[4], &t.mac)))
    return Bad("MAC is not 64 lowercase hex digits");
  return t;
}

Status CheckExpiry(const Token& t, int64_t now) {
  if (now > t.expiry + kSkewSeconds)
    return Status(StatusCode::kPermissionDenied,
                  "the tenant token of '" + t.app + "' (prefix \"" + t.prefix + "\") expired at unix " +
                      std::to_string(t.expiry) + " (now " + std::to_string(now) +
                      "): mint a new one (rpmpctl token mint)");
  return Status::Ok();
}

Status Verify(std::string_view key, const Token& t, int64_t now) {
  if (!auth::Equal(t.mac, Mac(key, t.prefix, t.app, t.expiry)))
    return Status(StatusCode::kPermissionDenied,
                  "the tenant token of '" + t.app + "' was not minted with this cluster's secret "
                  "(or was altered)");
  return CheckExpiry(t, now);
}

bool Authorizes(std::string_view prefix, std::string_view ns) {
  if (prefix.empty()) return false;
  if (prefix == kAllPrefix) return true;
  if (ns.substr(0, prefix.size()) == prefix) return true;
  return ns.size() + 1 == prefix.size() && prefix.back() == '/' && prefix.substr(0, ns.size()) == ns;
}

int64_t NowUnix() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

StatusOr<std::string> LoadTokenFile(const std::string& path) {
  RPMP_ASSIGN_OR_RETURN(std::string s, auth::LoadPrivateFile(path, "token file"));
  StatusOr<Token> t = Parse(s);
  if (!t.ok()) return Status::InvalidArgument("the token file '" + path + "': " + t.status().message());
  if (t->mac.empty()) return Status::InvalidArgument("the token file '" + path + "' holds no MAC");
  return s;
}

StatusOr<std::string> TokenFromEnvironment() {
  const char* p = std::getenv(kTokenFileEnv);
  if (p == nullptr || *p == '\0') return std::string();
  StatusOr<std::string> s = LoadTokenFile(p);
  if (!s.ok()) return Status(s.status().code(), std::string(kTokenFileEnv) + ": " + s.status().message());
  return s;
}

}  // namespace rpmp::tenant
