// Cluster integration: what small namespaces cost. 60 namespaces of 1 KiB with 2 copies
// fit on 3 servers with 256 MiB pools and the default 64 MiB segment size (before
// segments grew from 4 KiB, the 5th such namespace failed for space), every record
// reads back, and the pools hold little more than their delete reserves. A write whose
// replica is out of space fails with "no space" (ResourceExhausted) after the replication
// timeout, not as a failover the client retries.
#include <catch2/catch.hpp>

#include "tests/cluster/cluster_harness.h"
#include "tests/test_util.h"

namespace rpmp::testing {
namespace {

using namespace std::chrono_literals;

std::unique_ptr<Client> Direct(ServerProcess* s) {
  ClientOptions o;
  o.provider = Provider();
  o.timeout = 5s;
  StatusOr<std::unique_ptr<Client>> c = Client::Connect(s->address(), o);
  return c.ok() ? std::move(c).value() : nullptr;
}

TEST_CASE("60 namespaces of 1 KiB with 2 copies fit on 3 servers of 256 MiB") {
  ClusterHarness h;
  REQUIRE(h.Start(2, 3));
  std::unique_ptr<Client> c = h.Connect();
  REQUIRE(c != nullptr);
  constexpr int kNamespaces = 60;
  auto value_of = [](int i) { return std::string(1024, static_cast<char>('a' + i % 26)); };
  for (int i = 0; i < kNamespaces; i++) {
    std::string name = "small/" + std::to_string(i);
    StatusOr<NamespaceInfo> ns = AsCluster(c.get())->CreateNamespace(name, {2, 0, 0});
    INFO(name << ": " << ns.status().ToString());
    REQUIRE(ns.ok());
    CHECK(ns->replicas.size() == 2);
    std::string v = value_of(i);
    Status put = c->Put(name, "k", v.data(), v.size());
    INFO(put.ToString());
    REQUIRE(put.ok());
  }
  for (int i = 0; i < kNamespaces; i++) {
    StatusOr<std::string> got = c->Get("small/" + std::to_string(i), "k");
    REQUIRE(got.ok());
    CHECK(*got == value_of(i));
  }
  // 120 copies of 1 KiB: each node holds its delete reserve (4 MiB) and a few KiB per
  // copy, far from one 64 MiB segment per copy.
  uint64_t total_used = 0;
  for (auto& s : h.servers()) {
    std::unique_ptr<Client> d = Direct(s.get());
    REQUIRE(d != nullptr);
    StatusOr<ServerStats> st = d->Stat();
    REQUIRE(st.ok());
    for (const PoolInfo& p : st->pools) total_used += p.used;
  }
  INFO("bytes used on 3 nodes: " << total_used);
  CHECK(total_used < 3 * (4u << 20) + kNamespaces * 2 * (16u << 10));
  // The proxy's node map reports each live node's space (what the Spark room check reads).
  StatusOr<std::vector<NodeSpace>> nodes = AsCluster(c.get())->LiveNodeSpace();
  REQUIRE(nodes.ok());
  REQUIRE(nodes->size() == 3);
  for (const NodeSpace& n : *nodes) {
    CHECK(n.node_id != 0);
    CHECK(n.capacity == (256u << 20));
    CHECK(n.free > (200u << 20));
  }
}

TEST_CASE("a write whose replica is full fails with no space, not as a failover") {
  ClusterHarness h;
  h.set_server_pool_size("64m");
  REQUIRE(h.Start(1, 2));
  ClusterOptions o;  // calls may take the replication timeout (6 s here)
  o.client.provider = Provider();
  o.client.timeout = 10s;
  o.retry_for = 30s;
  StatusOr<std::unique_ptr<Client>> connected = Client::ConnectCluster(h.proxy_addresses(), o);
  REQUIRE(connected.ok());
  std::unique_ptr<Client> c = std::move(connected).value();
  StatusOr<NamespaceInfo> ns = AsCluster(c.get())->CreateNamespace("full-replica", {2, 0, 0});
  REQUIRE(ns.ok());
  REQUIRE(c->Put("full-replica", "before", "x", 1).ok());
  // Fill the member that is not the primary with raw allocations.
  ServerProcess* replica = nullptr;
  for (auto& s : h.servers())
    if (h.NodeIdOf(s.get()) != ns->primary) replica = s.get();
  REQUIRE(replica != nullptr);
  std::unique_ptr<Client> filler = Direct(replica);
  REQUIRE(filler != nullptr);
  for (uint64_t size : {uint64_t{1} << 20, uint64_t{64} << 10, uint64_t{4} << 10})
    while (filler->Alloc(size).ok()) {
    }
  std::string v(256 << 10, 'v');
  auto start = std::chrono::steady_clock::now();
  Status put = c->Put("full-replica", "after", v.data(), v.size());
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  INFO(put.ToString() << " after " << seconds << " s");
  CHECK(put.code() == StatusCode::kResourceExhausted);
  CHECK(put.message().find("no space") != std::string::npos);
  CHECK(seconds < 20);  // one replication timeout (6 s), no failover retries (30 s)
}

}  // namespace
}  // namespace rpmp::testing
