// HMAC proofs, randomness and secret files (see auth.h).
#include "common/auth.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <sys/stat.h>

#include <cstdlib>
#include <cstdio>
#include <fstream>
#include <sstream>

namespace rpmp::auth {
namespace {

std::string Hmac(std::string_view secret, std::string_view msg) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()),
       reinterpret_cast<const unsigned char*>(msg.data()), msg.size(), out, &len);
  return std::string(reinterpret_cast<char*>(out), len);
}

void Field(std::string* m, std::string_view f) {  // length-prefixed: no ambiguity
  uint32_t n = static_cast<uint32_t>(f.size());
  m->append(reinterpret_cast<const char*>(&n), 4);
  m->append(f);
}

}  // namespace

std::string RandomNonce() {
  std::string n(kNonceSize, '\0');
  if (RAND_bytes(reinterpret_cast<unsigned char*>(n.data()), static_cast<int>(n.size())) != 1)
    std::abort();  // no randomness: never fall back to something guessable
  return n;
}

uint64_t RandomTag48() {
  uint64_t v = 0;
  while (v == 0) {
    if (RAND_bytes(reinterpret_cast<unsigned char*>(&v), sizeof(v)) != 1) std::abort();
    v &= 0xFFFFFFFFFFFFull;
  }
  return v;
}

std::string ClientProof(std::string_view secret, std::string_view server_nonce,
                        std::string_view client_nonce, std::string_view fabric_address) {
  std::string m = "rpmp-hello-client";
  Field(&m, server_nonce);
  Field(&m, client_nonce);
  Field(&m, fabric_address);
  return Hmac(secret, m);
}

std::string ServerProof(std::string_view secret, std::string_view server_nonce,
                        std::string_view client_nonce, uint64_t tag) {
  std::string m = "rpmp-hello-server";
  Field(&m, server_nonce);
  Field(&m, client_nonce);
  Field(&m, std::string_view(reinterpret_cast<const char*>(&tag), sizeof(tag)));
  return Hmac(secret, m);
}

bool Equal(std::string_view a, std::string_view b) {
  return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

namespace {
std::string ModeString(mode_t mode) {
  char buf[8];
  std::snprintf(buf, sizeof(buf), "%04o", static_cast<unsigned>(mode & 07777));
  return buf;
}
}  // namespace

StatusOr<std::string> LoadPrivateFile(const std::string& path, const std::string& what) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    return Status::NotFound("cannot read the " + what + " '" + path + "'");
  if (st.st_mode & (S_IRWXG | S_IRWXO))
    return Status(StatusCode::kPermissionDenied,
                  "the " + what + " '" + path + "' is open to its group or other users (mode " +
                  ModeString(st.st_mode) + "; chmod 600 it)");
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound("cannot read the " + what + " '" + path + "'");
  std::stringstream ss;
  ss << in.rdbuf();
  std::string s = ss.str();
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ' || s.back() == '\t'))
    s.pop_back();
  return s;
}

StatusOr<std::string> LoadSecretFile(const std::string& path) {
  RPMP_ASSIGN_OR_RETURN(std::string s, LoadPrivateFile(path, "secret file"));
  if (s.size() < 16)
    return Status::InvalidArgument("the secret in '" + path + "' is empty or shorter than 16 bytes");
  return s;
}

StatusOr<std::string> SecretFromEnvironment() {
  const char* p = std::getenv(kSecretFileEnv);
  if (p == nullptr || *p == '\0') return std::string();
  StatusOr<std::string> s = LoadSecretFile(p);
  if (!s.ok()) return Status(s.status().code(), std::string(kSecretFileEnv) + ": " + s.status().message());
  return s;
}

}  // namespace rpmp::auth
