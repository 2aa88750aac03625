// ClusterClient construction: Client::ConnectCluster (a ClusterClient that reached a
// proxy), ProxyList and AsCluster of rpmp/cluster.h, the constructor (proxy client and
// the executor threads of the asynchronous forms) and the destructor. See cluster_client.h.
#include "client-cpp/src/cluster/cluster_client.h"
#include "common/tenant_token.h"
#include "common/thread_name.h"

namespace rpmp {
namespace {

constexpr int kExecutorThreads = 4;

std::string Join(const std::vector<std::string>& v) {
  std::string out;
  for (const std::string& s : v) out += (out.empty() ? "" : ",") + s;
  return out;
}

// The proxy calls carry the tenant token the server connections use, chosen with the
// same precedence (link/connection_hello.cc): ClientOptions::tenant_token, then the
// secret (no token), then $RPMP_TOKEN_FILE. An unreadable token file is left to the
// server connections to report.
ProxyClientOptions ProxyOptions(const ClusterOptions& o) {
  ProxyClientOptions p;
  p.rpc_timeout = o.proxy_timeout;
  p.retry_for = o.retry_for;
  p.tenant_token = o.client.tenant_token;
  if (p.tenant_token.empty() && o.client.secret.empty()) {
    StatusOr<std::string> t = tenant::TokenFromEnvironment();
    if (t.ok()) p.tenant_token = *t;
  }
  return p;
}

}  // namespace

std::vector<std::string> ProxyList(const std::string& list) { return ProxiesFromFlagOrEnv(list); }

ClusterControl* AsCluster(Client* client) { return dynamic_cast<ClusterControl*>(client); }

StatusOr<std::unique_ptr<Client>> Client::ConnectCluster(const std::vector<std::string>& proxies,
                                                         const ClusterOptions& options) {
  if (proxies.empty()) return Status::InvalidArgument("no proxy given (HOST:PORT list or RPMP_PROXIES)");
  auto c = std::make_unique<ClusterClient>(proxies, options);
  RPMP_RETURN_IF_ERROR(c->Probe());
  return std::unique_ptr<Client>(std::move(c));
}

ClusterClient::ClusterClient(std::vector<std::string> proxies, const ClusterOptions& options)
    : proxies_(proxies), proxy_list_(Join(proxies)), options_(options), proxy_(proxies, ProxyOptions(options)) {
  for (int i = 0; i < kExecutorThreads; i++) executors_.emplace_back([this] {
      NameThisThread("rpmp-cluster");
      ExecutorLoop();
    });
}

ClusterClient::~ClusterClient() {
  {
    std::lock_guard<std::mutex> lock(exec_mu_);
    exec_stop_ = true;
  }
  exec_cv_.notify_all();
  for (std::thread& t : executors_) t.join();
}

Status ClusterClient::Probe() { return proxy_.GetNodeMap().status().Annotate("cannot reach the RPMP proxies " + proxy_list_); }

}  // namespace rpmp
