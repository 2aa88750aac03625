// Contract tests of the Store interface (store.h), run against both the DRAM store
// and a libpmemobj pool on /dev/shm. Written once; every backend must pass them.
#include <catch2/catch.hpp>
#include <atomic>
#include <map>
#include <thread>

#include "common/no_space.h"
#include "server/store/testing/store_test_util.h"

namespace rpmp {
namespace {

using namespace store_test;  // NOLINT

#define CONTRACT_TEST(name) TEMPLATE_TEST_CASE(name, "[contract]", MemBackend, PmemBackend)

CONTRACT_TEST("put/get round trip of 0 B, 1 B, 4 KiB and larger-than-segment values") {
  TestType backend;
  auto store = backend.Open();
  for (size_t len : {size_t{0}, size_t{1}, size_t{4096}, size_t{kSegmentSize + 12345}}) {
    std::string key = "k" + std::to_string(len);
    std::string value = MakeValue(len, len);
    REQUIRE(Write(store.get(), "ns", key, value, WriteKind::kPut, 7).ok());
    auto view = store->Get("ns", key);
    REQUIRE(view.ok());
    REQUIRE(view->records.size() == 1);
    CHECK(view->total_length == len);
    CHECK(view->records[0].tag == 7);
    CHECK(view->records[0].crc == Crc32c(value.data(), value.size()));
    CHECK(std::string(view->records[0].data, len) == value);
    const MemoryArea area = store->Areas()[view->records[0].pool];
    CHECK(area.base + view->records[0].offset == view->records[0].data);
  }
}

CONTRACT_TEST("appends keep their order and tags, and a put replaces them") {
  TestType backend;
  auto store = backend.Open();
  for (uint64_t i = 0; i < 20; i++) {
    REQUIRE(Write(store.get(), "ns", "obj", MakeValue(i, 100 + i), WriteKind::kAppend, i).ok());
  }
  auto view = store->Get("ns", "obj");
  REQUIRE(view.ok());
  REQUIRE(view->records.size() == 20);
  for (uint64_t i = 0; i < 20; i++) {
    CHECK(view->records[i].tag == i);
    CHECK(std::string(view->records[i].data, view->records[i].length) == MakeValue(i, 100 + i));
  }
  REQUIRE(Write(store.get(), "ns", "obj", "fresh", WriteKind::kPut, 99).ok());
  view = store->Get("ns", "obj");
  REQUIRE(view.ok());
  REQUIRE(view->records.size() == 1);
  CHECK(view->records[0].tag == 99);
  CHECK(ReadAll(store.get(), "ns", "obj") == "fresh");
}

CONTRACT_TEST("delete removes a key, and deleting a missing key is NotFound") {
  TestType backend;
  auto store = backend.Open();
  REQUIRE(Write(store.get(), "ns", "a", "x", WriteKind::kAppend).ok());
  REQUIRE(Write(store.get(), "ns", "a", "y", WriteKind::kAppend).ok());
  REQUIRE(store->Delete("ns", "a").ok());
  CHECK(store->Get("ns", "a").status().IsNotFound());
  CHECK(store->Delete("ns", "a").IsNotFound());
  CHECK(store->Delete("ns", "never").IsNotFound());
  CHECK(store->Delete("no-such-ns", "a").IsNotFound());
  REQUIRE(Write(store.get(), "ns", "a", "again").ok());
  CHECK(ReadAll(store.get(), "ns", "a") == "again");
}

CONTRACT_TEST("list pages through keys with start_after, max and more") {
  TestType backend;
  auto store = backend.Open();
  for (int i = 0; i < 25; i++) {
    char key[8];
    std::snprintf(key, sizeof(key), "k%02d", i);
    REQUIRE(Write(store.get(), "ns", key, std::string(i, 'v')).ok());
  }
  std::vector<std::string> seen;
  std::string after;
  for (;;) {
    auto page = store->List("ns", after, 10);
    REQUIRE(page.ok());
    for (const StoredKey& k : page->keys) seen.push_back(k.key);
    if (!page->more) break;
    after = page->keys.back().key;
  }
  REQUIRE(seen.size() == 25);
  CHECK(seen.front() == "k00");
  CHECK(seen.back() == "k24");
  auto page = store->List("ns", "k03", 1);
  REQUIRE(page.ok());
  REQUIRE(page->keys.size() == 1);
  CHECK(page->keys[0].key == "k04");
  CHECK(page->keys[0].total_length == 4);
  CHECK(page->keys[0].records == 1);
  CHECK(page->more);
  auto empty = store->List("unknown", "", 10);
  REQUIRE(empty.ok());
  CHECK(empty->keys.empty());
  CHECK_FALSE(empty->more);
}

CONTRACT_TEST("invalid namespace and key names are rejected") {
  TestType backend;
  auto store = backend.Open();
  const std::string long_ns(kMaxNamespaceLength + 1, 'n');
  const std::string long_key(kMaxKeyLength + 1, 'k');
  auto code = [](const Status& s) { return s.code(); };
  CHECK(code(Write(store.get(), "", "k", "v")) == StatusCode::kInvalidArgument);
  CHECK(code(Write(store.get(), "ns", "", "v")) == StatusCode::kInvalidArgument);
  CHECK(code(Write(store.get(), long_ns, "k", "v")) == StatusCode::kInvalidArgument);
  CHECK(code(Write(store.get(), "ns", long_key, "v")) == StatusCode::kInvalidArgument);
  CHECK(code(store->Get("", "k").status()) == StatusCode::kInvalidArgument);
  CHECK(code(store->Delete("ns", long_key)) == StatusCode::kInvalidArgument);
  CHECK(code(store->List(long_ns, "", 1).status()) == StatusCode::kInvalidArgument);
  const std::string max_ns(kMaxNamespaceLength, 'n');
  const std::string max_key(kMaxKeyLength, 'k');
  REQUIRE(Write(store.get(), max_ns, max_key, "ok").ok());
  CHECK(ReadAll(store.get(), max_ns, max_key) == "ok");
}

CONTRACT_TEST("aborted reservations, explicit or by destruction, stay invisible") {
  TestType backend;
  auto store = backend.Open();
  {
    auto r = store->Reserve(WriteSpec{"ns", "gone", WriteKind::kPut, 0, 10, 0, {}});
    REQUIRE(r.ok());
    std::memset(r->payload(), 'x', 10);
    store->Abort(&r.value());
    CHECK_FALSE(r->valid());
  }
  {
    auto r = store->Reserve(WriteSpec{"ns", "dropped", WriteKind::kPut, 0, 10, 0, {}});
    REQUIRE(r.ok());
  }  // destroyed uncommitted
  REQUIRE(Write(store.get(), "ns", "kept", "value").ok());
  CHECK(store->Get("ns", "gone").status().IsNotFound());
  CHECK(store->Get("ns", "dropped").status().IsNotFound());
  CHECK(ReadAll(store.get(), "ns", "kept") == "value");
  Reservation empty;
  CHECK(store->Commit(&empty).code() == StatusCode::kInvalidArgument);
  auto huge = store->Reserve(WriteSpec{"ns", "huge", WriteKind::kPut, 0, ~0ull, 0, {}});
  CHECK(huge.status().code() == StatusCode::kInvalidArgument);
  auto big = store->Reserve(WriteSpec{"ns", "big", WriteKind::kPut, 0, 1ull << 40, 0, {}});
  CHECK(IsStoreNoSpace(big.status()));
}

// Four threads write `per_thread` records each, to one namespace or to four.
template <typename Backend>
void RunConcurrentCommitters(bool separate_namespaces) {
  Backend backend;
  auto store = backend.Open();
  constexpr int kThreads = 4, kPerThread = 200;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; t++) {
    threads.emplace_back([&, t] {
      std::string ns = separate_namespaces ? "ns" + std::to_string(t) : "shared";
      for (int i = 0; i < kPerThread; i++) {
        std::string key = "t" + std::to_string(t) + "-" + std::to_string(i % 10);
        uint64_t seed = t * 1000 + i;
        if (!Write(store.get(), ns, key, MakeValue(seed, 500 + i), WriteKind::kAppend, seed).ok()) {
          std::abort();
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; t++) {
    std::string ns = separate_namespaces ? "ns" + std::to_string(t) : "shared";
    for (int k = 0; k < 10; k++) {
      auto view = store->Get(ns, "t" + std::to_string(t) + "-" + std::to_string(k));
      REQUIRE(view.ok());
      REQUIRE(view->records.size() == kPerThread / 10);
      for (size_t j = 0; j < view->records.size(); j++) {
        const RecordInfo& rec = view->records[j];
        CHECK(rec.tag == static_cast<uint64_t>(t * 1000 + k + 10 * j));  // append order
        CHECK(Crc32c(rec.data, rec.length) == rec.crc);
      }
    }
  }
  CHECK(store->Stats().records == kThreads * kPerThread);
}

CONTRACT_TEST("concurrent committers on one namespace and on separate namespaces") {
  RunConcurrentCommitters<TestType>(false);
  RunConcurrentCommitters<TestType>(true);
}

CONTRACT_TEST("a full pool says NoSpace, and reads and deletes still work and free space") {
  TestType backend;
  auto store = backend.Open();
  const std::string value = MakeValue(1, 600 << 10);  // one record per segment
  int written = 0;
  Status s;
  while ((s = Write(store.get(), "ns", "k" + std::to_string(written), value)).ok()) written++;
  CHECK(s.IsNoSpace());
  CHECK(s.message().find("free") != std::string::npos);
  REQUIRE(written > 10);
  CHECK(ReadAll(store.get(), "ns", "k0") == value);
  uint64_t used_full = UsedBytes(store.get());
  REQUIRE(store->Delete("ns", "k0").ok());
  REQUIRE(store->Delete("ns", "k1").ok());
  CHECK(UsedBytes(store.get()) < used_full);
  CHECK(Write(store.get(), "ns", "after", value).ok());
  CHECK(ReadAll(store.get(), "ns", "after") == value);
  CHECK(Write(store.get(), "ns", "tiny", "t").ok());
}

CONTRACT_TEST("a delete in a full pool uses the emergency reserve") {
  TestType backend;
  auto store = backend.Open();
  // "victim" fills its segment exactly, so its tombstone needs a new segment.
  const uint64_t fill = kSegmentSize - 64 /* pmdk overhead, 0 for dram */ - 384 - 64 - 64;
  const uint64_t exact = std::string(TestType::kName) == "dram" ? fill + 64 : fill;
  REQUIRE(Write(store.get(), "victim", "k", MakeValue(2, exact)).ok());
  const std::string value = MakeValue(1, 600 << 10);
  int written = 0;
  while (Write(store.get(), "filler", "k" + std::to_string(written), value).ok()) written++;
  // Small segments still fit in the gaps: fill those too, until one byte does not fit.
  for (size_t len : {size_t{16} << 10, size_t{1}}) {
    int n = 0;
    while (Write(store.get(), "filler", "s" + std::to_string(len) + "-" + std::to_string(n),
                 MakeValue(n, len)).ok()) {
      n++;
    }
  }
  CHECK(Write(store.get(), "victim", "k2", "x").IsNoSpace());
  Status deleted = store->Delete("victim", "k");
  INFO(deleted.ToString());
  REQUIRE(deleted.ok());
  CHECK(store->Get("victim", "k").status().IsNotFound());
  CHECK(ReadAll(store.get(), "filler", "k0") == value);
  // Freeing filler space lets the reserve come back and writes proceed.
  for (int i = 0; i < 6; i++) REQUIRE(store->Delete("filler", "k" + std::to_string(i)).ok());
  CHECK(Write(store.get(), "filler", "again", value).ok());
}

CONTRACT_TEST("raw memory: alloc, write, resolve, free, and bad addresses rejected") {
  TestType backend;
  auto store = backend.Open();
  CHECK(store->Alloc(0).status().code() == StatusCode::kInvalidArgument);
  auto addr = store->Alloc(10000);
  REQUIRE(addr.ok());
  auto p = store->ResolveRaw(*addr, 10000);
  REQUIRE(p.ok());
  std::memset(*p, 0xAB, 10000);
  store->PersistRaw(*p, 10000);
  auto middle = store->ResolveRaw(RawAddress{addr->pool, addr->offset + 5000}, 5000);
  REQUIRE(middle.ok());
  CHECK(*middle == *p + 5000);
  CHECK(static_cast<unsigned char>((*middle)[4999]) == 0xAB);
  CHECK(store->ResolveRaw(RawAddress{addr->pool, addr->offset + 5000}, 5001).status().code() ==
        StatusCode::kOutOfRange);
  CHECK(store->ResolveRaw(RawAddress{addr->pool, addr->offset + 10000}, 1).status().IsNotFound());
  CHECK(store->ResolveRaw(RawAddress{99, addr->offset}, 1).status().IsNotFound());
  CHECK(store->Free(RawAddress{addr->pool, addr->offset + 8}).IsNotFound());
  uint64_t used = UsedBytes(store.get());
  REQUIRE(store->Free(*addr).ok());
  CHECK(UsedBytes(store.get()) < used);
  CHECK(store->ResolveRaw(*addr, 1).status().IsNotFound());
  CHECK(store->Free(*addr).IsNotFound());
  CHECK(store->Alloc(1ull << 40).status().IsNoSpace());
}

CONTRACT_TEST("raw memory: sizes near 2^64 are refused before any arithmetic, nothing leaks") {
  TestType backend;
  auto store = backend.Open();
  uint64_t used = UsedBytes(store.get());
  // kRawHeaderSize + size wrapped for these: the store allocated a few bytes and the
  // server then leaked them (ResolveRaw failed and nothing freed them).
  for (uint64_t size : {~0ull, ~0ull - 47, ~0ull - 62, ~0ull - 63, ~0ull - 64, 1ull << 63}) {
    INFO("size " << size);
    CHECK(store->Alloc(size).status().IsNoSpace());
    CHECK(UsedBytes(store.get()) == used);
  }
  auto addr = store->Alloc(10000);
  REQUIRE(addr.ok());
  CHECK(store->ResolveRaw(*addr, 10000).ok());
  REQUIRE(store->Free(*addr).ok());
}

CONTRACT_TEST("DeleteNamespace frees its space and its keys") {
  TestType backend;
  auto store = backend.Open();
  for (int i = 0; i < 8; i++) {
    REQUIRE(Write(store.get(), "doomed", "k" + std::to_string(i), MakeValue(i, 300 << 10)).ok());
  }
  REQUIRE(Write(store.get(), "kept", "k", "v").ok());
  uint64_t used = UsedBytes(store.get());
  CHECK(store->Stats().namespaces == 2);
  REQUIRE(store->DeleteNamespace("doomed").ok());
  CHECK(UsedBytes(store.get()) + 2 * kSegmentSize < used);
  CHECK(store->Get("doomed", "k0").status().IsNotFound());
  CHECK(store->DeleteNamespace("doomed").IsNotFound());
  CHECK(store->Stats().namespaces == 1);
  CHECK(ReadAll(store.get(), "kept", "k") == "v");
  REQUIRE(Write(store.get(), "doomed", "k0", "reborn").ok());
  CHECK(ReadAll(store.get(), "doomed", "k0") == "reborn");
}

CONTRACT_TEST("deleting every key of a namespace frees all its segments") {
  TestType backend;
  auto store = backend.Open();
  REQUIRE(Write(store.get(), "warmup", "k", "v").ok());  // establishes the reserve
  REQUIRE(store->Delete("warmup", "k").ok());
  const uint64_t baseline = UsedBytes(store.get());
  for (int i = 0; i < 5; i++) {
    REQUIRE(Write(store.get(), "ns", "k" + std::to_string(i), MakeValue(i, 400 << 10)).ok());
  }
  CHECK(UsedBytes(store.get()) > baseline + 2 * kSegmentSize);
  for (int i = 0; i < 5; i++) REQUIRE(store->Delete("ns", "k" + std::to_string(i)).ok());
  CHECK(UsedBytes(store.get()) == baseline);
  CHECK(store->Stats().namespaces == 0);
  CHECK(store->DeleteNamespace("ns").IsNotFound());
  REQUIRE(Write(store.get(), "ns", "k0", "back").ok());
  CHECK(ReadAll(store.get(), "ns", "k0") == "back");
}

CONTRACT_TEST("a write in flight when its namespace is deleted does not commit") {
  TestType backend;
  auto store = backend.Open();
  REQUIRE(Write(store.get(), "ns", "old", "v").ok());
  auto r = store->Reserve(WriteSpec{"ns", "late", WriteKind::kPut, 0, 5, 0, {}});
  REQUIRE(r.ok());
  std::memcpy(r->payload(), "hello", 5);
  REQUIRE(store->DeleteNamespace("ns").ok());
  CHECK(store->Commit(&r.value()).code() == StatusCode::kFailedPrecondition);
  CHECK(store->Get("ns", "late").status().IsNotFound());
  CHECK(store->Get("ns", "old").status().IsNotFound());
  REQUIRE(Write(store.get(), "ns", "late", "again").ok());
  CHECK(ReadAll(store.get(), "ns", "late") == "again");
}

CONTRACT_TEST("a view pins its memory until dropped") {
  TestType backend;
  auto store = backend.Open();
  const std::string value = MakeValue(5, 700 << 10);
  REQUIRE(Write(store.get(), "ns", "pinned", value).ok());
  REQUIRE(Write(store.get(), "ns", "other", MakeValue(6, 700 << 10)).ok());  // new active
  auto view = store->Get("ns", "pinned");
  REQUIRE(view.ok());
  REQUIRE(store->Delete("ns", "pinned").ok());
  uint64_t used_pinned = UsedBytes(store.get());
  for (int i = 0; i < 3; i++) {
    REQUIRE(Write(store.get(), "ns", "fill" + std::to_string(i), MakeValue(7, 700 << 10)).ok());
  }
  CHECK(std::string(view->records[0].data, view->records[0].length) == value);
  uint64_t before_drop = UsedBytes(store.get());
  CHECK(before_drop > used_pinned);
  view = Status::NotFound("dropped");
  CHECK(UsedBytes(store.get()) + kSegmentSize / 2 < before_drop);
}

CONTRACT_TEST("mixed readers, writers, deleters and namespace deleters agree") {
  TestType backend;
  auto store = backend.Open();
  std::atomic<bool> failed{false};
  auto writer = [&](int t) {
    for (int i = 0; i < 300; i++) {
      std::string ns = "ns" + std::to_string(i % 3);
      std::string key = "k" + std::to_string((i * 7 + t) % 11);
      WriteKind kind = i % 4 == 0 ? WriteKind::kPut : WriteKind::kAppend;
      Status s = Write(store.get(), ns, key, MakeValue(i, 100 + (i * 131) % 5000), kind, i);
      // A namespace deleted between Reserve and Commit is the only allowed failure.
      if (!s.ok() && s.code() != StatusCode::kFailedPrecondition) failed = true;
      if (i % 9 == 0) {
        Status d = store->Delete(ns, key);
        if (!d.ok() && !d.IsNotFound()) failed = true;
      }
    }
  };
  auto reader = [&] {
    for (int i = 0; i < 600; i++) {
      auto view = store->Get("ns" + std::to_string(i % 3), "k" + std::to_string(i % 11));
      if (!view.ok()) continue;
      for (const RecordInfo& rec : view->records) {
        if (Crc32c(rec.data, rec.length) != rec.crc) failed = true;
      }
      if (i % 200 == 199) store->DeleteNamespace("ns" + std::to_string(i % 3));
    }
  };
  std::vector<std::thread> threads;
  threads.emplace_back(writer, 0);
  threads.emplace_back(writer, 1);
  threads.emplace_back(reader);
  for (auto& th : threads) th.join();
  CHECK_FALSE(failed);
  StoreStats stats = store->Stats();
  uint64_t records = 0;
  for (int n = 0; n < 3; n++) {
    auto page = store->List("ns" + std::to_string(n), "", 100);
    REQUIRE(page.ok());
    for (const StoredKey& k : page->keys) records += k.records;
  }
  CHECK(records == stats.records);
}

CONTRACT_TEST("stats count namespaces, keys, records and live bytes") {
  TestType backend;
  auto store = backend.Open();
  REQUIRE(Write(store.get(), "a", "k1", "12345", WriteKind::kAppend).ok());
  REQUIRE(Write(store.get(), "a", "k1", "678", WriteKind::kAppend).ok());
  REQUIRE(Write(store.get(), "b", "k1", "xy").ok());
  StoreStats stats = store->Stats();
  CHECK(stats.namespaces == 2);
  CHECK(stats.keys == 2);
  CHECK(stats.records == 3);
  CHECK(stats.live_bytes == 10);
  CHECK(stats.node_id != 0);
  CHECK(stats.node_id == store->NodeId());
  REQUIRE(stats.pools.size() == 1);
  CHECK(stats.pools[0].capacity >= kPoolSize - (1 << 20));
  CHECK(stats.pools[0].used + stats.pools[0].free == stats.pools[0].capacity);
  CHECK(store->Areas().size() == 1);
}

CONTRACT_TEST("namespace bytes: by prefix (quotas) and over a size (large namespaces), deleted ones left out") {
  TestType backend;
  auto store = backend.Open();
  REQUIRE(Write(store.get(), "app/a", "k", MakeValue(1, 100000), WriteKind::kAppend).ok());
  REQUIRE(Write(store.get(), "app/b", "k", MakeValue(2, 1000), WriteKind::kAppend).ok());
  REQUIRE(Write(store.get(), "apple", "k", MakeValue(3, 200000), WriteKind::kAppend).ok());
  auto bytes_of = [](const std::vector<NamespaceUsage>& v) {
    std::map<std::string, uint64_t> m;
    for (const NamespaceUsage& u : v) m[u.ns] = u.bytes;
    return m;
  };
  std::map<std::string, uint64_t> app = bytes_of(store->NamespaceBytes({"app"}));
  REQUIRE(app.size() == 2);  // "apple" is not under "app/"
  CHECK(app["app/a"] >= 100000);
  CHECK(app["app/a"] < 100000 + 4096);
  CHECK(app["app/b"] >= 1000);
  std::map<std::string, uint64_t> large = bytes_of(store->NamespacesOver(50000));
  REQUIRE(large.size() == 2);
  CHECK(large["app/a"] == app["app/a"]);
  CHECK(large["apple"] >= 200000);
  REQUIRE(store->DeleteNamespace("apple").ok());
  large = bytes_of(store->NamespacesOver(50000));
  CHECK(large.size() == 1);
  CHECK(large.count("app/a") == 1);
}

}  // namespace
}  // namespace rpmp
