// Tells whether a proxy address answers TLS, so that a client configured for plaintext
// (no RPMP_TLS_DIR) can say at once that it lacks its certificate, instead of retrying
// for its whole retry window: gRPC reports that mismatch only as an unavailable peer
// ("tcp handshaker shutdown"). Used by ProxyClient; blocking, thread-safe.
#pragma once

#include <chrono>
#include <string>

namespace rpmp {

enum class TlsProbe {
  kTls,       // answered with a TLS handshake or alert record (any TLS server does)
  kNotTls,    // connected, and answered otherwise or closed (a plaintext gRPC server)
  kNoAnswer,  // bad address, refused, or nothing within the timeout: ask again later
};

// Connects to host:port, sends a TLS ClientHello and waits up to `timeout` for the first
// byte of the answer.
TlsProbe ProbeTls(const std::string& host_port, std::chrono::milliseconds timeout);

}  // namespace rpmp
