// CrashSimMedium: a DRAM Medium that simulates what persistent memory keeps at a
// power failure, to test the store's commit ordering (tmpfs cannot: it keeps every
// store). It holds two images: the one the program reads and writes, and the durable
// one. Persist() copies the covered 64-byte cache lines to the durable image (a flush
// plus fence). Allocate/Free are atomic and durable, as the Medium contract says.
//
// Arm(n) makes the n-th Persist() after arming the crash point: just before that
// persist takes effect, a crash image is cut: the durable image, plus each other
// dirty line (differing from the durable copy) with probability 1/2, drawn from a
// seeded generator (replayable). The program runs on; its later writes do not reach
// the image. CrashSimMedium(image) opens a medium over that image, for recovery.
//
// Realism knobs: new objects are filled with random bytes (stale data of freed
// memory) in both images, and with `pmdk_offsets` objects start at 16 mod 64, as
// PMDK's allocation header places them. Tests only. Thread-safe (one mutex).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <vector>

#include "server/store/free_ranges.h"
#include "server/store/medium.h"

namespace rpmp {

struct CrashImage {
  std::vector<char> bytes;
  std::map<uint64_t, std::pair<uint32_t, uint64_t>> objects;  // offset -> (type, size)
  uint64_t capacity = 0;
  bool pmdk_offsets = false;
};

class CrashSimMedium : public Medium {
 public:
  CrashSimMedium(uint64_t capacity, uint64_t seed, bool pmdk_offsets);
  // A medium whose both images are `image` (the state after the crash).
  explicit CrashSimMedium(const CrashImage& image, uint64_t seed = 1);
  ~CrashSimMedium() override;

  // Cuts the crash image at the n-th Persist from now (n >= 1).
  void Arm(uint64_t n);
  bool crashed() const;
  CrashImage TakeImage();          // the image cut at the crash point
  uint64_t persists() const;       // Persist calls since construction or Arm
  CrashImage ImageNow();           // a crash right now (for tests of the medium)

  const std::string& path() const override { return path_; }
  const std::string& promise() const override { return promise_; }
  char* base() const override { return base_; }
  uint64_t capacity() const override { return capacity_; }
  uint64_t allocation_overhead() const override { return pmdk_offsets_ ? 64 : 0; }
  StatusOr<uint64_t> Allocate(uint32_t type, uint64_t size, const void* header,
                              uint64_t header_len) override;
  void Free(uint64_t offset) override;
  std::vector<uint64_t> ObjectsOfType(uint32_t type) override;
  void Persist(const void* p, uint64_t len) override;
  char* root() const override { return base_; }

 private:
  void Init();
  void MakeDurable(uint64_t offset, uint64_t len);  // mu_ held
  CrashImage Cut();                                 // mu_ held

  const std::string path_ = "crash-sim";
  const std::string promise_ = "pmem (flush)";
  uint64_t capacity_;
  bool pmdk_offsets_;
  char* base_ = nullptr;
  std::vector<char> durable_;
  mutable std::mutex mu_;
  std::mt19937_64 rng_;
  FreeRanges free_;  // 64-aligned chunks
  std::map<uint64_t, std::pair<uint32_t, uint64_t>> objects_;  // user offset -> (type, size)
  std::map<uint64_t, std::pair<uint64_t, uint64_t>> chunks_;   // user offset -> (chunk, len)
  uint64_t persists_ = 0;
  uint64_t crash_at_ = 0;  // 0 = not armed
  bool crashed_ = false;
  CrashImage image_;
};

}  // namespace rpmp
