// Integration: a real rpmp-server process and the C++ client. Round trips of every
// size class byte for byte, async and future forms, records and one-sided reads, raw
// memory, and many concurrent clients.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <atomic>
#include <cstring>
#include <fstream>
#include <functional>
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

// Registered buffers of the client, buffer i holding `contents(i)` (for async writes).
std::vector<Buffer> FilledBuffers(Client* c, int n, const std::function<std::string(int)>& contents) {
  std::vector<Buffer> bufs;
  for (int i = 0; i < n; i++) {
    std::string v = contents(i);
    StatusOr<Buffer> b = c->AllocBuffer(v.size());
    REQUIRE(b.ok());
    std::memcpy(b->data(), v.data(), v.size());
    b->set_size(v.size());
    bufs.push_back(std::move(*b));
  }
  return bufs;
}

// Waits for every call; CHECKs each (naming it) and returns how many failed.
int AwaitAll(std::vector<std::future<Status>>& calls, const std::string& what) {
  int failed = 0;
  for (size_t i = 0; i < calls.size(); i++) {
    Status st = calls[i].get();
    INFO(what << " " << i << ": " << st.ToString());
    CHECK(st.ok());
    if (!st.ok()) failed++;
  }
  return failed;
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

TEST_CASE("appends keep order and tags, and meta lists records for one-sided reads") {
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

TEST_CASE("list pages through many keys, then delete and namespace delete") {
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

TEST_CASE("polling callers (poll_for) against a busy-polling server: every op, several threads, exact bytes") {
  ServerProcess server("256m", {"--busy-poll"});
  REQUIRE(server.Start());
  ClientOptions o;
  o.timeout = std::chrono::seconds(20);
  o.poll_for = std::chrono::milliseconds(50);  // callers handle their own replies
  auto conn = Client::Connect(server.address(), o);
  REQUIRE(conn.ok());
  Client* c = conn->get();
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 3; t++) {  // one client shared: callers race for the queue
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; i++) {
        std::string k = "p" + std::to_string(t) + "-" + std::to_string(i % 20);
        std::string v = Pattern(i % 7 == 0 ? 100000 : 4096, t * 10000 + i);
        if (!c->Put("poll", k, v.data(), v.size()).ok()) failures++;
        StatusOr<std::string> g = c->Get("poll", k);
        if (!g.ok() || *g != v) failures++;
        if (!c->Append("poll", "log" + std::to_string(t), v.data(), 64, i).ok()) failures++;
      }
    });
  }
  for (auto& t : threads) t.join();
  CHECK(failures.load() == 0);
  for (int t = 0; t < 3; t++) {  // one-sided reads through the polled path too
    StatusOr<ObjectMeta> m = c->GetMeta("poll", "log" + std::to_string(t));
    REQUIRE(m.ok());
    REQUIRE(m->records.size() == 200);
    StatusOr<Buffer> b = c->AllocBuffer(64);
    REQUIRE(b.ok());
    REQUIRE(c->ReadRecord(m->records[199], &*b, 0).ok());
    CHECK(std::string(b->data(), 64) == Pattern(100000, t * 10000 + 199).substr(0, 64));
    CHECK(m->records[199].tag == 199);
  }
}

