// Contract tests of compaction (Store::Compact) on the DRAM store and a libpmemobj
// pool: an overwrite workload leaves dead bytes; compaction copies the live records
// out of mostly-dead segments and frees them, and every key reads the same, in the
// same order, with its write ids still deduplicating, also after a reopen; steps run
// beside concurrent writers; segments that compaction moved records out of keep the
// grace however they die; segments closed less than the settle time ago wait, unless
// the store is short of space. Crash points through compaction are covered in
// store_crash_sim_test.cc and (SIGKILL on PMDK) store_crash_test.cc.
#include <catch2/catch.hpp>
#include <atomic>
#include <map>
#include <thread>
#include <type_traits>

#include "common/no_space.h"
#include "server/store/testing/store_test_util.h"

namespace rpmp {
namespace {

using namespace store_test;  // NOLINT

#define COMPACT_TEST(name) TEMPLATE_TEST_CASE(name, "[contract][compact]", MemBackend, PmemBackend)

// A store whose segments all have kSegmentSize (no growth), over the backend's memory,
// for the tests below that lay records out in one segment on purpose.
template <typename Backend>
std::unique_ptr<Store> OpenFixedSegments(Backend& backend) {
  if constexpr (std::is_same_v<Backend, MemBackend>) {
    std::vector<std::unique_ptr<Medium>> media;
    media.push_back(std::make_unique<BorrowedMedium>(backend.medium.get()));
    return std::move(LogStore::Open(std::move(media), kSegmentSize, kSegmentSize)).value();
  } else {
    StoreOptions options = OptionsFor(backend.path.path());
    options.first_segment_size = kSegmentSize;
    return OpenOrDie(options);
  }
}

using Model = std::map<std::string, std::vector<std::pair<uint64_t, std::string>>>;  // tag, bytes

// Appends to 4 logs and overwrites 8 keys, so older segments become mostly dead.
Model Churn(Store* store, uint64_t writer) {
  Model m;
  uint64_t seq = 0;
  for (uint64_t i = 0; i < 600; i++) {
    std::string v = MakeValue(i, 3000 + i % 2000);
    if (i % 3 == 0) {
      std::string key = "log" + std::to_string(i % 4);
      REQUIRE(Write(store, "ns", key, v, WriteKind::kAppend, i, {writer, ++seq}).ok());
      m[key].push_back({i, v});
    } else {
      std::string key = "k" + std::to_string(i % 8);
      REQUIRE(Write(store, "ns", key, v, WriteKind::kPut, i, {writer, ++seq}).ok());
      m[key] = {{i, v}};
    }
  }
  return m;
}

void CheckModel(Store* store, const Model& m) {
  for (const auto& [key, recs] : m) {
    INFO("key " << key);
    auto view = store->Get("ns", key);
    REQUIRE(view.ok());
    REQUIRE(view->records.size() == recs.size());
    for (size_t i = 0; i < recs.size(); i++) {
      const RecordInfo& r = view->records[i];
      CHECK(r.tag == recs[i].first);
      CHECK(std::string(r.data, r.length) == recs[i].second);
      CHECK(Crc32c(r.data, r.length) == r.crc);
      CHECK(r.offset % 64 == 0);
      if (i > 0) CHECK(view->records[i - 1].commit_seq < r.commit_seq);  // key order kept
    }
  }
}

COMPACT_TEST("compaction frees mostly-dead segments and keeps every record, in order") {
  TestType backend;
  Model m;
  {
    auto store = backend.Open();
    m = Churn(store.get(), 77);
    CheckModel(store.get(), m);
    StoreStats before = store->Stats();
    CHECK(before.dead_bytes > before.live_bytes);
    uint64_t used_before = UsedBytes(store.get());
    CompactOptions o;
    o.min_dead_fraction = 0.5;
    o.max_bytes = ~0ull;
    o.grace = std::chrono::milliseconds(0);
    auto moved = store->Compact(o);
    REQUIRE(moved.ok());
    CHECK(*moved > 0);
    StoreStats after = store->Stats();
    CHECK(after.compacted_segments > 0);
    CHECK(after.compacted_records > 0);
    CHECK(after.compacted_bytes == *moved);
    CHECK(after.dead_bytes < before.dead_bytes / 2);
    CHECK(after.live_bytes == before.live_bytes);
    CHECK(UsedBytes(store.get()) < used_before);
    CheckModel(store.get(), m);
    // Write ids still deduplicate, and FindWrite points at the moved record.
    REQUIRE(Write(store.get(), "ns", "log0", "dup", WriteKind::kAppend, 0, {77, 1}).ok());
    auto view = store->Get("ns", "log0");
    REQUIRE(view.ok());
    WriteOutcome o1 = store->FindWrite("ns", {77, 1});
    CHECK(o1.state == WriteState::kCommitted);
    CHECK(o1.offset == view->records[0].offset);
    CHECK(o1.commit_seq == view->records[0].commit_seq);
    CheckModel(store.get(), m);
    // Nothing left above the threshold: a second step moves nothing.
    CHECK(*store->Compact(o) == 0);
  }
  auto store = backend.Open();  // recovery replays moved records in their original place
  CheckModel(store.get(), m);
  CHECK(store->Stats().dead_bytes < store->Stats().live_bytes);
  // Appends of op i carry seq i + 1; op 9 appended to log1 (its record was moved).
  CHECK(store->FindWrite("ns", {77, 10}).state == WriteState::kCommitted);
  REQUIRE(Write(store.get(), "ns", "log1", "dup", WriteKind::kAppend, 0, {77, 10}).ok());
  CheckModel(store.get(), m);
}

COMPACT_TEST("compaction is throttled per step and keeps emptied segments for the grace") {
  TestType backend;
  auto store = backend.Open();
  Model m = Churn(store.get(), 5);
  CompactOptions o;
  o.min_dead_fraction = 0.5;
  o.max_bytes = 64 << 10;
  o.grace = std::chrono::hours(1);
  auto view = store->Get("ns", "log0");  // a reader holding locations
  REQUIRE(view.ok());
  std::string first(view->records[0].data, view->records[0].length);
  uint64_t used = UsedBytes(store.get());
  auto moved = store->Compact(o);
  REQUIRE(moved.ok());
  CHECK(*moved > 0);
  CHECK(*moved <= (64 << 10) + 8192);  // the budget, plus at most one record
  uint64_t total = *moved;
  for (int i = 0; i < 200; i++) {
    auto more = store->Compact(o);
    REQUIRE(more.ok());
    if (*more == 0) break;
    total += *more;
  }
  CHECK(store->Stats().compacted_segments > 0);
  // Within the grace nothing was freed, and the old locations still hold their bytes.
  CHECK(UsedBytes(store.get()) >= used);
  CHECK(std::string(view->records[0].data, view->records[0].length) == first);
  CheckModel(store.get(), m);
  CHECK(store->Stats().compacted_bytes == total);
}

COMPACT_TEST("a segment compaction moved records out of waits the grace also when overwrites empty it") {
  TestType backend;
  auto store = OpenFixedSegments(backend);
  // Segment A: one small keeper, then big values of k0..k3; overwrite k0..k2 so A is
  // mostly dead but k3 and the keeper stay live in it.
  REQUIRE(Write(store.get(), "ns", "keeper", "keep").ok());
  for (int round = 0; round < 2; round++) {
    for (int k = 0; k < 4; k++) {
      if (round == 1 && k == 3) continue;
      REQUIRE(Write(store.get(), "ns", "k" + std::to_string(k), MakeValue(round * 10 + k, 250000)).ok());
    }
  }
  auto before = store->Get("ns", "keeper");
  REQUIRE(before.ok());
  uint64_t keeper_offset = before->records[0].offset;
  CompactOptions o;
  o.min_dead_fraction = 0.5;
  o.max_bytes = 100;  // moves the keeper only (the first live record), not k3
  o.grace = std::chrono::seconds(2);
  REQUIRE(store->Compact(o).ok());
  auto after = store->Get("ns", "keeper");
  REQUIRE(after.ok());
  REQUIRE(after->records[0].offset != keeper_offset);  // moved
  before = StatusOr<ObjectView>(Status::NotFound("unpinned"));  // drop the view's pin
  after = StatusOr<ObjectView>(Status::NotFound("unpinned"));
  uint64_t used = UsedBytes(store.get());
  // The overwrite of k3 kills the last live record of A: A is not freed (grace).
  REQUIRE(Write(store.get(), "ns", "k3", MakeValue(99, 250000)).ok());
  CHECK(UsedBytes(store.get()) >= used);
  CHECK(ReadAll(store.get(), "ns", "keeper") == "keep");
  // Once the grace has passed, a step frees it (polled, with a deadline).
  o.max_bytes = 0;
  uint64_t held = UsedBytes(store.get());
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (UsedBytes(store.get()) >= held && std::chrono::steady_clock::now() < deadline) {
    REQUIRE(store->Compact(o).ok());
    std::this_thread::sleep_for(std::chrono::milliseconds(10));  // poll
  }
  CHECK(UsedBytes(store.get()) < held);
}

COMPACT_TEST("compaction steps beside concurrent writers and readers keep every key right") {
  TestType backend;
  auto store = backend.Open();
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> steps{0};
  std::thread compactor([&] {
    CompactOptions o;
    o.min_dead_fraction = 0.3;
    o.max_bytes = 128 << 10;
    o.batch_bytes = 8 << 10;
    o.grace = std::chrono::milliseconds(0);
    while (!stop) {
      StatusOr<uint64_t> m = store->Compact(o);
      if (m.ok() && *m > 0) steps++;
    }
  });
  std::map<std::string, std::string> model;
  for (uint64_t i = 0; i < 3000; i++) {
    std::string key = i % 7 == 0 ? "keep" + std::to_string(i) : "hot" + std::to_string(i % 16);
    std::string v = MakeValue(i, 500 + i % 3000);
    Status st = Write(store.get(), "ns", key, v, WriteKind::kPut, i, {9, i + 1});
    if (st.code() == StatusCode::kResourceExhausted) continue;  // the small pool, briefly
    REQUIRE(st.ok());
    model[key] = v;
    if (i % 100 == 99) {
      for (const auto& [k, want] : model) REQUIRE(ReadAll(store.get(), "ns", k) == want);
    }
  }
  stop = true;
  compactor.join();
  CHECK(steps > 0);
  for (const auto& [k, want] : model) CHECK(ReadAll(store.get(), "ns", k) == want);
  // Every id of a live record still deduplicates (its outcome points at the record).
  auto keep = store->Get("ns", "keep0");
  REQUIRE(keep.ok());
  WriteOutcome w = store->FindWrite("ns", {9, 1});
  CHECK(w.state == WriteState::kCommitted);
  CHECK(w.offset == keep->records[0].offset);
}

COMPACT_TEST("compaction leaves segments closed less than the settle time alone, unless short of space") {
  TestType backend;
  auto store = backend.Open();
  Model m = Churn(store.get(), 11);
  CompactOptions o;
  o.min_dead_fraction = 0.5;
  o.max_bytes = ~0ull;
  o.grace = std::chrono::milliseconds(0);
  o.settle = std::chrono::hours(1);
  uint64_t dead = store->Stats().dead_bytes;
  REQUIRE(dead > store->Stats().live_bytes);
  // Every mostly-dead segment closed moments ago: its records may still die by themselves.
  CHECK(*store->Compact(o) == 0);
  CHECK(store->Stats().dead_bytes == dead);
  // Segments found by recovery count as closed long ago.
  store.reset();
  store = backend.Open();
  CheckModel(store.get(), m);
  CHECK(*store->Compact(o) > 0);
  CHECK(store->Stats().dead_bytes < dead / 2);
  CheckModel(store.get(), m);
  // Fresh churn, then the pool filled until a write is refused: the next step compacts
  // the freshly closed segments anyway.
  for (auto& [key, recs] : Churn(store.get(), 12)) {  // logs grow, other keys are replaced
    if (key.rfind("log", 0) == 0) m[key].insert(m[key].end(), recs.begin(), recs.end());
    else m[key] = recs;
  }
  CHECK(*store->Compact(o) == 0);
  Status full = Status::Ok();
  for (int i = 0; i < 1000 && full.ok(); i++) {
    full = Write(store.get(), "fill", "f" + std::to_string(i), MakeValue(i, 256 << 10));
  }
  REQUIRE(IsStoreNoSpace(full));
  CHECK(*store->Compact(o) > 0);
  CheckModel(store.get(), m);
}

}  // namespace
}  // namespace rpmp
