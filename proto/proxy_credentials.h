// Credentials of the C++ gRPC clients of rpmp-proxy (ProxyClient, hence rpmp-server's
// heartbeats, librpmp's cluster client, rpmpctl, rpmp-bench and the Java client via
// JNI): mutual TLS from PEM files, or plaintext when none are configured
// (docs/security.md "Control plane").
//
// Clients name a directory in $RPMP_TLS_DIR holding ca.crt (the cluster CA that
// signed the proxies' certificates), client.crt and client.key (this client's
// identity: its CN, and OU=rpmp-admin for an operator). rpmp-server names its files
// in its YAML (tls_ca_file, tls_cert_file, tls_key_file) or flags. Thread-safe.
#pragma once

#include <grpcpp/security/credentials.h>

#include <memory>
#include <string>

#include "common/status.h"

namespace rpmp {

// The environment variable naming a client's TLS directory.
constexpr const char* kTlsDirEnv = "RPMP_TLS_DIR";

struct TlsFiles {
  std::string ca_file;    // PEM CA bundle that the proxy's certificate must chain to
  std::string cert_file;  // PEM client certificate
  std::string key_file;   // PEM private key of cert_file
  bool empty() const { return ca_file.empty() && cert_file.empty() && key_file.empty(); }
};

// $RPMP_TLS_DIR/{ca.crt,client.crt,client.key}; empty when the variable is unset or empty.
TlsFiles TlsFilesFromEnv();
// grpc::SslCredentials from the files, or InsecureChannelCredentials when f is empty.
StatusOr<std::shared_ptr<grpc::ChannelCredentials>> ProxyChannelCredentials(const TlsFiles& f);

}  // namespace rpmp
