// BufferPool: registered memory for a Connection's transfers (librpmp's calls, the
// replica link's records), in power-of-two size classes (64 KiB and up), each buffer
// its own mmap'd and registered slab. Released buffers are kept for reuse up to a byte
// budget, so steady-state transfers allocate and register nothing. Thread-safe; must
// outlive its Buffers. Who calls it: link/ and client-cpp/ (never the public API).
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "common/status.h"
#include "rpmp/buffer.h"
#include "transport/fabric.h"

namespace rpmp {

class BufferPool;

struct Buffer::Slab {
  BufferPool* pool = nullptr;
  // Set when a transfer into this slab timed out: the server may still write into it,
  // so it is never handed out again and transfers into it are refused.
  std::atomic<bool> poisoned{false};
  char* base = nullptr;
  size_t size = 0;
  std::unique_ptr<MemoryRegion> mr;
  ~Slab();
};

class BufferPool {
 public:
  BufferPool(Fabric* fabric, size_t cache_bytes) : fabric_(fabric), cache_budget_(cache_bytes) {}
  ~BufferPool();

  // A buffer with capacity >= size. Unavailable when memory cannot be registered.
  StatusOr<Buffer> Acquire(size_t size);
  // Called by ~Buffer: keeps the slab for reuse or frees it. A slab that is poisoned,
  // or still held elsewhere (a call in flight or quarantined), is never reused.
  void Release(std::shared_ptr<Buffer::Slab> slab);

  static const MemoryRegion& RegionOf(const Buffer& b) { return *b.slab()->mr; }
  // Bytes of released buffers kept for reuse (never above the budget).
  size_t cached_bytes() {
    std::lock_guard<std::mutex> lock(mu_);
    return cached_bytes_;
  }

 private:
  Fabric* fabric_;
  size_t cache_budget_;
  std::mutex mu_;
  size_t cached_bytes_ = 0;
  bool closing_ = false;
  std::multimap<size_t, std::shared_ptr<Buffer::Slab>> free_;  // by size
};

}  // namespace rpmp
