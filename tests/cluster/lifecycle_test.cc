// Cluster integration: node restarts and joins, namespace deletion and TTL expiry,
// removing a dead node (rpmpctl nodes rm), and the errors bad requests get through
// the C++ client and rpmpctl.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <thread>

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

uint64_t UsedBytes(Client* c) {
  StatusOr<ServerStats> s = c->Stat();
  uint64_t used = 0;
  if (s.ok())
    for (const PoolInfo& p : s->pools) used += p.used;
  return used;
}

TEST_CASE("a killed server restarts with its id and data, and a fourth server joins new namespaces") {
  ClusterHarness h;
  REQUIRE(h.Start(2, 3));
  std::unique_ptr<Client> c = h.Connect();
  REQUIRE(c != nullptr);
  REQUIRE(AsCluster(c.get())->CreateNamespace("all3", {3, 0, 0}).ok());
  std::string big(100000, 'x');
  REQUIRE(c->Put("all3", "big", big.data(), big.size()).ok());
  REQUIRE(c->Append("all3", "log", "a", 1, 1).ok());
  REQUIRE(c->Append("all3", "log", "b", 1, 2).ok());

  ServerProcess* s0 = h.servers()[0].get();
  uint64_t id = h.NodeIdOf(s0);
  REQUIRE(id != 0);
  s0->Kill(SIGKILL);
  REQUIRE(s0->Restart());
  std::unique_ptr<Client> d = Direct(s0);
  REQUIRE(d != nullptr);
  CHECK(d->NodeId() == id);
  // Restarted, it serves reads once it has read the placements (read fencing).
  StatusOr<std::string> v = Status::Internal("not read yet");
  bool restarted_reads = Eventually([&] {
    v = d->Get("all3", "big");
    return v.ok();
  }, 15s);
  INFO("read on the restarted node: " << v.status().ToString());
  REQUIRE(restarted_reads);
  CHECK(*v == big);
  StatusOr<ObjectMeta> meta = d->GetMeta("all3", "log");
  REQUIRE(meta.ok());
  REQUIRE(meta->records.size() == 2);
  CHECK(meta->records[1].tag == 2);
  REQUIRE(h.WaitLive(3, 15s));
  // Reads and writes through the cluster still work with the restarted member.
  REQUIRE(c->Append("all3", "log", "c", 1, 3).ok());
  StatusOr<std::string> log = c->Get("all3", "log");
  REQUIRE(log.ok());
  CHECK(*log == "abc");

  ServerProcess* s3 = h.AddServer();
  REQUIRE(s3 != nullptr);
  REQUIRE(h.WaitLive(4, 15s));
  uint64_t id3 = h.NodeIdOf(s3);
  REQUIRE(id3 != 0);
  // Placement is a hash ring: some of a few new R=3 namespaces must use node 4.
  std::string on_new;
  for (int i = 0; i < 20 && on_new.empty(); i++) {
    std::string name = "new/" + std::to_string(i);
    StatusOr<NamespaceInfo> ns = AsCluster(c.get())->CreateNamespace(name, {3, 0, 0});
    REQUIRE(ns.ok());
    for (uint64_t n : ns->replicas)
      if (n == id3) on_new = name;
  }
  REQUIRE(!on_new.empty());
  REQUIRE(c->Put(on_new, "k", "joined", 6).ok());
  std::unique_ptr<Client> d3 = Direct(s3);
  REQUIRE(d3 != nullptr);
  // The put repaired node 4 into the namespace; it serves reads once it has read the
  // placement that counts it in sync (read fencing, docs/cluster.md): poll for that.
  StatusOr<std::string> got = Status::Internal("not read yet");
  bool joined_reads = Eventually([&] {
    got = d3->Get(on_new, "k");
    return got.ok();
  }, 15s);
  INFO(h.Describe() << "\nlast read on node 4: " << got.status().ToString());
  REQUIRE(joined_reads);
  CHECK(*got == "joined");
}

