// Cluster integration: a node that joins while a stream of writes runs on 3 servers
// takes new placement groups (issue 24). A writer appends to the groups g0..g7 of a
// new parent namespace after every few rounds ("shuffles", as the Spark plugin
// stores them); a 4th real server starts mid-stream; the test waits until a parent
// created after it is LIVE has groups whose primary is the new node, stops the
// writer, and reads every key back: exactly the acknowledged appends, in order (a
// key whose append failed is left for a fresh key, so each key's content is known).
#include <catch2/catch.hpp>

#include <atomic>
#include <map>
#include <mutex>
#include <thread>

#include "tests/cluster/cluster_harness.h"
#include "tests/test_util.h"

namespace rpmp::testing {
namespace {

using namespace std::chrono_literals;

constexpr int kGroups = 8;

struct Stream {
  std::mutex mu;
  std::map<std::pair<std::string, std::string>, std::string> acked;  // (ns, key) -> content
  std::vector<std::string> parents;                                  // in creation order
  std::atomic<uint64_t> appends{0}, failures{0};
  std::atomic<bool> stop{false};
};

void Write(Client* c, Stream* s) {
  ClusterControl* cc = AsCluster(c);
  int key_gen[kGroups] = {};
  for (int shuffle = 0; !s->stop.load(); shuffle++) {
    std::string parent = "job/s" + std::to_string(shuffle);
    bool created = true;
    for (int g = 0; g < kGroups && created; g++)
      created = cc->CreateNamespace(parent + "/g" + std::to_string(g), {2, 0, 0}).ok();
    if (!created) {
      s->failures++;
      continue;
    }
    {
      std::lock_guard<std::mutex> lock(s->mu);
      s->parents.push_back(parent);
    }
    for (int round = 0; round < 5 && !s->stop.load(); round++) {
      for (int g = 0; g < kGroups; g++) {
        std::string ns = parent + "/g" + std::to_string(g);
        std::string key = "log" + std::to_string(key_gen[g]);
        std::string v = "<" + ns + ":" + std::to_string(s->appends.load()) + ">";
        if (c->Append(ns, key, v.data(), v.size(), 0).ok()) {
          std::lock_guard<std::mutex> lock(s->mu);
          s->acked[{ns, key}] += v;
          s->appends++;
        } else {
          s->failures++;
          key_gen[g]++;  // its content is now uncertain: later appends go to a fresh key
        }
      }
    }
  }
}

TEST_CASE("a node that joins mid-stream takes new placement groups and every acknowledged append reads back") {
  ClusterHarness h;
  REQUIRE(h.Start(1, 3));
  std::unique_ptr<Client> c = h.Connect();
  REQUIRE(c != nullptr);
  Stream s;
  std::thread writer(Write, c.get(), &s);
  struct Join {
    std::thread* t;
    Stream* s;
    ~Join() {
      s->stop = true;
      if (t->joinable()) t->join();
    }
  } join{&writer, &s};

  REQUIRE(Eventually([&] { return s.appends.load() >= 200; }, 30s));
  ServerProcess* fourth = h.AddServer();
  REQUIRE(fourth != nullptr);
  REQUIRE(h.WaitLive(4, 20s));
  uint64_t new_id = h.NodeIdOf(fourth);
  REQUIRE(new_id != 0);
  size_t parents_before;
  {
    std::lock_guard<std::mutex> lock(s.mu);
    parents_before = s.parents.size();
  }
  // New parents (created after the node is LIVE) stripe their groups over 4 nodes.
  std::string joined_parent;
  int groups_on_new = 0;
  CHECK(Eventually([&] {
    std::vector<std::string> parents;
    {
      std::lock_guard<std::mutex> lock(s.mu);
      parents.assign(s.parents.begin() + static_cast<long>(parents_before), s.parents.end());
    }
    for (const std::string& p : parents) {
      int on_new = 0;
      for (int g = 0; g < kGroups; g++) {
        StatusOr<NamespaceInfo> info = AsCluster(c.get())->DescribeNamespace(p + "/g" + std::to_string(g));
        if (info.ok() && info->primary == new_id) on_new++;
      }
      if (on_new > 0) {
        joined_parent = p;
        groups_on_new = on_new;
        return true;
      }
    }
    return false;
  }, 30s));
  INFO("parent " << joined_parent << ": " << groups_on_new << " of " << kGroups << " groups with the new node as primary");
  // 8 groups over 4 nodes, each node the primary of 2.
  CHECK(groups_on_new == kGroups / 4);
  // Some appends after the join reach the new node's groups.
  uint64_t at_join = s.appends.load();
  REQUIRE(Eventually([&] { return s.appends.load() >= at_join + 100; }, 30s));
  s.stop = true;
  writer.join();

  std::map<std::pair<std::string, std::string>, std::string> acked;
  {
    std::lock_guard<std::mutex> lock(s.mu);
    acked = s.acked;
  }
  INFO(s.appends.load() << " appends acknowledged, " << s.failures.load() << " failed, " << acked.size() << " keys");
  size_t on_new_node = 0;
  for (const auto& [where, content] : acked) {
    StatusOr<std::string> got = c->Get(where.first, where.second);
    INFO(where.first << " " << where.second << ": " << got.status().ToString());
    REQUIRE(got.ok());
    CHECK(*got == content);
    if (where.first.rfind(joined_parent + "/", 0) == 0) {
      StatusOr<NamespaceInfo> info = AsCluster(c.get())->DescribeNamespace(where.first);
      if (info.ok() && info->primary == new_id) on_new_node++;
    }
  }
  CHECK(on_new_node > 0);  // the new node's groups hold acknowledged records
  CHECK(s.failures.load() == 0);  // a join is not a fault: nothing failed
}

}  // namespace
}  // namespace rpmp::testing
