// Helpers shared by the store tests: temporary pool files under /dev/shm, the two
// backends the contract tests run against, and value builders. Tests only.
#pragma once

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "common/crc32c.h"
#include "server/store/dram_medium.h"
#include "server/store/log_store.h"
#include "server/store/open_store.h"
#include "server/store/store.h"
#include "server/store/testing/forwarding_medium.h"

namespace rpmp {
namespace store_test {

constexpr uint64_t kPoolSize = 32ull << 20;
constexpr uint64_t kSegmentSize = 1ull << 20;

// A unique path under /dev/shm, removed when this goes away.
class TempPath {
 public:
  explicit TempPath(const std::string& tag = "pool") {
    static std::atomic<int> counter{0};
    path_ = "/dev/shm/rpmp-store-test-" + std::to_string(getpid()) + "-" +
            std::to_string(counter++) + "-" + tag + ".pool";
    std::remove(path_.c_str());
  }
  ~TempPath() { std::remove(path_.c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

inline StoreOptions OptionsFor(const std::string& path, uint64_t size = kPoolSize) {
  StoreOptions options;
  options.pools.push_back(PoolSpec{path, size});
  options.segment_size = kSegmentSize;
  return options;
}

inline std::unique_ptr<Store> OpenOrDie(const StoreOptions& options) {
  auto store = OpenPmemStore(options);
  if (!store.ok()) {
    std::fprintf(stderr, "open failed: %s\n", store.status().ToString().c_str());
    std::abort();
  }
  return std::move(store).value();
}

// A Medium that forwards to one it does not own, so a test can close a LogStore and
// open another over the same DRAM (a "restart" that keeps the memory).
class BorrowedMedium : public ForwardingMedium {
 public:
  using ForwardingMedium::ForwardingMedium;
};

inline std::unique_ptr<Store> OpenLogStoreOrDie(Medium* medium) {
  std::vector<std::unique_ptr<Medium>> media;
  media.push_back(std::make_unique<BorrowedMedium>(medium));
  auto store = LogStore::Open(std::move(media), kSegmentSize);
  if (!store.ok()) {
    std::fprintf(stderr, "open failed: %s\n", store.status().ToString().c_str());
    std::abort();
  }
  return std::move(store).value();
}

// The contract tests are templated over these. Open() may be called again after the
// previous store was destroyed: it reopens the same memory / pool (a clean restart).
struct MemBackend {
  static constexpr const char* kName = "dram";
  std::unique_ptr<DramMedium> medium = std::make_unique<DramMedium>(kPoolSize);
  std::unique_ptr<Store> Open() { return OpenLogStoreOrDie(medium.get()); }
};

struct PmemBackend {
  static constexpr const char* kName = "pmemobj on /dev/shm";
  TempPath path{"contract"};
  std::unique_ptr<Store> Open() { return OpenOrDie(OptionsFor(path.path())); }
};

// Deterministic bytes for value number `seed`.
inline std::string MakeValue(uint64_t seed, size_t length) {
  std::string v(length, '\0');
  uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
  for (size_t i = 0; i < length; i++) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    v[i] = static_cast<char>(x);
  }
  return v;
}

// Reserve + copy + commit.
inline Status Write(Store* store, const std::string& ns, const std::string& key,
                    const std::string& value, WriteKind kind = WriteKind::kPut,
                    uint64_t tag = 0, WriteId id = {}) {
  WriteSpec spec{ns, key, kind, tag, value.size(), Crc32c(value.data(), value.size()), id};
  StatusOr<Reservation> r = store->Reserve(spec);
  if (!r.ok()) return r.status();
  if (r->duplicate()) return store->Commit(&r.value());
  if (!value.empty()) std::memcpy(r->payload(), value.data(), value.size());
  return store->Commit(&r.value());
}

// The payloads of (ns, key) concatenated; "" with `found` false when absent.
inline std::string ReadAll(Store* store, const std::string& ns, const std::string& key,
                           bool* found = nullptr) {
  auto view = store->Get(ns, key);
  if (found != nullptr) *found = view.ok();
  if (!view.ok()) return "";
  std::string out;
  for (const RecordInfo& rec : view->records) out.append(rec.data, rec.length);
  return out;
}

inline uint64_t UsedBytes(Store* store) {
  uint64_t used = 0;
  for (const PoolStats& p : store->Stats().pools) used += p.used;
  return used;
}

}  // namespace store_test
}  // namespace rpmp
