// Cluster integration: the asynchronous forms of the cluster client on real processes
// (etcd + 2 proxies + 3 servers). AppendAsync from buffers registered with any of the
// client's connections, then ReadRecordAsync of every listed record: all bytes come back,
// the callbacks of many calls in flight at once all arrive. Then kill -9 of the primary
// with appends in flight: every acknowledged append is listed on the new primary. And
// the routing of memory: buffers allocated for a namespace's writes and for its records'
// reads move no extra copy, and first calls from many threads open one connection.
#include <catch2/catch.hpp>

#include <atomic>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <thread>

#include "tests/cluster/cluster_harness.h"
#include "tests/test_util.h"

namespace rpmp::testing {
namespace {

using namespace std::chrono_literals;

std::string Value(int i) {
  std::mt19937 rng(static_cast<uint32_t>(i) * 104729u);
  size_t len = i % 3 == 0 ? 100 : (i % 3 == 1 ? 30000 : 200000);  // inline and RMA sizes
  std::string v(len, '\0');
  for (char& c : v) c = static_cast<char>(rng());
  return v;
}

// Appends records [first, end) to ns/key asynchronously, from buffers of the cluster
// client (registered with whichever server connection it picked). ok[i] = the outcome.
struct Appends {
  std::mutex mu;
  std::map<int, bool> ok;
  std::atomic<int> done{0};
  std::vector<Buffer> bufs;  // kept until every callback ran

