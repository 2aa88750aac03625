// Stateful fuzzer of the session layer (docs/security.md, "unauthenticated work"). Each
// input is a program of hostile steps against one in-process rpmp-server with a
// cluster secret: HELLOs claiming addresses of any length, family, port or owner,
// proofs right and wrong (some with tenant tokens, live, expired or junk), boot probes, HELLO steps out of order, BYEs and requests naming real,
// stale or forged sessions with any size fields, and raw frames. After each input a
// honest client must write and read back within kHonestBound (one kept connected, and
// every kFreshEvery inputs one connecting afresh); if it cannot, the process aborts
// (libFuzzer and the driver report the input). One server per process; a step waits
// for a reply only until the server has received its frame (its request counter), so
// unanswered frames cost ~kReplyGrace, not a timeout.
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
#include "common/tenant_token.h"
#include "server/server.h"
#include "server/store/open_store.h"
#include "tests/hostile_peer.h"

#include "fuzz/honest_client.h"

namespace {

using rpmp::testing::HostilePeer;
using rpmp::testing::InetAddress;
namespace wire = rpmp::wire;

constexpr char kSecret[] = "session-fuzz-cluster-secret-0123456789";
constexpr auto kHonestBound = std::chrono::seconds(5);
// How long a step that expects a reply waits for it at most. The wait ends sooner once
// the server has received every frame sent and kReplyGrace has passed (the in-process
// server answers within microseconds; a frame it drops gets no reply). A missed or late
// reply only changes what the step saw.
constexpr int kReplyWaitMs = 10;
constexpr auto kReplyGrace = std::chrono::milliseconds(2);
// Every input ends with a put and get on one honest client kept connected (bounded by
// kHonestBound); every kFreshEvery inputs, and whenever the kept one fails, a client
// connecting afresh (HELLO included) must be served within kHonestBound too.
constexpr uint64_t kFreshEvery = 8;

// A hostile endpoint with one receive kept posted across steps: a step that waits for
// a reply and gets none leaves it posted (a late reply lands there and is discarded by
// the next step) instead of tearing the endpoint down, which cost a new fabric per
// unanswered frame. The receive context outlives the endpoint (declared first).
struct Peer {
  rpmp::OpContext recv;
  bool posted = false;   // `recv` is with the provider
  bool arrived = false;  // ... and has completed: a reply of `length` bytes is in the inbox
  size_t length = 0;
  std::unique_ptr<HostilePeer> p;

  explicit Peer(const std::string& address) : p(std::make_unique<HostilePeer>(address)) {}
  bool ok() const { return p != nullptr && p->fabric != nullptr; }
  char* inbox() { return p->mem.data() + wire::kMaxFrame; }
  // Records completions of `recv`; true when `want` completed (its status in *st).
  bool Take(rpmp::Completion* c, int n, const rpmp::OpContext* want, bool* st) {
    bool hit = false;
    for (int i = 0; i < n; i++) {
      if (c[i].ctx == &recv) {
        posted = false;
        arrived = c[i].status.ok();
        length = c[i].length;
      } else if (c[i].ctx == want) {
        hit = true;
        *st = c[i].status.ok();
      }
    }
    return hit;
  }
};

struct World {
  std::unique_ptr<rpmp::Store> store;
  std::unique_ptr<rpmp::Server> server;
  std::string address;
  std::unique_ptr<Peer> attacker;
  std::unique_ptr<Peer> bystander;  // a second connected peer whose address gets claimed
  // Frames the server should have received once every frame sent so far has arrived
  // (its request counter); a wait for a reply ends early once the server has them all.
  uint64_t expected_frames = 0;
  std::unique_ptr<rpmp::fuzz::HonestClient> honest;  // kept across inputs (fast check)
  uint64_t inputs = 0;
};

uint64_t FramesReceived(World& w) { return w.server->counters().requests.load(std::memory_order_relaxed); }

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
  std::string own = w.attacker->p->fabric->LocalAddress();
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
    default: return w.bystander->p->fabric->LocalAddress();
  }
}

