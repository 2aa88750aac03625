// Integration: a session the server ends while the client still holds it (docs/security.md,
// "How a session ends"), once per reason, against a real rpmp-server process: idle expiry,
// eviction at max_sessions_per_address, a BYE the client did not send itself (closed), and
// a server killed and restarted (unknown). The next call goes through on a new session
// (writes under their write id, so nothing is stored twice), or fails with an error that
// says the session was lost; concurrent callers open one session between them.
#include <catch2/catch.hpp>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <future>
#include <thread>

#include "client-cpp/src/client_impl.h"
#include "rpmp/client.h"
#include "tests/poll.h"
#include "tests/server_process.h"

namespace rpmp {
namespace {

using testing::ServerProcess;
using Clock = std::chrono::steady_clock;

// A server whose YAML config sets `settings` (e.g. "session_idle_timeout: 1s").
struct ConfiguredServer {
  std::string config_path;
  std::unique_ptr<ServerProcess> server;
  explicit ConfiguredServer(const std::string& settings) {
    config_path = "/tmp/rpmp-session-loss-" + std::to_string(::getpid()) + "-" +
                  std::to_string(Clock::now().time_since_epoch().count()) + ".yaml";
    std::ofstream(config_path) << settings << "\n";
    server = std::make_unique<ServerProcess>("256m", std::vector<std::string>{"--config", config_path});
    REQUIRE(server->Start());
  }
  ~ConfiguredServer() { std::remove(config_path.c_str()); }
};

// A client over a Connection the test can also use directly (to end its session behind
// its back).
struct TestClient {
  Connection* conn = nullptr;
  std::unique_ptr<ClientImpl> client;
  explicit TestClient(const std::string& address,
                      std::chrono::milliseconds timeout = std::chrono::milliseconds(2000)) {
    ClientOptions o;
    o.timeout = timeout;
    o.retry_for = std::chrono::milliseconds(6000);
    o.buffer_cache_bytes = 16u << 20;
    StatusOr<std::unique_ptr<Connection>> c = Connection::Open(address, ClientImpl::LinkOptionsFor(o));
    REQUIRE(c.ok());
    conn = c->get();
    client = std::make_unique<ClientImpl>(std::move(c).value(), ClientImpl::ShardConnections{}, o);
  }
  // Sends `req` on the connection as it is and waits for the reply.
  std::pair<Status, wire::Response> Raw(wire::Request& req) {
    auto p = std::make_shared<std::promise<std::pair<Status, wire::Response>>>();
    auto f = p->get_future();
    conn->Submit(req, [p](const Status& st, const wire::Response& r) { p->set_value({st, r}); });
    return f.get();
  }
};

// Polls `pred` until it holds or 20 s pass.
template <typename Pred>
bool Eventually(Pred pred) {
  return testing::Eventually(pred, std::chrono::seconds(20));
}

// The appended records of (ns, key), as one string.
std::string Contents(Client* c, const std::string& ns, const std::string& key) {
  StatusOr<std::string> v = c->Get(ns, key);
  REQUIRE(v.ok());
  return *v;
}

size_t Count(const std::string& log, const std::string& needle) {
  size_t n = 0;
  for (size_t at = log.find(needle); at != std::string::npos; at = log.find(needle, at + 1)) n++;
  return n;
}

size_t Records(Client* c, const std::string& ns, const std::string& key) {
  StatusOr<ObjectMeta> m = c->GetMeta(ns, key);
  REQUIRE(m.ok());
  return m->records.size();
}

TEST_CASE("an idle-expired session is re-established by the next call", "[session]") {
  ConfiguredServer s("session_idle_timeout: 1s");
  TestClient t(s.server->address());
  REQUIRE(t.client->Append("ns", "k", "a", 1, 1).ok());
  // The server ends the session after 1 s of idleness (it logs it).
  REQUIRE(Eventually([&] { return Count(s.server->Log(), "expired: idle") == 1; }));
  // A write: refused (not run) with the reason, sent again on a new session, stored once.
  REQUIRE(t.client->Append("ns", "k", "b", 1, 2).ok());
  CHECK(t.conn->session_counts().refused == 1);
  CHECK(t.conn->session_counts().reestablished == 1);
  CHECK(Contents(t.client.get(), "ns", "k") == "ab");
  CHECK(Records(t.client.get(), "ns", "k") == 2);
  // Again for a read and for a call that is not idempotent (refused = never run).
  REQUIRE(Eventually([&] { return Count(s.server->Log(), "expired: idle") == 2; }));
  CHECK(Contents(t.client.get(), "ns", "k") == "ab");
  CHECK(t.conn->session_counts().reestablished == 2);
  REQUIRE(Eventually([&] { return Count(s.server->Log(), "expired: idle") == 3; }));
  REQUIRE(t.client->DeleteNamespace("ns").ok());
  CHECK(t.conn->session_counts().reestablished == 3);
  CHECK(t.client->Get("ns", "k").status().code() == StatusCode::kNotFound);
}

TEST_CASE("a session evicted at max_sessions_per_address is re-established", "[session]") {
  ConfiguredServer s("max_sessions_per_address: 1");
  TestClient t(s.server->address());
  REQUIRE(t.client->Put("ns", "k", "v1", 2, 0).ok());
  // Another HELLO naming this connection's address takes the only place: the client's
  // session (idle) is evicted.
  std::string address = t.conn->local_address();
  wire::Request hello;
  hello.h.op = wire::Op::kHello;
  hello.fabric_address = address;
  hello.client_name = "intruder";
  auto [st, resp] = t.Raw(hello);
  REQUIRE(st.ok());
  REQUIRE(resp.session != 0);
  // The next put: refused as evicted, sent again on a new session (which evicts the
  // other one in turn), applied once.
  REQUIRE(t.client->Append("ns", "k", "+", 1, 0).ok());
  CHECK(t.conn->session_counts().refused == 1);
  CHECK(t.conn->session_counts().reestablished == 1);
  CHECK(Contents(t.client.get(), "ns", "k") == "v1+");
  CHECK(s.server->Log().find("reached max_sessions_per_address (1)") != std::string::npos);
}

TEST_CASE("a session closed behind the client's back is re-established", "[session]") {
  ConfiguredServer s("session_idle_timeout: 1h");
  TestClient t(s.server->address());
  REQUIRE(t.client->Put("ns", "k", "x", 1, 0).ok());
  wire::Request bye;
  bye.h.op = wire::Op::kBye;
  REQUIRE(t.Raw(bye).first.ok());  // the server forgets the session; the client does not know
  // A frame of the closed session is refused, with the flag and the reason.
  wire::Request stat;
  stat.h.op = wire::Op::kStat;
  auto [st, resp] = t.Raw(stat);
  CHECK(st.code() == StatusCode::kUnavailable);
  CHECK((resp.h.flags & wire::kFlagSessionEnded) != 0);
  CHECK(st.message().find("closed by the client") != std::string::npos);
  CHECK(t.conn->needs_hello());
  // Concurrent callers: one new session between them, every call answered.
  std::vector<std::future<Status>> calls;
  for (int i = 0; i < 8; i++)
    calls.push_back(std::async(std::launch::async, [&] { return t.client->Get("ns", "k").status(); }));
  for (auto& f : calls) CHECK(f.get().ok());
  CHECK(t.conn->session_counts().reestablished == 1);
  CHECK(t.conn->session_counts().opened == 2);
}

TEST_CASE("after a server restart the next calls work on a new session", "[session]") {
  ConfiguredServer s("session_idle_timeout: 1h");
  TestClient t(s.server->address());
  REQUIRE(t.client->Append("ns", "k", "1", 1, 0).ok());
  s.server->Kill(SIGKILL);
  REQUIRE(s.server->Restart());
  // A write (under its write id) goes through on a new session, once.
  Status st = t.client->Append("ns", "k", "2", 1, 0);
  INFO(st.ToString());
  REQUIRE(st.ok());
  CHECK(t.conn->session_counts().reestablished >= 1);
  CHECK(Contents(t.client.get(), "ns", "k") == "12");
  CHECK(Records(t.client.get(), "ns", "k") == 2);
}

// Bytes waiting in the receive queues of TCP sockets bound to local port `port` (from
// /proc/net/tcp): what a stopped server has been sent and not read.
uint64_t UnreadBytesAtPort(const std::string& address) {
  unsigned port = static_cast<unsigned>(std::stoul(address.substr(address.rfind(':') + 1)));
  std::ifstream in("/proc/net/tcp");
  std::string line;
  std::getline(in, line);  // header
  uint64_t total = 0;
  while (std::getline(in, line)) {
    unsigned sl, local_ip, local_port, rem_ip, rem_port, state;
    unsigned long tx, rx;
    if (std::sscanf(line.c_str(), " %u: %x:%x %x:%x %x %lx:%lx", &sl, &local_ip, &local_port, &rem_ip,
                    &rem_port, &state, &tx, &rx) == 8 &&
        local_port == port)
      total += rx;
  }
  return total;
}

// What both probe tests start from: a server stopped (SIGSTOP) with a raw STAT of its
// client waiting in its socket. The STAT goes as it is (no retry), so its end shows why.
struct StoppedWithStat {
  ConfiguredServer s{"session_idle_timeout: 1h"};
  TestClient t{s.server->address(), std::chrono::milliseconds(30000)};
  std::future<std::pair<Status, wire::Response>> stat;

