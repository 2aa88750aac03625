// Tests of the capacity tier (docs/storage-format.md "Tiers") on libpmemobj pools: new
// segments go to the fast pool while it has room, then to the capacity pool; reads come
// from either; after a reopen every record reads back and the tiers keep their roles.
#include <catch2/catch.hpp>

#include <string>

#include "server/store/testing/store_test_util.h"

namespace rpmp {
namespace {

using namespace store_test;  // NOLINT

StoreOptions TieredOptions(const TempPath& fast, const TempPath& capacity) {
  StoreOptions options;
  options.pools.push_back(PoolSpec{fast.path(), 32ull << 20});
  options.pools.push_back(PoolSpec{capacity.path(), 96ull << 20, /*capacity_tier=*/true});
  options.segment_size = kSegmentSize;
  return options;
}

TEST_CASE("the capacity tier takes new segments only when the fast pool is full") {
  TempPath fast("fast"), capacity("capacity");
  auto store = OpenOrDie(TieredOptions(fast, capacity));
  const uint64_t cap_used_at_open = store->Stats().pools[1].used;
  // A little data stays in the fast pool although the capacity pool has more free space.
  REQUIRE(Write(store.get(), "ns", "first", MakeValue(0, 4000)).ok());
  CHECK(store->Stats().pools[1].used == cap_used_at_open);
  // 60 MiB: more than the fast pool holds (PMDK's metadata takes some MiB of it).
  constexpr int kRecords = 240;
  for (int i = 0; i < kRecords; i++) {
    Status s = Write(store.get(), "ns" + std::to_string(i % 4), "k" + std::to_string(i),
                     MakeValue(i, 256 << 10));
    INFO(i << ": " << s.ToString());
    REQUIRE(s.ok());
  }
  StoreStats st = store->Stats();
  INFO("fast used " << st.pools[0].used << ", capacity used " << st.pools[1].used);
  CHECK(st.pools[0].used > (20ull << 20));   // the fast pool was filled first
  CHECK(st.pools[1].used > (30ull << 20));   // the rest went to the capacity tier
  store.reset();
  store = OpenOrDie(TieredOptions(fast, capacity));
  CHECK(ReadAll(store.get(), "ns", "first") == MakeValue(0, 4000));
  for (int i = 0; i < kRecords; i++) {
    REQUIRE(ReadAll(store.get(), "ns" + std::to_string(i % 4), "k" + std::to_string(i)) ==
            MakeValue(i, 256 << 10));
  }
  // Space freed in the fast pool is used again before the capacity tier.
  for (int i = 0; i < kRecords; i += 4) REQUIRE(store->Delete("ns0", "k" + std::to_string(i)).ok());
  const uint64_t cap_used = store->Stats().pools[1].used;
  const uint64_t fast_used = store->Stats().pools[0].used;
  REQUIRE(Write(store.get(), "new", "k", MakeValue(7, 256 << 10)).ok());
  CHECK(store->Stats().pools[0].used > fast_used);
  CHECK(store->Stats().pools[1].used == cap_used);
}

}  // namespace
}  // namespace rpmp
