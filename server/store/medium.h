// Medium: the small storage interface the log-structured store (log_store.*) is
// written against once. Implementations: PmemMedium (a libpmemobj pool, production),
// DramMedium (heap memory, unit tests), FaultMedium (wraps another, fails allocations
// on a switch, tests). Only server/store/ code uses it.
//
// Offsets are relative to base(); an allocation's offset names its first byte.
// Thread-safety: Allocate/Free/Persist may be called concurrently; ObjectsOfType is
// only called while nothing else runs (at open).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"

namespace rpmp {

class Medium {
 public:
  virtual ~Medium() = default;

  // Where it lives ("/dev/shm/x.pool", "dram").
  virtual const std::string& path() const = 0;
  // What persist() promises: "pmem (flush)", "file (msync)",
  // "tmpfs (survives process crash, not reboot)", "dram".
  virtual const std::string& promise() const = 0;
  // Start and size of the whole mapped pool.
  virtual char* base() const = 0;
  virtual uint64_t capacity() const = 0;
  // Bytes the medium spends per allocation besides the object (PMDK's header).
  virtual uint64_t allocation_overhead() const = 0;

  // Atomically allocates `size` bytes of object type `type` whose first `header_len`
  // bytes are a copy of `header`, durable before the object becomes reachable.
  // Returns the offset of the object, or NoSpace.
  virtual StatusOr<uint64_t> Allocate(uint32_t type, uint64_t size, const void* header,
                                      uint64_t header_len) = 0;
  // Frees the object starting at `offset` (atomically: it is gone or it is not).
  virtual void Free(uint64_t offset) = 0;
  // Offsets of all objects of `type`.
  virtual std::vector<uint64_t> ObjectsOfType(uint32_t type) = 0;

  // Makes [p, p+len) durable to the degree promise() says.
  virtual void Persist(const void* p, uint64_t len) = 0;
  // The root area: kRootSize bytes, zero-filled when the pool was just created.
  virtual char* root() const = 0;
};

}  // namespace rpmp
