// DramMedium: a Medium over one heap buffer with a first-fit allocator. For unit
// tests (NewMemStore) only: nothing survives the process. Thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "server/store/free_ranges.h"
#include "server/store/medium.h"

namespace rpmp {

class DramMedium : public Medium {
 public:
  explicit DramMedium(uint64_t capacity);
  ~DramMedium() override;

  const std::string& path() const override { return path_; }
  const std::string& promise() const override { return promise_; }
  char* base() const override { return base_; }
  uint64_t capacity() const override { return capacity_; }
  uint64_t allocation_overhead() const override { return 0; }
  StatusOr<uint64_t> Allocate(uint32_t type, uint64_t size, const void* header,
                              uint64_t header_len) override;
  void Free(uint64_t offset) override;
  std::vector<uint64_t> ObjectsOfType(uint32_t type) override;
  void Persist(const void* p, uint64_t len) override;
  char* root() const override { return base_; }

 private:
  struct Object {
    uint32_t type;
    uint64_t size;
  };
  const std::string path_ = "dram";
  const std::string promise_ = "dram";
  uint64_t capacity_;
  char* base_;
  std::mutex mu_;
  FreeRanges free_;                     // under mu_
  std::map<uint64_t, Object> objects_;  // offset -> object
};

}  // namespace rpmp
