// Integration: the attack table of docs/security.md, against a real rpmp-server
// process. Each case tries what a hostile peer on the fabric could, checks that it
// fails with a clear error, that the server goes on serving others, and that no
// stored byte changed. Rows the code does not prevent yet are tested as KNOWN
// EXPOSURE (the test proves the doc's statement true; it fails once fixed, so the
// doc gets updated).
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "rpmp/client.h"
#include "tests/raw_peer.h"
#include "tests/server_process.h"
#include "tests/test_util.h"

namespace rpmp {
namespace {

using testing::RawPeer;
using testing::ServerProcess;

// A cluster secret in a private temporary file (removed with the object).
struct SecretFile {
  std::string dir, path, secret;
  explicit SecretFile(const std::string& s = "test-cluster-secret-0123456789") : secret(s) {
    char tmpl[] = "/tmp/rpmp-sec-XXXXXX";
    REQUIRE(mkdtemp(tmpl) != nullptr);
    dir = tmpl;
    path = dir + "/secret";
    std::ofstream(path) << secret << "\n";
    chmod(path.c_str(), 0600);
  }
  ~SecretFile() {
    unlink(path.c_str());
    rmdir(dir.c_str());
  }
};

StatusOr<std::unique_ptr<Client>> TryConnect(const ServerProcess& server, const std::string& secret) {
  ClientOptions o;
  o.timeout = std::chrono::seconds(10);
  o.secret = secret;
  return Client::Connect(server.address(), o);
}

std::unique_ptr<Client> Connect(const ServerProcess& server, const std::string& secret = "") {
  auto c = TryConnect(server, secret);
  REQUIRE(c.ok());
  return std::move(c).value();
}

void ExpectServes(const ServerProcess& server, const std::string& secret = "") {
  REQUIRE(server.Running());
  auto c = Connect(server, secret);
  REQUIRE(c->Put("ok", "k", "v", 1).ok());
  CHECK(*c->Get("ok", "k") == "v");
}

// GET_META of (ns, key) through the raw peer: the first record's RMA reference.
wire::RecordMeta MetaOf(RawPeer& peer, const std::string& ns, const std::string& key) {
  wire::Request r;
  r.h.op = wire::Op::kGetMeta;
  r.ns = ns;
  r.key = key;
  wire::Response resp;
  REQUIRE(peer.Exchange(peer.Encode(r), &resp));
  REQUIRE(resp.h.status == 0);
  REQUIRE(!resp.records.empty());
  return resp.records[0];
}

TEST_CASE("attack: one-sided RMA write to a pool address is refused by the fabric") {
  ServerProcess server;
  REQUIRE(server.Start());
  std::string value(256 * 1024, 'v');
  REQUIRE(Connect(server)->Put("victim", "k", value.data(), value.size()).ok());

  RawPeer peer(server.address());
  peer.Hello();
  wire::RecordMeta m = MetaOf(peer, "victim", "k");
  // Control: the reference is right (a one-sided read through it works)...
  REQUIRE(peer.Rma(false, m.rma_addr, m.rma_key, 4096).ok());
  CHECK(std::string(peer.bulk(), 16) == std::string(16, 'v'));
  // ...but a write through the same reference is refused by the server's provider
  // (the pool is registered without FI_REMOTE_WRITE). The tcp provider completes a
  // write at the initiator once sent, so the refusal shows as the connection being
  // dropped: the next operation on it fails or never completes.
  std::memset(peer.bulk(), 'X', 4096);
  Status st = peer.Rma(true, m.rma_addr, m.rma_key, 4096);
  INFO("write: " << st.ToString());
  if (st.ok()) {
    std::memset(peer.bulk(), 0, 4096);
    Status after = peer.Fabric_ok() ? peer.Rma(false, m.rma_addr, m.rma_key, 4096, 3000)
                                    : Status::Unavailable("gone");
    INFO("read after: " << after.ToString());
    CHECK((!after.ok() || std::string(peer.bulk(), 4096) == std::string(4096, 'v')));
  }

  ExpectServes(server);
  StatusOr<std::string> got = Connect(server)->Get("victim", "k");
  REQUIRE(got.ok());  // a landed write shows as DataLoss (checksum) here
  CHECK(*got == value);  // no byte changed
}

TEST_CASE("attack: another session's raw allocation cannot be freed, read or written") {
  ServerProcess server;
  REQUIRE(server.Start());
  auto owner = Connect(server);
  auto other = Connect(server);
  std::string mine(100000, 'm');
  StatusOr<GlobalAddress> a = owner->Alloc(mine.size());
  REQUIRE(a.ok());
  REQUIRE(owner->Write(*a, mine.data(), mine.size()).ok());

  std::string junk(100000, 'j');
  Status w = other->Write(*a, junk.data(), 10);  // inline size
  CHECK(w.code() == StatusCode::kPermissionDenied);
  CHECK(w.message().find("belongs to another session") != std::string::npos);
  CHECK(other->Write(*a, junk.data(), junk.size()).code() == StatusCode::kPermissionDenied);
  GlobalAddress inside = *a;
  inside.offset += 5000;
  CHECK(other->Write(inside, junk.data(), 100).code() == StatusCode::kPermissionDenied);
  std::string out(mine.size(), '\0');
  CHECK(other->Read(*a, out.data(), out.size()).code() == StatusCode::kPermissionDenied);
  CHECK(other->Free(*a).code() == StatusCode::kPermissionDenied);

  REQUIRE(owner->Read(*a, out.data(), out.size()).ok());
  CHECK(out == mine);  // no byte changed
  ExpectServes(server);

  // Once the owner is gone (BYE) the allocation is an orphan the next session adopts
  // (docs/security.md: remaining exposure; keeps `rpmpctl alloc` + `rpmpctl write`).
  owner.reset();
  REQUIRE(other->Read(*a, out.data(), out.size()).ok());
  CHECK(out == mine);
  CHECK(other->Free(*a).ok());
}

TEST_CASE("attack: HELLO without or with a wrong secret is refused, the right one works") {
  unsetenv("RPMP_SECRET_FILE");
  SecretFile secret;
  ServerProcess server("256m", {"--auth-secret-file", secret.path});
  REQUIRE(server.Start());
  REQUIRE(Connect(server, secret.secret)->Put("ns", "k", "kept", 4).ok());

  auto none = TryConnect(server, "");
  REQUIRE_FALSE(none.ok());
  CHECK(none.status().code() == StatusCode::kPermissionDenied);
  CHECK(none.status().message().find("requires authentication") != std::string::npos);
  auto wrong = TryConnect(server, "not-the-cluster-secret!!");
  REQUIRE_FALSE(wrong.ok());
  CHECK(wrong.status().code() == StatusCode::kPermissionDenied);
  CHECK(wrong.status().message().find("wrong cluster secret") != std::string::npos);

  RawPeer legacy(server.address());  // a pre-auth client
  CHECK(legacy.LegacyHello().h.status == static_cast<uint16_t>(StatusCode::kPermissionDenied));
  RawPeer replay(server.address());  // a proof for a challenge never issued
  wire::Request r;
  r.h.op = wire::Op::kHello;
  r.h.flags = wire::kFlagAuth;
  std::string addr = replay.fabric->LocalAddress(), sn = auth::RandomNonce(), cn = auth::RandomNonce();
  std::string proof = auth::ClientProof(secret.secret, sn, cn, addr);
  r.fabric_address = addr;
  r.server_nonce = sn;
  r.client_nonce = cn;
  r.proof = proof;
  wire::Response resp;
  REQUIRE(replay.Exchange(replay.Encode(r), &resp));
  CHECK(resp.h.status == static_cast<uint16_t>(StatusCode::kPermissionDenied));
  CHECK(resp.message.find("unknown or expired challenge") != std::string::npos);

  // The secret from the environment, as rpmpctl and rpmp-bench get it.
  setenv("RPMP_SECRET_FILE", secret.path.c_str(), 1);
  CHECK(TryConnect(server, "").ok());
  unsetenv("RPMP_SECRET_FILE");

  ExpectServes(server, secret.secret);
  CHECK(*Connect(server, secret.secret)->Get("ns", "k") == "kept");
  // A client with a secret refuses a server that cannot prove it (an impostor, or
  // one configured without): the secret-less server here.
  ServerProcess open_server;
  REQUIRE(open_server.Start());
  auto refused = TryConnect(open_server, secret.secret);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.status().message().find("does not authenticate clients") != std::string::npos);
}

TEST_CASE("attack: forged session id and BYE of another session are refused") {
  SecretFile secret;
  ServerProcess server("256m", {"--auth-secret-file", secret.path});
  REQUIRE(server.Start());
  RawPeer victim(server.address()), attacker(server.address());
  REQUIRE(victim.Hello(secret.secret).h.status == 0);
  REQUIRE(attacker.Hello(secret.secret).h.status == 0);
  REQUIRE(victim.Serves());

  // Even knowing the victim's session id AND tag, frames from another address fail.
  uint32_t own_session = attacker.session;
  uint64_t own_tag = attacker.tag;
  attacker.session = victim.session;
  attacker.tag = victim.tag;
  wire::Request del;
  del.h.op = wire::Op::kDeleteNs;
  del.ns = "ok";
  wire::Response resp;
  REQUIRE(Connect(server, secret.secret)->Put("ok", "k", "v", 1).ok());
  REQUIRE(attacker.Exchange(attacker.Encode(del), &resp));
  CHECK(resp.h.status == static_cast<uint16_t>(StatusCode::kPermissionDenied));
  CHECK(resp.message.find("does not belong to session") != std::string::npos);
  wire::Request bye;
  bye.h.op = wire::Op::kBye;
  REQUIRE(attacker.Exchange(attacker.Encode(bye), &resp));
  CHECK(resp.h.status == static_cast<uint16_t>(StatusCode::kPermissionDenied));
  // A guessed tag on one's own session id is refused too.
  attacker.session = own_session;
  attacker.tag = own_tag ^ 1;
  REQUIRE(attacker.Exchange(attacker.Encode(bye), &resp));
  CHECK(resp.h.status == static_cast<uint16_t>(StatusCode::kPermissionDenied));
  attacker.tag = own_tag;
  CHECK(attacker.Serves());

  CHECK(victim.Serves());  // its session survived the forged BYE
  CHECK(Connect(server, secret.secret)->Get("ok", "k").ok());  // nothing deleted
  ExpectServes(server, secret.secret);
}

TEST_CASE("attack: 10,000 HELLOs from one address are capped, others are served") {
  ServerProcess server;
  REQUIRE(server.Start());
  RawPeer flood(server.address());
  int ok = 0, capped = 0;
  std::string message;
  for (int i = 0; i < 10000; i++) {
    wire::Response r = flood.Hello();
    if (r.h.status == 0) ok++;
    if (r.h.status == static_cast<uint16_t>(StatusCode::kResourceExhausted)) {
      capped++;
      message = r.message;
    }
  }
  CHECK(ok == 64);  // max_sessions_per_address
  CHECK(capped == 10000 - 64);
  CHECK(message.find("too many sessions from this client address") != std::string::npos);
  ExpectServes(server);
}

TEST_CASE("attack: a client that never completes RMA holds at most its in-flight limit of slots") {
  // 256 receive slots; one session may hold 2 x 64. The attacker asks for 300 GETs
  // (more than all slots) of 1 MiB into its buffer and never drives its endpoint, so
  // the server's RMA writes stall once the socket buffers are full. Requests over the
  // limit are dropped, so the slots left keep serving everyone else.
  ServerProcess server("256m");
  REQUIRE(server.Start());
  std::string big(1 << 20, 'b');
  REQUIRE(Connect(server)->Put("ns", "big", big.data(), big.size()).ok());
  RawPeer attacker(server.address());
  REQUIRE(attacker.Hello().h.status == 0);
  std::vector<std::string> frames;
  std::vector<OpContext> sends(300);
  for (int i = 0; i < 300; i++) {
    wire::Request get;
    get.h.op = wire::Op::kGet;
    get.h.flags = wire::kFlagRma;
    get.ns = "ns";
    get.key = "big";
    get.rma = {attacker.mr->RmaAddr(attacker.bulk()), attacker.mr->key(), 1 << 20};
    frames.push_back(attacker.Encode(get));
  }
  for (int i = 0; i < 300; i++)
    REQUIRE(attacker.fabric->Send(&sends[i], attacker.server, frames[i].data(), frames[i].size(),
                                  attacker.mr->desc()).ok());
  // No polling by the attacker from here on. Others are still served, repeatedly.
  for (int i = 0; i < 5; i++) {
    auto c = Connect(server);
    REQUIRE(c->Put("other", "k" + std::to_string(i), big.data(), big.size()).ok());
    StatusOr<std::string> got = c->Get("other", "k" + std::to_string(i));
    REQUIRE(got.ok());
    CHECK(*got == big);
  }
  CHECK(server.Running());
  attacker.fabric.reset();  // the stalled operations go with the endpoint
}

TEST_CASE("KNOWN EXPOSURE: one-sided read of another namespace with its GET_META reference") {
  // docs/security.md row "one-sided read of another namespace's segment": every pool
  // is one registration with one key, so a session that learns an address can read
  // any record in that pool. Not prevented yet; this test keeps the doc honest.
  ServerProcess server;
  REQUIRE(server.Start());
  std::string secret(64 * 1024, 's');
  REQUIRE(Connect(server)->Put("app-a", "secret", secret.data(), secret.size()).ok());
  RawPeer peer(server.address());
  peer.Hello();
  wire::RecordMeta m = MetaOf(peer, "app-a", "secret");  // nothing checks who asks
  CHECK(peer.Rma(false, m.rma_addr, m.rma_key, 4096).ok());
  ExpectServes(server);
}

}  // namespace
}  // namespace rpmp

namespace rpmp {
namespace {

TEST_CASE("protected mode: without a secret only loopback addresses are served") {
  std::string out, err;
  std::string port = std::to_string(testing::FreePort());
  CHECK(testing::RunTool({"rpmp-server", "--listen", "0.0.0.0:" + port, "--pool", "/nonexistent/p:64m"},
                         "", &out, &err) == 2);
  CHECK(err.find("without a cluster secret (protected mode)") != std::string::npos);
  CHECK(err.find("--insecure") != std::string::npos);
}

}  // namespace
}  // namespace rpmp
