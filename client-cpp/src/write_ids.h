// WriteIdMinter: the write ids of one Client object (docs/append-path.md section 1):
// a random nonzero `writer` minted at construction and a `seq` counter from 1, one
// id per API call; every retry of that call inside librpmp reuses it. Thread-safe.
// Internal to client-cpp (ClientImpl, ClusterClient).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <random>

#include "common/write_id.h"

namespace rpmp {

class WriteIdMinter {
 public:
  WriteIdMinter() {
    std::random_device rd;
    std::mt19937_64 rng((static_cast<uint64_t>(rd()) << 32) ^ rd() ^
                        static_cast<uint64_t>(
                            std::chrono::steady_clock::now().time_since_epoch().count()));
    while (writer_ == 0) writer_ = rng();
  }
  uint64_t writer() const { return writer_; }
  WriteId Next() { return WriteId{writer_, next_seq_.fetch_add(1, std::memory_order_relaxed)}; }

 private:
  uint64_t writer_ = 0;
  std::atomic<uint64_t> next_seq_{1};
};

}  // namespace rpmp
