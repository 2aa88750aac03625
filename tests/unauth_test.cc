// Integration: unauthenticated work is bounded and harmless (docs/security.md, attack
// table rows "HELLO ..."). A hostile peer built on the project's own wire and fabric
// code (hostile_peer.h) sends HELLOs no honest client sends to a real rpmp-server
// process; each case checks the server refuses or bounds them and that an honest
// client is still served.
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>

#include "rpmp/client.h"
#include "tests/hostile_peer.h"
#include "tests/poll.h"
#include "tests/server_process.h"
#include "tests/test_util.h"

namespace rpmp {
namespace {

using testing::HostilePeer;
using testing::InetAddress;
using testing::ServerProcess;

const char kSecret[] = "unauth-test-cluster-secret-0123456789";

// A directory with the cluster secret (mode 0600) and, optionally, a config file.
struct Files {
  std::string dir, secret, config;
  explicit Files(const std::string& config_text = "", mode_t secret_mode = 0600) {
    char tmpl[] = "/tmp/rpmp-unauth-XXXXXX";
    REQUIRE(mkdtemp(tmpl) != nullptr);
    dir = tmpl;
    secret = dir + "/secret";
    std::ofstream(secret) << kSecret << "\n";
    chmod(secret.c_str(), secret_mode);
    config = dir + "/server.yaml";
    std::ofstream(config) << config_text << "\n";
  }
  ~Files() {
    unlink(secret.c_str());
    unlink(config.c_str());
    rmdir(dir.c_str());
  }
};

StatusOr<std::unique_ptr<Client>> TryConnect(const ServerProcess& server, const std::string& secret,
                                             std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
  ClientOptions o;
  o.timeout = timeout;
  o.secret = secret;
  return Client::Connect(server.address(), o);
}

void ExpectServes(const ServerProcess& server, const std::string& secret) {
  REQUIRE(server.Running());
  auto c = TryConnect(server, secret);
  INFO(c.status().ToString());
  REQUIRE(c.ok());
  REQUIRE((*c)->Put("ok", "k", "v", 1).ok());
  CHECK(*(*c)->Get("ok", "k") == "v");
}

// Polls `metric` until it is at most `want`, up to `limit`; returns the last value.
double AwaitAtMost(int port, const std::string& metric, double want, std::chrono::milliseconds limit) {
  double v = testing::ScrapeMetric(port, metric);
  testing::Eventually([&] { return (v = testing::ScrapeMetric(port, metric)) <= want; }, limit);
  return v;
}

TEST_CASE("attack: HELLOs with bad address lengths and families are dropped, later clients are served") {
  Files files;
  ServerProcess server("256m", {"--auth-secret-file", files.secret});
  REQUIRE(server.Start());
  HostilePeer attacker(server.address());
  std::string bad_family = InetAddress("127.0.0.1", 7000);
  bad_family[0] = 0x41;
  bad_family[1] = 0x41;
  std::string own = attacker.fabric->LocalAddress();
  // Before the checks, the first bad family left libfabric's AV unable to take any
  // address: every later HELLO failed ("hello with an unusable address").
  for (const std::string& address :
       {std::string(), std::string(2, '\0'), std::string(3, 'x'), std::string(4, '\0'), bad_family,
        std::string(16, '\0'), InetAddress("127.0.0.1", 0), InetAddress("0.0.0.0", 7000),
        own + "junk", std::string(300, 'z')}) {
    REQUIRE(attacker.Fire(attacker.HelloClaiming(address)));
  }
  // Both the secured step-1 path and a fresh honest session work.
  ExpectServes(server, kSecret);
  HostilePeer honest(server.address());
  CHECK(honest.Hello(kSecret).h.status == 0);
  CHECK(honest.Serves());
  CHECK(server.Log().find("hello with an unusable address") != std::string::npos);
}

TEST_CASE("attack: 256 HELLOs claiming closed ports: their slots come back within hello_timeout") {
  Files files;
  int metrics_port = testing::FreePort();
  ServerProcess server("256m", {"--auth-secret-file", files.secret,  // hello_timeout 2 s
                               "--metrics-listen", "127.0.0.1:" + std::to_string(metrics_port)});
  REQUIRE(server.Start());
  HostilePeer attacker(server.address());
  // Closed ports: taken free, then released (nothing listens on them afterwards).
  int closed = testing::FreePort();
  for (int i = 0; i < 256; i++) {
    // Half claim one address, half a different loopback address each.
    std::string ip = i % 2 == 0 ? "127.0.0.1" : "127.0.1." + std::to_string(1 + i / 2);
    REQUIRE(attacker.Fire(attacker.HelloClaiming(InetAddress(ip.c_str(), static_cast<uint16_t>(closed)))));
  }
  // Before: all 256 receive slots stayed busy for more than 300 s and honest clients
  // timed out. Now at most max_pending_hellos (64) are held, for at most hello_timeout.
  CHECK(testing::ScrapeMetric(metrics_port, "rpmp_server_inflight_slots") <= 64);
  auto t0 = std::chrono::steady_clock::now();
  ExpectServes(server, kSecret);
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(5));
  double busy = AwaitAtMost(metrics_port, "rpmp_server_inflight_slots", 0, std::chrono::seconds(5));
  CHECK(busy == 0);
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(5));
  CHECK(testing::ScrapeMetric(metrics_port, "rpmp_server_hellos_dropped_total") > 0);
  // A SIGTERM finds nothing in flight.
  server.Kill(SIGTERM);
  CHECK(server.Log().find("still in flight are abandoned") == std::string::npos);
}

