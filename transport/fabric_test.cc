// Tests of the libfabric transport on the configured provider (tcp;ofi_rxm in CI):
// messages, RMA both ways, bad provider names, and a peer that vanishes; and of the
// provider table: the native TCP provider (net/tcp), no row answered by another, auto;
// and that Wait() sleeps when idle (net/tcp before libfabric 1.19 made it spin).
#include "transport/fabric.h"

#include <catch2/catch.hpp>
#include <dirent.h>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <thread>
#include <vector>

#include "tests/test_util.h"
#include "transport/fabric_test_util.h"

namespace rpmp {
namespace {

using testing::AwaitOne;
using testing::NativeTcpProvider;

struct Pair {
  std::unique_ptr<Fabric> server, client;
  PeerAddr to_server = 0, to_client = 0;
};

Pair Connect(const std::string& provider = testing::Provider()) {
  Pair p;
  FabricOptions so;
  so.provider = provider;
  so.node = "127.0.0.1";
  so.service = std::to_string(testing::FreePort());
  auto s = Fabric::Open(so);
  REQUIRE(s.ok());
  p.server = std::move(s).value();
  FabricOptions co;
  co.provider = so.provider;
  co.node = "127.0.0.1";
  auto c = Fabric::Open(co);
  REQUIRE(c.ok());
  p.client = std::move(c).value();
  auto ts = p.client->InsertPeer("127.0.0.1", so.service);
  REQUIRE(ts.ok());
  p.to_server = *ts;
  auto tc = p.server->InsertPeer(p.client->LocalAddress());
  REQUIRE(tc.ok());
  p.to_client = *tc;
  return p;
}

TEST_CASE("unknown provider is rejected with the list of known ones") {
  FabricOptions o;
  o.provider = "carrier-pigeon";
  auto f = Fabric::Open(o);
  REQUIRE_FALSE(f.ok());
  CHECK(f.status().code() == StatusCode::kInvalidArgument);
  CHECK(f.status().message().find("tcp;ofi_rxm") != std::string::npos);
}

TEST_CASE("a port already in use is reported, not crashed on") {
  FabricOptions so;
  so.provider = testing::Provider();
  so.node = "127.0.0.1";
  so.service = std::to_string(testing::FreePort());
  auto a = Fabric::Open(so);
  REQUIRE(a.ok());
  auto b = Fabric::Open(so);
  REQUIRE_FALSE(b.ok());
  CHECK(b.status().code() == StatusCode::kUnavailable);
}

void CheckMessagesAndRma(const std::string& provider) {
  Pair p = Connect(provider);
  std::vector<char> server_mem(1 << 20), client_mem(1 << 20);
  auto smr = p.server->Register(server_mem.data(), server_mem.size());
  auto cmr = p.client->Register(client_mem.data(), client_mem.size());
  REQUIRE(smr.ok());
  REQUIRE(cmr.ok());

  OpContext recv_ctx, send_ctx;
  REQUIRE(p.server->PostRecv(&recv_ctx, server_mem.data(), 4096, (*smr)->desc()).ok());
  std::memcpy(client_mem.data(), "ping", 4);
  REQUIRE(p.client->Send(&send_ctx, p.to_server, client_mem.data(), 4, (*cmr)->desc()).ok());
  Completion rc = AwaitOne(*p.server, *p.client, &recv_ctx);
  REQUIRE(rc.status.ok());
  CHECK(rc.length == 4);
  CHECK(std::memcmp(server_mem.data(), "ping", 4) == 0);
  CHECK(AwaitOne(*p.server, *p.client, &send_ctx).status.ok());

  // Server pulls 512 KiB from the client (the put path), then pushes it back (get).
  for (size_t i = 0; i < 512 * 1024; i++) client_mem[i] = static_cast<char>(i * 7);
  OpContext read_ctx;
  REQUIRE(p.server->Read(&read_ctx, p.to_client, server_mem.data(), 512 * 1024, (*smr)->desc(),
                         (*cmr)->RmaAddr(client_mem.data()), (*cmr)->key())
              .ok());
  REQUIRE(AwaitOne(*p.server, *p.client, &read_ctx).status.ok());
  CHECK(std::memcmp(server_mem.data(), client_mem.data(), 512 * 1024) == 0);

  OpContext write_ctx;
  REQUIRE(p.server->Write(&write_ctx, p.to_client, server_mem.data(), 512 * 1024, (*smr)->desc(),
                          (*cmr)->RmaAddr(client_mem.data() + 512 * 1024), (*cmr)->key())
              .ok());
  REQUIRE(AwaitOne(*p.server, *p.client, &write_ctx).status.ok());
  // As in the protocol: the reply that follows a write is received only after the
  // written bytes are placed (same ordered channel).
  OpContext reply_recv, reply_send;
  char reply_buf[64];
  REQUIRE(p.client->PostRecv(&reply_recv, reply_buf, sizeof(reply_buf), nullptr).ok());
  REQUIRE(p.server->Send(&reply_send, p.to_client, server_mem.data(), 8, (*smr)->desc()).ok());
  REQUIRE(AwaitOne(*p.server, *p.client, &reply_recv).status.ok());
  CHECK(std::memcmp(client_mem.data() + 512 * 1024, client_mem.data(), 512 * 1024) == 0);
}

TEST_CASE("messages and RMA move bytes both ways") { CheckMessagesAndRma(testing::Provider()); }

TEST_CASE("the native TCP provider (net or tcp) moves messages and RMA both ways") {
  std::string native = NativeTcpProvider();
  INFO("libfabric offers neither net (1.17) nor tcp (>= 1.18) natively");
  REQUIRE_FALSE(native.empty());
  CheckMessagesAndRma(native);
}

// Wait() sleeps while nothing happens, also after completions have come (libfabric
// 1.17's net never cleared the CQ's signal in fi_trywait: Wait returned at once,
// forever, and progress threads spun), and wakes for a message that arrives.
// With `idle_expected` every Wait of the server clears the wait signal before it reads
// the queue (as a leading caller does): the same must hold, and a message already
// waiting is returned at once.
void CheckWaitSleepsAndWakes(const std::string& provider, bool idle_expected) {
  INFO("provider " << provider << ", idle_expected " << idle_expected);
  Pair p = Connect(provider);
  std::vector<char> server_mem(4096), client_mem(4096);
  auto smr = p.server->Register(server_mem.data(), server_mem.size());
  auto cmr = p.client->Register(client_mem.data(), client_mem.size());
  REQUIRE(smr.ok());
  REQUIRE(cmr.ok());
  OpContext recv_ctx, send_ctx;
  REQUIRE(p.server->PostRecv(&recv_ctx, server_mem.data(), 64, (*smr)->desc()).ok());
  REQUIRE(p.client->Send(&send_ctx, p.to_server, client_mem.data(), 4, (*cmr)->desc()).ok());
  REQUIRE(AwaitOne(*p.server, *p.client, &recv_ctx).status.ok());
  REQUIRE(AwaitOne(*p.server, *p.client, &send_ctx).status.ok());

  // Idle: 300 ms of Wait(100 ms) calls on the server, which has seen completions.
  Completion c[8];
  timespec cpu0, cpu1;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu0);
  auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(300);
  int calls = 0, completions = 0;
  while (std::chrono::steady_clock::now() < until) {
    completions += p.server->Wait(c, 8, 100, idle_expected);
    calls++;
  }
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu1);
  double cpu_ms = (cpu1.tv_sec - cpu0.tv_sec) * 1e3 + (cpu1.tv_nsec - cpu0.tv_nsec) / 1e6;
  CHECK(completions == 0);
  CHECK(calls <= 20);     // spinning makes thousands
  CHECK(cpu_ms < 100.0);  // spinning uses the whole 300 ms (less only when descheduled)

