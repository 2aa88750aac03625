// Factories for the record store: OpenPmemStore over real libpmemobj pools (used by
// rpmp-server start-up) and NewMemStore over DRAM (unit tests only; nothing survives
// the process). Both return the same log-structured implementation (log_store.h).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "server/store/store.h"

namespace rpmp {

struct PoolSpec {
  std::string path;  // pool file, file on /dev/shm, or devdax device (/dev/daxN.M)
  uint64_t size = 0; // bytes; used only when creating a pool file
  // Capacity tier (e.g. a file on an SSD): new segments and raw allocations go here only
  // when no fast pool can take them (docs/storage-format.md "Tiers").
  bool capacity_tier = false;
};

struct StoreOptions {
  std::vector<PoolSpec> pools;  // pool i keeps index i for its whole life
  // Segments grow geometrically per namespace: a namespace's first segment takes
  // first_segment_size bytes, each next one twice the last, up to segment_size
  // (docs/storage-format.md "Segment sizes"). first_segment_size = segment_size gives
  // fixed-size segments.
  uint64_t segment_size = 64ull << 20;
  uint64_t first_segment_size = 4ull << 10;
  bool create_if_missing = true;
  bool prefault = false;  // touch every pool page at open (OpenPmemMedium)
};

// Opens (creating where allowed) every pool and recovers the store from them.
StatusOr<std::unique_ptr<Store>> OpenPmemStore(const StoreOptions& options);

// A store in `capacity` bytes of heap memory. Aborts on bad arguments.
std::unique_ptr<Store> NewMemStore(uint64_t capacity, uint64_t segment_size);

}  // namespace rpmp