TEST_CASE("attack: junk in a HELLO's address does not make a new identity for the per-address cap") {
  Files files("max_sessions_per_address: 4");
  ServerProcess server("256m", {"--config", files.config});
  REQUIRE(server.Start());
  HostilePeer peer(server.address());
  std::string own = peer.fabric->LocalAddress();
  REQUIRE(own.size() == 16);  // sockaddr_in (tcp;ofi_rxm on loopback)
  int accepted = 0, refused = 0;
  for (int i = 0; i < 8; i++) {
    std::string padded = own;
    std::memcpy(&padded[8], ("JUNK" + std::to_string(1000 + i)).data(), 8);  // sin_zero
    wire::Request r;
    r.h.op = wire::Op::kHello;
    r.fabric_address = padded;
    r.client_name = "junk";
    wire::Response resp;
    REQUIRE(peer.Exchange(peer.Encode(r), &resp));
    if (resp.h.status == 0) accepted++;
    else if (resp.h.status == static_cast<uint16_t>(StatusCode::kResourceExhausted)) refused++;
  }
  // One identity: the 5th to 8th HELLOs find the address at its cap of 4 and each
  // evicts its least recently used idle session (docs/security.md "How a session
  // ends"). Before: every variant was a new address, 8 sessions and no eviction.
  CHECK(accepted == 8);
  CHECK(refused == 0);
  auto evictions = [&] {
    std::string log = server.Log();
    size_t n = 0;
    for (size_t at = log.find("evicted: its address reached"); at != std::string::npos;
         at = log.find("evicted: its address reached", at + 1))
      n++;
    return n;
  };
  testing::Eventually([&] { return evictions() >= 4; }, std::chrono::seconds(5));
  CHECK(evictions() == 4);
  // Junk appended after the address is not an address at all: no reply.
  std::string appended = own + "appended-junk";  // wire::Request holds views
  wire::Request r;
  r.h.op = wire::Op::kHello;
  r.fabric_address = appended;
  wire::Response resp;
  CHECK(!peer.Exchange(peer.Encode(r), &resp, 500));
  ExpectServes(server, "");
}

TEST_CASE("attack: a HELLO naming another connected peer's address gets nothing sent there") {
  Files files;
  ServerProcess server("256m", {"--auth-secret-file", files.secret});
  REQUIRE(server.Start());
  HostilePeer victim(server.address());
  REQUIRE(victim.Hello(kSecret).h.status == 0);
  HostilePeer attacker(server.address());
  REQUIRE(attacker.Fire(attacker.HelloClaiming(victim.fabric->LocalAddress())));
  // The server knows the victim's address and the HELLO did not come from it.
  testing::Eventually(
      [&] { return server.Log().find("hello with the address of another peer") != std::string::npos; },
      std::chrono::seconds(5));
  CHECK(server.Log().find("hello with the address of another peer") != std::string::npos);
  CHECK(victim.Serves());
  ExpectServes(server, kSecret);
}

TEST_CASE("attack: ALLOC sizes that wrapped are refused, the server goes on serving") {
  ServerProcess server("256m");
  REQUIRE(server.Start());
  HostilePeer peer(server.address());
  REQUIRE(peer.Hello().h.status == 0);
  for (uint64_t size : {~0ull, ~0ull - 47, ~0ull - 62, ~0ull - 63}) {
    wire::Request r;
    r.h.op = wire::Op::kAlloc;
    r.length = size;
    wire::Response resp;
    REQUIRE(peer.Exchange(peer.Encode(r), &resp));
    INFO("size " << size << ": " << resp.message);
    CHECK(resp.h.status == static_cast<uint16_t>(StatusCode::kResourceExhausted));
  }
  // Space is still there: the whole pool less a little can be allocated and freed.
  auto c = TryConnect(server, "");
  REQUIRE(c.ok());
  auto a = (*c)->Alloc(16ull << 20);
  INFO(a.status().ToString());
  REQUIRE(a.ok());
  CHECK((*c)->Free(*a).ok());
}

TEST_CASE("attack: a secret file open to its group (0640) is refused at start") {
  Files files("", 0640);
  ServerProcess server("256m", {"--auth-secret-file", files.secret});
  CHECK(!server.Start());  // before: accepted (only "others" bits were checked)
  CHECK(server.Log().find("chmod 600") != std::string::npos);
}

}  // namespace
}  // namespace rpmp
