// Integration: a blocking caller that waits for its reply on the fabric itself
// (ClientOptions::caller_waits, the default), against a real rpmp-server. The progress
// thread stays asleep while callers take their own replies; calls of other threads,
// asynchronous calls and deadlines still complete when the leading caller leaves or the
// server stops answering.
#include <pthread.h>
#include <signal.h>

#include <catch2/catch.hpp>
#include <atomic>
#include <chrono>
#include <cstring>
#include <dirent.h>
#include <fstream>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "rpmp/client.h"
#include "tests/server_process.h"

namespace rpmp {
namespace {

using testing::ServerProcess;

// Voluntary context switches of this process's threads named `name` (each one a sleep
// that ended in a wake-up), summed.
long VoluntarySwitches(const std::string& name) {
  long sum = 0;
  DIR* d = opendir("/proc/self/task");
  REQUIRE(d != nullptr);
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] == '.') continue;
    std::string dir = std::string("/proc/self/task/") + e->d_name;
    std::string comm;
    std::getline(std::ifstream(dir + "/comm") >> std::ws, comm);
    if (comm != name) continue;
    std::ifstream status(dir + "/status");
    for (std::string line; std::getline(status, line);)
      if (line.rfind("voluntary_ctxt_switches:", 0) == 0) sum += std::stol(line.substr(24));
  }
  closedir(d);
  return sum;
}

std::unique_ptr<Client> Connect(const ServerProcess& s, bool caller_waits,
                                std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
  ClientOptions o;
  o.timeout = timeout;
  o.caller_waits = caller_waits;
  o.connections = 1;  // one connection, so one progress thread to watch
  auto c = Client::Connect(s.address(), o);
  REQUIRE(c.ok());
  return std::move(c).value();
}

// Wake-ups of the client's progress thread over `calls` blocking 4 KiB put+get pairs.
long ProgressWakeups(Client* c, int calls) {
  std::string v(4096, 'w');
  long before = VoluntarySwitches("rpmp-progress");
  for (int i = 0; i < calls; i++) {
    REQUIRE(c->Put("wake", "k" + std::to_string(i % 16), v.data(), v.size()).ok());
    StatusOr<std::string> g = c->Get("wake", "k" + std::to_string(i % 16));
    REQUIRE(g.ok());
    REQUIRE(*g == v);
  }
  return VoluntarySwitches("rpmp-progress") - before;
}

TEST_CASE("a blocking caller takes its own reply: the progress thread stays asleep") {
  ServerProcess server("256m");
  REQUIRE(server.Start());
  const int pairs = 400;  // 800 calls
  long handed_over, waited;
  {
    auto c = Connect(server, /*caller_waits=*/false);
    handed_over = ProgressWakeups(c.get(), pairs);
  }
  {
    auto c = Connect(server, /*caller_waits=*/true);
    waited = ProgressWakeups(c.get(), pairs);
  }
  INFO("progress thread wake-ups over " << 2 * pairs << " calls: handed over " << handed_over
                                        << ", caller waits " << waited);
  // Handing over wakes the progress thread at least once per call (for the reply). A
  // caller that waits itself leaves it to its 50 ms deadline checks.
  CHECK(handed_over >= 2 * pairs);
  CHECK(waited < pairs / 4);
}