TEST_CASE("deleting a namespace frees it on all nodes, and a TTL namespace expires") {
  ClusterHarness h;
  REQUIRE(h.Start(2, 3));
  std::unique_ptr<Client> c = h.Connect();
  REQUIRE(c != nullptr);
  std::vector<std::unique_ptr<Client>> direct;
  for (auto& s : h.servers()) direct.push_back(Direct(s.get()));
  for (auto& d : direct) REQUIRE(d != nullptr);
  std::vector<uint64_t> used_before;
  for (auto& d : direct) used_before.push_back(UsedBytes(d.get()));

  REQUIRE(AsCluster(c.get())->CreateNamespace("app/1/shuffle", {3, 0, 0}).ok());
  std::string v(200000, 'z');
  for (int i = 0; i < 10; i++) REQUIRE(c->Put("app/1/shuffle", std::to_string(i), v.data(), v.size()).ok());
  std::vector<uint64_t> used_with_data;
  for (size_t i = 0; i < direct.size(); i++) {
    // The first put repaired the other members into the namespace: each serves reads
    // once it has read the placement that counts it in sync (read fencing).
    StatusOr<std::vector<KeyInfo>> keys = Status::Internal("not listed yet");
    bool listed = Eventually([&] {
      keys = direct[i]->List("app/1/shuffle");
      return keys.ok();
    }, 15s);
    INFO("node " << i << ": " << keys.status().ToString());
    REQUIRE(listed);
    CHECK(keys->size() == 10);
    used_with_data.push_back(UsedBytes(direct[i].get()));
    CHECK(used_with_data[i] > used_before[i]);
  }
  StatusOr<std::vector<std::string>> deleted = AsCluster(c.get())->DeleteNamespaces("app/1", true);
  REQUIRE(deleted.ok());
  CHECK(*deleted == std::vector<std::string>{"app/1/shuffle"});
  for (size_t i = 0; i < direct.size(); i++) {
    // The store keeps one segment as its delete reserve once it holds data.
    bool freed = Eventually([&] {
      StatusOr<std::vector<KeyInfo>> keys = direct[i]->List("app/1/shuffle");
      return keys.ok() && keys->empty() && UsedBytes(direct[i].get()) + 1000000 < used_with_data[i];
    }, 15s);
    INFO("node " << i << " used before " << used_before[i] << ", with data " << used_with_data[i] << ", now "
                 << UsedBytes(direct[i].get()));
    CHECK(freed);
  }
  CHECK(c->Get("app/1/shuffle", "0").status().IsNotFound());

  REQUIRE(AsCluster(c.get())->CreateNamespace("short-lived", {2, 0, 1}).ok());
  REQUIRE(c->Put("short-lived", "k", "v", 1).ok());
  CHECK(Eventually([&] {
    return h.proxy().GetPlacement("short-lived").status().IsNotFound() &&
           c->Get("short-lived", "k").status().IsNotFound();
  }, 20s));
  for (auto& d : direct)
    CHECK(Eventually([&] {
      StatusOr<std::vector<KeyInfo>> keys = d->List("short-lived");
      return keys.ok() && keys->empty();
    }, 15s));
}

TEST_CASE("bad requests to the proxy give clear errors through the client and rpmpctl") {
  ClusterHarness h;
  REQUIRE(h.Start(2, 3));
  std::unique_ptr<Client> c = h.Connect();
  REQUIRE(c != nullptr);
  ClusterControl* cc = AsCluster(c.get());
  StatusOr<NamespaceInfo> r = cc->CreateNamespace("too-many", {4, 0, 0});
  CHECK(r.status().code() == StatusCode::kFailedPrecondition);
  CHECK(r.status().message().find("only 3 storage nodes") != std::string::npos);
  r = cc->CreateNamespace("bad-min", {2, 3, 0});
  CHECK(r.status().code() == StatusCode::kInvalidArgument);
  r = cc->CreateNamespace("bad//name", {1, 0, 0});
  CHECK(r.status().code() == StatusCode::kInvalidArgument);
  CHECK(cc->DescribeNamespace("missing").status().IsNotFound());
  CHECK(c->Get("missing", "k").status().IsNotFound());
  CHECK(c->DeleteNamespace("missing").IsNotFound());
  REQUIRE(cc->CreateNamespace("once", {2, 0, 0}).ok());
  CHECK(cc->CreateNamespace("once", {2, 0, 0}).ok());  // idempotent
  CHECK(cc->CreateNamespace("once", {3, 0, 0}).status().code() == StatusCode::kAlreadyExists);

  std::string out, err;
  std::string proxies = h.proxy_list();
  CHECK(RunTool({"rpmpctl", "--proxy", proxies, "ns", "create", "x", "--replicas", "5"}, "", &out, &err) == 1);
  CHECK(err.find("only 3 storage nodes are LIVE") != std::string::npos);
  CHECK(RunTool({"rpmpctl", "--proxy", proxies, "ns", "rm", "nope"}, "", &out, &err) == 1);
  CHECK(err.find("not found") != std::string::npos);
  CHECK(RunTool({"rpmpctl", "nodes"}, "", &out, &err) == 2);  // no proxy anywhere
  CHECK(RunTool({"rpmpctl", "--proxy", proxies, "nodes"}, "", &out, &err) == 0);
  CHECK(out.find("leader 127.0.0.1:") != std::string::npos);
  CHECK(out.find(" LIVE ") != std::string::npos);
  CHECK(RunTool({"rpmpctl", "--proxy", proxies, "ns", "create", "cli", "--replicas", "2", "--ttl", "1h"}, "", &out,
                &err) == 0);
  CHECK(RunTool({"rpmpctl", "--proxy", proxies, "put", "cli", "k", "-"}, "from stdin", &out, &err) == 0);
  CHECK(RunTool({"rpmpctl", "--proxy", proxies, "get", "cli", "k", "-"}, "", &out, &err) == 0);
  CHECK(out == "from stdin");
  CHECK(RunTool({"rpmpctl", "--proxy", proxies, "ns", "ls"}, "", &out, &err) == 0);
  CHECK(out.find("cli\treplicas=2") != std::string::npos);
  // stat through the proxies: the cluster's totals (k has 2 copies), then each node.
  REQUIRE(RunTool({"rpmpctl", "--proxy", proxies, "stat"}, "", &out, &err) == 0);
  INFO(out);
  CHECK(out.rfind("cluster of 3 nodes (3 answered) at " + proxies + "\n", 0) == 0);
  CHECK(out.find(" keys 2 records 2 ") != std::string::npos);
  // The servers compact by default: not "off" as the cluster line once said.
  CHECK((out.find("\ncompaction idle ") != std::string::npos || out.find("\ncompaction running ") != std::string::npos));
  CHECK(out.find("node 0000000000000000") == std::string::npos);
  size_t node_lines = 0;
  for (size_t at = out.find("\nnode "); at != std::string::npos; at = out.find("\nnode ", at + 1)) {
    node_lines++;
    CHECK(out.find(" LIVE namespaces ", at) < out.find('\n', at + 1));
  }
  CHECK(node_lines == 3);
}

