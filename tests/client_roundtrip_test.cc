// Integration: a real rpmp-server process and the C++ client. Round trips of every
// size class byte for byte, async and future forms, records and one-sided reads, raw
// memory, and many concurrent clients.
#include <catch2/catch.hpp>
#include <atomic>
#include <cstring>
#include <random>
#include <thread>

#include "common/crc32c.h"
#include "rpmp/client.h"
#include "tests/server_process.h"
#include "tests/test_util.h"

namespace rpmp {
namespace {

using testing::ServerProcess;

std::string Pattern(size_t n, uint64_t seed) {
  std::string s(n, '\0');
  std::mt19937_64 rng(seed);
  for (size_t i = 0; i < n; i += 8) {
    uint64_t v = rng();
    std::memcpy(&s[i], &v, std::min<size_t>(8, n - i));
  }
  return s;
}

std::unique_ptr<Client> ConnectTo(const ServerProcess& s) {
  ClientOptions o;
  o.timeout = std::chrono::seconds(20);
  auto c = Client::Connect(s.address(), o);
  REQUIRE(c.ok());
  return std::move(c).value();
}

TEST_CASE("put and get round-trip 0 B, 1 B, 4 KiB, 1 MiB and 64 MiB byte for byte") {
  ServerProcess server("512m");
  REQUIRE(server.Start());
  auto c = ConnectTo(server);
  for (size_t size : {size_t{0}, size_t{1}, size_t{4096}, size_t{16384}, size_t{16385},
                      size_t{1} << 20, size_t{64} << 20}) {
    INFO("size " << size);
    std::string v = Pattern(size, size);
    REQUIRE(c->Put("rt", "k" + std::to_string(size), v.data(), v.size()).ok());
    StatusOr<std::string> got = c->Get("rt", "k" + std::to_string(size));
    REQUIRE(got.ok());
    CHECK(got->size() == v.size());
    CHECK(*got == v);
  }
  CHECK(c->Get("rt", "missing").status().code() == StatusCode::kNotFound);
}

TEST_CASE("appends keep order and tags; meta lists records for one-sided reads") {
  ServerProcess server;
  REQUIRE(server.Start());
  auto c = ConnectTo(server);
  std::vector<std::string> parts = {Pattern(100, 1), Pattern(70000, 2), Pattern(0, 3), Pattern(5, 4)};
  for (size_t i = 0; i < parts.size(); i++)
    REQUIRE(c->Append("ap", "p0", parts[i].data(), parts[i].size(), 1000 + i).ok());
  StatusOr<std::string> all = c->Get("ap", "p0");
  REQUIRE(all.ok());
  CHECK(*all == parts[0] + parts[1] + parts[2] + parts[3]);

  StatusOr<ObjectMeta> meta = c->GetMeta("ap", "p0");
  REQUIRE(meta.ok());
  REQUIRE(meta->records.size() == parts.size());
  CHECK(meta->total_length == all->size());
  StatusOr<Buffer> buf = c->AllocBuffer(1 << 20);
  REQUIRE(buf.ok());
  for (size_t i = 0; i < parts.size(); i++) {
    CHECK(meta->records[i].tag == 1000 + i);
    CHECK(meta->records[i].length == parts[i].size());
    REQUIRE(c->ReadRecord(meta->records[i], &*buf, 0).ok());
    CHECK(std::string(buf->data(), parts[i].size()) == parts[i]);
  }
  // A put replaces all records.
  REQUIRE(c->Put("ap", "p0", "x", 1, 7).ok());
  CHECK(*c->Get("ap", "p0") == "x");
  CHECK(c->GetMeta("ap", "p0")->records.size() == 1);
}

TEST_CASE("zero-copy async and future forms complete with the right results") {
  ServerProcess server;
  REQUIRE(server.Start());
  auto c = ConnectTo(server);
  std::vector<Buffer> bufs;
  std::vector<std::future<Status>> puts;
  for (int i = 0; i < 32; i++) {
    StatusOr<Buffer> b = c->AllocBuffer(256 * 1024);
    REQUIRE(b.ok());
    std::string v = Pattern(200000 + i, i);
    std::memcpy(b->data(), v.data(), v.size());
    b->set_size(v.size());
    bufs.push_back(std::move(b).value());
  }
  for (int i = 0; i < 32; i++) puts.push_back(c->PutFuture("as", "k" + std::to_string(i), bufs[i], i));
  for (auto& f : puts) CHECK(f.get().ok());
  for (int i = 0; i < 32; i++) {
    Buffer out;  // empty: the client finds out the size and grows it
    CHECK(c->GetFuture("as", "k" + std::to_string(i), &out).get().ok());
    CHECK(std::string(out.data(), out.size()) == Pattern(200000 + i, i));
  }
  std::promise<Status> p;
  Buffer missing;
  c->GetAsync("as", "nope", &missing, [&p](Status st) { p.set_value(st); });
  CHECK(p.get_future().get().code() == StatusCode::kNotFound);
}

TEST_CASE("list pages through many keys; delete and namespace delete") {
  ServerProcess server;
  REQUIRE(server.Start());
  auto c = ConnectTo(server);
  for (int i = 0; i < 1500; i++) {
    std::string k = "key" + std::to_string(100000 + i);
    REQUIRE(c->Put("ls", k, k.data(), k.size()).ok());
  }
  auto keys = c->List("ls");
  REQUIRE(keys.ok());
  REQUIRE(keys->size() == 1500);
  CHECK(keys->front().key == "key100000");
  CHECK(keys->back().key == "key101499");
  CHECK(c->List("ls", "key101490")->size() == 9);
  REQUIRE(c->Delete("ls", "key100000").ok());
  CHECK(c->Delete("ls", "key100000").code() == StatusCode::kNotFound);
  CHECK(c->List("ls")->size() == 1499);
  REQUIRE(c->DeleteNamespace("ls").ok());
  CHECK(c->List("ls")->empty());
}

TEST_CASE("raw memory: alloc, write, read, bounds, free") {
  ServerProcess server;
  REQUIRE(server.Start());
  auto c = ConnectTo(server);
  StatusOr<GlobalAddress> a = c->Alloc(3 << 20);
  REQUIRE(a.ok());
  CHECK(a->node_id == c->NodeId());
  std::string v = Pattern(3 << 20, 9);
  REQUIRE(c->Write(*a, v.data(), v.size()).ok());
  std::string back(v.size(), '\0');
  REQUIRE(c->Read(*a, back.data(), back.size()).ok());
  CHECK(back == v);
  GlobalAddress mid = *a;
  mid.offset += 100;
  std::string small(50, '\0');
  REQUIRE(c->Read(mid, small.data(), small.size()).ok());
  CHECK(small == v.substr(100, 50));
  CHECK(c->Write(mid, v.data(), v.size()).code() == StatusCode::kOutOfRange);
  GlobalAddress other = *a;
  other.node_id ^= 1;
  CHECK(c->Read(other, small.data(), 1).code() == StatusCode::kInvalidArgument);
  REQUIRE(c->Free(*a).ok());
  CHECK_FALSE(c->Read(*a, small.data(), 1).ok());
  CHECK(c->Alloc(0).status().code() == StatusCode::kInvalidArgument);
}

TEST_CASE("many concurrent clients and threads see only their own, complete values") {
  ServerProcess server("512m");
  REQUIRE(server.Start());
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  auto shared = ConnectTo(server);
  for (int t = 0; t < 8; t++) {
    threads.emplace_back([&, t] {
      std::unique_ptr<Client> own;
      Client* c = shared.get();
      if (t % 2 == 0) {  // half the threads have their own client, half share one
        auto r = Client::Connect(server.address());
        if (!r.ok()) { failures++; return; }
        own = std::move(r).value();
        c = own.get();
      }
      for (int i = 0; i < 60; i++) {
        std::string k = "t" + std::to_string(t) + "-" + std::to_string(i);
        std::string v = Pattern(i % 3 == 0 ? 300000 : 3000, t * 1000 + i);
        if (!c->Put("cc", k, v.data(), v.size()).ok()) failures++;
        StatusOr<std::string> g = c->Get("cc", k);
        if (!g.ok() || *g != v) failures++;
      }
    });
  }
  for (auto& t : threads) t.join();
  CHECK(failures.load() == 0);
  CHECK(shared->List("cc")->size() == 8 * 60);
}

TEST_CASE("connecting to a port where no server listens fails clearly and quickly") {
  ClientOptions o;
  o.timeout = std::chrono::seconds(5);
  auto t0 = std::chrono::steady_clock::now();
  auto c = Client::Connect("127.0.0.1:" + std::to_string(testing::FreePort()), o);
  REQUIRE_FALSE(c.ok());
  CHECK((c.status().code() == StatusCode::kUnavailable ||
         c.status().code() == StatusCode::kDeadlineExceeded));
  CHECK(c.status().message().find("cannot reach rpmp-server") != std::string::npos);
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(15));
}

}  // namespace
}  // namespace rpmp
