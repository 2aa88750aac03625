// Contract tests of Store::SetSegmentRegistrar (the hook the server uses to give each
// segment its own remote key, docs/security.md): every segment is registered once,
// with its namespace and exactly its memory, existing ones when the registrar is set
// and new ones at creation; records point at their segment's access; the access is
// destroyed (revoked) when the segment is freed, on a namespace delete, on reclaim and
// on compaction; a failing registration fails the write with the registrar's error.
#include <catch2/catch.hpp>
#include <map>
#include <mutex>

#include "server/store/testing/store_test_util.h"

namespace rpmp {
namespace {

using namespace store_test;  // NOLINT

// Records what is registered and what is still alive.
struct FakeRegistrar : SegmentRegistrar {
  struct Entry {
    std::string ns;
    uint32_t pool = 0;
    char* base = nullptr;
    uint64_t size = 0;
  };
  struct Access : SegmentAccess {
    FakeRegistrar* owner;
    int id;
    Access(FakeRegistrar* o, int i) : owner(o), id(i) {}
    ~Access() override {
      std::lock_guard<std::mutex> lock(owner->mu);
      owner->live.erase(id);
    }
  };
  std::mutex mu;
  std::map<int, Entry> live;
  int next = 0;
  bool fail = false;

  StatusOr<std::unique_ptr<SegmentAccess>> Register(const std::string& ns, uint32_t pool, char* base,
                                                    uint64_t size) override {
    std::lock_guard<std::mutex> lock(mu);
    if (fail) return Status::Unavailable("fi_mr_reg: out of memory regions");
    int id = next++;
    live[id] = Entry{ns, pool, base, size};
    return std::unique_ptr<SegmentAccess>(new Access(this, id));
  }
  size_t Live(const std::string& ns) {
    std::lock_guard<std::mutex> lock(mu);
    size_t n = 0;
    for (auto& [id, e] : live) n += e.ns == ns;
    return n;
  }
  // The live registration a record's access names; its memory must hold the record.
  Entry Of(const RecordInfo& r) {
    std::lock_guard<std::mutex> lock(mu);
    auto* a = dynamic_cast<const Access*>(r.access);
    REQUIRE(a != nullptr);
    REQUIRE(live.count(a->id) == 1);
    return live[a->id];
  }
};

#define REGISTRAR_TEST(name) TEMPLATE_TEST_CASE(name, "[contract][registrar]", MemBackend, PmemBackend)

REGISTRAR_TEST("registrar: each segment registered once with its namespace, records point at it") {
  TestType backend;
  FakeRegistrar reg;
  auto store = backend.Open();
  std::string big(300 * 1024, 'x');
  for (int i = 0; i < 8; i++) REQUIRE(Write(store.get(), "early", "k" + std::to_string(i), big).ok());
  REQUIRE(store->SetSegmentRegistrar(&reg).ok());  // existing segments: registered now
  size_t early = reg.Live("early");
  CHECK(early >= 2);  // 2.4 MB in 1 MiB segments
  for (int i = 0; i < 8; i++) REQUIRE(Write(store.get(), "late", "k" + std::to_string(i), big).ok());
  CHECK(reg.Live("late") >= 2);
  CHECK(reg.Live("early") == early);  // nothing registered twice
  std::string huge(3 << 20, 'h');     // a dedicated segment
  REQUIRE(Write(store.get(), "late", "huge", huge).ok());
  for (const char* ns : {"early", "late"}) {
    for (const char* key : {"k0", "k7", "huge"}) {
      auto view = store->Get(ns, key);
      if (!view.ok()) continue;
      for (const RecordInfo& r : view->records) {
        FakeRegistrar::Entry e = reg.Of(r);
        CHECK(e.ns == ns);
        CHECK(e.pool == r.pool);
        CHECK(r.data >= e.base);
        CHECK(r.data + r.length <= e.base + e.size);  // the record lies inside its segment
      }
    }
  }
  REQUIRE(store->SetSegmentRegistrar(nullptr).ok());
}

REGISTRAR_TEST("registrar: accesses are revoked when segments are freed or the namespace deleted") {
  TestType backend;
  FakeRegistrar reg;
  auto store = backend.Open();
  REQUIRE(store->SetSegmentRegistrar(&reg).ok());
  std::string big(300 * 1024, 'x');
  for (int i = 0; i < 8; i++) REQUIRE(Write(store.get(), "gone", "k" + std::to_string(i), big).ok());
  REQUIRE(Write(store.get(), "kept", "k", big).ok());
  REQUIRE(reg.Live("gone") >= 2);
  {
    auto pinned = store->Get("gone", "k0");  // a view keeps its segment (and access)
    REQUIRE(pinned.ok());
    REQUIRE(store->DeleteNamespace("gone").ok());
    CHECK(reg.Live("gone") >= 1);
  }
  CHECK(reg.Live("gone") == 0);  // revoked once the last pin went
  CHECK(reg.Live("kept") == 1);
  // Deleting every key frees the segments too.
  REQUIRE(store->Delete("kept", "k").ok());
  CHECK(reg.Live("kept") == 0);
  // Compaction: emptied segments are revoked after the grace period (0 here).
  for (int round = 0; round < 6; round++)
    for (int i = 0; i < 4; i++) REQUIRE(Write(store.get(), "churn", "k" + std::to_string(i), big).ok());
  size_t before = reg.Live("churn");
  CompactOptions co;
  co.grace = std::chrono::milliseconds(0);
  co.max_bytes = 64 << 20;
  co.min_dead_fraction = 0.01;
  REQUIRE(store->Compact(co).ok());
  CHECK(reg.Live("churn") <= before);
  for (int i = 0; i < 4; i++) CHECK(ReadAll(store.get(), "churn", "k" + std::to_string(i)) == big);
  REQUIRE(store->SetSegmentRegistrar(nullptr).ok());
}

REGISTRAR_TEST("registrar: a failed registration fails the write with its error, and frees the space") {
  TestType backend;
  FakeRegistrar reg;
  auto store = backend.Open();
  REQUIRE(store->SetSegmentRegistrar(&reg).ok());
  REQUIRE(Write(store.get(), "other", "k", "v").ok());  // the pool's emergency reserve is taken now
  uint64_t used = UsedBytes(store.get());
  reg.fail = true;
  Status st = Write(store.get(), "ns", "k", std::string(1000, 'a'));
  CHECK(st.code() == StatusCode::kUnavailable);
  CHECK(st.message().find("cannot register a new segment of namespace 'ns'") != std::string::npos);
  CHECK(st.message().find("out of memory regions") != std::string::npos);
  CHECK(UsedBytes(store.get()) == used);
  reg.fail = false;
  REQUIRE(Write(store.get(), "ns", "k", std::string(1000, 'a')).ok());
  CHECK(ReadAll(store.get(), "ns", "k") == std::string(1000, 'a'));
  REQUIRE(store->SetSegmentRegistrar(nullptr).ok());
}

}  // namespace
}  // namespace rpmp