  // A message sent while the server waits wakes it well before the timeout.
  OpContext recv2, send2;
  REQUIRE(p.server->PostRecv(&recv2, server_mem.data(), 64, (*smr)->desc()).ok());
  std::thread sender([&] {
    REQUIRE(p.client->Send(&send2, p.to_server, client_mem.data(), 4, (*cmr)->desc()).ok());
    Completion cc[8];
    auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    bool sent = false;
    while (!sent && std::chrono::steady_clock::now() < give_up) {
      int n = p.client->Wait(cc, 8, 50);
      for (int i = 0; i < n; i++) sent = sent || cc[i].ctx == &send2;
    }
    CHECK(sent);
  });
  auto t0 = std::chrono::steady_clock::now();
  bool got = false;
  while (!got && std::chrono::steady_clock::now() - t0 < std::chrono::seconds(10)) {
    int n = p.server->Wait(c, 8, 5000, idle_expected);
    for (int i = 0; i < n; i++) got = got || c[i].ctx == &recv2;
  }
  auto waited = std::chrono::steady_clock::now() - t0;
  sender.join();
  CHECK(got);
  CHECK(waited < std::chrono::milliseconds(2500));  // not a timed-out wait

  // Two messages that arrived while nobody waited (their sends completed on the client):
  // Waits that take one completion at a time return both at once, not at their timeout,
  // also the second, which sits in the queue with the wait signal already cleared.
  OpContext recv3[2], send3[2];
  for (int i = 0; i < 2; i++)
    REQUIRE(p.server->PostRecv(&recv3[i], server_mem.data() + 64 * (i + 1), 64, (*smr)->desc()).ok());
  for (int i = 0; i < 2; i++) {
    REQUIRE(p.client->Send(&send3[i], p.to_server, client_mem.data(), 4, (*cmr)->desc()).ok());
    REQUIRE(AwaitOne(*p.client, *p.client, &send3[i]).status.ok());
  }
  t0 = std::chrono::steady_clock::now();
  int received = 0;
  while (received < 2 && std::chrono::steady_clock::now() - t0 < std::chrono::seconds(10)) {
    int n = p.server->Wait(c, 1, 5000, idle_expected);
    for (int i = 0; i < n; i++) received += c[i].ctx == &recv3[0] || c[i].ctx == &recv3[1];
  }
  CHECK(received == 2);
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::milliseconds(2500));
}

