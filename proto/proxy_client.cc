// Implementation of ProxyClient: per-proxy channels, leader discovery and retries.
#include "proto/proxy_client.h"

#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <cstdlib>
#include <sstream>
#include <thread>

#include "common/log.h"
#include "proto/tls_diagnose.h"
#include "proto/tls_probe.h"

namespace rpmp {
namespace {

Status FromGrpc(const grpc::Status& s, const std::string& proxy) {
  if (s.ok()) return Status::Ok();
  std::string msg = s.error_message();
  if (s.error_code() == grpc::StatusCode::UNAVAILABLE) msg = "proxy " + proxy + ": " + msg;
  return Status(static_cast<StatusCode>(s.error_code()), msg);
}

std::string LeaderTrailer(const grpc::ClientContext& ctx) {
  const auto& md = ctx.GetServerTrailingMetadata();
  auto it = md.find("rpmp-leader");
  if (it == md.end()) return "";
  return std::string(it->second.data(), it->second.size());
}

}  // namespace

const char* NodeStateName(v1::NodeState s) {
  switch (s) {
    case v1::NODE_STATE_LIVE: return "LIVE";
    case v1::NODE_STATE_SUSPECT: return "SUSPECT";
    case v1::NODE_STATE_DEAD: return "DEAD";
    case v1::NODE_STATE_DRAINING: return "DRAINING";
    default: return "UNKNOWN";
  }
}

std::vector<std::string> SplitProxyList(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string part;
  while (std::getline(ss, part, ',')) {
    part.erase(0, part.find_first_not_of(" \t"));
    part.erase(part.find_last_not_of(" \t") + 1);
    if (!part.empty()) out.push_back(part);
  }
  return out;
}

std::vector<std::string> ProxiesFromFlagOrEnv(const std::string& flag_value) {
  if (!flag_value.empty()) return SplitProxyList(flag_value);
  const char* env = std::getenv("RPMP_PROXIES");
  return env != nullptr ? SplitProxyList(env) : std::vector<std::string>{};
}

ProxyClient::ProxyClient(std::vector<std::string> proxies, ProxyClientOptions options)
    : proxies_(std::move(proxies)),
      options_(options),
      tls_files_(options.tls.empty() ? TlsFilesFromEnv() : options.tls),
      creds_(ProxyChannelCredentials(tls_files_)),
      tls_(!tls_files_.empty()) {}

ProxyClient::~ProxyClient() = default;

std::string ProxyClient::leader() const {
  std::lock_guard<std::mutex> lock(mu_);
  return leader_;
}

void ProxyClient::set_retry_for(std::chrono::milliseconds d) {
  std::lock_guard<std::mutex> lock(mu_);
  options_.retry_for = d;
}

v1::Proxy::Stub* ProxyClient::StubFor(const std::string& addr) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = stubs_.find(addr);
  if (it != stubs_.end()) return it->second.get();
  grpc::ChannelArguments args;
  // Reconnect quickly to a proxy that comes back; fail fast while it is away.
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1000);
  auto channel = grpc::CreateCustomChannel(addr, *creds_, args);
  auto stub = v1::Proxy::NewStub(channel);
  v1::Proxy::Stub* p = stub.get();
  stubs_[addr] = std::move(stub);
  return p;
}

std::vector<std::string> ProxyClient::Order(bool leader_only) {
  std::vector<std::string> order;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!leader_.empty()) order.push_back(leader_);
    if (!leader_only && !last_good_.empty() && last_good_ != leader_) order.push_back(last_good_);
  }
  for (const std::string& p : proxies_)
    if (std::find(order.begin(), order.end(), p) == order.end()) order.push_back(p);
  return order;
}