TEST_CASE("callers waiting on the fabric, other threads' calls and async calls all complete") {
  // Four threads share one connection: at most one leads the queue, the others wait on
  // their latches and are answered by whoever drives; asynchronous puts go beside them.
  // A lost hand-over (nobody driving while calls are in flight) leaves calls to time
  // out, which the 30 s timeout against the 10 s bound below would show.
  ServerProcess server("512m");
  REQUIRE(server.Start());
  auto c = Connect(server, true, std::chrono::seconds(30));
  std::vector<Buffer> bufs;
  for (int i = 0; i < 64; i++) {
    StatusOr<Buffer> b = c->AllocBuffer(65536);
    REQUIRE(b.ok());
    std::memset(b->data(), 'a' + i % 26, 65536);
    b->set_size(65536);
    bufs.push_back(std::move(*b));
  }
  const auto start = std::chrono::steady_clock::now();
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; t++) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 150; i++) {
        std::string key = "t" + std::to_string(t) + "-" + std::to_string(i);
        std::string v(i % 3 == 0 ? 100000 : 4096, static_cast<char>('A' + t));
        if (!c->Put("mix", key, v.data(), v.size()).ok()) failures++;
        StatusOr<std::string> g = c->Get("mix", key);
        if (!g.ok() || *g != v) failures++;
      }
    });
  }
  std::vector<std::future<Status>> async;
  for (int i = 0; i < 64; i++) async.push_back(c->PutFuture("mix", "a" + std::to_string(i), bufs[i]));
  for (auto& th : threads) th.join();
  for (auto& f : async) CHECK(f.get().ok());
  CHECK(failures.load() == 0);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(10));
  StatusOr<std::string> g = c->Get("mix", "a63");
  REQUIRE(g.ok());
  CHECK(*g == std::string(65536, 'a' + 63 % 26));
}

TEST_CASE("a caller waiting on the fabric of a paused server ends at its deadline, then carries on") {
  ServerProcess server("256m");
  REQUIRE(server.Start());
  auto c = Connect(server, true, std::chrono::milliseconds(1500));
  std::string v(4096, 'p');
  REQUIRE(c->Put("pause", "k", v.data(), v.size()).ok());
  REQUIRE(server.Signal(SIGSTOP));
  const auto start = std::chrono::steady_clock::now();
  StatusOr<std::string> g = c->Get("pause", "k");
  const auto took = std::chrono::steady_clock::now() - start;
  REQUIRE(server.Signal(SIGCONT));
  INFO(g.status().ToString());
  CHECK(g.status().code() == StatusCode::kDeadlineExceeded);
  CHECK(took >= std::chrono::milliseconds(1400));
  CHECK(took < std::chrono::seconds(5));
  // The same client goes on: later calls (a new session if needed) are answered.
  Status st;
  for (int i = 0; i < 5; i++) {
    StatusOr<std::string> again = c->Get("pause", "k");
    st = again.status();
    if (again.ok()) {
      CHECK(*again == v);
      break;
    }
  }
  CHECK(st.ok());
}

TEST_CASE("a completion callback that makes a blocking call (against the rule) is still answered") {
  // Client's contract forbids blocking calls in callbacks, but one that does must not
  // stall: its callback runs on the progress thread or on the main thread while that
  // leads the queue (a blocking put below), and either way the blocking get inside it
  // must be driven by the thread that runs it. Without that it waits on its latch
  // while nobody drives the queue, until its 20 s timeout.
  ServerProcess server("256m");
  REQUIRE(server.Start());
  auto c = Connect(server, true);
  std::string v(4096, 'n');
  REQUIRE(c->Put("nested", "k", v.data(), v.size()).ok());
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 60; i++) {
    StatusOr<Buffer> out = c->AllocBuffer(4096);
    REQUIRE(out.ok());
    auto inner = std::make_shared<std::promise<Status>>();
    std::future<Status> inner_done = inner->get_future();
    c->GetAsync("nested", "k", &*out, [&c, &v, inner](Status st) {
      if (!st.ok()) return inner->set_value(st);
      StatusOr<std::string> g = c->Get("nested", "k");  // blocking, inside the callback
      inner->set_value(!g.ok() ? g.status() : *g == v ? Status::Ok() : Status::Internal("wrong bytes"));
    });
    REQUIRE(c->Put("nested", "p" + std::to_string(i), v.data(), v.size()).ok());
    REQUIRE(inner_done.wait_for(std::chrono::seconds(10)) == std::future_status::ready);
    Status st = inner_done.get();
    INFO("round " << i << ": " << st.ToString());
    REQUIRE(st.ok());
  }
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(10));
}

