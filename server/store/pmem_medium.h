// PmemMedium: a Medium over one libpmemobj pool (layout "rpmp-store-v1") in a file,
// on tmpfs, or on a devdax device. OpenPmemMedium creates or opens the pool and turns
// every way that can fail into a Status a person can act on. Called by
// open_store.cc (and tests). Thread-safe after open.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "server/store/medium.h"

struct pmemobjpool;
typedef struct pmemobjpool PMEMobjpool;

namespace rpmp {

// Smallest pool the store creates; PMDK's own minimum is lower, but a store needs
// room for its reserve and a few segments.
constexpr uint64_t kMinPoolSize = 16ull << 20;

class PmemMedium : public Medium {
 public:
  enum class Kind { kPmem, kTmpfs, kFile };
  PmemMedium(PMEMobjpool* pop, std::string path, uint64_t capacity, Kind kind);
  ~PmemMedium() override;

  const std::string& path() const override { return path_; }
  const std::string& promise() const override { return promise_; }
  char* base() const override { return reinterpret_cast<char*>(pop_); }
  uint64_t capacity() const override { return capacity_; }
  uint64_t allocation_overhead() const override { return 64; }
  StatusOr<uint64_t> Allocate(uint32_t type, uint64_t size, const void* header,
                              uint64_t header_len) override;
  void Free(uint64_t offset) override;
  std::vector<uint64_t> ObjectsOfType(uint32_t type) override;
  void Persist(const void* p, uint64_t len) override;
  char* root() const override { return root_; }

 private:
  PMEMobjpool* pop_;
  std::string path_;
  uint64_t capacity_;
  Kind kind_;
  std::string promise_;
  char* root_;
};

// Opens the pool at `path`, creating it with `size` bytes when it does not exist and
// `create_if_missing` is set (size is ignored for devdax devices, which use their
// whole size). With `prefault`, libpmemobj touches every page of the pool while
// opening it (its prefault.at_open / at_create controls; contents are kept), so no
// request pays a first-touch page fault later. Errors name the path and say what to do.
StatusOr<std::unique_ptr<PmemMedium>> OpenPmemMedium(const std::string& path,
                                                     uint64_t size,
                                                     bool create_if_missing,
                                                     bool prefault = false);

}  // namespace rpmp
