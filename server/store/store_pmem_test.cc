// Tests only a real libpmemobj pool can answer: what survives close/reopen, and the
// error messages for pools that cannot be opened.
#include <libpmemobj.h>
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <cctype>
#include <fstream>

#include "server/store/format.h"
#include "server/store/pmem_medium.h"
#include "server/store/testing/store_test_util.h"

namespace rpmp {
namespace {

using namespace store_test;  // NOLINT

TEST_CASE("reopen keeps records, tags, order, raw memory and the node id", "[pmem]") {
  TempPath path("reopen");
  uint64_t node_id = 0;
  RawAddress raw;
  const std::string raw_bytes = MakeValue(42, 3000);
  {
    auto store = OpenOrDie(OptionsFor(path.path()));
    node_id = store->NodeId();
    for (uint64_t i = 0; i < 5; i++) {
      REQUIRE(Write(store.get(), "ns", "obj", MakeValue(i, 1000 * i), WriteKind::kAppend, i).ok());
    }
    REQUIRE(Write(store.get(), "ns", "replaced", "old").ok());
    REQUIRE(Write(store.get(), "ns", "replaced", "new").ok());
    REQUIRE(Write(store.get(), "ns", "deleted", "x").ok());
    REQUIRE(store->Delete("ns", "deleted").ok());
    REQUIRE(Write(store.get(), "other", "big", MakeValue(9, 3 * kSegmentSize)).ok());
    auto a = store->Alloc(raw_bytes.size());
    REQUIRE(a.ok());
    raw = *a;
    char* p = store->ResolveRaw(raw, raw_bytes.size()).value();
    std::memcpy(p, raw_bytes.data(), raw_bytes.size());
    store->PersistRaw(p, raw_bytes.size());
    const char* force = std::getenv("PMEM_IS_PMEM_FORCE");
    CHECK(store->Stats().pools[0].medium ==
          (force != nullptr && std::string(force) == "1"
               ? "pmem (flush)" : "tmpfs (survives process crash, not reboot)"));
  }
  auto store = OpenOrDie(OptionsFor(path.path()));
  CHECK(store->NodeId() == node_id);
  auto view = store->Get("ns", "obj");
  REQUIRE(view.ok());
  REQUIRE(view->records.size() == 5);
  for (uint64_t i = 0; i < 5; i++) {
    CHECK(view->records[i].tag == i);
    CHECK(std::string(view->records[i].data, view->records[i].length) == MakeValue(i, 1000 * i));
  }
  CHECK(ReadAll(store.get(), "ns", "replaced") == "new");
  CHECK(store->Get("ns", "deleted").status().IsNotFound());
  CHECK(ReadAll(store.get(), "other", "big") == MakeValue(9, 3 * kSegmentSize));
  auto p = store->ResolveRaw(raw, raw_bytes.size());
  REQUIRE(p.ok());
  CHECK(std::string(*p, raw_bytes.size()) == raw_bytes);
  CHECK(store->Stats().records == 7);
}

TEST_CASE("reopen continues appending into the same segment", "[pmem]") {
  TempPath path("continue");
  uint64_t used = 0;
  {
    auto store = OpenOrDie(OptionsFor(path.path()));
    REQUIRE(Write(store.get(), "ns", "k", "first", WriteKind::kAppend).ok());
    used = UsedBytes(store.get());
  }
  auto store = OpenOrDie(OptionsFor(path.path()));
  CHECK(UsedBytes(store.get()) == used);
  REQUIRE(Write(store.get(), "ns", "k", "second", WriteKind::kAppend).ok());
  CHECK(UsedBytes(store.get()) == used);
  auto view = store->Get("ns", "k");
  REQUIRE(view.ok());
  REQUIRE(view->records.size() == 2);
  // Back to back: 64 B header + key padded to 64 + "first" padded to 64.
  CHECK(view->records[1].offset == view->records[0].offset + 64 + 64 + 64);
}

TEST_CASE("an uncommitted reservation is invisible after reopen, later records are not",
          "[pmem]") {
  TempPath path("uncommitted");
  {
    auto store = OpenOrDie(OptionsFor(path.path()));
    auto pending = store->Reserve(WriteSpec{"ns", "pending", WriteKind::kPut, 0, 100, 0, {}});
    REQUIRE(pending.ok());
    std::memset(pending->payload(), 'p', 100);
    REQUIRE(Write(store.get(), "ns", "later", "committed").ok());
    // `pending` goes away first, uncommitted: its abort writes nothing to the pool, so
    // the media hold exactly what a crash would leave (commit word 0). The fork test
    // in store_crash_test.cc covers a real crash.
  }
  auto store = OpenOrDie(OptionsFor(path.path()));
  CHECK(store->Get("ns", "pending").status().IsNotFound());
  CHECK(ReadAll(store.get(), "ns", "later") == "committed");
}

TEST_CASE("DeleteNamespace and deletes survive reopen, an interrupted one is finished",
          "[pmem]") {
  TempPath path("delns");
  uint64_t used_after_delete = 0;
  {
    auto store = OpenOrDie(OptionsFor(path.path()));
    REQUIRE(Write(store.get(), "gone", "k", MakeValue(1, 900 << 10)).ok());
    REQUIRE(Write(store.get(), "gone", "k2", MakeValue(2, 900 << 10)).ok());
    REQUIRE(Write(store.get(), "half", "k", "v").ok());
    REQUIRE(Write(store.get(), "kept", "k", "v").ok());
    REQUIRE(store->DeleteNamespace("gone").ok());
    used_after_delete = UsedBytes(store.get());
  }
  {
    // Leave a deletion intent for "half" in pool 0's root, as a crash would.
    auto medium = OpenPmemMedium(path.path(), 0, false);
    REQUIRE(medium.ok());
    auto* root = reinterpret_cast<store_format::Root*>((*medium)->root());
    std::memcpy(root->deleting_ns, "half", 4);
    root->deleting_ns_length = 4;
    (*medium)->Persist(root, sizeof(*root));
  }
  auto store = OpenOrDie(OptionsFor(path.path()));
  CHECK(store->Get("gone", "k").status().IsNotFound());
  CHECK(store->Get("half", "k").status().IsNotFound());
  CHECK(ReadAll(store.get(), "kept", "k") == "v");
  CHECK(UsedBytes(store.get()) < used_after_delete);
  CHECK(store->Stats().namespaces == 1);
}

TEST_CASE("a segment with a damaged header is left alone and the rest opens", "[pmem]") {
  TempPath path("damaged");
  {
    auto store = OpenOrDie(OptionsFor(path.path()));
    REQUIRE(Write(store.get(), "hurt", "k", "lost").ok());
    REQUIRE(Write(store.get(), "fine", "k", "kept").ok());
  }
  uint64_t damaged = 0;
  {
    auto medium = OpenPmemMedium(path.path(), 0, false);
    REQUIRE(medium.ok());
    for (uint64_t offset : (*medium)->ObjectsOfType(store_format::kSegmentType)) {
      auto* h = reinterpret_cast<store_format::SegmentHeader*>((*medium)->base() + offset);
      if (std::string(h->ns, h->ns_length) != "hurt") continue;
      h->ns[0] = 'H';  // the header CRC no longer matches
      (*medium)->Persist(h, sizeof(*h));
      damaged++;
    }
  }
  REQUIRE(damaged == 1);
  auto store = OpenOrDie(OptionsFor(path.path()));
  CHECK(store->Get("hurt", "k").status().IsNotFound());
  CHECK(store->Get("Hurt", "k").status().IsNotFound());
  CHECK(ReadAll(store.get(), "fine", "k") == "kept");
  CHECK(Write(store.get(), "hurt", "k", "new").ok());
}

TEST_CASE("a pool on a disk file system promises msync and reopens", "[pmem]") {
  std::string path = "/var/tmp/rpmp-store-test-" + std::to_string(getpid()) + ".pool";
  std::remove(path.c_str());
  {
    auto store = OpenOrDie(OptionsFor(path, 16 << 20));
    const char* force = std::getenv("PMEM_IS_PMEM_FORCE");
    if (force == nullptr || std::string(force) != "1") {
      CHECK(store->Stats().pools[0].medium == "file (msync)");
    }
    REQUIRE(Write(store.get(), "ns", "k", "on disk").ok());
  }
  {
    auto store = OpenOrDie(OptionsFor(path));
    CHECK(ReadAll(store.get(), "ns", "k") == "on disk");
  }
  std::remove(path.c_str());
}

// Bytes of `path` mapped into this process's page tables (Rss of its mappings in smaps).
uint64_t MappedBytes(const std::string& path) {
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool ours = false;
  uint64_t kib = 0;
  while (std::getline(smaps, line)) {
    if (!line.empty() && std::isxdigit(static_cast<unsigned char>(line[0])) &&
        line.find('-') != std::string::npos && line.find(' ') != std::string::npos) {
      ours = line.size() >= path.size() && line.compare(line.size() - path.size(), path.size(), path) == 0;
    } else if (ours && line.rfind("Rss:", 0) == 0) {
      kib += std::stoull(line.substr(4));
    }
  }
  return kib << 10;
}

TEST_CASE("prefault maps every pool page at open and keeps the contents", "[pmem]") {
  TempPath path("prefault");
  {
    auto store = OpenOrDie(OptionsFor(path.path()));
    REQUIRE(Write(store.get(), "ns", "k", MakeValue(7, 5000)).ok());
  }
  {
    auto store = OpenOrDie(OptionsFor(path.path()));  // without prefault: touched pages only
    uint64_t mapped = MappedBytes(path.path());
    INFO("mapped without prefault: " << mapped << " of " << kPoolSize);
    CHECK(mapped > 0);
    CHECK(mapped < kPoolSize / 2);
  }
  StoreOptions options = OptionsFor(path.path());
  options.prefault = true;
  {
    auto store = OpenOrDie(options);
    uint64_t mapped = MappedBytes(path.path());
    INFO("mapped with prefault: " << mapped << " of " << kPoolSize);
    CHECK(mapped >= kPoolSize - (1u << 20));
    CHECK(ReadAll(store.get(), "ns", "k") == MakeValue(7, 5000));
    REQUIRE(Write(store.get(), "ns", "k2", MakeValue(8, 100)).ok());
  }
  auto store = OpenOrDie(OptionsFor(path.path()));  // a later open without prefault
  CHECK(ReadAll(store.get(), "ns", "k") == MakeValue(7, 5000));
  CHECK(ReadAll(store.get(), "ns", "k2") == MakeValue(8, 100));
  CHECK(MappedBytes(path.path()) < kPoolSize / 2);  // the control does not carry over
}

TEST_CASE("pools that cannot be opened give clear messages", "[pmem]") {
  SECTION("a pool of another layout") {
    TempPath path("layout");
    PMEMobjpool* pop = pmemobj_create(path.path().c_str(), "someone-else", 16 << 20, 0600);
    REQUIRE(pop != nullptr);
    pmemobj_close(pop);
    auto store = OpenPmemStore(OptionsFor(path.path()));
    REQUIRE_FALSE(store.ok());
    CHECK(store.status().message().find("has a different layout (not an RPMP pool)") !=
          std::string::npos);
  }
  SECTION("a file that is not a pool") {
    TempPath path("garbage");
    std::ofstream(path.path()) << MakeValue(3, 1 << 20);
    auto store = OpenPmemStore(OptionsFor(path.path()));
    REQUIRE_FALSE(store.ok());
    CHECK(store.status().message().find("is not a PMDK pool") != std::string::npos);
  }
  SECTION("a size below the minimum") {
    TempPath path("small");
    auto store = OpenPmemStore(OptionsFor(path.path(), 8 << 20));
    REQUIRE_FALSE(store.ok());
    CHECK(store.status().code() == StatusCode::kInvalidArgument);
    CHECK(store.status().message().find("minimum of 16 MiB") != std::string::npos);
  }
  SECTION("a missing file without create_if_missing") {
    TempPath path("missing");
    StoreOptions options = OptionsFor(path.path());
    options.create_if_missing = false;
    auto store = OpenPmemStore(options);
    CHECK(store.status().IsNotFound());
    CHECK(store.status().message().find("does not exist") != std::string::npos);
  }
  SECTION("a directory") {
    auto store = OpenPmemStore(OptionsFor("/dev/shm"));
    CHECK(store.status().code() == StatusCode::kInvalidArgument);
    CHECK(store.status().message().find("is a directory") != std::string::npos);
  }
  SECTION("a pool already open elsewhere") {
    TempPath path("busy");
    auto first = OpenOrDie(OptionsFor(path.path()));
    auto second = OpenPmemStore(OptionsFor(path.path()));
    CHECK(second.status().code() == StatusCode::kUnavailable);
    CHECK(second.status().message().find("is in use") != std::string::npos);
  }
  SECTION("a path in a missing directory") {
    auto store = OpenPmemStore(OptionsFor("/dev/shm/no-such-dir-rpmp/p.pool"));
    REQUIRE_FALSE(store.ok());
    CHECK(store.status().message().find("cannot create pool") != std::string::npos);
  }
}

TEST_CASE("pools listed in another order than created are rejected", "[pmem]") {
  TempPath a("first"), b("second");
  StoreOptions options = OptionsFor(a.path());
  options.pools.push_back(PoolSpec{b.path(), kPoolSize});
  uint64_t node_id = 0;
  {
    auto store = OpenOrDie(options);
    node_id = store->NodeId();
    CHECK(store->Areas().size() == 2);
    for (int i = 0; i < 6; i++) {
      REQUIRE(Write(store.get(), "ns" + std::to_string(i), "k", MakeValue(i, 5000)).ok());
    }
  }
  std::swap(options.pools[0], options.pools[1]);
  auto swapped = OpenPmemStore(options);
  REQUIRE_FALSE(swapped.ok());
  CHECK(swapped.status().message().find("configured as pool #0") != std::string::npos);
  std::swap(options.pools[0], options.pools[1]);
  auto store = OpenOrDie(options);
  CHECK(store->NodeId() == node_id);
  for (int i = 0; i < 6; i++) {
    CHECK(ReadAll(store.get(), "ns" + std::to_string(i), "k") == MakeValue(i, 5000));
  }
}

}  // namespace
}  // namespace rpmp
