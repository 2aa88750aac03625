// BufferPool: registered memory for a Client's transfers, in power-of-two size classes
// (64 KiB and up), each buffer its own mmap'd and registered slab. Released buffers
// are kept for reuse up to a byte budget, so steady-state transfers allocate and
// register nothing. Thread-safe. Internal to client-cpp; must outlive its Buffers.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "rpmp/client.h"
#include "transport/fabric.h"

namespace rpmp {

class BufferPool;

struct Buffer::Slab {
  BufferPool* pool = nullptr;
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
  // Called by ~Buffer: keeps the slab for reuse or frees it.
  void Release(std::shared_ptr<Buffer::Slab> slab);

  static const MemoryRegion& RegionOf(const Buffer& b) { return *b.slab()->mr; }

 private:
  Fabric* fabric_;
  size_t cache_budget_;
  std::mutex mu_;
  size_t cached_bytes_ = 0;
  bool closing_ = false;
  std::multimap<size_t, std::shared_ptr<Buffer::Slab>> free_;  // by size
};

}  // namespace rpmp
