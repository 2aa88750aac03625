// Shard: one data shard of a Server (docs/sharding.md). An endpoint of its own (shard 0
// on --listen; the others sibling endpoints in the same fabric domain, sharing memory
// registrations and the address vector), with its own completion queue, receive slots
// and progress thread. A session is served by the shard its HELLO arrived at, so its
// requests stay in order.
//
// Fields marked "progress thread" belong to this shard's progress thread; the HELLO
// guard is under Server::sessions_mu_. Internal to server/ (Server only).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <thread>
#include <unordered_map>
#include <vector>

#include "server/hello_guard.h"
#include "server/slot.h"
#include "transport/fabric.h"

namespace rpmp {

struct Shard {
  uint32_t index = 0;
  Fabric* fabric = nullptr;            // shard 0: the Server's own; others: own_fabric
  std::unique_ptr<Fabric> own_fabric;  // a sibling endpoint (shards 1..N-1)
  std::unique_ptr<MemoryRegion> slot_mr;
  std::vector<char> slot_memory;
  std::vector<std::unique_ptr<Slot>> slots;
  std::unique_ptr<HelloGuard> hello_guard;  // under Server::sessions_mu_ (hello_guard.h)
  std::chrono::steady_clock::time_point next_rma_scan{};    // progress thread
  std::chrono::steady_clock::time_point next_hello_scan{};  // progress thread
  std::unordered_map<Slot*, std::unique_ptr<Slot>> abandoned;  // progress thread
  std::unordered_map<PeerAddr, uint32_t> stalled_peers;  // abandoned transfers per peer (same)
  std::thread progress;
  std::atomic<uint64_t> replies{0};  // requests answered through this shard (metrics)
};

}  // namespace rpmp
