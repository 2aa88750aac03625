// Cluster integration: what small namespaces cost. 60 namespaces of 1 KiB with 2 copies
// fit on 3 servers with 256 MiB pools and the default 64 MiB segment size (before
// segments grew from 4 KiB, the 5th such namespace failed for space), every record
// reads back, and the pools hold little more than their delete reserves.
#include <catch2/catch.hpp>

#include "tests/cluster/cluster_harness.h"
#include "tests/test_util.h"

namespace rpmp::testing {
namespace {

using namespace std::chrono_literals;

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
    ClientOptions o;
    o.provider = Provider();
    o.timeout = 5s;
    StatusOr<std::unique_ptr<Client>> d = Client::Connect(s->address(), o);
    REQUIRE(d.ok());
    StatusOr<ServerStats> st = (*d)->Stat();
    REQUIRE(st.ok());
    for (const PoolInfo& p : st->pools) total_used += p.used;
  }
  INFO("bytes used on 3 nodes: " << total_used);
  CHECK(total_used < 3 * (4u << 20) + kNamespaces * 2 * (16u << 10));
}

}  // namespace
}  // namespace rpmp::testing
