// Stateful fuzzer of the session layer (docs/security.md, "unauthenticated work"). Each
// input is a program of hostile steps against one in-process rpmp-server with a
// cluster secret: HELLOs claiming addresses of any length, family, port or owner,
// proofs right and wrong, HELLO steps out of order, BYEs and requests naming real,
// stale or forged sessions with any size fields, and raw frames. After each input a
// fresh honest client must connect, write and read back within kHonestBound; if it
// cannot, the process aborts (libFuzzer and the driver report the input).
//
// Entry point: LLVMFuzzerTestOneInput. The normal build links it with
// session_fuzz_main.cc (a seeded driver, CI runs a short campaign); see fuzz/README.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>

#include "common/tcp_connect.h"
#include "server/server.h"
#include "server/store/open_store.h"
#include "tests/hostile_peer.h"

namespace rpmp::fuzz {
// honest_client.cc (librpmp's headers and the server's do not mix in one unit).
bool HonestClientServed(const std::string& address, const std::string& secret,
                        std::chrono::milliseconds bound, std::string* why);
}  // namespace rpmp::fuzz

namespace {

using rpmp::testing::HostilePeer;
using rpmp::testing::InetAddress;
namespace wire = rpmp::wire;

constexpr char kSecret[] = "session-fuzz-cluster-secret-0123456789";
constexpr auto kHonestBound = std::chrono::seconds(5);

struct World {
  std::unique_ptr<rpmp::Store> store;
  std::unique_ptr<rpmp::Server> server;
  std::string address;
  std::unique_ptr<HostilePeer> attacker;
  std::unique_ptr<HostilePeer> bystander;  // a second connected peer whose address gets claimed
};

int FreePort() {
  for (int port = 20000 + getpid() % 20000;; port++) {
    rpmp::TcpConnectResult r = rpmp::ConnectTcp("127.0.0.1", std::to_string(port), std::chrono::milliseconds(100));
    if (r.fd >= 0) close(r.fd);
    if (r.refused) return port;
  }
}

World& TheWorld() {
  static World* w = [] {
    auto* world = new World();
    std::string secret_path = "/tmp/rpmp-session-fuzz-" + std::to_string(getpid()) + ".secret";
    std::ofstream(secret_path) << kSecret << "\n";
    chmod(secret_path.c_str(), 0600);
    rpmp::ServerConfig c;
    world->address = "127.0.0.1:" + std::to_string(FreePort());
    c.listen = world->address;
    c.auth_secret_file = secret_path;
    c.recv_slots = 64;
    c.hello_timeout = std::chrono::milliseconds(500);
    c.max_sessions = 512;
    world->store = rpmp::NewMemStore(64ull << 20, 1ull << 20);
    auto s = rpmp::Server::Start(c, world->store.get(), nullptr, nullptr);
    if (!s.ok()) {
      std::fprintf(stderr, "session_fuzz: cannot start the server: %s\n", s.status().ToString().c_str());
      std::abort();
    }
    world->server = std::move(s).value();
    unlink(secret_path.c_str());
    return world;
  }();
  return *w;
}

// Reads the input a byte or a few at a time; zeros once it runs out.
struct Reader {
  const uint8_t* p;
  size_t n;
  uint8_t Byte() { return n > 0 ? (n--, *p++) : 0; }
  uint64_t U64() {
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) v = v << 8 | Byte();
    return v;
  }
  std::string Bytes(size_t len) {
    std::string s;
    while (len-- > 0 && n > 0) s.push_back(static_cast<char>(Byte()));
    return s;
  }
};

// An address to claim: malformed, a closed port, the attacker's own (padded or not),
// or the bystander's.
std::string PickAddress(Reader& in, World& w) {
  std::string own = w.attacker->fabric->LocalAddress();
  switch (in.Byte() % 6) {
    case 0: return in.Bytes(in.Byte() % 40);
    case 1: return InetAddress("127.0.0.1", static_cast<uint16_t>(1 + in.Byte()));
    case 2: return own;
    case 3: {
      std::string s = own;
      if (s.size() >= 16) s[8 + in.Byte() % 8] = static_cast<char>(in.Byte());
      return s;
    }
    case 4: return own + in.Bytes(in.Byte() % 8);
    default: return w.bystander->fabric->LocalAddress();
  }
}

// Sends a frame and, when `wait_ms` > 0, takes one reply (any) within that time.
bool Send(HostilePeer& p, const std::string& frame, int wait_ms, wire::Response* resp) {
  if (p.fabric == nullptr) return false;
  rpmp::OpContext recv;
  char* in = p.mem.data() + wire::kMaxFrame;
  if (wait_ms > 0 && !p.fabric->PostRecv(&recv, in, wire::kMaxFrame, p.mr->desc()).ok()) return false;
  if (!p.Fire(frame)) {
    if (wait_ms > 0) p.fabric.reset();  // the posted receive must not outlive `recv`
    return false;
  }
  if (wait_ms == 0) return false;
  auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(wait_ms);
  rpmp::Completion c[8];
  while (std::chrono::steady_clock::now() < until) {
    int k = p.fabric->Poll(c, 8);
    for (int i = 0; i < k; i++)
      if (c[i].ctx == &recv) return wire::DecodeResponse(in, c[i].length, resp).ok();
  }
  p.fabric.reset();  // the posted receive must not outlive `recv`
  return false;
}