template <typename Req, typename Resp, typename Method>
StatusOr<Resp> ProxyClient::Invoke(const char* what, bool leader_only, const Req& req, Method method,
                                   bool with_token) {
  if (proxies_.empty()) return Status::InvalidArgument("no proxy given (use --proxy or RPMP_PROXIES)");
  if (!creds_.ok()) return creds_.status().Annotate(std::string(what));
  std::chrono::milliseconds retry_for;
  {
    std::lock_guard<std::mutex> lock(mu_);
    retry_for = options_.retry_for;
  }
  auto give_up = std::chrono::steady_clock::now() + retry_for;
  std::chrono::milliseconds backoff(50);
  Status last, certificate;  // certificate: the first certificate problem seen
  while (true) {
    std::vector<std::string> order = Order(leader_only);
    size_t certificate_failures = 0;  // this round
    for (size_t i = 0; i < order.size(); i++) {
      const std::string& addr = order[i];
      grpc::ClientContext ctx;
      ctx.set_deadline(std::chrono::system_clock::now() + options_.rpc_timeout);
      if (with_token && tls_ && !options_.tenant_token.empty())
        ctx.AddMetadata(kTenantTokenMetadata, options_.tenant_token);
      Resp resp;
      grpc::Status gs = (StubFor(addr)->*method)(&ctx, req, &resp);
      if (gs.ok()) {
        std::lock_guard<std::mutex> lock(mu_);
        last_good_ = addr;
        if (leader_only) leader_ = addr;
        return resp;
      }
      last = FromGrpc(gs, addr);
      bool retryable = gs.error_code() == grpc::StatusCode::UNAVAILABLE ||
                       gs.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED;
      if (!retryable) return last;
      // Plaintext against a TLS proxy fails as "unavailable" on every attempt: say so at
      // once instead of retrying for the whole window.
      if (!tls_ && gs.error_code() == grpc::StatusCode::UNAVAILABLE && ServesTls(addr)) {
        return Status::Unavailable(std::string(what) + ": proxy " + addr +
                                   " serves TLS and this client has no certificate: set " +
                                   kTlsDirEnv + " (ca.crt, client.crt, client.key)");
      }
      std::string hint = LeaderTrailer(ctx);
      if (tls_ && hint.empty() && gs.error_code() == grpc::StatusCode::UNAVAILABLE) {
        Status problem = CertificateProblem(addr, gs);
        if (!problem.ok()) {
          certificate_failures++;
          if (certificate.ok()) certificate = problem.Annotate(what);
        }
      }
      if (!hint.empty() && hint != addr) {
        std::lock_guard<std::mutex> lock(mu_);
        leader_ = hint;
        if (std::find(order.begin() + i + 1, order.end(), hint) == order.end()) order.push_back(hint);
      } else {
        std::lock_guard<std::mutex> lock(mu_);
        if (leader_ == addr) leader_.clear();
      }
    }
    // Every proxy failed its certificate check: that does not pass by retrying.
    if (certificate_failures == order.size()) return certificate;
    if (std::chrono::steady_clock::now() + backoff > give_up) {
      if (!certificate.ok()) return certificate;
      Status s = last.Annotate(std::string(what) + ": no proxy answered");
      if (!tls_) s = Status(s.code(), s.message() + " (if the proxies serve TLS, set " + kTlsDirEnv + ")");
      return s;
    }
    std::this_thread::sleep_for(backoff);
    backoff = std::min(backoff * 2, std::chrono::milliseconds(500));
  }
}

bool ProxyClient::ServesTls(const std::string& addr) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = tls_probed_.find(addr);
    if (it != tls_probed_.end()) return it->second;
  }
  TlsProbe answer = ProbeTls(addr, std::chrono::milliseconds(1000));
  if (answer == TlsProbe::kNoAnswer) return false;  // down or unreachable: ask again later
  std::lock_guard<std::mutex> lock(mu_);
  tls_probed_[addr] = answer == TlsProbe::kTls;
  return answer == TlsProbe::kTls;
}

Status ProxyClient::CertificateProblem(const std::string& addr, const grpc::Status& gs) {
  // Only a failed connection (not an answer of the proxy's own) can be the certificate's.
  const std::string& m = gs.error_message();
  if (m.find("failed to connect") == std::string::npos && m.find("andshake") == std::string::npos &&
      m.find("SSL") == std::string::npos && m.find("Ssl") == std::string::npos)
    return Status::Ok();
  return DiagnoseTls(addr, tls_files_, std::chrono::milliseconds(500));  // a handshake takes ms
}

StatusOr<v1::HeartbeatReply> ProxyClient::Heartbeat(const v1::HeartbeatRequest& req) {
  return Invoke<v1::HeartbeatRequest, v1::HeartbeatReply>("Heartbeat", true, req, &v1::Proxy::Stub::Heartbeat);
}

StatusOr<v1::NodeMap> ProxyClient::GetNodeMap() {
  return Invoke<v1::GetNodeMapRequest, v1::NodeMap>("GetNodeMap", false, v1::GetNodeMapRequest(),
                                                     &v1::Proxy::Stub::GetNodeMap);
}

StatusOr<v1::Namespace> ProxyClient::CreateNamespace(const std::string& name, const v1::NamespaceOptions& o) {
  v1::CreateNamespaceRequest req;
  req.set_name(name);
  *req.mutable_options() = o;
  return Invoke<v1::CreateNamespaceRequest, v1::Namespace>("CreateNamespace", true, req,
                                                           &v1::Proxy::Stub::CreateNamespace, true);
}

StatusOr<v1::Namespace> ProxyClient::GetPlacement(const std::string& name) {
  v1::GetPlacementRequest req;
  req.set_name(name);
  return Invoke<v1::GetPlacementRequest, v1::Namespace>("GetPlacement", false, req,
                                                        &v1::Proxy::Stub::GetPlacement);
}