// Sends a frame and, when `wait_ms` > 0, takes one reply (the first to arrive, maybe a
// late one to an earlier frame: fine for a fuzzer) within that time. A send that does
// not complete within 3 s tears the endpoint down (its context is on this stack).
bool Send(World& w, Peer& peer, const std::string& frame, int wait_ms, wire::Response* resp) {
  if (!peer.ok()) return false;
  HostilePeer& p = *peer.p;
  if (peer.arrived) peer.arrived = false;  // an earlier step's late reply: dropped
  if (!peer.posted) {
    if (!p.fabric->PostRecv(&peer.recv, peer.inbox(), wire::kMaxFrame, p.mr->desc()).ok()) return false;
    peer.posted = true;
  }
  rpmp::OpContext send;
  std::memcpy(p.mem.data(), frame.data(), frame.size());
  if (!p.fabric->Send(&send, p.server, p.mem.data(), frame.size(), p.mr->desc()).ok()) return false;
  w.expected_frames = std::max(w.expected_frames, FramesReceived(w)) + 1;
  rpmp::Completion c[8];
  bool sent = false, sent_ok = false;
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(3);
  while (!sent && std::chrono::steady_clock::now() < until) sent = peer.Take(c, p.fabric->Wait(c, 8, 1), &send, &sent_ok);
  if (!sent) {
    peer.p.reset();  // `send` must not outlive this call; the caller makes a new peer
    return false;
  }
  if (!sent_ok || wait_ms == 0) return false;
  auto now = std::chrono::steady_clock::now();
  until = now + std::chrono::milliseconds(wait_ms);
  auto all_in = until;  // when the server had every frame, plus the grace
  while (!peer.arrived && now < until && now < all_in) {
    peer.Take(c, p.fabric->Wait(c, 8, 1), nullptr, &sent_ok);
    now = std::chrono::steady_clock::now();
    if (all_in == until && FramesReceived(w) >= w.expected_frames) all_in = now + kReplyGrace;
  }
  // A frame that never reached the server (frames from an address the server has just
  // removed, e.g. after withdrawing a HELLO that named this endpoint, are lost on the
  // way): count from what the server has.
  if (now >= until) w.expected_frames = FramesReceived(w);
  if (!peer.arrived) return false;  // the receive stays posted for a later reply
  peer.arrived = false;
  return wire::DecodeResponse(peer.inbox(), peer.length, resp).ok();
}

// The honest challenge-response, through Send (no Catch assertions here).
void OpenSession(World& w, Peer& peer) {
  HostilePeer& p = *peer.p;
  std::string address = p.fabric->LocalAddress(), client_nonce = rpmp::auth::RandomNonce();
  wire::Request r;
  r.h.op = wire::Op::kHello;
  r.h.flags = wire::kFlagAuth;
  r.fabric_address = address;
  r.client_name = "fuzz-bystander";
  r.client_nonce = client_nonce;
  wire::Response resp;
  if (!Send(w, peer, p.Encode(r), 3000, &resp) || resp.challenge.empty()) return;
  std::string server_nonce(resp.challenge);
  std::string proof = rpmp::auth::ClientProof(kSecret, server_nonce, client_nonce, address);
  r.server_nonce = server_nonce;
  r.proof = proof;
  if (Send(w, peer, p.Encode(r), 3000, &resp) && resp.h.status == 0 && peer.ok()) {
    p.session = resp.session;
    p.tag = resp.h.session_tag;
  }
}