TEST_CASE("a polling caller hands the queue back: asynchronous calls beside it and replies slower than poll_for complete") {
  // Polling ends after 1 us, long before most replies (default server: it sleeps in
  // poll), so nearly every call falls back to the progress thread; asynchronous puts run
  // from another thread meanwhile, and complete only if the progress thread takes the
  // queue back whenever no caller polls (a lost hand-back leaves them to time out).
  ServerProcess server("256m");
  bool started = server.Start();
  INFO(server.Log());
  REQUIRE(started);
  ClientOptions o;
  o.timeout = std::chrono::seconds(30);  // a lost hand-back leaves calls to expire
  o.poll_for = std::chrono::microseconds(1);
  auto conn = Client::Connect(server.address(), o);
  REQUIRE(conn.ok());
  Client* c = conn->get();
  std::vector<Buffer> bufs = FilledBuffers(c, 100, [](int i) { return Pattern(8192, 500 + i); });
  std::vector<std::future<Status>> async;
  std::atomic<int> sync_failures{0};
  std::thread polled([&] {
    for (int i = 0; i < 100; i++) {
      std::string v = Pattern(i % 2 ? 100000 : 4096, i);
      if (!c->Put("handback", "s" + std::to_string(i), v.data(), v.size()).ok()) sync_failures++;
      StatusOr<std::string> g = c->Get("handback", "s" + std::to_string(i));
      if (!g.ok() || *g != v) sync_failures++;
    }
  });
  for (int i = 0; i < 100; i++) async.push_back(c->PutFuture("handback", "a" + std::to_string(i), bufs[i]));
  polled.join();
  CHECK(sync_failures.load() == 0);
  int async_failures = AwaitAll(async, "async put");
  if (async_failures > 0) FAIL_CHECK("server log:\n" << server.Log());  // why, if they failed
  for (int i = 0; i < 100; i += 33) {
    StatusOr<std::string> g = c->Get("handback", "a" + std::to_string(i));
    REQUIRE(g.ok());
    CHECK(*g == Pattern(8192, 500 + i));
  }
}

TEST_CASE("a polling caller waiting for a call slot leaves the queue to the progress thread") {
  // Two call slots, both taken by asynchronous puts: a polling caller's put must wait
  // for one, and only the progress thread can complete the puts that free it. (It used
  // to count as polling while it waited, so nobody drove the queue until the timeout.)
  ServerProcess server("256m");
  REQUIRE(server.Start());
  ClientOptions o;
  o.timeout = std::chrono::seconds(10);
  o.poll_for = std::chrono::microseconds(200);
  o.max_inflight = 2;
  auto conn = Client::Connect(server.address(), o);
  REQUIRE(conn.ok());
  Client* c = conn->get();
  std::vector<Buffer> bufs = FilledBuffers(c, 2, [](int i) { return std::string(65536, 'a' + i); });
  const auto start = std::chrono::steady_clock::now();
  for (int round = 0; round < 20; round++) {
    std::vector<std::future<Status>> async;
    for (int i = 0; i < 2; i++)
      async.push_back(c->PutFuture("slots", "a" + std::to_string(round * 2 + i), bufs[i]));
    std::string v = Pattern(4096, round);
    Status st = c->Put("slots", "s" + std::to_string(round), v.data(), v.size());
    INFO("round " << round << ": " << st.ToString());
    REQUIRE(st.ok());
    for (auto& f : async) REQUIRE(f.get().ok());
  }
  // 60 small round trips: far under the 10 s a stalled queue would take for one.
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(5));
  CHECK(*c->Get("slots", "s19") == Pattern(4096, 19));
  CHECK(*c->Get("slots", "a39") == std::string(65536, 'b'));
}

TEST_CASE("a client keeps to the in-flight limit its server advertises, however many calls it may hold") {
  // The server takes 4 requests per client (it drops frames past twice that without a
  // reply); the client could hold 64. 100 asynchronous puts at once must all complete.
  std::string config = testing::TempPath("inflight.yaml");
  {
    std::ofstream f(config);
    f << "max_inflight_per_client: 4\n";
  }
  ServerProcess server("256m", {"--config", config});
  REQUIRE(server.Start());
  ClientOptions o;
  o.timeout = std::chrono::seconds(5);  // a dropped frame shows as a timeout
  auto conn = Client::Connect(server.address(), o);
  REQUIRE(conn.ok());
  Client* c = conn->get();
  // 256 KiB each: the server's reads of the payloads take long enough for requests to
  // pile up past its limit if the client sent them all.
  std::vector<Buffer> bufs = FilledBuffers(c, 100, [](int i) { return Pattern(256 << 10, 900 + i); });
  std::vector<std::future<Status>> async;
  for (int i = 0; i < 100; i++) async.push_back(c->PutFuture("window", "k" + std::to_string(i), bufs[i]));
  CHECK(AwaitAll(async, "put") == 0);
  CHECK(*c->Get("window", "k99") == Pattern(256 << 10, 999));
  std::remove(config.c_str());
}

