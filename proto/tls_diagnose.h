// Says why a mutual-TLS connection to a proxy fails, in words an operator can act on.
// gRPC reports a certificate that does not verify only as an unavailable peer ("failed
// to connect to all addresses; ... tcp handshaker shutdown") and retries it for the whole
// retry window. ProxyClient calls DiagnoseTls when a TLS connection to a proxy fails: it
// makes one handshake of its own with OpenSSL, with the same files and the same checks
// as gRPC (the CA, the address dialled against the certificate's SANs, the client
// certificate presented), and names the certificate (subject, SANs) and the address.
// Blocking (at most `timeout`), thread-safe.
#pragma once

#include <chrono>
#include <string>

#include "common/status.h"
#include "proto/proxy_credentials.h"

namespace rpmp {

// Ok when the handshake with `files` to host_port verifies both ways, or when nothing
// can be said (no connection, files unreadable: other checks report those).
// FailedPrecondition naming the address and the certificate when:
//   - the proxy's certificate does not name the host dialled (SAN mismatch);
//   - it does not chain to files.ca_file, or is expired or not yet valid;
//   - the proxy refuses this client's certificate (e.g. another CA's).
Status DiagnoseTls(const std::string& host_port, const TlsFiles& files, std::chrono::milliseconds timeout);

}  // namespace rpmp
