// rpmp-server: the storage daemon. Opens (or creates) the configured PMem pools,
// serves the data plane until SIGTERM/SIGINT, then drains and closes the pools.
//
// Prints one line "rpmp-server ready listen=HOST:PORT node=ID" on stdout once it
// serves, so scripts and tests can wait for readiness without sleeping; with
// --metrics-listen the line ends with " metrics=http://HOST:PORT/metrics".
// Exit status: 0 after a clean stop, 2 for bad flags/config, 1 when it cannot start.
#include <signal.h>
#include <stdlib.h>

#include <chrono>
#include <cstdio>

#include "common/config_util.h"
#include "common/log.h"
#include "common/metrics_http.h"
#include "server/cluster/cluster_mode.h"
#include "server/config.h"
#include "server/server.h"
#include "server/store/open_store.h"

namespace rpmp {
namespace {

int Run(int argc, char** argv) {
  SetLogTag("rpmp-server");
  StatusOr<ServerConfig> config = LoadServerConfig(argc, argv);
  if (!config.ok()) {
    if (config.status().code() == StatusCode::kFailedPrecondition) {  // --help
      std::fputs(config.status().message().c_str(), stdout);
      return 0;
    }
    std::fprintf(stderr, "rpmp-server: %s\n", config.status().message().c_str());
    return 2;
  }
  // Signals are taken synchronously by this thread only; the others never see them.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  signal(SIGPIPE, SIG_IGN);

  // Server-to-server links (cluster mode) use librpmp, which reads the secret from
  // $RPMP_SECRET_FILE: point it at the server's own secret.
  // A tenant token in the environment would take precedence over it: replica links
  // need the secret itself (docs/security.md "Tenants").
  if (!config->auth_secret_file.empty()) {
    setenv("RPMP_SECRET_FILE", config->auth_secret_file.c_str(), 1);
    unsetenv("RPMP_TOKEN_FILE");
  }
  // Metrics (--metrics-listen): declared before everything they observe, so the HTTP
  // endpoint (destroyed first) never reads a component that is gone.
  std::unique_ptr<MetricsRegistry> registry;
  std::unique_ptr<ServerMetrics> metrics;
  std::unique_ptr<ReplicationMetrics> replication_metrics;
  if (!config->metrics_listen.empty()) {
    registry = std::make_unique<MetricsRegistry>();
    metrics = std::make_unique<ServerMetrics>(registry.get());
    replication_metrics = std::make_unique<ReplicationMetrics>(registry.get());
    InstallReplicationHooks(replication_metrics.get());
  }

  StoreOptions so;
  for (const PoolConfig& p : config->pools) so.pools.push_back({p.path, p.size, p.capacity_tier});
  so.segment_size = config->segment_size;
  so.prefault = config->prefault;
  auto open_started = std::chrono::steady_clock::now();
  StatusOr<std::unique_ptr<Store>> store = OpenPmemStore(so);
  if (!store.ok()) {
    std::fprintf(stderr, "rpmp-server: cannot open pools: %s\n", store.status().message().c_str());
    return 1;
  }
  double open_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - open_started).count();
  if (metrics) metrics->recovery_seconds->Set(open_seconds);
  if (config->prefault) RPMP_LOG_INFO("pools opened with every page prefaulted in %.1f s", open_seconds);
  std::unique_ptr<ClusterMode> cluster;  // with --proxy only
  if (!config->proxies.empty()) cluster = ClusterMode::Create(*config, store->get());
  StatusOr<std::unique_ptr<Server>> server = Server::Start(
      *config, store->get(), cluster ? cluster->coordinator() : nullptr, metrics.get());
  if (!server.ok()) {
    std::fprintf(stderr, "rpmp-server: cannot serve on %s: %s\n", config->listen.c_str(),
                 server.status().ToString().c_str());
    return 1;
  }
  std::unique_ptr<MetricsHttpServer> http;
  if (registry) {
    StatusOr<std::unique_ptr<MetricsHttpServer>> h =
        MetricsHttpServer::Start(config->metrics_listen, registry.get());
    if (!h.ok()) {
      std::fprintf(stderr, "rpmp-server: %s\n", h.status().message().c_str());
      return 1;
    }
    http = std::move(*h);
  }
  if (cluster) cluster->Start();
  std::printf("rpmp-server ready listen=%s node=%016llx%s\n", config->listen.c_str(),
              static_cast<unsigned long long>((*store)->NodeId()),
              http ? (" metrics=" + http->Url()).c_str() : "");
  std::fflush(stdout);

  int sig = 0;
  sigwait(&signals, &sig);
  RPMP_LOG_INFO("signal %d: stopping", sig);
  http.reset();  // no scrape may read the server or store below while they stop
  (*server)->RequestShutdown();
  (*server)->Wait();
  if (cluster) cluster->Stop();
  (*server)->LeaveFabricOpenAtExit();
  server->reset();
  store->reset();  // closes the pools
  RPMP_LOG_INFO("stopped cleanly");
  return 0;
}

}  // namespace
}  // namespace rpmp

int main(int argc, char** argv) { return rpmp::Run(argc, argv); }