TEST_CASE("a bad RPMP_CLIENT_POLL_US is refused with a message naming it") {
  ServerProcess server;
  REQUIRE(server.Start());
  setenv("RPMP_CLIENT_POLL_US", "fast", 1);
  auto c = Client::Connect(server.address());
  unsetenv("RPMP_CLIENT_POLL_US");
  REQUIRE_FALSE(c.ok());
  CHECK(c.status().code() == StatusCode::kInvalidArgument);
  CHECK(c.status().message().find("RPMP_CLIENT_POLL_US") != std::string::npos);
}

TEST_CASE("GetMetaOfTags lists exactly the records of the given tags, in order, across pages") {
  ServerProcess server;
  REQUIRE(server.Start());
  auto c = ConnectTo(server);
  const int n = 2500;  // more than two server pages of 1000
  for (int i = 0; i < n; i++) {
    std::string v = "r" + std::to_string(i);
    REQUIRE(c->Append("mf", "part", v.data(), v.size(), 100 + i % 7).ok());
  }
  StatusOr<ObjectMeta> all = c->GetMeta("mf", "part");
  REQUIRE(all.ok());
  REQUIRE(all->records.size() == n);
  StatusOr<ObjectMeta> some = c->GetMetaOfTags("mf", "part", {105, 102, 999});
  REQUIRE(some.ok());
  CHECK(some->total_length == all->total_length);
  std::vector<RecordRef> want;
  for (const RecordRef& r : all->records)
    if (r.tag == 102 || r.tag == 105) want.push_back(r);
  REQUIRE(some->records.size() == want.size());
  for (size_t i = 0; i < want.size(); i++) {
    CHECK(some->records[i].tag == want[i].tag);
    CHECK(some->records[i].rma_addr == want[i].rma_addr);
    CHECK(some->records[i].index == want[i].index);  // its place in the whole list (refetch)
    CHECK(some->records[i].origin != nullptr);
  }
  StatusOr<Buffer> b = c->AllocBuffer(16);
  REQUIRE(b.ok());
  REQUIRE(c->ReadRecord(some->records.back(), &*b, 0).ok());
  CHECK(std::string(b->data(), some->records.back().length) == "r2497");  // 2497 % 7 == 5
  StatusOr<ObjectMeta> none = c->GetMetaOfTags("mf", "part", {1});
  REQUIRE(none.ok());
  CHECK(none->records.empty());
  StatusOr<ObjectMeta> every = c->GetMetaOfTags("mf", "part", {});
  REQUIRE(every.ok());
  CHECK(every->records.size() == n);
  std::vector<uint64_t> many;  // over the wire limit: filtered on the client, same answer
  for (uint64_t t = 0; t < 5000; t++) many.push_back(t == 102 ? 105 : t + 1000);
  StatusOr<ObjectMeta> big = c->GetMetaOfTags("mf", "part", many);
  REQUIRE(big.ok());
  CHECK(big->records.size() == n / 7 + (n % 7 > 5 ? 1 : 0));
  CHECK(c->GetMetaOfTags("mf", "missing", {1}).status().code() == StatusCode::kNotFound);
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

// The tests' harness, not the server: a port another process takes between FreePort()
// and the server's bind (ctest -j runs tests side by side) costs a retry, not a failure.
TEST_CASE("test harness: a server whose port was taken before its first start moves to another") {
  ServerProcess server("64m", {"--segment-size", "1m"});
  std::string first = server.address();
  int squatter = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(static_cast<uint16_t>(std::stoi(first.substr(first.rfind(':') + 1))));
  REQUIRE(bind(squatter, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0);
  REQUIRE(listen(squatter, 1) == 0);
  REQUIRE(server.Start());
  CHECK(server.address() != first);
  CHECK(Client::Connect(server.address()).ok());
  close(squatter);
}

}  // namespace
}  // namespace rpmp
