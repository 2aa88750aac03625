// ServerMetrics: the instruments of one rpmp-server, registered in a MetricsRegistry
// (common/metrics.h) and served by main.cc on --metrics-listen. docs/operations.md lists
// every metric.
//
// The data plane calls OnReply() once per answered request: a relaxed atomic add on a
// counter chosen by (op, status) and a histogram observation, no lock (the (op, status)
// series are created on first use under a mutex, which steady state never reaches).
// Pool, store and slot gauges are sampled at scrape time (Sample*), not per request.
// ReplicationHooks() is how server/cluster/ reports replication lag and repair progress
// without knowing the registry: null until main.cc installs it, so every call site
// checks. Threads: all methods from any thread.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>

#include "common/metrics.h"
#include "common/wire.h"
#include "server/compactor.h"
#include "server/store/store.h"

namespace rpmp {

// Replication and repair, reported by the Replicator (server/cluster/).
struct ReplicationMetrics {
  explicit ReplicationMetrics(MetricsRegistry* r);
  Histogram* replicate_seconds;  // local commit -> required copies acknowledged
  Counter* replica_misses;       // a member missed an update (it is repaired)
  Gauge* repairs_running;
  Counter* repairs_ok;
  Counter* repairs_failed;
  Counter* repair_records;       // copied so far (progress while a repair runs)
  Counter* repair_bytes;
};
// One repair, for its whole run: counts it running, its records as they are copied,
// and its result (failed unless Succeeded() was called). Null metrics: does nothing.
class RepairProgress {
 public:
  explicit RepairProgress(ReplicationMetrics* m);
  ~RepairProgress();
  void Copied(uint64_t bytes);
  void Succeeded() { ok_ = true; }

 private:
  ReplicationMetrics* m_;
  bool ok_ = false;
};

// Installed once by main.cc before cluster mode starts; nullptr when metrics are off.
ReplicationMetrics* ReplicationHooks();
void InstallReplicationHooks(ReplicationMetrics* hooks);

class ServerMetrics {
 public:
  explicit ServerMetrics(MetricsRegistry* r);
  MetricsRegistry* registry() { return registry_; }

  using Clock = std::chrono::steady_clock;
  // One answered request: `status` is the wire status code of the reply.
  void OnReply(wire::Op op, uint16_t status, Clock::time_point started);

  // The Server registers its own counters (bytes, slots, sessions) as scrape-time
  // functions (Server::RegisterMetrics); main.cc sets this one.
  Gauge* recovery_seconds;  // time to open the pools at start (recovery included)

  // Registers a sampler that reads the store's stats at each scrape.
  void SampleStore(Store* store);
  // Registers samplers of the compaction thread's state (docs/operations.md).
  void SampleCompactor(const Compactor* compactor);

 private:
  static constexpr size_t kOps = 16;    // wire::Op values are < 16
  static constexpr size_t kCodes = 17;  // StatusCode values are < 17
  Counter* RequestCounter(size_t op, size_t code);
  Histogram* LatencyHistogram(size_t op);

  MetricsRegistry* registry_;
  std::mutex create_mu_;  // first use of an (op, status) pair only
  std::array<std::array<std::atomic<Counter*>, kCodes>, kOps> requests_{};
  std::array<std::atomic<Histogram*>, kOps> latency_{};
};

}  // namespace rpmp