  StoppedWithStat() {
    REQUIRE(t.client->Put("ns", "k", "1", 1, 0).ok());
    REQUIRE(s.server->Signal(SIGSTOP));
    stat = std::async(std::launch::async, [this] {
      wire::Request q;
      q.h.op = wire::Op::kStat;
      return t.Raw(q);
    });
  }

  // The STAT ended Unavailable, saying `why`, within 6 s of `since` (its timeout is 30 s).
  void ExpectStatEnded(Clock::time_point since, const std::string& why) {
    REQUIRE(stat.wait_for(std::chrono::seconds(10)) == std::future_status::ready);
    Status st = stat.get().first;
    double waited_s = std::chrono::duration<double>(Clock::now() - since).count();
    INFO(st.ToString() << ", " << waited_s << " s after the server went");
    CHECK(waited_s < 6);
    CHECK(st.code() == StatusCode::kUnavailable);
    CHECK(st.message().find(why) != std::string::npos);
  }
};

TEST_CASE("a call in flight when its server is killed and restarted on the same port ends at once",
          "[session]") {
  // The restarted server listens at once, so the port never refuses a connection, and
  // it drops frames of senders it does not know: the call would wait its whole timeout
  // (30 s here). The client's probe asks the server there for its boot id, sees another
  // process, and ends the call (docs/security.md, "How a session ends").
  StoppedWithStat w;
  // And a put, which the client retries under its write id on a new session.
  auto put = std::async(std::launch::async, [&] { return w.t.client->Put("ns", "k", "2", 1, 0); });
  // Both requests are in the stopped server's socket (its only reader), so they were sent.
  REQUIRE(Eventually([&] { return UnreadBytesAtPort(w.s.server->address()) > 2 * wire::kHeaderSize; }));
  w.s.server->Kill(SIGKILL);
  REQUIRE(w.s.server->Restart());
  w.ExpectStatEnded(Clock::now(), "restarted (its boot id changed)");
  REQUIRE(put.wait_for(std::chrono::seconds(10)) == std::future_status::ready);
  Status st = put.get();
  INFO(st.ToString());
  CHECK(st.ok());
  // The next call works on the new session and sees the put, once.
  StatusOr<std::string> v = w.t.client->Get("ns", "k");
  REQUIRE(v.ok());
  CHECK(*v == "2");
  CHECK(w.t.conn->session_counts().reestablished >= 1);
}

TEST_CASE("a call in flight when its server is killed ends once the port refuses, not at its deadline",
          "[session]") {
  // The other half of the client's probe (link/connection.cc, ExpireCalls): nothing
  // listens any more, so the call ends within a couple of probe intervals, well before
  // its 30 s timeout.
  StoppedWithStat w;
  REQUIRE(Eventually([&] { return UnreadBytesAtPort(w.s.server->address()) > 0; }));
  w.s.server->Kill(SIGKILL);
  w.ExpectStatEnded(Clock::now(), "is gone (connection refused)");
  CHECK(w.t.conn->needs_hello());  // the session is marked lost
}

}  // namespace
}  // namespace rpmp
