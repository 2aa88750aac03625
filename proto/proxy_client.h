// ProxyClient: the one C++ caller of the rpmp-proxy gRPC API (proto/rpmp.proto),
// shared by rpmp-server (heartbeats, placements), librpmp's cluster client and
// rpmpctl. It knows every proxy of the cluster, finds the leader (from the
// `rpmp-leader` trailer of a follower's UNAVAILABLE, or by trying each proxy), sends
// leader-only calls there, and retries UNAVAILABLE answers with backoff until
// `retry_for` has passed; a plaintext client that reaches a proxy serving TLS is told so
// at once (tls_probe.h), and so is a TLS client whose certificate check fails on every
// proxy, with the certificate and the address named (tls_diagnose.h). Other errors come back at once, with the proxy's message;
// gRPC codes map one-to-one onto rpmp::StatusCode.
// Channels use mutual TLS when ProxyClientOptions::tls or $RPMP_TLS_DIR names the
// files (proxy_credentials.h), plaintext otherwise.
//
// Threads: every method may be called from any thread concurrently.
#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/status.h"
#include "proto/proxy_credentials.h"
#include "proto/rpmp.grpc.pb.h"

namespace rpmp {

// "LIVE", "SUSPECT", "DEAD", "DRAINING" ("UNKNOWN" otherwise), as rpmpctl prints them.
const char* NodeStateName(v1::NodeState s);

struct ProxyClientOptions {
  std::chrono::milliseconds rpc_timeout{2000};  // one attempt against one proxy
  std::chrono::milliseconds retry_for{15000};   // keep retrying UNAVAILABLE this long
  // Mutual TLS to the proxies; empty = from $RPMP_TLS_DIR, plaintext when that is unset
  // too (proxy_credentials.h).
  TlsFiles tls;
  // A tenant token (docs/security.md "Tenants"), sent as request metadata
  // `rpmp-tenant-token` on CreateNamespace, DeleteNamespace and TouchNamespace, and
  // only over TLS (without TLS every caller is an admin of the proxy). A secret:
  // never logged. Empty: none.
  std::string tenant_token;
};

// The metadata key of ProxyClientOptions::tenant_token.
constexpr const char* kTenantTokenMetadata = "rpmp-tenant-token";

class ProxyClient {
 public:
  // `proxies`: HOST:PORT of every proxy (at least one).
  ProxyClient(std::vector<std::string> proxies, ProxyClientOptions options = {});
  ~ProxyClient();

  StatusOr<v1::HeartbeatReply> Heartbeat(const v1::HeartbeatRequest& req);
  StatusOr<v1::NodeMap> GetNodeMap();
  StatusOr<v1::Namespace> CreateNamespace(const std::string& name, const v1::NamespaceOptions& o);
  StatusOr<v1::Namespace> GetPlacement(const std::string& name);
  StatusOr<v1::ListNamespacesReply> ListNamespaces(const std::string& prefix);
  StatusOr<v1::DeleteNamespaceReply> DeleteNamespace(const std::string& name, bool recursive);
  StatusOr<v1::Namespace> TouchNamespace(const std::string& name);
  StatusOr<v1::DrainReply> Drain(uint64_t node_id, bool cancel);
  // Leader only, admin certificate: removes a DEAD node from the node map.
  // FailedPrecondition while it is not DEAD or a namespace still places a copy on it.
  StatusOr<v1::RemoveNodeReply> RemoveNode(uint64_t node_id);
  // Leader only (docs/cluster.md "Quotas"). Set and clear need an admin certificate;
  // 0 = no limit for that dimension; clearing an absent quota is NotFound.
  // 0 = no limit for that dimension; max_sessions is per server.
  StatusOr<v1::Quota> SetQuota(const std::string& prefix, uint64_t max_bytes, uint64_t max_namespaces,
                               uint32_t max_sessions = 0);
  StatusOr<v1::ClearQuotaReply> ClearQuota(const std::string& prefix);
  StatusOr<v1::ListQuotasReply> ListQuotas();
  // Leader only (docs/security.md "Tenants"): a per-application credential for
  // `prefix` ("*" with an admin certificate), ttl 0 = the proxy's default (24 h).
  // FailedPrecondition from a proxy without --token-secret-file; AlreadyExists when
  // another application holds an overlapping prefix. The token is a secret.
  StatusOr<v1::Credential> IssueCredential(const std::string& prefix, const std::string& app,
                                           uint64_t ttl_seconds);
  // Leader only: a new credential for the prefix of a valid `token`.
  StatusOr<v1::Credential> RenewCredential(const std::string& token, uint64_t ttl_seconds);
  // Leader only: the primary adds `node` to (after a repair) or removes it from the
  // namespace's in-sync set; FailedPrecondition on a stale epoch or non-primary.
  StatusOr<v1::Namespace> SetInSync(const std::string& name, uint64_t epoch, uint64_t primary, uint64_t node,
                                    bool in_sync);

  // The proxy that answered the last leader-only call ("" before any).
  std::string leader() const;
  const std::vector<std::string>& proxies() const { return proxies_; }
  // Changes how long calls keep retrying (e.g. a heartbeat retries only briefly).
  void set_retry_for(std::chrono::milliseconds d);

 private:
  template <typename Req, typename Resp, typename Method>
  // with_token: the call carries options_.tenant_token (namespace calls).
  StatusOr<Resp> Invoke(const char* what, bool leader_only, const Req& req, Method method, bool with_token = false);
  v1::Proxy::Stub* StubFor(const std::string& addr);
  // Proxies in the order to try: leader (or last good one) first.
  std::vector<std::string> Order(bool leader_only);
  // Whether addr answers TLS (ProbeTls). An answer, either way, is remembered for the
  // address; no answer (a proxy down) is asked again on its next failure.
  bool ServesTls(const std::string& addr);
  // With TLS on, after a failed connection to addr: why its certificate check fails
  // (DiagnoseTls), Ok when it does not.
  Status CertificateProblem(const std::string& addr, const grpc::Status& gs);

  const std::vector<std::string> proxies_;
  ProxyClientOptions options_;
  const TlsFiles tls_files_;  // empty: plaintext
  // The channel credentials, or why there are none (every call returns that error).
  StatusOr<std::shared_ptr<grpc::ChannelCredentials>> creds_;
  bool tls_;  // credentials are TLS (else plaintext)
  mutable std::mutex mu_;
  std::string leader_, last_good_;
  std::unordered_map<std::string, std::unique_ptr<v1::Proxy::Stub>> stubs_;
  std::unordered_map<std::string, bool> tls_probed_;  // ServesTls answers so far
};

// "a,b , c" -> {"a","b","c"} (empty parts dropped).
std::vector<std::string> SplitProxyList(const std::string& s);
// --proxy value if given, else env RPMP_PROXIES, else empty.
std::vector<std::string> ProxiesFromFlagOrEnv(const std::string& flag_value);

}  // namespace rpmp
