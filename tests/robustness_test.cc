// Integration: bad input and bad peers. Garbage bytes on the server's port, malformed
// frames from a connected peer, a client killed mid-transfer, and a server restarted
// under a connected client. Each time the server keeps serving everyone else.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstring>
#include <random>

#include "common/wire.h"
#include "rpmp/client.h"
#include "tests/raw_peer.h"
#include "tests/server_process.h"
#include "transport/fabric.h"

namespace rpmp {
namespace {

using testing::RawPeer;  // tests/raw_peer.h
using testing::ServerProcess;

void SendRawTcp(int port, const std::string& bytes) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0 && !bytes.empty())
    (void)!write(fd, bytes.data(), bytes.size());
  close(fd);
}

void ExpectServes(const ServerProcess& server) {
  ClientOptions o;
  o.timeout = std::chrono::seconds(10);
  auto c = Client::Connect(server.address(), o);
  REQUIRE(c.ok());
  REQUIRE((*c)->Put("ok", "k", "v", 1).ok());
  CHECK(*(*c)->Get("ok", "k") == "v");
}

TEST_CASE("garbage bytes on the server's port do not disturb it") {
  ServerProcess server;
  REQUIRE(server.Start());
  int port = std::stoi(server.address().substr(server.address().rfind(':') + 1));
  std::mt19937 rng(7);
  for (int i = 0; i < 30; i++) {
    std::string junk(i % 3 == 0 ? 0 : 1 + rng() % 70000, '\0');
    for (char& ch : junk) ch = static_cast<char>(rng());
    if (i % 5 == 1) junk.replace(0, std::min<size_t>(4, junk.size()), "RPMP");
    SendRawTcp(port, junk);
  }
  REQUIRE(server.Running());
  ExpectServes(server);
}

bool ClientSees(const ServerProcess& server, const std::string& ns, const std::string& key) {
  auto c = Client::Connect(server.address());
  REQUIRE(c.ok());
  return (*c)->Get(ns, key).ok();
}

TEST_CASE("malformed frames from a connected peer get error replies, never a crash") {
  ServerProcess server;
  REQUIRE(server.Start());
  RawPeer peer(server.address());
  peer.LegacyHello();  // a session without a tag: the frames below need none
  REQUIRE(peer.session != 0);

  wire::Request put = RawPeer::InlinePut("n", "k", "abc");
  std::string good = peer.Encode(put);
  wire::Response resp;

  SECTION("unknown op") {
    std::string f = good;
    f[5] = 99;
    REQUIRE(peer.Exchange(f, &resp));
    CHECK(resp.h.status == static_cast<uint16_t>(StatusCode::kInvalidArgument));
    CHECK(resp.message.find("unknown op 99") != std::string::npos);
  }
  SECTION("truncated body") {
    std::string f = good.substr(0, good.size() - 2);
    f[8] = static_cast<char>(f.size());
    REQUIRE(peer.Exchange(f, &resp));
    CHECK(resp.h.status == static_cast<uint16_t>(StatusCode::kInvalidArgument));
  }
  SECTION("checksum that does not match the inline payload") {
    wire::Request bad = put;
    bad.crc ^= 1;
    REQUIRE(peer.Exchange(peer.Encode(bad), &resp));
    CHECK(resp.h.status == static_cast<uint16_t>(StatusCode::kInvalidArgument));
    CHECK(resp.message.find("checksum") != std::string::npos);
  }
  SECTION("RMA source with a key the peer never registered") {
    // The server's read fails; the peer's own provider may drop the connection for
    // the bad access, so either an error reply or none arrives. The server goes on.
    wire::Request bad = put;
    bad.h.flags = wire::kFlagRma;
    bad.length = 1 << 20;
    bad.rma = {0, 0xBADBADull, 1 << 20};
    if (peer.Exchange(peer.Encode(bad), &resp, 5000)) CHECK(resp.h.status != 0);
    CHECK_FALSE(ClientSees(server, "n", "k"));  // nothing was committed
  }
  SECTION("a 1 TiB value") {
    wire::Request bad = put;
    bad.h.flags = wire::kFlagRma;
    bad.length = 1ull << 40;
    bad.rma = {0, peer.mr->key(), 1ull << 40};
    REQUIRE(peer.Exchange(peer.Encode(bad), &resp));
    CHECK(resp.h.status == static_cast<uint16_t>(StatusCode::kResourceExhausted));
  }
  SECTION("bad magic is dropped without a reply") {
    std::string f = good;
    f[0] = 'X';
    CHECK_FALSE(peer.Exchange(f, &resp, 500));
  }
  REQUIRE(server.Running());
  ExpectServes(server);
  CHECK(server.Log().find("ERROR") == std::string::npos);
}

TEST_CASE("a client killed mid-transfer leaves the server serving and nothing torn") {
  ServerProcess server("512m");
  REQUIRE(server.Start());
  int ready[2];
  REQUIRE(pipe(ready) == 0);
  pid_t child = fork();
  if (child == 0) {  // a client streaming 32 MiB puts until it is killed
    close(ready[0]);
    auto c = Client::Connect(server.address());
    if (!c.ok()) _exit(3);
    std::string v(32 << 20, 'z');
    for (int i = 0;; i++) {
      v[0] = static_cast<char>('a' + i % 26);
      if (!(*c)->Put("victim", "big", v.data(), v.size()).ok()) _exit(4);
      if (i == 1) (void)!write(ready[1], "x", 1);
    }
  }
  close(ready[1]);
  char x;
  REQUIRE(read(ready[0], &x, 1) == 1);  // two puts done, the third under way
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  close(ready[0]);
  REQUIRE(server.Running());
  ExpectServes(server);
  auto c = Client::Connect(server.address());
  REQUIRE(c.ok());
  StatusOr<std::string> v = (*c)->Get("victim", "big");
  REQUIRE(v.ok());  // the last acknowledged value, whole
  CHECK(v->size() == (32u << 20));
  CHECK(v->find_first_not_of('z', 1) == std::string::npos);
}

TEST_CASE("a client survives a server restart: its next calls reconnect") {
  ServerProcess server;
  REQUIRE(server.Start());
  ClientOptions o;
  o.timeout = std::chrono::seconds(10);
  auto c = Client::Connect(server.address(), o);
  REQUIRE(c.ok());
  REQUIRE((*c)->Put("rs", "k", "before", 6).ok());
  server.Kill(SIGKILL);
  // The server is down: the client sees its port refuse connections and says so
  // (unavailable) rather than waiting out its 10 s timeout.
  CHECK((*c)->Get("rs", "k").status().code() == StatusCode::kUnavailable);
  REQUIRE(server.Restart());
  StatusOr<std::string> v = Status::Unavailable("not tried");
  for (int i = 0; i < 3 && !v.ok(); i++) v = (*c)->Get("rs", "k");
  REQUIRE(v.ok());
  CHECK(*v == "before");
  CHECK((*c)->Put("rs", "k2", "after", 5).ok());
}

}  // namespace
}  // namespace rpmp