// The honest challenge-response, through Send (no Catch assertions here).
void OpenSession(HostilePeer& p) {
  std::string address = p.fabric->LocalAddress(), client_nonce = rpmp::auth::RandomNonce();
  wire::Request r;
  r.h.op = wire::Op::kHello;
  r.h.flags = wire::kFlagAuth;
  r.fabric_address = address;
  r.client_name = "fuzz-bystander";
  r.client_nonce = client_nonce;
  wire::Response resp;
  if (!Send(p, p.Encode(r), 3000, &resp) || resp.challenge.empty()) return;
  std::string server_nonce(resp.challenge);
  std::string proof = rpmp::auth::ClientProof(kSecret, server_nonce, client_nonce, address);
  r.server_nonce = server_nonce;
  r.proof = proof;
  if (Send(p, p.Encode(r), 3000, &resp) && resp.h.status == 0) {
    p.session = resp.session;
    p.tag = resp.h.session_tag;
  }
}

void RunStep(Reader& in, World& w, std::string* challenge) {
  HostilePeer& a = *w.attacker;
  wire::Request r;
  wire::Response resp;
  switch (in.Byte() % 7) {
    case 0: {  // HELLO step 1 claiming some address
      std::string frame = a.HelloClaiming(PickAddress(in, w), in.Byte() % 4 != 0);
      if (Send(a, frame, in.Byte() % 2 ? 100 : 0, &resp) && !resp.challenge.empty()) *challenge = resp.challenge;
      return;
    }
    case 1: {  // HELLO step 2: right or wrong proof, fresh or replayed or made-up nonce
      // wire::Request holds views: the bytes live in these strings.
      std::string address = in.Byte() % 4 ? a.fabric->LocalAddress() : PickAddress(in, w);
      std::string client_nonce = rpmp::auth::RandomNonce();
      std::string server_nonce = in.Byte() % 4 ? *challenge : in.Bytes(in.Byte() % 40);
      std::string key = in.Byte() % 3 ? std::string(kSecret) : "wrong-secret-0123456789";
      std::string proof = rpmp::auth::ClientProof(key, server_nonce, client_nonce, address);
      r.h.op = wire::Op::kHello;
      r.h.flags = wire::kFlagAuth;
      r.fabric_address = address;
      r.client_name = "fuzz";
      r.client_nonce = client_nonce;
      r.server_nonce = server_nonce;
      r.proof = proof;
      if (Send(a, a.Encode(r), 100, &resp) && resp.h.status == 0 && resp.session != 0) {
        a.session = resp.session;
        a.tag = resp.h.session_tag;
      }
      return;
    }
    case 2:  // BYE of the session, or of a made-up one
    case 3: {  // a request with hostile size fields
      static const wire::Op ops[] = {wire::Op::kStat, wire::Op::kAlloc, wire::Op::kPut, wire::Op::kGet,
                                     wire::Op::kRead, wire::Op::kWrite, wire::Op::kFree, wire::Op::kList};
      r.h.op = in.Byte() % 2 ? wire::Op::kBye : ops[in.Byte() % 8];
      std::string ns = in.Bytes(in.Byte() % 8), key = in.Bytes(in.Byte() % 8);
      r.ns = ns;
      r.key = key;
      r.length = in.U64();
      r.pool = in.Byte() % 3;
      r.offset = in.U64();
      uint32_t s = a.session;
      uint64_t t = a.tag;
      if (in.Byte() % 4 == 0) a.session = static_cast<uint32_t>(in.U64());
      if (in.Byte() % 4 == 0) a.tag = in.U64() & ((1ull << 48) - 1);
      std::string frame = a.Encode(r);
      a.session = s;
      a.tag = t;
      Send(a, frame, in.Byte() % 2 ? 100 : 0, &resp);
      if (r.h.op == wire::Op::kBye && resp.h.status == 0) a.session = 0;
      return;
    }
    case 4: {  // raw bytes, sometimes behind a valid magic
      std::string frame = in.Bytes(1 + in.Byte() % 64);
      if (in.Byte() % 2 && frame.size() >= 4) std::memcpy(frame.data(), &wire::kMagic, 4);
      Send(a, frame, 0, &resp);
      return;
    }
    case 5: {  // a burst of step-1 HELLOs to closed ports
      int k = 1 + in.Byte() % 32;
      for (int i = 0; i < k; i++)
        a.Fire(a.HelloClaiming(InetAddress("127.0.0.1", static_cast<uint16_t>(1 + in.Byte()))));
      return;
    }
    default:  // a new attacker endpoint (the old one's connection goes away)
      w.attacker = std::make_unique<HostilePeer>(w.address);
      return;
  }
}

void ExpectHonestClientServed(World& w) {
  std::string why;
  if (!rpmp::fuzz::HonestClientServed(w.address, kSecret, kHonestBound, &why)) {
    std::fprintf(stderr, "session_fuzz: an honest client was not served within %lld s: %s\n",
                 static_cast<long long>(kHonestBound.count()), why.c_str());
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  World& w = TheWorld();
  if (w.bystander == nullptr || w.bystander->fabric == nullptr) {  // a connected peer: its address is in the server's AV
    w.bystander = std::make_unique<HostilePeer>(w.address);
    OpenSession(*w.bystander);
  }
  if (w.attacker == nullptr || w.attacker->fabric == nullptr) w.attacker = std::make_unique<HostilePeer>(w.address);
  Reader in{data, std::min<size_t>(size, 4096)};
  std::string challenge;
  for (int steps = 0; in.n > 0 && steps < 32; steps++) {
    RunStep(in, w, &challenge);
    if (w.attacker->fabric == nullptr) w.attacker = std::make_unique<HostilePeer>(w.address);
    if (w.bystander->fabric == nullptr) {
      w.bystander = std::make_unique<HostilePeer>(w.address);
      OpenSession(*w.bystander);
    }
  }
  ExpectHonestClientServed(w);
  return 0;
}
