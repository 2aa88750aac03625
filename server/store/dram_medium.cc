// DramMedium implementation: first-fit allocation with coalescing free ranges.
#include "server/store/dram_medium.h"

#include <atomic>
#include <cstdlib>
#include <cstring>

#include "common/no_space.h"
#include "server/store/format.h"

namespace rpmp {

namespace {
constexpr uint64_t kRootReserved = 4096;  // the root area sits at offset 0
}

DramMedium::DramMedium(uint64_t capacity)
    : capacity_(store_format::AlignUp(capacity < 2 * kRootReserved ? 2 * kRootReserved
                                                                   : capacity)),
      base_(static_cast<char*>(std::aligned_alloc(4096, capacity_))) {
  std::memset(base_, 0, kRootReserved);
  free_.Give(kRootReserved, capacity_ - kRootReserved);
}

DramMedium::~DramMedium() { std::free(base_); }

StatusOr<uint64_t> DramMedium::Allocate(uint32_t type, uint64_t size, const void* header,
                                        uint64_t header_len) {
  if (size > capacity_)  // before AlignUp, which would wrap near 2^64
    return Status::NoSpace(std::string("dram medium ") + kNoSpaceObjectTooBig + " of " +
                           std::to_string(size) + " bytes");
  uint64_t want = store_format::AlignUp(size);
  std::lock_guard<std::mutex> lock(mu_);
  if (std::optional<uint64_t> offset = free_.Take(want)) {
    objects_[*offset] = Object{type, want};
    std::memcpy(base_ + *offset, header, header_len);
    return *offset;
  }
  return Status::NoSpace(std::string("dram medium has ") + kNoSpaceNoRange + " of " +
                         std::to_string(want) + " bytes");
}

void DramMedium::Free(uint64_t offset) {
  std::lock_guard<std::mutex> lock(mu_);
  auto obj = objects_.find(offset);
  if (obj == objects_.end()) return;
  uint64_t len = obj->second.size;
  objects_.erase(obj);
  free_.Give(offset, len);
}

std::vector<uint64_t> DramMedium::ObjectsOfType(uint32_t type) {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<uint64_t> out;
  for (const auto& [offset, obj] : objects_) {
    if (obj.type == type) out.push_back(offset);
  }
  return out;
}

void DramMedium::Persist(const void*, uint64_t) {
  std::atomic_thread_fence(std::memory_order_seq_cst);
}

}  // namespace rpmp
