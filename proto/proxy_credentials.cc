// Implementation of the proxy clients' TLS credentials (proxy_credentials.h).
#include "proto/proxy_credentials.h"

#include <grpcpp/security/credentials.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace rpmp {
namespace {

StatusOr<std::string> ReadPem(const std::string& path, const std::string& what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::InvalidArgument("TLS " + what + " '" + path + "' cannot be read");
  std::stringstream ss;
  ss << in.rdbuf();
  if (ss.str().find("-----BEGIN ") == std::string::npos)
    return Status::InvalidArgument("TLS " + what + " '" + path + "' is not a PEM file");
  return ss.str();
}

}  // namespace

TlsFiles TlsFilesFromEnv() {
  const char* dir = std::getenv(kTlsDirEnv);
  if (dir == nullptr || *dir == '\0') return {};
  std::string d(dir);
  return TlsFiles{d + "/ca.crt", d + "/client.crt", d + "/client.key"};
}

StatusOr<std::shared_ptr<grpc::ChannelCredentials>> ProxyChannelCredentials(const TlsFiles& f) {
  if (f.empty()) return grpc::InsecureChannelCredentials();
  grpc::SslCredentialsOptions o;
  RPMP_ASSIGN_OR_RETURN(o.pem_root_certs, ReadPem(f.ca_file, "CA file"));
  RPMP_ASSIGN_OR_RETURN(o.pem_cert_chain, ReadPem(f.cert_file, "certificate"));
  RPMP_ASSIGN_OR_RETURN(o.pem_private_key, ReadPem(f.key_file, "key"));
  return grpc::SslCredentials(o);
}

}  // namespace rpmp
