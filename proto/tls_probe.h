// Tells whether a proxy address answers TLS, so that a client configured for plaintext
// (no RPMP_TLS_DIR) can say at once that it lacks its certificate, instead of retrying
// for its whole retry window: gRPC reports that mismatch only as an unavailable peer
// ("tcp handshaker shutdown"). Used by ProxyClient; blocking, thread-safe.
#pragma once

#include <chrono>
#include <string>

namespace rpmp {

// Connects to host:port, sends a TLS ClientHello and waits up to `timeout` for the first
// byte of the answer: true when it is a TLS handshake or alert record (any TLS server
// answers a hello with one of the two), false on anything else, a closed connection, a
// refused connect or a timeout (a plaintext gRPC server answers with HTTP/2 or closes).
bool PeerSpeaksTls(const std::string& host_port, std::chrono::milliseconds timeout);

}  // namespace rpmp