std::string Hex(uint64_t id) {
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(id));
  return buf;
}

TEST_CASE("rpmpctl nodes rm removes a dead node, and refuses a live one or one a namespace needs") {
  ClusterHarness h;
  REQUIRE(h.Start(2, 3));
  std::unique_ptr<Client> c = h.Connect();
  REQUIRE(c != nullptr);
  StatusOr<NamespaceInfo> solo = AsCluster(c.get())->CreateNamespace("solo", {1, 0, 0});
  REQUIRE(solo.ok());
  REQUIRE(c->Put("solo", "k", "only here", 9).ok());
  uint64_t victim = solo->replicas.at(0);
  ServerProcess* s = h.ServerOfNode(victim);
  REQUIRE(s != nullptr);
  std::string proxies = h.proxy_list(), out, err;
  auto rm = [&](const std::string& id) {
    return RunTool({"rpmpctl", "--proxy", proxies, "nodes", "rm", id}, "", &out, &err);
  };

  CHECK(rm("zz") == 2);  // usage: not a node id
  CHECK(err.find("16 hex digits") != std::string::npos);
  CHECK(RunTool({"rpmpctl", "--proxy", proxies, "nodes", "rm"}, "", &out, &err) == 2);
  CHECK(rm("00000000000000ff") == 1);
  CHECK(err.find("not in the node map") != std::string::npos);
  CHECK(rm(Hex(victim)) == 1);  // LIVE
  CHECK(err.find("is LIVE: only a DEAD node can be removed") != std::string::npos);
  CHECK(std::count(err.begin(), err.end(), '\n') == 1);  // one line

  s->Kill(SIGKILL);
  REQUIRE(Eventually([&] {
    StatusOr<v1::NodeMap> m = h.proxy().GetNodeMap();
    if (!m.ok()) return false;
    for (const v1::Node& n : m->nodes())
      if (n.id() == victim) return n.state() == v1::NODE_STATE_DEAD;
    return false;
  }, 15s));
  CHECK(rm(Hex(victim)) == 1);  // "solo" has its only copy there
  CHECK(err.find("namespace \"solo\" has its only in-sync copy on node " + Hex(victim)) != std::string::npos);
  CHECK(RunTool({"rpmpctl", "--proxy", proxies, "nodes"}, "", &out, &err) == 0);
  CHECK(out.find(Hex(victim)) != std::string::npos);

  REQUIRE(RunTool({"rpmpctl", "--proxy", proxies, "ns", "rm", "solo"}, "", &out, &err) == 0);
  INFO(h.Describe());
  REQUIRE(rm(Hex(victim)) == 0);
  CHECK(out == "removed " + Hex(victim) + " " + s->address() + "\n");
  CHECK(RunTool({"rpmpctl", "--proxy", proxies, "nodes"}, "", &out, &err) == 0);
  CHECK(out.find(Hex(victim)) == std::string::npos);
  CHECK(std::count(out.begin(), out.end(), '\n') == 4);  // leader line, header, 2 nodes
  CHECK(rm(Hex(victim)) == 1);  // already gone

  // The server comes back on its pool: it registers again, LIVE.
  REQUIRE(s->Restart());
  REQUIRE(h.WaitLive(3, 15s));
}

}  // namespace
}  // namespace rpmp::testing
