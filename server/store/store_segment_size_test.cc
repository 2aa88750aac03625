// Contract tests of segment sizing (docs/storage-format.md "Segment sizes"), on the DRAM
// store and a libpmemobj pool: a small namespace takes a small first segment, so a
// thousand namespaces of 1 KiB fit where a thousand full segments never could; a
// growing namespace doubles its segments up to the segment size, also across a
// restart; a pool written with fixed-size segments opens and grows on; first segment
// sizes out of range are refused.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "server/store/testing/store_test_util.h"

namespace rpmp {
namespace {

using namespace store_test;  // NOLINT

#define SIZING_TEST(name) TEMPLATE_TEST_CASE(name, "[contract][sizing]", MemBackend, PmemBackend)

uint64_t SegmentCount(Store* store) { return store->Stats().segments; }

SIZING_TEST("a thousand namespaces of 1 KiB take a few KiB each and read back after a restart") {
  TestType backend;
  auto store = backend.Open();
  REQUIRE(Write(store.get(), "first", "k", "x").ok());  // the pool's delete reserve is made
  const uint64_t before = UsedBytes(store.get());
  constexpr int kNamespaces = 1000;
  for (int i = 0; i < kNamespaces; i++) {
    REQUIRE(Write(store.get(), "ns" + std::to_string(i), "k", MakeValue(i, 1024)).ok());
  }
  const uint64_t per_namespace = (UsedBytes(store.get()) - before) / kNamespaces;
  INFO("bytes per 1 KiB namespace: " << per_namespace);
  CHECK(per_namespace <= 4096);  // one first segment; 1000 x 1 MiB would not fit at all
  CHECK(SegmentCount(store.get()) == kNamespaces + 1);
  store.reset();
  store = backend.Open();
  CHECK(SegmentCount(store.get()) == kNamespaces + 1);
  for (int i = 0; i < kNamespaces; i++) {
    REQUIRE(ReadAll(store.get(), "ns" + std::to_string(i), "k") == MakeValue(i, 1024));
  }
  // A small namespace that is deleted gives its space back.
  for (int i = 0; i < kNamespaces; i++) REQUIRE(store->DeleteNamespace("ns" + std::to_string(i)).ok());
  CHECK(UsedBytes(store.get()) == before);
}

SIZING_TEST("a full pool reports no free space that new data could not use") {
  TestType backend;
  auto store = backend.Open();
  REQUIRE(Write(store.get(), "first", "k", "x").ok());  // the pool's delete reserve is made
  const uint64_t capacity = store->Stats().pools[0].capacity;
  CHECK(store->Stats().pools[0].free > capacity / 2);
  // Fill the pool with many small namespaces until a write finds no space.
  int written = 0;
  for (; written < 100000; written++) {
    if (!Write(store.get(), "fill" + std::to_string(written), "k", MakeValue(written, 1024)).ok()) break;
  }
  REQUIRE(written < 100000);
  // The proxy counts a node with 1/16 of its capacity free as having room
  // (nodemap.RoomFraction): a full pool must not, whatever its allocator keeps.
  const uint64_t full_free = store->Stats().pools[0].free;
  INFO("free when full: " << full_free << " of " << capacity);
  CHECK(full_free < capacity / 16);
  // Deleting gives the space back to what is reported.
  for (int i = 0; i < written / 2; i++) REQUIRE(store->DeleteNamespace("fill" + std::to_string(i)).ok());
  CHECK(store->Stats().pools[0].free > full_free + capacity / 4);
}

SIZING_TEST("a growing namespace doubles its segments up to the segment size, across a restart") {
  TestType backend;
  auto store = backend.Open();
  std::vector<std::string> appended;
  auto append = [&](int n) {
    for (int i = 0; i < n; i++) {
      std::string v = MakeValue(appended.size(), 4000);
      REQUIRE(Write(store.get(), "log", "k", v, WriteKind::kAppend).ok());
      appended.push_back(v);
    }
  };
  append(100);  // ~400 KiB: segments of 4, 8, ..., 512 KiB at most
  const uint64_t small_phase = SegmentCount(store.get());
  CHECK(small_phase <= 8);
  CHECK(small_phase >= 5);
  store.reset();
  store = backend.Open();
  append(700);  // ~2.8 MiB more: the rest in 1 MiB segments, never small ones again
  const uint64_t segments = SegmentCount(store.get());
  INFO("segments: " << small_phase << " then " << segments);
  CHECK(segments <= small_phase + 5);
  const uint64_t data = appended.size() * (4000 + 128);
  CHECK(UsedBytes(store.get()) < data + 3 * kSegmentSize);
  std::string all;
  for (const std::string& v : appended) all += v;
  CHECK(ReadAll(store.get(), "log", "k") == all);
}

TEST_CASE("a pool written with fixed-size segments (earlier builds) opens and grows on") {
  TempPath path("fixed");
  StoreOptions fixed = OptionsFor(path.path());
  fixed.first_segment_size = kSegmentSize;  // what every earlier build did
  auto store = OpenOrDie(fixed);
  for (int i = 0; i < 4; i++) REQUIRE(Write(store.get(), "old", "k" + std::to_string(i), MakeValue(i, 1000)).ok());
  CHECK(SegmentCount(store.get()) == 1);
  const uint64_t used = UsedBytes(store.get());
  store.reset();
  store = OpenOrDie(OptionsFor(path.path()));  // this build's growing segments
  for (int i = 0; i < 4; i++) CHECK(ReadAll(store.get(), "old", "k" + std::to_string(i)) == MakeValue(i, 1000));
  // The full-size active segment takes more records; a new namespace starts small.
  REQUIRE(Write(store.get(), "old", "k4", MakeValue(4, 1000)).ok());
  REQUIRE(Write(store.get(), "new", "k", MakeValue(5, 1000)).ok());
  CHECK(SegmentCount(store.get()) == 2);
  CHECK(UsedBytes(store.get()) > used);
  CHECK(UsedBytes(store.get()) <= used + 4096);  // one first segment (4 KiB less PMDK's header)
}

TEST_CASE("first segment sizes out of range are refused") {
  for (uint64_t first : {uint64_t{1024}, uint64_t{2} * kSegmentSize}) {
    std::vector<std::unique_ptr<Medium>> media;
    media.push_back(std::make_unique<DramMedium>(kPoolSize));
    auto opened = LogStore::Open(std::move(media), kSegmentSize, first);
    CHECK(opened.status().code() == StatusCode::kInvalidArgument);
    CHECK(opened.status().message().find("first segment size") != std::string::npos);
  }
}

}  // namespace
}  // namespace rpmp
