// ClusterClient's per-application credentials (ClusterControl::IssueCredential and
// RenewCredential; docs/security.md "Tenants"): one proxy call each, nothing cached and
// nothing logged (the token is a secret). See cluster_client.h.
#include "client-cpp/src/cluster/cluster_client.h"

namespace rpmp {
namespace {

Credential FromProto(const v1::Credential& c) {
  return Credential{c.token(), c.prefix(), c.app(), c.expiry_unix()};
}

}  // namespace

StatusOr<Credential> ClusterClient::IssueCredential(const std::string& prefix, const std::string& app,
                                                    uint64_t ttl_seconds) {
  RPMP_ASSIGN_OR_RETURN(v1::Credential c, proxy_.IssueCredential(prefix, app, ttl_seconds));
  return FromProto(c);
}

StatusOr<Credential> ClusterClient::RenewCredential(const std::string& token, uint64_t ttl_seconds) {
  RPMP_ASSIGN_OR_RETURN(v1::Credential c, proxy_.RenewCredential(token, ttl_seconds));
  return FromProto(c);
}

}  // namespace rpmp
