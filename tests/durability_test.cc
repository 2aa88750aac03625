// Integration: what survives. A clean restart keeps everything; kill -9 during a
// stream of appends keeps every acknowledged record and shows nothing torn; a full
// pool refuses writes clearly and keeps serving reads and deletes.
#include <catch2/catch.hpp>
#include <atomic>
#include <cstring>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <thread>

#include "rpmp/client.h"
#include "tests/server_process.h"
#include "tests/stream_ledger.h"

namespace rpmp {
namespace {

using testing::CheckStreamAgainstLedger;
using testing::ServerProcess;

// Deterministic content of the record with this tag; sizes cross the inline limit.
std::string RecordFor(uint64_t tag) {
  size_t len = (tag % 5 == 0) ? 100000 + tag : 50 + (tag * 37) % 9000;
  std::string s(len, '\0');
  std::mt19937_64 rng(tag);
  for (char& ch : s) ch = static_cast<char>(rng());
  return s;
}

std::unique_ptr<Client> ConnectTo(const ServerProcess& s, int timeout_s = 10) {
  ClientOptions o;
  o.timeout = std::chrono::seconds(timeout_s);
  auto c = Client::Connect(s.address(), o);
  REQUIRE(c.ok());
  return std::move(c).value();
}

TEST_CASE("a clean restart (SIGTERM) keeps keys, records, tags and raw memory") {
  ServerProcess server;
  REQUIRE(server.Start());
  GlobalAddress raw;
  uint64_t node;
  {
    auto c = ConnectTo(server);
    node = c->NodeId();
    for (uint64_t t = 1; t <= 20; t++) {
      std::string r = RecordFor(t);
      REQUIRE(c->Append("dur", "log", r.data(), r.size(), t).ok());
    }
    REQUIRE(c->Put("dur", "single", "value", 5).ok());
    raw = *c->Alloc(1 << 20);
    std::string v = RecordFor(99);
    REQUIRE(c->Write(raw, v.data(), std::min<size_t>(v.size(), 1 << 20)).ok());
  }
  CHECK(server.Kill(SIGTERM) == 0);
  CHECK(server.Log().find("stopped cleanly") != std::string::npos);
  REQUIRE(server.Restart());
  auto c = ConnectTo(server);
  CHECK(c->NodeId() == node);
  StatusOr<ObjectMeta> m = c->GetMeta("dur", "log");
  REQUIRE(m.ok());
  REQUIRE(m->records.size() == 20);
  std::string expect;
  for (uint64_t t = 1; t <= 20; t++) {
    CHECK(m->records[t - 1].tag == t);
    expect += RecordFor(t);
  }
  CHECK(*c->Get("dur", "log") == expect);
  CHECK(*c->Get("dur", "single") == "value");
  std::string v = RecordFor(99), back(std::min<size_t>(v.size(), 1 << 20), '\0');
  REQUIRE(c->Read(raw, back.data(), back.size()).ok());
  CHECK(back == v.substr(0, back.size()));
}

// Streams appends from 4 threads, stops the server with `sig` after 400 acks, restarts
// it, and checks: every acknowledged record is there, byte for byte; nothing is torn,
// doubled or invented.
void StopDuringAppends(int sig, int expected_exit) {
  ServerProcess server("512m");
  REQUIRE(server.Start());
  auto c = ConnectTo(server, 5);
  std::mutex mu;
  std::set<uint64_t> acked, attempted;
  std::atomic<uint64_t> next_tag{1};
  std::atomic<bool> stop{false};
  std::atomic<int> acks{0};
  std::vector<std::thread> writers;
  for (int w = 0; w < 4; w++) {
    writers.emplace_back([&] {
      while (!stop.load()) {
        uint64_t tag = next_tag.fetch_add(1);
        std::string r = RecordFor(tag);
        { std::lock_guard<std::mutex> l(mu); attempted.insert(tag); }
        Status st = c->Append("crash", "stream", r.data(), r.size(), tag);
        if (!st.ok()) return;  // the server is gone
        { std::lock_guard<std::mutex> l(mu); acked.insert(tag); }
        acks++;
      }
    });
  }
  while (acks.load() < 400) std::this_thread::yield();  // stop mid-stream
  int exit_status = server.Kill(sig);
  INFO(server.Log());
  CHECK(exit_status == expected_exit);
  for (auto& t : writers) t.join();
  stop = true;
  c.reset();
  REQUIRE(server.Restart());
  auto r = ConnectTo(server);
  CheckStreamAgainstLedger(r.get(), "crash", "stream", attempted, acked, RecordFor);
  CHECK(acked.size() >= 400);
}

TEST_CASE("kill -9 during a stream of appends loses no acknowledged record and shows none torn") {
  StopDuringAppends(SIGKILL, 128 + SIGKILL);
}

TEST_CASE("SIGTERM during a stream of appends drains, exits 0 and keeps every acknowledged record") {
  StopDuringAppends(SIGTERM, 0);
}

TEST_CASE("a full pool answers writes with no space and keeps serving reads and deletes") {
  ServerProcess server("64m", {"--segment-size", "4m"});
  REQUIRE(server.Start());
  auto c = ConnectTo(server);
  std::string chunk(1 << 20, 'f');
  int stored = 0;
  Status st;
  for (int i = 0; i < 200 && st.ok(); i++) {
    st = c->Put("full", "k" + std::to_string(i), chunk.data(), chunk.size());
    if (st.ok()) stored++;
  }
  REQUIRE(st.code() == StatusCode::kResourceExhausted);
  CHECK(st.message().find("free") != std::string::npos);
  CHECK(stored > 10);
  CHECK(*c->Get("full", "k0") == chunk);  // reads still work
  for (int i = 0; i < stored; i++) REQUIRE(c->Delete("full", "k" + std::to_string(i)).ok());
  CHECK(c->Put("full", "again", chunk.data(), chunk.size()).ok());  // space came back
  CHECK(c->Stat().ok());
}

}  // namespace
}  // namespace rpmp
