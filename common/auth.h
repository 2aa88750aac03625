// Shared-secret authentication for the data plane (docs/security.md): the HELLO
// challenge-response proofs (HMAC-SHA256 from OpenSSL's libcrypto; the secret itself
// never crosses the wire), random nonces and session tags, and loading the secret
// from a file or the environment.
//
// Proofs bind both nonces and the client's claimed fabric address, so a proof
// cannot be replayed for another challenge or another address. All functions are
// thread-safe. Who calls it: server/ (checks) and client-cpp/ (proves).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"

namespace rpmp::auth {

constexpr size_t kNonceSize = 32;
constexpr size_t kProofSize = 32;  // HMAC-SHA256
// The environment variable clients read the secret file's path from.
constexpr const char* kSecretFileEnv = "RPMP_SECRET_FILE";

// kNonceSize cryptographically random bytes.
std::string RandomNonce();
// A random nonzero 48-bit value (the per-session tag of wire frames).
uint64_t RandomTag48();

// What a client proves at HELLO: HMAC(secret, "rpmp-hello-client" | nonces | address).
std::string ClientProof(std::string_view secret, std::string_view server_nonce,
                        std::string_view client_nonce, std::string_view fabric_address);
// What the server proves back (the client checks it before trusting the session).
std::string ServerProof(std::string_view secret, std::string_view server_nonce,
                        std::string_view client_nonce, uint64_t tag);
// Constant-time comparison.
bool Equal(std::string_view a, std::string_view b);

// Reads a secret file: its bytes without trailing whitespace. InvalidArgument when
// empty or shorter than 16 bytes, PermissionDenied when other users may read it,
// NotFound when it cannot be read.
StatusOr<std::string> LoadSecretFile(const std::string& path);
// A private file's bytes without trailing whitespace: PermissionDenied when group or
// others may access it, NotFound when it cannot be read. `what` names it in messages.
StatusOr<std::string> LoadPrivateFile(const std::string& path, const std::string& what);
// The secret named by $RPMP_SECRET_FILE, or "" when the variable is unset/empty.
StatusOr<std::string> SecretFromEnvironment();

}  // namespace rpmp::auth
