// Tests of the Replicator's life cycle (replicator.h): rpmp-server serves before
// cluster mode starts the replication threads, so a write may reach the Replicator
// before Start. It used to index an empty worker table there (a division by zero:
// the server died of SIGFPE, found by the fault campaign over `net`, whose clients
// reconnect within a millisecond of a restart). Now such work waits for Start, and a
// Replicator stopped without starting still answers it.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <thread>

#include "server/cluster/replicator.h"

namespace rpmp {
namespace {

// Polls until `answered` reaches `want` or 10 s pass.
bool Eventually(const std::atomic<int>& answered, int want) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (answered.load() < want) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

TEST_CASE("deletes submitted before Start wait for it, and are answered once it runs") {
  // The scanner (started by Start) lists placements: a proxy nobody answers at.
  ProxyClientOptions po;
  po.rpc_timeout = std::chrono::milliseconds(200);
  po.retry_for = std::chrono::milliseconds(0);
  ProxyClient nobody({"127.0.0.1:1"}, po);
  Replicator r(nullptr, &nobody, /*self_id=*/9, ReplicatorOptions{});
  r.SetLeaseCheck([] { return false; });  // no lease yet: each job answers Unavailable
  std::atomic<int> answered{0}, unavailable{0};
  for (int i = 0; i < 16; i++)
    r.SubmitDelete("ns" + std::to_string(i), "k", WriteId{}, [&](const Status& st) {
      if (st.code() == StatusCode::kUnavailable) unavailable++;
      answered++;
    });
  CHECK(answered.load() == 0);  // nothing runs before Start
  r.Start();
  REQUIRE(Eventually(answered, 16));
  CHECK(unavailable.load() == 16);
  r.Stop();
}

TEST_CASE("work submitted to a Replicator that never starts is answered when it stops") {
  std::atomic<int> answered{0};
  {
    Replicator r(nullptr, nullptr, /*self_id=*/9, ReplicatorOptions{});
    r.SetLeaseCheck([] { return false; });
    for (int i = 0; i < 8; i++)
      r.SubmitDelete("ns" + std::to_string(i), "k", WriteId{}, [&](const Status& st) {
        CHECK(st.code() == StatusCode::kUnavailable);
        answered++;
      });
  }  // the destructor stops it
  CHECK(answered.load() == 8);
}

}  // namespace
}  // namespace rpmp
