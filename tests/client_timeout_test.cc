// Integration: what librpmp does when a server stops answering (SIGSTOP) — async puts
// and gets and one-sided reads end with DeadlineExceeded after the client's timeout,
// and the buffers the paused server may still touch are quarantined: never handed
// out again by the buffer pool, and a get target is taken from the caller. Also the
// retry rule (ClientImpl::MayRetry) case by case.
#include <catch2/catch.hpp>
#include <cstring>
#include <future>
#include <set>

#include "client-cpp/src/client_impl.h"
#include "rpmp/client.h"
#include "tests/server_process.h"

namespace rpmp {
namespace {

using testing::ServerProcess;

std::unique_ptr<Client> ConnectTo(const ServerProcess& s) {
  ClientOptions o;
  o.timeout = std::chrono::milliseconds(1500);
  o.buffer_cache_bytes = 64u << 20;
  auto c = Client::Connect(s.address(), o);
  REQUIRE(c.ok());
  return std::move(c).value();
}

// A paused server for the duration of a scope; resumed (and waited for) at the end.
struct Pause {
  const ServerProcess& s;
  explicit Pause(const ServerProcess& server) : s(server) { REQUIRE(s.Signal(SIGSTOP)); }
  ~Pause() { s.Signal(SIGCONT); }
};

// Data pointers of `n` fresh 1 MiB buffers (what the pool hands out now).
std::set<const char*> NextBuffers(Client* c, int n, std::vector<Buffer>* hold) {
  std::set<const char*> out;
  for (int i = 0; i < n; i++) {
    StatusOr<Buffer> b = c->AllocBuffer(1 << 20);
    REQUIRE(b.ok());
    out.insert(b->data());
    hold->push_back(std::move(b).value());
  }
  return out;
}

TEST_CASE("a timed-out PutAsync keeps its buffer out of reuse", "[timeout]") {
  ServerProcess server;
  REQUIRE(server.Start());
  auto c = ConnectTo(server);
  StatusOr<Buffer> buf = c->AllocBuffer(1 << 20);
  REQUIRE(buf.ok());
  std::memset(buf->data(), 'p', 1 << 20);
  buf->set_size(1 << 20);
  const char* slab = buf->data();
  {
    Pause pause(server);
    Status st = c->PutFuture("t", "k", *buf, 0).get();
    CHECK(st.code() == StatusCode::kDeadlineExceeded);
    *buf = Buffer();  // the caller lets go; the pool must not reuse it
    std::vector<Buffer> hold;
    CHECK(NextBuffers(c.get(), 4, &hold).count(slab) == 0);
  }
  // After the server resumes, the client works again (new session) with ids intact.
  StatusOr<Buffer> again = c->AllocBuffer(1 << 20);
  REQUIRE(again.ok());
  std::memset(again->data(), 'q', 1 << 20);
  again->set_size(1 << 20);
  Status st;
  for (int i = 0; i < 3 && !(st = c->PutFuture("t", "k2", *again, 0).get()).ok(); i++) {}
  INFO(st.ToString());
  CHECK(st.ok());
}

TEST_CASE("a timed-out GetAsync takes its target from the caller and quarantines it",
          "[timeout]") {
  ServerProcess server;
  REQUIRE(server.Start());
  auto c = ConnectTo(server);
  std::string value(1 << 20, 'g');
  REQUIRE(c->Put("t", "big", value.data(), value.size()).ok());
  StatusOr<Buffer> target = c->AllocBuffer(2 << 20);
  REQUIRE(target.ok());
  const char* slab = target->data();
  Buffer out = std::move(target).value();
  {
    Pause pause(server);
    Status st = c->GetFuture("t", "big", &out).get();
    CHECK(st.code() == StatusCode::kDeadlineExceeded);
    CHECK(!out.valid());  // the paused server may still write into it
    std::vector<Buffer> hold;
    for (int i = 0; i < 4; i++) {
      StatusOr<Buffer> b = c->AllocBuffer(2 << 20);
      REQUIRE(b.ok());
      CHECK(b->data() != slab);
      hold.push_back(std::move(b).value());
    }
  }
  StatusOr<std::string> back = c->Get("t", "big");
  for (int i = 0; i < 3 && !back.ok(); i++) back = c->Get("t", "big");
  REQUIRE(back.ok());
  CHECK(*back == value);
}

TEST_CASE("a one-sided read gets a deadline and poisons its buffer", "[timeout]") {
  ServerProcess server;
  REQUIRE(server.Start());
  auto c = ConnectTo(server);
  std::string value(256 << 10, 'r');
  REQUIRE(c->Append("t", "log", value.data(), value.size(), 1).ok());
  StatusOr<ObjectMeta> meta = c->GetMeta("t", "log");
  REQUIRE(meta.ok());
  StatusOr<Buffer> dst = c->AllocBuffer(1 << 20);
  REQUIRE(dst.ok());
  {
    Pause pause(server);
    auto start = std::chrono::steady_clock::now();
    Status st = c->ReadRecord(meta->records[0], &*dst, 0);
    auto waited = std::chrono::steady_clock::now() - start;
    // (tcp;ofi_rxm serves RMA from the server's progress thread, so a paused server
    // cannot complete it; a NIC that can would need another way to stall the read.)
    CHECK(st.code() == StatusCode::kDeadlineExceeded);
    CHECK(waited < std::chrono::seconds(10));
    // The late read may still land: the buffer is refused from now on.
    CHECK(c->ReadRecord(meta->records[0], &*dst, 0).code() == StatusCode::kFailedPrecondition);
  }
  StatusOr<Buffer> fresh = c->AllocBuffer(1 << 20);
  REQUIRE(fresh.ok());
  Status st = c->ReadRecord(meta->records[0], &*fresh, 0);
  CHECK(st.ok());
}

TEST_CASE("the retry rule: what may be sent again after a failure", "[retry]") {
  using R = ClientImpl::Repeat;
  Status gone = Status::Unavailable("server gone"), late = Status::DeadlineExceeded("timeout");
  // Provably never sent: anything may go again.
  for (R r : {R::kRead, R::kWrite, R::kIfNotSent}) {
    CHECK(ClientImpl::MayRetry(r, gone, /*sent=*/false, /*session_lost=*/true));
    CHECK(ClientImpl::MayRetry(r, late, false, true));
  }
  // Sent, session lost (server died or restarted): reads and id-carrying writes only.
  CHECK(ClientImpl::MayRetry(R::kRead, gone, true, true));
  CHECK(ClientImpl::MayRetry(R::kWrite, gone, true, true));
  CHECK(!ClientImpl::MayRetry(R::kIfNotSent, gone, true, true));
  // After a timeout: writes with ids (the server applies them once); not reads (the old
  // attempt may still fill the target) and not others.
  CHECK(ClientImpl::MayRetry(R::kWrite, late, true, true));
  CHECK(!ClientImpl::MayRetry(R::kRead, late, true, true));
  CHECK(!ClientImpl::MayRetry(R::kIfNotSent, late, true, true));
  // An Unavailable the server answered (session intact) is the caller's to judge.
  CHECK(!ClientImpl::MayRetry(R::kWrite, gone, true, false));
  CHECK(!ClientImpl::MayRetry(R::kRead, gone, true, false));
  // Other errors never.
  CHECK(!ClientImpl::MayRetry(R::kWrite, Status::NotFound("x"), true, true));
  CHECK(!ClientImpl::MayRetry(R::kWrite, Status::InvalidArgument("x"), false, true));
}

}  // namespace
}  // namespace rpmp
