// ClusterMode: everything an rpmp-server runs when started with --proxy: the proxy
// clients, the Replicator (WriteCoordinator for the data plane) and the heartbeat
// ClusterAgent. Keeps server/main.cc to a few lines.
//
// Order: Create -> Server::Start(..., coordinator()) -> Start() ... Stop() after the
// Server has stopped. Not thread-safe itself (owner's thread only).
#pragma once

#include <memory>

#include "server/cluster/heartbeat.h"
#include "server/cluster/replicator.h"
#include "server/config.h"

namespace rpmp {

class ClusterMode {
 public:
  static std::unique_ptr<ClusterMode> Create(const ServerConfig& config, Store* store);
  ~ClusterMode();
  WriteCoordinator* coordinator() { return replicator_.get(); }
  void Start();
  void Stop();

 private:
  ClusterMode() = default;
  std::unique_ptr<ProxyClient> heartbeat_proxy_, placement_proxy_;
  std::unique_ptr<Replicator> replicator_;
  std::unique_ptr<ClusterAgent> agent_;
};

}  // namespace rpmp
