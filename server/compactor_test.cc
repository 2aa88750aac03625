// Tests of the background Compactor over a DRAM store: an overwrite workload that
// would fill the store without compaction stays within it while the thread runs,
// every key keeps its last value, the status reports the work, the configured rate
// bounds the bytes copied, and threshold 0 turns it off.
#include "server/compactor.h"

#include <catch2/catch.hpp>
#include <cstring>
#include <map>
#include <thread>

#include "common/crc32c.h"
#include "server/store/open_store.h"

namespace rpmp {
namespace {

constexpr uint64_t kCapacity = 32ull << 20;
constexpr uint64_t kSegment = 1ull << 20;

Status Put(Store* s, const std::string& key, const std::string& v) {
  WriteSpec spec{"ns", key, WriteKind::kPut, 0, v.size(), Crc32c(v.data(), v.size()), {}};
  StatusOr<Reservation> r = s->Reserve(spec);
  if (!r.ok()) return r.status();
  std::memcpy(r->payload(), v.data(), v.size());
  return s->Commit(&r.value());
}

std::string Value(uint64_t i, size_t len) {
  std::string v(len, static_cast<char>('a' + i % 26));
  std::memcpy(v.data(), &i, sizeof(i));
  return v;
}

// 10x the capacity in overwrites of 16 keys, a small kept key every 8 puts (these pin
// every segment: without compaction the store fills). NoSpace is retried for a while.
std::map<std::string, std::string> Overwrite(Store* s, uint64_t* no_space) {
  std::map<std::string, std::string> model;
  for (uint64_t i = 0; i < 10 * kCapacity / (32 << 10); i++) {
    std::string key = i % 8 == 0 ? "keep" + std::to_string(i) : "hot" + std::to_string(i % 16);
    std::string v = Value(i, i % 8 == 0 ? 100 : 32 << 10);
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    Status st;
    while ((st = Put(s, key, v)).code() == StatusCode::kResourceExhausted &&
           std::chrono::steady_clock::now() < deadline) {
      (*no_space)++;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));  // compaction catches up
    }
    REQUIRE(st.ok());
    model[key] = v;
  }
  return model;
}

TEST_CASE("without compaction the overwrite workload fills the store") {
  auto store = NewMemStore(kCapacity, kSegment);
  Status st;
  for (uint64_t i = 0; i < 10 * kCapacity / (32 << 10) && st.ok(); i++) {
    std::string key = i % 8 == 0 ? "keep" + std::to_string(i) : "hot" + std::to_string(i % 16);
    st = Put(store.get(), key, Value(i, i % 8 == 0 ? 100 : 32 << 10));
  }
  CHECK(st.code() == StatusCode::kResourceExhausted);
}

TEST_CASE("the compactor keeps the overwrite workload within the store, values intact") {
  auto store = NewMemStore(kCapacity, kSegment);
  CompactorSettings cs;
  cs.threshold = 0.5;
  cs.rate = 256ull << 20;
  cs.grace = std::chrono::milliseconds(10);
  cs.idle_poll = std::chrono::milliseconds(5);
  Compactor compactor(store.get(), cs);
  CHECK(compactor.status().enabled);
  compactor.Start();
  uint64_t no_space = 0;
  auto model = Overwrite(store.get(), &no_space);
  for (const auto& [key, want] : model) {
    auto view = store->Get("ns", key);
    REQUIRE(view.ok());
    CHECK(std::string(view->records[0].data, view->records[0].length) == want);
  }
  CompactorStatus s = compactor.status();
  StoreStats st = store->Stats();
  INFO("no-space waits " << no_space << ", steps " << s.steps);
  CHECK(s.steps > 0);
  CHECK(s.last_run_unix_ms > 0);
  CHECK(st.compacted_segments > 0);
  compactor.Stop();
  CHECK(!compactor.status().running);
}

TEST_CASE("the compactor's rate bounds the bytes it copies") {
  auto store = NewMemStore(kCapacity, kSegment);
  // 20 segments each ~60% dead: about 8 MiB of live records to move.
  for (uint64_t i = 0; i < 400; i++) REQUIRE(Put(store.get(), "k" + std::to_string(i), Value(i, 40000)).ok());
  for (uint64_t i = 0; i < 400; i++)
    if (i % 5 < 3) REQUIRE(Put(store.get(), "k" + std::to_string(i), Value(i + 1000, 100)).ok());
  CompactorSettings cs;
  cs.threshold = 0.5;
  cs.rate = 2ull << 20;  // 2 MiB/s
  cs.grace = std::chrono::milliseconds(0);
  Compactor compactor(store.get(), cs);
  auto started = std::chrono::steady_clock::now();
  compactor.Start();
  auto deadline = started + std::chrono::seconds(30);
  while (store->Stats().compacted_bytes < (1ull << 20) && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));  // poll
  REQUIRE(store->Stats().compacted_bytes >= (1ull << 20));
  compactor.Stop();
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  uint64_t copied = store->Stats().compacted_bytes;
  INFO("copied " << copied << " bytes in " << seconds << " s");
  // The token bucket lets a step (at most rate/10, >= 64 KiB) go before it waits.
  CHECK(static_cast<double>(copied) <= 2.0 * (1 << 20) * seconds + (256 << 10));
}

TEST_CASE("threshold 0 turns the compactor off") {
  auto store = NewMemStore(kCapacity, kSegment);
  CompactorSettings cs;
  cs.threshold = 0;
  Compactor compactor(store.get(), cs);
  compactor.Start();
  CHECK(!compactor.status().enabled);
  compactor.Stop();
}

}  // namespace
}  // namespace rpmp
