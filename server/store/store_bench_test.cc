// Hidden micro-benchmarks of the store (not run by ctest; run by hand with
//   tests/store_test "[.bench]"
// ). They print figures and check only that the writes succeeded.
#include <catch2/catch.hpp>
#include <chrono>

#include "server/store/testing/store_test_util.h"

namespace rpmp {
namespace {

using namespace store_test;  // NOLINT
using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point since) {
  return std::chrono::duration<double>(Clock::now() - since).count();
}

void WriteMany(const std::string& label, const std::string& pool_path, uint64_t pool_size,
               size_t value_size, int count, bool with_ids = false) {
  StoreOptions options = OptionsFor(pool_path, pool_size);
  options.segment_size = 16 << 20;
  const std::string value = MakeValue(1, value_size);
  {
    auto store = OpenOrDie(options);
    auto start = Clock::now();
    for (int i = 0; i < count; i++) {
      WriteId id = with_ids ? WriteId{42, static_cast<uint64_t>(i + 1)} : WriteId{};
      REQUIRE(Write(store.get(), "bench", "k" + std::to_string(i % 1000), value,
                    WriteKind::kAppend, 0, id).ok());
    }
    double s = Seconds(start);
    std::printf("%-28s %6zu B x %6d: %9.0f records/s, %7.1f MB/s, %6.2f us/record\n",
                label.c_str(), value_size, count, count / s, count * value_size / s / 1e6,
                s / count * 1e6);
  }
  auto start = Clock::now();
  auto store = OpenOrDie(options);
  std::printf("%-28s reopen with %d records: %.1f ms\n", label.c_str(), count,
              Seconds(start) * 1e3);
  CHECK(store->Stats().records == static_cast<uint64_t>(count));
}

TEST_CASE("benchmark: reserve+copy+commit throughput and reopen time", "[.bench]") {
  {
    TempPath path("bench");
    WriteMany("tmpfs pool, 4 KiB", path.path(), 512ull << 20, 4096, 50000);
  }
  {
    TempPath path("bench");
    WriteMany("tmpfs pool, 1 MiB", path.path(), 512ull << 20, 1 << 20, 400);
  }
  {
    TempPath path("bench");
    WriteMany("tmpfs pool, 64 B", path.path(), 256ull << 20, 64, 200000);
  }
  {
    TempPath path("bench");
    WriteMany("tmpfs pool, 64 B, write ids", path.path(), 256ull << 20, 64, 200000, true);
  }
  {
    TempPath path("bench");
    WriteMany("tmpfs pool, 64 B", path.path(), 256ull << 20, 64, 200000);
  }
  std::string disk = "/var/tmp/rpmp-store-bench.pool";
  std::remove(disk.c_str());
  WriteMany("disk file (msync), 4 KiB", disk, 128ull << 20, 4096, 2000);
  std::remove(disk.c_str());
}

// Gets of keys drawn uniformly from `count` keys of YCSB's shape ("user" and 19 digits,
// past std::string's inline size): the index lookup, the pin and the record view.
void GetMany(const std::string& pool_path, int count, int gets) {
  StoreOptions options = OptionsFor(pool_path, 1ull << 30);
  options.segment_size = 16 << 20;
  auto store = OpenOrDie(options);
  const std::string value = MakeValue(1, 100);
  auto key = [](uint64_t i) { return "user" + std::to_string(1000000000000000000ull + i * 7919); };
  for (int i = 0; i < count; i++) REQUIRE(Write(store.get(), "bench", key(i), value).ok());
  std::vector<std::string> probes;
  uint64_t x = 88172645463325252ull;
  for (int i = 0; i < gets; i++) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;  // xorshift: cheap, fixed sequence
    probes.push_back(key(x % count));
  }
  auto start = Clock::now();
  for (const std::string& k : probes) REQUIRE(store->Get("bench", k).ok());
  double s = Seconds(start);
  std::printf("get of 1 of %8d keys (100 B values): %7.0f ns/get\n", count, s / gets * 1e9);
}

TEST_CASE("benchmark: get of a random key among many", "[.bench]") {
  for (int count : {1000, 100000, 1000000}) {
    TempPath path("bench");
    GetMany(path.path(), count, 1000000);
  }
}

}  // namespace
}  // namespace rpmp