StatusOr<v1::Namespace> ProxyClient::SetInSync(const std::string& name, uint64_t epoch, uint64_t primary,
                                               uint64_t node, bool in_sync) {
  v1::SetInSyncRequest req;
  req.set_name(name);
  req.set_epoch(epoch);
  req.set_primary(primary);
  req.set_node(node);
  req.set_in_sync(in_sync);
  return Invoke<v1::SetInSyncRequest, v1::Namespace>("SetInSync", true, req, &v1::Proxy::Stub::SetInSync);
}

StatusOr<v1::ListNamespacesReply> ProxyClient::ListNamespaces(const std::string& prefix) {
  v1::ListNamespacesRequest req;
  req.set_prefix(prefix);
  return Invoke<v1::ListNamespacesRequest, v1::ListNamespacesReply>("ListNamespaces", false, req,
                                                                    &v1::Proxy::Stub::ListNamespaces);
}

StatusOr<v1::DeleteNamespaceReply> ProxyClient::DeleteNamespace(const std::string& name, bool recursive) {
  v1::DeleteNamespaceRequest req;
  req.set_name(name);
  req.set_recursive(recursive);
  return Invoke<v1::DeleteNamespaceRequest, v1::DeleteNamespaceReply>("DeleteNamespace", true, req,
                                                                      &v1::Proxy::Stub::DeleteNamespace, true);
}

StatusOr<v1::Namespace> ProxyClient::TouchNamespace(const std::string& name) {
  v1::TouchNamespaceRequest req;
  req.set_name(name);
  return Invoke<v1::TouchNamespaceRequest, v1::Namespace>("TouchNamespace", true, req,
                                                          &v1::Proxy::Stub::TouchNamespace, true);
}

StatusOr<v1::DrainReply> ProxyClient::Drain(uint64_t node_id, bool cancel) {
  v1::DrainRequest req;
  req.set_node_id(node_id);
  req.set_cancel(cancel);
  return Invoke<v1::DrainRequest, v1::DrainReply>("Drain", true, req, &v1::Proxy::Stub::Drain);
}

StatusOr<v1::RemoveNodeReply> ProxyClient::RemoveNode(uint64_t node_id) {
  v1::RemoveNodeRequest req;
  req.set_node_id(node_id);
  return Invoke<v1::RemoveNodeRequest, v1::RemoveNodeReply>("RemoveNode", true, req, &v1::Proxy::Stub::RemoveNode);
}

StatusOr<v1::Quota> ProxyClient::SetQuota(const std::string& prefix, uint64_t max_bytes, uint64_t max_namespaces,
                                          uint32_t max_sessions) {
  v1::SetQuotaRequest req;
  req.set_prefix(prefix);
  req.set_max_bytes(max_bytes);
  req.set_max_namespaces(max_namespaces);
  req.set_max_sessions(max_sessions);
  return Invoke<v1::SetQuotaRequest, v1::Quota>("SetQuota", true, req, &v1::Proxy::Stub::SetQuota);
}

StatusOr<v1::ClearQuotaReply> ProxyClient::ClearQuota(const std::string& prefix) {
  v1::ClearQuotaRequest req;
  req.set_prefix(prefix);
  return Invoke<v1::ClearQuotaRequest, v1::ClearQuotaReply>("ClearQuota", true, req, &v1::Proxy::Stub::ClearQuota);
}

StatusOr<v1::ListQuotasReply> ProxyClient::ListQuotas() {
  return Invoke<v1::ListQuotasRequest, v1::ListQuotasReply>("ListQuotas", true, v1::ListQuotasRequest(),
                                                            &v1::Proxy::Stub::ListQuotas);
}

StatusOr<v1::Credential> ProxyClient::IssueCredential(const std::string& prefix, const std::string& app,
                                                      uint64_t ttl_seconds) {
  v1::IssueCredentialRequest req;
  req.set_prefix(prefix);
  req.set_app(app);
  req.set_ttl_seconds(ttl_seconds);
  return Invoke<v1::IssueCredentialRequest, v1::Credential>("IssueCredential", true, req,
                                                            &v1::Proxy::Stub::IssueCredential);
}

StatusOr<v1::Credential> ProxyClient::RenewCredential(const std::string& token, uint64_t ttl_seconds) {
  v1::RenewCredentialRequest req;
  req.set_token(token);
  req.set_ttl_seconds(ttl_seconds);
  return Invoke<v1::RenewCredentialRequest, v1::Credential>("RenewCredential", true, req,
                                                            &v1::Proxy::Stub::RenewCredential);
}

}  // namespace rpmp