TEST_CASE("a blocking call in a callback on the progress thread still ends at its deadline") {
  // The callback runs on the progress thread (the main thread makes no call meanwhile,
  // so nobody else takes the reply), and its blocking get goes to a paused server.
  // Nobody but the progress thread enforces deadlines: it must do so while it waits in
  // the callback, else the get waits for the server for ever.
  ServerProcess server("128m");
  REQUIRE(server.Start());
  auto c = Connect(server, true, std::chrono::milliseconds(1500));
  std::string v(4096, 'd');
  REQUIRE(c->Put("deadline", "k", v.data(), v.size()).ok());
  StatusOr<Buffer> out = c->AllocBuffer(4096);
  REQUIRE(out.ok());
  std::promise<bool> entered, paused;
  std::future<bool> entered_f = entered.get_future();
  std::shared_future<bool> paused_f = paused.get_future().share();
  std::promise<Status> inner;
  std::future<Status> inner_done = inner.get_future();
  std::atomic<bool> on_progress{false};
  c->GetAsync("deadline", "k", &*out, [&](Status st) {
    char name[16] = {0};
    pthread_getname_np(pthread_self(), name, sizeof(name));
    on_progress = std::string(name) == "rpmp-progress";
    entered.set_value(st.ok());
    paused_f.wait();
    StatusOr<std::string> g = c->Get("deadline", "k");  // blocking, inside the callback
    inner.set_value(g.status());
  });
  REQUIRE(entered_f.wait_for(std::chrono::seconds(10)) == std::future_status::ready);
  REQUIRE(entered_f.get());
  REQUIRE(server.Signal(SIGSTOP));
  const auto start = std::chrono::steady_clock::now();
  paused.set_value(true);
  // Should the get never end, the server resumes before the test fails, so that the
  // callback returns and the client can close.
  bool ended = inner_done.wait_for(std::chrono::seconds(10)) == std::future_status::ready;
  const auto took = std::chrono::steady_clock::now() - start;
  REQUIRE(server.Signal(SIGCONT));
  // The callback holds references into this frame: let it return before failing.
  if (!ended) inner_done.wait_for(std::chrono::seconds(30));
  CHECK(on_progress.load());
  REQUIRE(ended);
  Status st = inner_done.get();
  INFO(st.ToString());
  CHECK(st.code() == StatusCode::kDeadlineExceeded);
  CHECK(took >= std::chrono::milliseconds(1400));
  // The client goes on after the callback returned.
  StatusOr<std::string> g = c->Get("deadline", "k");
  for (int i = 0; i < 5 && !g.ok(); i++) g = c->Get("deadline", "k");
  REQUIRE(g.ok());
  CHECK(*g == v);
}

TEST_CASE("RPMP_CLIENT_CALLER_WAITS overrides the option both ways") {
  ServerProcess server("128m");
  REQUIRE(server.Start());
  auto wakeups = [&](const char* env, bool option) {
    setenv("RPMP_CLIENT_CALLER_WAITS", env, 1);
    ClientOptions o;
    o.caller_waits = option;
    o.connections = 1;
    auto c = Client::Connect(server.address(), o);
    unsetenv("RPMP_CLIENT_CALLER_WAITS");
    REQUIRE(c.ok());
    return ProgressWakeups(c->get(), 200);
  };
  long forced_off = wakeups("0", true), forced_on = wakeups("1", false);
  INFO("progress thread wake-ups over 400 calls: env 0 " << forced_off << ", env 1 " << forced_on);
  CHECK(forced_off >= 400);
  CHECK(forced_on < 50);
}

TEST_CASE("a bad RPMP_CLIENT_CALLER_WAITS is refused with a message naming it") {
  ServerProcess server("128m");
  REQUIRE(server.Start());
  setenv("RPMP_CLIENT_CALLER_WAITS", "yes", 1);
  auto c = Client::Connect(server.address(), ClientOptions());
  unsetenv("RPMP_CLIENT_CALLER_WAITS");
  REQUIRE_FALSE(c.ok());
  CHECK(c.status().code() == StatusCode::kInvalidArgument);
  CHECK(c.status().message().find("RPMP_CLIENT_CALLER_WAITS") != std::string::npos);
}

}  // namespace
}  // namespace rpmp
