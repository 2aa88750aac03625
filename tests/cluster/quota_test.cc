// Cluster integration: quotas per namespace prefix (docs/cluster.md "Quotas"), set,
// listed and removed with rpmpctl through the proxy, and enforced on real servers:
// a namespace over the namespace quota is refused by the proxy, a write that would
// pass the byte quota by the namespace's primary, each with an error naming prefix,
// quota and use; every acknowledged record still reads back, deletes are never
// refused and make room again. Also: rpmpctl nodes and stat show space per tier.
#include <catch2/catch.hpp>
#include <unistd.h>

#include <cstdio>

#include "tests/cluster/cluster_harness.h"
#include "tests/test_util.h"

namespace rpmp::testing {
namespace {

using namespace std::chrono_literals;

bool Contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

TEST_CASE("quotas refuse namespaces and bytes over them, through the client and rpmpctl") {
  ClusterHarness h;
  REQUIRE(h.Start(1, 3));
  const std::string proxies = h.proxy_list();
  std::string out, err;
  auto ctl = [&](std::vector<std::string> words) {
    std::vector<std::string> argv = {"rpmpctl", "--proxy", proxies};
    argv.insert(argv.end(), words.begin(), words.end());
    return RunTool(argv, "", &out, &err);
  };
  // Usage errors exit 2, refusals 1 with a one-line reason.
  CHECK(ctl({"quota", "set", "app"}) == 2);
  CHECK(ctl({"quota", "set", "app", "--bytes", "lots"}) == 2);
  CHECK(ctl({"quota", "set", "app", "--namespaces", "-1"}) == 2);
  CHECK(ctl({"quota", "frob"}) == 2);
  CHECK(ctl({"quota", "rm", "app"}) == 1);
  CHECK(Contains(err, "prefix \"app\" has no quota"));
  CHECK(ctl({"quota", "set", "bad//p", "--bytes", "1m"}) == 1);
  CHECK(Contains(err, "empty path component"));
  REQUIRE(ctl({"quota", "set", "app", "--bytes", "1m", "--namespaces", "3"}) == 0);
  CHECK(Contains(out, "app "));
  CHECK(Contains(out, "0 B / 1.0 MiB"));
  CHECK(Contains(out, "0 / 3"));

  std::unique_ptr<Client> c = h.Connect();
  REQUIRE(c != nullptr);
  ClusterControl* cc = AsCluster(c.get());
  // Namespaces: exact, checked by the leader at creation.
  for (const char* n : {"app/a", "app/b", "app/c"}) {
    StatusOr<NamespaceInfo> ns = cc->CreateNamespace(n, {2, 0, 0});
    INFO(n << ": " << ns.status().ToString());
    REQUIRE(ns.ok());
  }
  StatusOr<NamespaceInfo> fourth = cc->CreateNamespace("app/d", {2, 0, 0});
  CHECK(fourth.status().code() == StatusCode::kResourceExhausted);
  CHECK(Contains(fourth.status().message(), "quota exceeded: prefix \"app\" holds 3 namespaces, its quota is 3"));
  CHECK(ctl({"ns", "create", "app/e", "--replicas", "2"}) == 1);
  CHECK(Contains(err, "quota exceeded: prefix \"app\""));
  CHECK(cc->CreateNamespace("app/a", {2, 0, 0}).ok());    // an existing one: idempotent as before
  CHECK(cc->CreateNamespace("app2/x", {2, 0, 0}).ok());   // "app2" is not under "app"
  CHECK(c->Put("unlimited", "k", "v", 1).ok());           // created on first write, no quota

  // Bytes: every server learns the quota from its heartbeat replies, then the primary
  // of app/a refuses the write that would pass 1 MiB.
  REQUIRE(Eventually([&] {
    for (auto& s : h.servers())
      if (!Contains(s->Log(), "byte quota of prefix app: 1.0 MiB")) return false;
    return true;
  }, 10s));
  const std::string v(64 << 10, 'q');
  uint64_t acked = 0;
  std::vector<std::string> keys;
  Status refused;
  for (int i = 0; i < 64 && refused.ok(); i++) {
    std::string k = "k" + std::to_string(i);
    Status st = c->Put("app/a", k, v.data(), v.size());
    if (st.ok()) {
      acked += v.size();
      keys.push_back(k);
    } else {
      refused = st;
    }
  }
  INFO("acknowledged " << acked << " bytes; refusal: " << refused.ToString());
  CHECK(refused.code() == StatusCode::kResourceExhausted);
  CHECK(Contains(refused.message(), "quota exceeded: prefix \"app\" uses "));
  CHECK(Contains(refused.message(), "of its 1.0 MiB byte quota"));
  // One primary writes this namespace, so it counts its own writes exactly: nothing
  // past the quota was acknowledged, and it was not refused early (record headers aside).
  CHECK(acked <= (1u << 20));
  CHECK(acked >= (1u << 20) - 2 * v.size());
  // Another namespace of the prefix (maybe another primary) is refused once the
  // leader's sum reaches its node (a heartbeat or two): small writes until then.
  int overshoot = 0;
  CHECK(Eventually([&] {
    Status st = c->Put("app/b", "small" + std::to_string(overshoot), "x", 1);
    if (st.ok()) overshoot++;
    return st.code() == StatusCode::kResourceExhausted && Contains(st.message(), "prefix \"app\"");
  }, 10s));
  INFO("1-byte writes to app/b acknowledged before its refusal: " << overshoot);
  // Every acknowledged record reads back.
  for (const std::string& k : keys) {
    StatusOr<std::string> got = c->Get("app/a", k);
    INFO(k << ": " << got.status().ToString());
    REQUIRE(got.ok());
    CHECK(*got == v);
  }
  // rpmpctl shows the use against the quota, as the nodes' heartbeats report it (the
  // leader's sum can lag the primary's own count by a heartbeat or two).
  StatusOr<v1::ListQuotasReply> listed = h.proxy().ListQuotas();
  CHECK(Eventually([&] {
    listed = h.proxy().ListQuotas();
    return listed.ok() && listed->quotas_size() == 1 && listed->quotas(0).used_bytes() >= acked;
  }, 10s));
  REQUIRE(listed.ok());
  REQUIRE(listed->quotas_size() == 1);
  INFO("listed use " << listed->quotas(0).used_bytes() << " of " << acked << " acknowledged");
  CHECK(listed->quotas(0).used_bytes() >= acked);
  CHECK(listed->quotas(0).namespaces() == 3);
  REQUIRE(ctl({"quota", "ls"}) == 0);
  CHECK(Contains(out, "PREFIX"));
  CHECK(Contains(out, " / 1.0 MiB"));
  CHECK(Contains(out, "3 / 3"));
  // Deletes are never refused, and make room again once the use is reported.
  for (const std::string& k : keys) REQUIRE(c->Delete("app/a", k).ok());
  CHECK(Eventually([&] { return c->Put("app/a", "again", v.data(), v.size()).ok(); }, 10s));
  // Removing the quota lifts both limits.
  REQUIRE(ctl({"quota", "rm", "app"}) == 0);
  CHECK(Contains(out, "removed quota of app"));
  CHECK(cc->CreateNamespace("app/d", {2, 0, 0}).ok());
  REQUIRE(ctl({"quota", "ls"}) == 0);
  CHECK(!Contains(out, "app "));
}

TEST_CASE("rpmpctl nodes and stat show space per tier") {
  ClusterHarness h;
  REQUIRE(h.Start(1, 2));
  // A third server with a 64 MiB capacity tier (a file pool) beside its fast pool.
  const std::string cap_pool = "/dev/shm/rpmp-quota-test-cap-" + std::to_string(getpid()) + ".pool";
  struct Remove {
    std::string path;
    ~Remove() { std::remove(path.c_str()); }
  } remove_cap{cap_pool};
  ServerProcess tiered("256m", {"--proxy", h.proxy_list(), "--provider", Provider(), "--capacity-pool",
                                cap_pool + ":64m"});
  REQUIRE(tiered.Start());
  REQUIRE(h.WaitLive(3, 20s));
  const std::string proxies = h.proxy_list();
  std::string out, err;
  // Tiers come with heartbeats: poll until the tiered node reports its capacity tier.
  REQUIRE(Eventually([&] {
    return RunTool({"rpmpctl", "--proxy", proxies, "nodes"}, "", &out, &err) == 0 && Contains(out, " 64.0 MiB\n");
  }, 10s));
  INFO(out);
  // The original six columns first, then the tiers; "-" where a node has no capacity tier.
  CHECK(Contains(out, "NODE              ENDPOINT               STATE           USED        FREE    CAPACITY"
                      "   FAST_USED    FAST_CAP    CAP_USED     CAP_CAP\n"));
  CHECK(Contains(out, " 256.0 MiB           -           -\n"));
  CHECK(Contains(out, " 320.0 MiB "));  // the tiered node's capacity over both tiers
  REQUIRE(RunTool({"rpmpctl", "--proxy", proxies, "stat"}, "", &out, &err) == 0);
  CHECK(Contains(out, "\ntier fast capacity 768.0 MiB used "));
  CHECK(Contains(out, "\ntier capacity capacity 64.0 MiB used "));
  size_t lines = 0, with_capacity_tier = 0;
  for (size_t at = out.find("\nnode "); at != std::string::npos; at = out.find("\nnode ", at + 1)) {
    lines++;
    size_t end = out.find('\n', at + 1);
    CHECK(out.find(" fast used ", at) < end);
    if (out.find(" capacity_tier used ", at) < end) with_capacity_tier++;
  }
  CHECK(lines == 3);
  CHECK(with_capacity_tier == 1);
}

}  // namespace
}  // namespace rpmp::testing