  void Start(Client* c, const std::string& ns, const std::string& key, int first, int end) {
    for (int i = first; i < end; i++) {
      std::string v = Value(i);
      StatusOr<Buffer> b = c->AllocBuffer(v.size());
      REQUIRE(b.ok());
      std::memcpy(b->data(), v.data(), v.size());
      b->set_size(v.size());
      bufs.push_back(std::move(b).value());
    }
    for (int i = first; i < end; i++) {
      c->AppendAsync(ns, key, bufs[i - first], static_cast<uint64_t>(i), [this, i](Status st) {
        std::lock_guard<std::mutex> lock(mu);
        ok[i] = st.ok();
        done++;
      });
    }
  }
};

TEST_CASE("cluster AppendAsync and ReadRecordAsync: every byte back, and appends survive a primary kill") {
  ClusterHarness h;
  REQUIRE(h.Start(2, 3));
  std::unique_ptr<Client> c = h.Connect();
  REQUIRE(c != nullptr);
  ClusterControl* cc = AsCluster(c.get());
  REQUIRE(cc != nullptr);
  StatusOr<NamespaceInfo> ns = cc->CreateNamespace("async", {2, 0, 0});
  REQUIRE(ns.ok());

  Appends first;
  first.Start(c.get(), "async", "log", 0, 300);
  REQUIRE(Eventually([&] { return first.done.load() == 300; }, 90s));
  for (auto& [i, good] : first.ok) REQUIRE(good);

  StatusOr<ObjectMeta> meta = c->GetMeta("async", "log");
  REQUIRE(meta.ok());
  REQUIRE(meta->records.size() == 300);
  std::vector<Buffer> dsts;
  for (const RecordRef& r : meta->records) {
    StatusOr<Buffer> b = c->AllocBuffer(r.length);
    REQUIRE(b.ok());
    dsts.push_back(std::move(b).value());
  }
  std::atomic<int> reads{0}, read_errors{0};
  for (size_t k = 0; k < meta->records.size(); k++) {
    c->ReadRecordAsync(meta->records[k], &dsts[k], 0, [&](Status st) {
      if (!st.ok()) read_errors++;
      reads++;
    });
  }
  REQUIRE(Eventually([&] { return reads.load() == 300; }, 60s));
  REQUIRE(read_errors.load() == 0);
  for (size_t k = 0; k < meta->records.size(); k++) {
    const RecordRef& r = meta->records[k];
    std::string want = Value(static_cast<int>(r.tag));
    REQUIRE(r.length == want.size());
    REQUIRE(std::string(dsts[k].data(), r.length) == want);
  }

  // kill -9 of the primary while appends are in flight: those acknowledged are listed.
  ServerProcess* primary = h.ServerOfNode(ns->primary);
  REQUIRE(primary != nullptr);
  uint64_t retries_before = cc->Counters().failover_retries;
  Appends second;
  second.Start(c.get(), "async", "log", 300, 600);
  REQUIRE(Eventually([&] { return second.done.load() >= 20; }, 60s));
  primary->Kill(SIGKILL);
  REQUIRE(Eventually([&] { return second.done.load() == 300; }, 120s));
  int acked = 0;
  for (auto& [i, good] : second.ok) acked += good ? 1 : 0;
  INFO(h.Describe());
  CHECK(acked > 0);
  // The appends that met the dead primary were sent again after a placement refresh.
  CHECK(cc->Counters().failover_retries > retries_before);
  StatusOr<ObjectMeta> after = c->GetMeta("async", "log");
  REQUIRE(after.ok());
  std::set<uint64_t> listed;
  for (const RecordRef& r : after->records) listed.insert(r.tag);
  for (int i = 0; i < 300; i++) REQUIRE(listed.count(static_cast<uint64_t>(i)) == 1);
  for (auto& [i, good] : second.ok)
    if (good) REQUIRE(listed.count(static_cast<uint64_t>(i)) == 1);
  std::printf("[figure] %d of 300 async appends acknowledged across the primary's kill; "
              "%zu records listed after\n", acked, after->records.size());
}

// (No ';' in test names: CTest would split the name there and run nothing.)
TEST_CASE("memory for a namespace's writes and its records' reads moves no extra copy, "
          "and first calls from many threads open one connection per server") {
  ClusterHarness h;
  REQUIRE(h.Start(1, 3));
  std::unique_ptr<Client> c = h.Connect();
  REQUIRE(c != nullptr);
  ClusterControl* cc = AsCluster(c.get());
  REQUIRE(cc != nullptr);
  StatusOr<NamespaceInfo> ns = cc->CreateNamespace("routed", {1, 0, 0});
  REQUIRE(ns.ok());

  // Eight threads' first calls at once: one connection to the primary between them.
  std::vector<std::thread> threads;
  std::atomic<int> failed{0};
  for (int t = 0; t < 8; t++) {
    threads.emplace_back([&, t] {
      if (!c->Put("routed", "k" + std::to_string(t), "v", 1).ok()) failed++;
    });
  }
  for (std::thread& t : threads) t.join();
  REQUIRE(failed.load() == 0);
  CHECK(cc->Counters().server_connections == 1);

  // Appends from memory allocated for the namespace, reads into memory for each record.
  const int n = 40;
  std::vector<Buffer> bufs;
  for (int i = 0; i < n; i++) {
    std::string v = Value(i);
    StatusOr<Buffer> b = c->AllocBufferForWrite("routed", v.size());
    REQUIRE(b.ok());
    std::memcpy(b->data(), v.data(), v.size());
    b->set_size(v.size());
    bufs.push_back(std::move(b).value());
  }
  std::atomic<int> done{0}, errors{0};
  for (int i = 0; i < n; i++) {
    c->AppendAsync("routed", "log", bufs[i], static_cast<uint64_t>(i), [&](Status st) {
      if (!st.ok()) errors++;
      done++;
    });
  }
  REQUIRE(Eventually([&] { return done.load() == n; }, 60s));
  REQUIRE(errors.load() == 0);
  StatusOr<ObjectMeta> meta = c->GetMeta("routed", "log");
  REQUIRE(meta.ok());
  REQUIRE(meta->records.size() == static_cast<size_t>(n));
  std::vector<Buffer> dsts;
  for (const RecordRef& r : meta->records) {
    StatusOr<Buffer> b = c->AllocBufferForRead(r, r.length);
    REQUIRE(b.ok());
    dsts.push_back(std::move(b).value());
  }
  std::atomic<int> reads{0};
  for (size_t k = 0; k < meta->records.size(); k++) {
    c->ReadRecordAsync(meta->records[k], &dsts[k], 0, [&](Status st) {
      if (!st.ok()) errors++;
      reads++;
    });
  }
  REQUIRE(Eventually([&] { return reads.load() == n; }, 60s));
  REQUIRE(errors.load() == 0);
  for (size_t k = 0; k < meta->records.size(); k++) {
    const RecordRef& r = meta->records[k];
    REQUIRE(std::string(dsts[k].data(), r.length) == Value(static_cast<int>(r.tag)));
  }
  ClusterCounters after = cc->Counters();
  CHECK(after.staged_copies == 0);
  CHECK(after.server_connections == 1);

  // The counter sees a copy: memory of the "routed" primary appended to a namespace whose
  // primary is another server.
  std::string other;
  for (int k = 0; k < 20 && other.empty(); k++) {
    StatusOr<NamespaceInfo> o = cc->CreateNamespace("other" + std::to_string(k), {1, 0, 0});
    REQUIRE(o.ok());
    if (o->primary != ns->primary) other = o->name;
  }
  REQUIRE(!other.empty());
  REQUIRE(c->Put(other, "warm", "v", 1).ok());  // its placement and connection, cached
  std::atomic<int> moved{0};
  c->AppendAsync(other, "log", bufs[1], 1, [&](Status st) {
    if (!st.ok()) errors++;
    moved++;
  });
  REQUIRE(Eventually([&] { return moved.load() == 1; }, 60s));
  REQUIRE(errors.load() == 0);
  StatusOr<std::string> got = c->Get(other, "log");
  REQUIRE(got.ok());
  CHECK(*got == Value(1));
  ClusterCounters last = cc->Counters();
  CHECK(last.staged_copies == 1);
  CHECK(last.staged_bytes == Value(1).size());
  CHECK(last.server_connections == 2);
}

}  // namespace
}  // namespace rpmp::testing
