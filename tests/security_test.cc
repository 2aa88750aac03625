// Integration: the attack table of docs/security.md, against a real rpmp-server
// process. Each case tries what a hostile peer on the fabric could, checks that it
// fails with a clear error, that the server goes on serving others, and that no
// stored byte changed.
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <future>
#include <thread>
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

// Sends `n` GETs of ns/big by RMA into the attacker's bulk buffer and never drives its
// endpoint afterwards, so the server's RMA writes stall. `frames` and `sends` hold the
// encoded requests and their contexts: keep them alive while the attacker's fabric is.
void SendStallingGets(RawPeer& attacker, int n, std::vector<std::string>* frames,
                      std::vector<OpContext>* sends) {
  sends->resize(n);
  for (int i = 0; i < n; i++) {
    wire::Request get;
    get.h.op = wire::Op::kGet;
    get.h.flags = wire::kFlagRma;
    get.ns = "ns";
    get.key = "big";
    get.rma = {attacker.mr->RmaAddr(attacker.bulk()), attacker.mr->key(), 1 << 20};
    frames->push_back(attacker.Encode(get));
  }
  for (int i = 0; i < n; i++)
    REQUIRE(attacker.fabric->Send(&(*sends)[i], attacker.server, (*frames)[i].data(),
                                  (*frames)[i].size(), attacker.mr->desc()).ok());
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

// Waits up to `ms` for the receive `a` or `b` (either may be null) to complete; returns
// the one that did, with its decoded reply in *resp, or null.
OpContext* AwaitReply(RawPeer& peer, OpContext* a, const char* a_buf, OpContext* b, const char* b_buf,
                      wire::Response* resp, int ms) {
  auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  Completion c[4];
  while (std::chrono::steady_clock::now() < until) {
    int n = peer.fabric->Poll(c, 4);
    for (int i = 0; i < n; i++) {
      if (c[i].ctx != a && c[i].ctx != b) continue;
      REQUIRE(wire::DecodeResponse(c[i].ctx == a ? a_buf : b_buf, c[i].length, resp).ok());
      return c[i].ctx;
    }
  }
  return nullptr;
}

TEST_CASE("attack: a frame sent to another data shard than its session's is dropped unanswered or served whole") {
  // Contexts first: a receive may stay posted until the peer's fabric closes.
  OpContext cross_recv, cross_send, stat_recv, stat_send;
  SecretFile secret;
  ServerProcess server("256m", {"--auth-secret-file", secret.path, "--data-threads", "2"});
  REQUIRE(server.Start());
  REQUIRE(Connect(server, secret.secret)->Put("ok", "k", "v", 1).ok());
  RawPeer peer(server.address());
  wire::Response hello = peer.Hello(secret.secret, "", wire::kFlagShards);
  REQUIRE(hello.h.status == 0);
  REQUIRE(hello.shard_addresses.size() == 2);
  StatusOr<PeerAddr> shard1 = peer.fabric->InsertPeer(hello.shard_addresses[1]);
  REQUIRE(shard1.ok());

  // The session is shard 0's (its HELLO went there). Right id, right tag, right sender,
  // but the frame reaches shard 1. With the native TCP provider shard 1 has an address
  // vector of its own, which does not know the sender: the frame is dropped, unanswered
  // and not applied. Where the shards share one (RxM, verbs) the sender is the session's
  // own client: the put is served, and answered.
  char* cross_in = peer.mem.data() + 2 * wire::kMaxFrame;
  char* cross_out = peer.mem.data() + 3 * wire::kMaxFrame;
  std::string frame = peer.Encode(RawPeer::InlinePut("ok", "cross", "x"));
  std::memcpy(cross_out, frame.data(), frame.size());
  REQUIRE(peer.fabric->PostRecv(&cross_recv, cross_in, wire::kMaxFrame, peer.mr->desc()).ok());
  REQUIRE(peer.fabric->Send(&cross_send, *shard1, cross_out, frame.size(), peer.mr->desc()).ok());
  wire::Response resp;
  bool answered = AwaitReply(peer, &cross_recv, cross_in, nullptr, nullptr, &resp, 2000) != nullptr;
  if (answered) {
    INFO(resp.message);
    CHECK(resp.h.status == 0);
  }
  std::printf("[figure] a put of shard 0's session sent to shard 1 (%s): %s\n", hello.provider.c_str(),
              answered ? "served and answered" : "dropped without a reply");

  // The session goes on on its own shard (the reply may land in either posted receive).
  char* stat_in = peer.mem.data() + wire::kMaxFrame;
  wire::Request stat;
  stat.h.op = wire::Op::kStat;
  frame = peer.Encode(stat);
  std::memcpy(peer.mem.data(), frame.data(), frame.size());
  REQUIRE(peer.fabric->PostRecv(&stat_recv, stat_in, wire::kMaxFrame, peer.mr->desc()).ok());
  REQUIRE(peer.fabric->Send(&stat_send, peer.server, peer.mem.data(), frame.size(), peer.mr->desc()).ok());
  OpContext* got = AwaitReply(peer, &stat_recv, stat_in, answered ? nullptr : &cross_recv, cross_in,
                              &resp, 5000);
  REQUIRE(got != nullptr);
  CHECK(resp.h.status == 0);
  REQUIRE(server.Running());
  // Applied exactly when answered: never a silent write.
  std::unique_ptr<Client> check = Connect(server, secret.secret);
  CHECK(check->Get("ok", "cross").ok() == answered);
  CHECK(*check->Get("ok", "k") == "v");
  ExpectServes(server, secret.secret);
}

TEST_CASE("attack: 10,000 HELLOs from one address are capped, others are served") {
  // At max_sessions_per_address (64) each HELLO evicts the address's least recently used
  // idle session: the address never holds more than 64, and an evicted session's frames
  // are refused with the reason (docs/security.md, "How a session ends").
  ServerProcess server;
  REQUIRE(server.Start());
  RawPeer flood(server.address());
  int ok = 0;
  uint32_t first = 0;  // one evicted recently enough to be remembered (the last 1024)
  uint64_t first_tag = 0;
  for (int i = 0; i < 10000; i++) {
    wire::Response r = flood.Hello();
    if (r.h.status == 0) ok++;
    if (i == 9000) {
      first = flood.session;
      first_tag = flood.tag;
    }
  }
  CHECK(ok == 10000);
  CHECK(flood.Serves());  // the newest session works
  uint32_t last = flood.session;
  uint64_t last_tag = flood.tag;
  flood.session = first;  // evicted by HELLO 9064
  flood.tag = first_tag;
  wire::Request stat;
  stat.h.op = wire::Op::kStat;
  wire::Response resp;
  REQUIRE(flood.Exchange(flood.Encode(stat), &resp));
  CHECK(resp.h.status == static_cast<uint16_t>(StatusCode::kUnavailable));
  CHECK((resp.h.flags & wire::kFlagSessionEnded) != 0);
  CHECK(resp.message.find("evicted: its client address reached max_sessions_per_address (64)") !=
        std::string::npos);
  flood.session = last;
  flood.tag = last_tag;
  CHECK(flood.Serves());
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
  std::vector<OpContext> sends;
  SendStallingGets(attacker, 300, &frames, &sends);
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

TEST_CASE("attack: stalled RMA: slots come back after rma_timeout, the session is dropped") {
  // A server with 64 slots: one stalling session (allowed 2 x 64 in flight) takes them
  // all, so without deadlines nobody else would be served again. With --rma-timeout 3s
  // the transfers are abandoned, the session dropped and the slots freed
  // (docs/security.md).
  SecretFile dir("unused-secret-0123456789");  // a private directory for the config
  std::string config = dir.dir + "/server.yaml";
  std::ofstream(config) << "recv_slots: 64\n";
  ServerProcess server("256m", {"--config", config, "--rma-timeout", "3s"});
  REQUIRE(server.Start());
  std::string big(1 << 20, 'b');
  REQUIRE(Connect(server)->Put("ns", "big", big.data(), big.size()).ok());
  auto attacker = std::make_unique<RawPeer>(server.address());
  REQUIRE(attacker->Hello().h.status == 0);
  std::vector<std::string> frames;
  std::vector<OpContext> sends;
  SendStallingGets(*attacker, 150, &frames, &sends);
  // No polling by the attacker from here on. Once its transfers stall every slot is
  // taken: a client with a short timeout is not served (proves the exhaustion)...
  bool starved = false;
  auto since = std::chrono::steady_clock::now();
  for (int i = 0; i < 5 && !starved; i++) {
    ClientOptions o;
    o.timeout = std::chrono::milliseconds(500);
    since = std::chrono::steady_clock::now();
    auto c = Client::Connect(server.address(), o);
    starved = !c.ok();
    INFO("try " << i << ": " << (c.ok() ? "served" : c.status().ToString()));
  }
  REQUIRE(starved);
  // ...and once the deadline passed the server serves again.
  ClientOptions o;
  o.timeout = std::chrono::seconds(15);
  auto c = Client::Connect(server.address(), o);
  INFO("server log: " << server.Log());
  INFO("connect: " << (c.ok() ? "ok" : c.status().ToString()));
  REQUIRE(c.ok());
  auto served = std::chrono::steady_clock::now();
  REQUIRE((*c)->Put("other", "k", big.data(), big.size()).ok());
  StatusOr<std::string> got = (*c)->Get("other", "k");
  REQUIRE(got.ok());
  CHECK(*got == big);
  CHECK(served - since >= std::chrono::milliseconds(1500));  // it waited for the deadline
  CHECK(server.Log().find("dropping the session and freeing its slots (rma_timeout)") != std::string::npos);
  CHECK(server.Running());
  attacker.reset();  // the abandoned transfers end with the connection
  auto after = TryConnect(server, "");
  INFO("server log: " << server.Log());
  INFO("after: " << (after.ok() ? "ok" : after.status().ToString()));
  REQUIRE(after.ok());
  ExpectServes(server);
  StatusOr<std::string> kept = Connect(server)->Get("ns", "big");
  REQUIRE(kept.ok());
  CHECK(*kept == big);
}

TEST_CASE("attack: one-sided read of another namespace's segment with a key from one's own GET_META fails") {
  // docs/security.md row "one-sided read of another namespace's segment": every
  // segment is its own registration with its own random key, handed out only in
  // GET_META replies for its namespace, and closed when the segment is freed. The
  // attacker holds a key of namespace app-a and knows where app-b's record lies.
  ServerProcess server("64m", {"--segment-size", "1m"});
  REQUIRE(server.Start());
  std::string victim(64 * 1024, 'S'), own(64 * 1024, 'a');
  auto client = Connect(server);
  REQUIRE(client->Put("app-b", "secret", victim.data(), victim.size()).ok());
  REQUIRE(client->Put("app-a", "mine", own.data(), own.size()).ok());
  RawPeer peer(server.address());
  REQUIRE(peer.Hello().h.status == 0);
  wire::RecordMeta a = MetaOf(peer, "app-a", "mine");
  wire::RecordMeta b = MetaOf(peer, "app-b", "secret");
  CHECK(a.rma_key != b.rma_key);
  CHECK(a.rma_key > 0xFFFFFFFFull);  // random 64-bit keys on tcp, not 1, 2, 3...
  // Control: the attacker's own key reads its own record.
  REQUIRE(peer.Rma(false, a.rma_addr, a.rma_key, 4096).ok());
  CHECK(std::string(peer.bulk(), 4096) == std::string(4096, 'a'));

  const std::string marker(64, 'S');
  int refused = 0, attempts = 0;
  // One attempt on a fresh connection (a refused RMA makes the server's provider drop
  // it); true when the read returned any of app-b's bytes.
  auto leaks = [&](uint64_t addr, uint64_t key) {
    RawPeer p(server.address());
    REQUIRE(p.Hello().h.status == 0);
    std::memset(p.bulk(), 0, 4096);
    Status st = p.Rma(false, addr, key, 4096, 2000);
    attempts++;
    if (!st.ok()) refused++;
    return st.ok() && std::string(p.bulk(), 4096).find(marker) != std::string::npos;
  };
  CHECK_FALSE(leaks(b.rma_addr, a.rma_key));  // app-a's key at app-b's address
  // app-a's key at addresses around its own record, far enough to reach neighbouring
  // segments (1 MiB each) on either side.
  for (int64_t step = -3; step <= 3; step++) {
    if (step == 0) continue;
    uint64_t addr = a.rma_addr + static_cast<uint64_t>(step * (768 * 1024));
    INFO("offset " << step * 768 << " KiB");
    CHECK_FALSE(leaks(addr, a.rma_key));
  }
  // Keys next to one's own (a sequential scheme would hand them to neighbours).
  CHECK_FALSE(leaks(b.rma_addr, a.rma_key + 1));
  CHECK_FALSE(leaks(b.rma_addr, a.rma_key - 1));
  CHECK(refused >= 3);  // the out-of-segment and wrong-key attempts were refused

  // Revocation: once app-a is deleted its key reads nothing, also after its memory is
  // reused by another namespace.
  REQUIRE(client->DeleteNamespace("app-a").ok());
  std::string reuse(64 * 1024, 'S');
  REQUIRE(client->Put("app-c", "secret", reuse.data(), reuse.size()).ok());
  {
    RawPeer p(server.address());
    REQUIRE(p.Hello().h.status == 0);
    CHECK_FALSE(p.Rma(false, a.rma_addr, a.rma_key, 4096, 2000).ok());
  }

  // Served, nothing changed, app-b's own key still works.
  ExpectServes(server);
  StatusOr<std::string> got = Connect(server)->Get("app-b", "secret");
  REQUIRE(got.ok());
  CHECK(*got == victim);
  RawPeer reader(server.address());
  REQUIRE(reader.Hello().h.status == 0);
  wire::RecordMeta b2 = MetaOf(reader, "app-b", "secret");
  REQUIRE(reader.Rma(false, b2.rma_addr, b2.rma_key, 4096).ok());
  CHECK(std::string(reader.bulk(), 4096) == std::string(4096, 'S'));
}

// A hand-driven server endpoint (no rpmp-server): answers a librpmp client's HELLO
// without authentication and hands the test each request frame, so the test knows
// the client's fabric address, request ids and session tag exactly.
struct FakeServer {
  std::unique_ptr<Fabric> fabric;
  std::unique_ptr<MemoryRegion> mr;
  std::vector<char> mem = std::vector<char>(2 * wire::kMaxFrame);
  std::string port = std::to_string(testing::FreePort());
  PeerAddr client = 0;
  std::string client_address;

  FakeServer() {
    FabricOptions o;
    o.node = "127.0.0.1";
    o.service = port;
    fabric = std::move(Fabric::Open(o)).value();
    mr = std::move(fabric->Register(mem.data(), mem.size(), MrAccess::kLocalOnly)).value();
  }
  std::string address() const { return "127.0.0.1:" + port; }
  // Waits up to 10 s for the next request frame.
  bool Receive(wire::Request* req) {
    OpContext recv;
    REQUIRE(fabric->PostRecv(&recv, mem.data(), wire::kMaxFrame, mr->desc()).ok());
    auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    Completion c[4];
    while (std::chrono::steady_clock::now() < until) {
      int n = fabric->Poll(c, 4);
      for (int i = 0; i < n; i++) {
        if (c[i].ctx != &recv) continue;
        frame.assign(mem.data(), c[i].length);
        return wire::DecodeRequest(frame.data(), frame.size(), req).ok();
      }
    }
    return false;
  }
  void Send(const wire::Response& r) {
    char* out = mem.data() + wire::kMaxFrame;
    size_t len = wire::EncodeResponse(r, out, wire::kMaxFrame);
    REQUIRE(len > 0);
    OpContext send;
    REQUIRE(fabric->Send(&send, client, out, len, mr->desc()).ok());
    auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    Completion c[4];
    while (std::chrono::steady_clock::now() < until) {
      int n = fabric->Poll(c, 4);
      for (int i = 0; i < n; i++)
        if (c[i].ctx == &send) return;
    }
    FAIL("reply not sent");
  }
  std::string frame;  // the last request's bytes (the decoded request points into it)
};

TEST_CASE("attack: a forged reply (right request id and tag, another address) is dropped by the client") {
  unsetenv("RPMP_SECRET_FILE");
  FakeServer server;
  constexpr uint64_t kTag = 0x1234567890ull;
  // A reply in session 7 (tag kTag) to request `id`: what the server, the forger and the
  // wrong-tag sender below all start from.
  auto reply = [](wire::Op op, uint64_t id) {
    wire::Response r;
    r.h.op = op;
    r.h.request_id = id;
    r.h.session = 7;
    r.h.session_tag = kTag;
    return r;
  };
  std::promise<StatusOr<ServerStats>> result;
  std::unique_ptr<Client> client;
  std::thread caller([&] {
    ClientOptions o;
    o.timeout = std::chrono::seconds(10);
    auto c = Client::Connect(server.address(), o);
    if (!c.ok()) {
      result.set_value(c.status());
      return;
    }
    client = std::move(c).value();
    result.set_value(client->Stat());
  });
  // HELLO: learn the client's address; open session 7 with tag kTag.
  wire::Request hello;
  REQUIRE(server.Receive(&hello));
  REQUIRE(hello.h.op == wire::Op::kHello);
  server.client_address = std::string(hello.fabric_address);
  server.client = *server.fabric->InsertPeer(server.client_address);
  wire::Response r = reply(wire::Op::kHello, hello.h.request_id);
  r.session = 7;
  r.node_id = 42;
  r.max_inline = 4096;
  r.max_inflight = 64;
  server.Send(r);
  wire::Request stat;
  REQUIRE(server.Receive(&stat));
  REQUIRE(stat.h.op == wire::Op::kStat);
  CHECK(stat.h.session_tag == kTag);

  // The forger knows everything but cannot send from the server's address.
  RawPeer forger(server.address());
  PeerAddr victim = *forger.fabric->InsertPeer(server.client_address);
  wire::Response forged = reply(wire::Op::kStat, stat.h.request_id);
  forged.node_id = 666;
  forged.namespaces = 666;
  size_t len = wire::EncodeResponse(forged, forger.mem.data(), wire::kMaxFrame);
  OpContext send;
  REQUIRE(forger.fabric->Send(&send, victim, forger.mem.data(), len, forger.mr->desc()).ok());
  bool sent = false;
  Completion c[4];
  for (auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
       !sent && std::chrono::steady_clock::now() < until;) {
    int n = forger.fabric->Poll(c, 4);
    for (int i = 0; i < n; i++) sent = sent || (c[i].ctx == &send && c[i].status.ok());
  }
  REQUIRE(sent);
  // A reply from the right address with another session's tag is dropped too.
  wire::Response wrong_tag = forged;
  wrong_tag.h.session_tag = kTag ^ 1;
  server.Send(wrong_tag);
  // The forged frames reached the client before the real reply: it must still get 7.
  auto fut = result.get_future();
  CHECK(fut.wait_for(std::chrono::milliseconds(500)) == std::future_status::timeout);
  wire::Response real = reply(wire::Op::kStat, stat.h.request_id);
  real.node_id = 42;
  real.namespaces = 7;
  server.Send(real);
  StatusOr<ServerStats> got = fut.get();
  caller.join();
  REQUIRE(got.ok());
  CHECK(got->namespaces == 7);
  CHECK(got->node_id == 42);
  client.reset();
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

TEST_CASE("a boot probe opens nothing, needs no secret, and tells a restarted server") {
  // wire.h kFlagProbe: answered like a step-1 HELLO (to anyone), with the node id and
  // boot id only: no challenge, no session. A restart draws a new boot id.
  SecretFile secret("probe-test-secret-0123456789");
  ServerProcess server("256m", {"--auth-secret-file", secret.path});
  REQUIRE(server.Start());
  auto probe = [&](wire::Response* resp, uint16_t extra_flags = 0) {
    RawPeer peer(server.address());
    wire::Request r;
    r.h.op = wire::Op::kHello;
    r.h.flags = wire::kFlagBoot | wire::kFlagProbe | extra_flags;
    std::string address = peer.fabric->LocalAddress();
    r.fabric_address = address;
    r.client_name = "probe";
    REQUIRE(peer.Exchange(peer.Encode(r), resp));
  };
  wire::Response first;
  probe(&first);
  CHECK(first.h.status == 0);
  CHECK((first.h.flags & wire::kFlagProbe) != 0);
  CHECK(first.boot != 0);
  CHECK(first.session == 0);
  CHECK(first.challenge.empty());
  CHECK(first.shard_addresses.empty());  // not asked for
  // Asked with kFlagShards (what a shard connection does before a new session): the
  // shard list, still no session and no challenge, to an unauthenticated peer.
  wire::Response shards;
  probe(&shards, wire::kFlagShards);
  CHECK(shards.h.status == 0);
  CHECK((shards.h.flags & wire::kFlagShards) != 0);
  CHECK(!shards.shard_addresses.empty());
  CHECK(shards.session == 0);
  CHECK(shards.challenge.empty());
  wire::Response again;
  probe(&again);
  CHECK(again.boot == first.boot);  // the same process
  ExpectServes(server, secret.secret);
  server.Kill(SIGKILL);
  REQUIRE(server.Restart());
  wire::Response after;
  probe(&after);
  CHECK(after.h.status == 0);
  CHECK(after.boot != 0);
  CHECK(after.boot != first.boot);
  ExpectServes(server, secret.secret);
}

}  // namespace
}  // namespace rpmp