void RunStep(Reader& in, World& w, std::string* challenge) {
  Peer& pa = *w.attacker;
  HostilePeer& a = *pa.p;
  wire::Request r;
  wire::Response resp;
  switch (in.Byte() % 7) {
    case 0: {  // HELLO step 1 claiming some address, sometimes a boot probe (or half of one)
      static const uint16_t extra[] = {0, 0, wire::kFlagBoot | wire::kFlagProbe, wire::kFlagBoot,
                                       wire::kFlagProbe};
      std::string address = PickAddress(in, w);
      bool auth = in.Byte() % 4 != 0;
      std::string frame = a.HelloClaiming(address, auth, extra[in.Byte() % 5]);
      if (Send(w, pa, frame, in.Byte() % 2 ? kReplyWaitMs : 0, &resp) && !resp.challenge.empty()) *challenge = resp.challenge;
      return;
    }
    case 1: {  // HELLO step 2: right or wrong proof, fresh or replayed or made-up nonce
      // wire::Request holds views: the bytes live in these strings.
      std::string address = in.Byte() % 4 ? a.fabric->LocalAddress() : PickAddress(in, w);
      std::string client_nonce = rpmp::auth::RandomNonce();
      std::string server_nonce = in.Byte() % 4 ? *challenge : in.Bytes(in.Byte() % 40);
      std::string key = in.Byte() % 3 ? std::string(kSecret) : "wrong-secret-0123456789";
      // Sometimes a tenant: a token's public part (live or expired, any prefix bytes),
      // proved with its MAC or with the wrong key; or junk in the token field.
      std::string token;
      uint8_t tk = in.Byte() % 4;
      if (tk == 1 || tk == 2) {
        int64_t expiry = rpmp::tenant::NowUnix() + (tk == 1 ? 3600 : -3600);
        std::string prefix = in.Byte() % 2 ? std::string("fuzz/") : in.Bytes(1 + in.Byte() % 8);
        token = rpmp::tenant::PublicPart({prefix, "fuzz", expiry, {}});
        if (in.Byte() % 3) key = rpmp::tenant::Mac(rpmp::tenant::DeriveKey(kSecret), prefix, "fuzz", expiry);
      } else if (tk == 3) {
        token = in.Bytes(in.Byte() % 64);
      }
      std::string proof = rpmp::auth::ClientProof(key, server_nonce, client_nonce, address);
      r.h.op = wire::Op::kHello;
      r.h.flags = wire::kFlagAuth;
      if (!token.empty()) {
        r.h.flags |= wire::kFlagToken;
        r.token = token;
      }
      r.fabric_address = address;
      r.client_name = "fuzz";
      r.client_nonce = client_nonce;
      r.server_nonce = server_nonce;
      r.proof = proof;
      if (Send(w, pa, a.Encode(r), kReplyWaitMs, &resp) && resp.h.status == 0 && resp.session != 0 && pa.ok()) {
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
      bool answered = Send(w, pa, frame, in.Byte() % 2 ? kReplyWaitMs : 0, &resp);
      if (answered && pa.ok() && r.h.op == wire::Op::kBye && resp.h.status == 0) a.session = 0;
      return;
    }
    case 4: {  // raw bytes, sometimes behind a valid magic
      std::string frame = in.Bytes(1 + in.Byte() % 64);
      if (in.Byte() % 2 && frame.size() >= 4) std::memcpy(frame.data(), &wire::kMagic, 4);
      Send(w, pa, frame, 0, &resp);
      return;
    }
    case 5: {  // a burst of step-1 HELLOs to closed ports
      int k = 1 + in.Byte() % 32;
      for (int i = 0; i < k && pa.ok(); i++)
        Send(w, pa, a.HelloClaiming(InetAddress("127.0.0.1", static_cast<uint16_t>(1 + in.Byte()))), 0, &resp);
      return;
    }
    default:  // a new attacker endpoint (the old one's connection goes away); one in 8
      // (an endpoint costs more than the rest of an input), else a legacy HELLO
      if (in.Byte() % 8 == 0) {
        w.attacker = std::make_unique<Peer>(w.address);
      } else {
        Send(w, pa, a.HelloClaiming(PickAddress(in, w), false), kReplyWaitMs, &resp);
      }
      return;
  }
}

void ExpectHonestClientServed(World& w) {
  std::string why;
  bool fresh = w.inputs++ % kFreshEvery == 0 || w.honest == nullptr;
  if (!fresh && !w.honest->Served(kHonestBound, &why)) {
    std::fprintf(stderr, "session_fuzz: the kept honest client failed (%s); trying a fresh one\n", why.c_str());
    fresh = true;
  }
  if (fresh) {
    w.honest = rpmp::fuzz::HonestClient::Connect(w.address, kSecret, kHonestBound, &why);
    if (w.honest == nullptr || !w.honest->Served(kHonestBound, &why)) {
      std::fprintf(stderr, "session_fuzz: an honest client was not served within %lld s: %s\n",
                   static_cast<long long>(kHonestBound.count()), why.c_str());
      std::abort();
    }
  }
  w.expected_frames = FramesReceived(w);  // the honest client's frames are all in
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  World& w = TheWorld();
  if (w.bystander == nullptr || !w.bystander->ok()) {  // a connected peer: its address is in the server's AV
    w.bystander = std::make_unique<Peer>(w.address);
    OpenSession(w, *w.bystander);
  }
  if (w.attacker == nullptr || !w.attacker->ok()) w.attacker = std::make_unique<Peer>(w.address);
  Reader in{data, std::min<size_t>(size, 4096)};
  std::string challenge;
  for (int steps = 0; in.n > 0 && steps < 32; steps++) {
    RunStep(in, w, &challenge);
    if (!w.attacker->ok()) w.attacker = std::make_unique<Peer>(w.address);
    if (!w.bystander->ok()) {
      w.bystander = std::make_unique<Peer>(w.address);
      OpenSession(w, *w.bystander);
    }
  }
  ExpectHonestClientServed(w);
  return 0;
}
