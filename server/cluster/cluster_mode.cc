// Implementation of ClusterMode: wiring of the cluster-mode parts of rpmp-server.
#include "server/cluster/cluster_mode.h"

#include <algorithm>

#include "common/log.h"

namespace rpmp {

std::unique_ptr<ClusterMode> ClusterMode::Create(const ServerConfig& config, Store* store) {
  std::unique_ptr<ClusterMode> m(new ClusterMode());
  // Heartbeats give up quickly (the next one follows within an interval); placement
  // look-ups ride out a leader election.
  ProxyClientOptions hb;
  hb.tls = TlsFiles{config.tls_ca_file, config.tls_cert_file, config.tls_key_file};
  hb.rpc_timeout = std::chrono::milliseconds(1000);
  hb.retry_for = std::chrono::milliseconds(400);
  m->heartbeat_proxy_ = std::make_unique<ProxyClient>(config.proxies, hb);
  ProxyClientOptions pl;
  pl.tls = hb.tls;
  pl.rpc_timeout = std::chrono::milliseconds(2000);
  pl.retry_for = std::max(config.replication_timeout / 2, std::chrono::milliseconds(500));
  m->placement_proxy_ = std::make_unique<ProxyClient>(config.proxies, pl);

  ReplicatorOptions ro;
  ro.write_timeout = config.replication_timeout;
  ro.link.provider = config.provider;
  ro.link.name = "rpmp-server " + config.listen + " replica link";  // one name per server (sessions_per_client_max)
  ro.link.timeout = std::clamp(config.replication_timeout / 4, std::chrono::milliseconds(500),
                               std::chrono::milliseconds(5000));
  ro.link.buffer_cache_bytes = 64u << 20;
  ro.link.max_inflight = 16;
  m->replicator_ = std::make_unique<Replicator>(store, m->placement_proxy_.get(), store->NodeId(), ro);
  m->agent_ = std::make_unique<ClusterAgent>(store, m->heartbeat_proxy_.get(), m->replicator_.get(),
                                             config.listen, std::chrono::milliseconds(500));
  ClusterAgent* agent = m->agent_.get();
  m->replicator_->SetLeaseCheck([agent] { return agent->WaitLease(std::chrono::milliseconds(1000)); });
  m->replicator_->SetQuotaCheck(
      [agent](const std::string& ns, uint64_t length) { return agent->CheckQuota(ns, length); },
      [agent](const std::string& ns, uint64_t length) { agent->NoteWritten(ns, length); });
  m->replicator_->SetSessionQuota([agent](const std::string& tenant_prefix, std::string* quota_prefix) {
    return agent->SessionQuotaFor(tenant_prefix, quota_prefix);
  });
  return m;
}

ClusterMode::~ClusterMode() { Stop(); }

void ClusterMode::Start() {
  replicator_->Start();
  agent_->Start();
  RPMP_LOG_INFO("cluster mode: heartbeating %zu proxies", heartbeat_proxy_->proxies().size());
}

void ClusterMode::Stop() {
  if (agent_) agent_->Stop();
  if (replicator_) replicator_->Stop();
}

}  // namespace rpmp
