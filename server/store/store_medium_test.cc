// Tests of the media under the store: the DRAM allocator and the fault-injecting
// wrapper, and how the store behaves when allocations fail.
#include <catch2/catch.hpp>

#include "common/no_space.h"
#include "server/store/dram_medium.h"
#include "server/store/testing/fault_medium.h"
#include "server/store/log_store.h"
#include "server/store/testing/store_test_util.h"

namespace rpmp {
namespace {

using namespace store_test;  // NOLINT

TEST_CASE("the DRAM medium allocates, frees, coalesces and enumerates by type", "[medium]") {
  DramMedium medium(1 << 20);
  uint64_t header = 0x1234;
  auto a = medium.Allocate(1, 300000, &header, sizeof(header));
  auto b = medium.Allocate(2, 300000, &header, sizeof(header));
  auto c = medium.Allocate(1, 300000, &header, sizeof(header));
  REQUIRE((a.ok() && b.ok() && c.ok()));
  CHECK(IsStoreNoSpace(medium.Allocate(1, 300000, &header, sizeof(header)).status()));  // the wire phrases
  CHECK(medium.ObjectsOfType(1) == std::vector<uint64_t>{*a, *c});
  CHECK(std::memcmp(medium.base() + *b, &header, sizeof(header)) == 0);
  medium.Free(*a);
  medium.Free(*b);
  auto big = medium.Allocate(3, 600000, &header, sizeof(header));  // needs a+b coalesced
  REQUIRE(big.ok());
  CHECK(*big == *a);
}

TEST_CASE("failed allocations give NoSpace and leave the store usable", "[medium]") {
  std::vector<std::unique_ptr<Medium>> media;
  auto fault = std::make_unique<FaultMedium>(std::make_unique<DramMedium>(kPoolSize));
  FaultMedium* switch_ = fault.get();
  media.push_back(std::move(fault));
  auto opened = LogStore::Open(std::move(media), kSegmentSize);
  REQUIRE(opened.ok());
  Store* store = opened->get();
  REQUIRE(Write(store, "ns", "a", "small").ok());
  switch_->set_fail_allocations(true);
  CHECK(Write(store, "ns", "b", "fits in the active segment").ok());
  Status s = Write(store, "ns", "c", MakeValue(1, kSegmentSize));
  CHECK(IsStoreNoSpace(s));  // what clients recognise as "no space" (common/no_space.h)
  CHECK(store->Alloc(100).status().IsNoSpace());
  CHECK(switch_->failed_allocations() > 0);
  CHECK(ReadAll(store, "ns", "a") == "small");
  CHECK(store->Delete("ns", "a").ok());
  switch_->set_fail_allocations(false);
  CHECK(Write(store, "ns", "c", MakeValue(1, kSegmentSize)).ok());
  CHECK(ReadAll(store, "ns", "c") == MakeValue(1, kSegmentSize));
  CHECK(store->Stats().keys == 2);
}

TEST_CASE("a store needs a pool and a sane segment size", "[medium]") {
  CHECK(LogStore::Open({}, kSegmentSize).status().code() == StatusCode::kInvalidArgument);
  std::vector<std::unique_ptr<Medium>> media;
  media.push_back(std::make_unique<DramMedium>(kPoolSize));
  CHECK(LogStore::Open(std::move(media), 4096).status().code() == StatusCode::kInvalidArgument);
  std::vector<std::unique_ptr<Medium>> small;
  small.push_back(std::make_unique<DramMedium>(16 << 20));
  auto too_big = LogStore::Open(std::move(small), 64 << 20);
  CHECK(too_big.status().code() == StatusCode::kInvalidArgument);
  CHECK(too_big.status().message().find("does not fit in pool") != std::string::npos);
}

}  // namespace
}  // namespace rpmp