TEST_CASE("Wait sleeps when idle after traffic and wakes for a message (native TCP and RxM)") {
  std::string native = NativeTcpProvider();
  REQUIRE_FALSE(native.empty());
  for (bool idle_expected : {false, true}) {
    CheckWaitSleepsAndWakes(native, idle_expected);
    CheckWaitSleepsAndWakes("tcp;ofi_rxm", idle_expected);
  }
}

int OpenFds() {
  int n = 0;
  DIR* d = opendir("/proc/self/fd");
  if (d == nullptr) return -1;
  while (readdir(d) != nullptr) n++;
  closedir(d);
  return n;
}

TEST_CASE("closing a Fabric gives back its descriptors (the native TCP provider's wait set)") {
  std::string native = NativeTcpProvider();
  REQUIRE_FALSE(native.empty());
  for (const std::string& provider : {native, std::string("tcp;ofi_rxm")}) {
    INFO("provider " << provider);
    { Pair warm = Connect(provider); }  // libfabric's one-time state is not a leak
    int before = OpenFds();
    for (int i = 0; i < 10; i++) Pair p = Connect(provider);
    CHECK(OpenFds() == before);
  }
}

TEST_CASE("a named provider is never answered by another one") {
  // libfabric 1.17 answers a request for "tcp" RDM endpoints with tcp;ofi_rxm, which
  // does not talk to the native provider: Open refuses rather than run it under the
  // wrong name.
  for (const char* name : {"tcp", "net", "tcp;ofi_rxm"}) {
    FabricOptions o;
    o.provider = name;
    o.node = "127.0.0.1";
    auto f = Fabric::Open(o);
    if (!f.ok()) {
      CHECK(f.status().message().find("is not offered natively") != std::string::npos);
      continue;
    }
    CHECK(std::string((*f)->traits().name) == name);
    CHECK(std::string((*f)->info()->fabric_attr->prov_name) == name);
  }
}

TEST_CASE("auto resolves to a provider this libfabric offers, or what RPMP_PROVIDER names") {
  FabricOptions o;
  o.provider = "auto";
  o.node = "127.0.0.1";
  StatusOr<std::string> chosen = ResolveProvider("auto", o.node);
  REQUIRE(chosen.ok());
  REQUIRE(FindProvider(*chosen) != nullptr);
  auto f = Fabric::Open(o);
  REQUIRE(f.ok());
  CHECK(std::string((*f)->traits().name) == *chosen);
  if (std::getenv(kProviderEnv) == nullptr) {
    // verbs where the host has RDMA, else the native TCP provider (tcp from libfabric
    // 1.18, net in 1.17), else RxM over TCP (every libfabric build has it).
    CHECK((*chosen == "verbs;ofi_rxm" || *chosen == "tcp" || *chosen == "net" || *chosen == "tcp;ofi_rxm"));
    if (*chosen == "tcp;ofi_rxm") {
      FabricOptions n;
      n.node = "127.0.0.1";
      for (const char* native : {"tcp", "net"}) {
        n.provider = native;
        INFO("auto chose RxM while the native TCP provider '" << native << "' opens");
        CHECK_FALSE(Fabric::Open(n).ok());
      }
    }
  }
  CHECK(IsProviderName("auto"));
  CHECK_FALSE(IsProviderName("carrier-pigeon"));
  CHECK(KnownProviders().find("net") != std::string::npos);
}

TEST_CASE("RMA to a vanished peer completes with an error instead of hanging") {
  Pair p = Connect();
  std::vector<char> server_mem(1 << 16), client_mem(1 << 16);
  auto smr = p.server->Register(server_mem.data(), server_mem.size());
  auto cmr = p.client->Register(client_mem.data(), client_mem.size());
  REQUIRE(smr.ok());
  REQUIRE(cmr.ok());
  // Establish the connection first, as a real session would.
  OpContext recv_ctx, send_ctx;
  REQUIRE(p.server->PostRecv(&recv_ctx, server_mem.data(), 4096, (*smr)->desc()).ok());
  REQUIRE(p.client->Send(&send_ctx, p.to_server, client_mem.data(), 8, (*cmr)->desc()).ok());
  REQUIRE(AwaitOne(*p.server, *p.client, &recv_ctx).status.ok());
  uint64_t raddr = (*cmr)->RmaAddr(client_mem.data());
  uint64_t rkey = (*cmr)->key();
  cmr->reset();
  p.client.reset();  // the client process is gone

  OpContext read_ctx;
  Status posted = p.server->Read(&read_ctx, p.to_client, server_mem.data(), 1 << 16,
                                 (*smr)->desc(), raddr, rkey);
  if (posted.ok()) {
    auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    Completion c[4];
    bool done = false;
    while (!done && std::chrono::steady_clock::now() < until) {
      int n = p.server->Poll(c, 4);
      for (int i = 0; i < n; i++)
        if (c[i].ctx == &read_ctx) {
          CHECK_FALSE(c[i].status.ok());
          done = true;
        }
    }
    CHECK(done);
  }
}

}  // namespace
}  // namespace rpmp
