// rpmp-fabric-pingpong: the floor of RPMP's own transport for synchronous calls, the peer
// that bench/kv/transport_floor.sh prints beside Redis. One echo endpoint served by one
// thread (as one data shard of rpmp-server serves), and CLIENTS client endpoints in the
// same process, each driven by its own thread (as the YCSB threads of rpmp-kv-bench
// are): each client sends a REQUEST-byte message and waits for a REPLY-byte answer, for
// SECONDS. Every thread sleeps in transport/Fabric::Wait, as RPMP's progress threads and
// callers do by default, or spins on Fabric::Poll (--mode spin). No RPMP protocol, store
// or session: what is left of a call when RPMP itself costs nothing. Prints one line per
// mode:
//   peer=fabric_pingpong provider=P mode=sleep|spin clients=N request=R reply=S
//     round_trips_per_s=X p50_us=Y p99_us=Z
// A 4 KiB get through RPMP cannot beat this line on the same provider and machine.
//
//   rpmp-fabric-pingpong [--provider auto] [--clients 2] [--request 64] [--reply 4096]
//                        [--seconds 2] [--mode sleep,spin]
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "transport/fabric.h"

namespace {

using Clock = std::chrono::steady_clock;
using rpmp::Completion;
using rpmp::Fabric;
using rpmp::MemoryRegion;
using rpmp::OpContext;
using rpmp::OpKind;
using rpmp::PeerAddr;

constexpr int kSlots = 8;  // receives posted per endpoint

// One endpoint with its registered buffers: kSlots receive slots and one send buffer.
struct Endpoint {
  std::unique_ptr<Fabric> fabric;
  std::vector<char> memory;
  std::unique_ptr<MemoryRegion> mr;
  OpContext recv_ctx[kSlots];
  OpContext send_ctx;
  size_t slot_bytes = 0;
  char* RecvBuf(int i) { return memory.data() + static_cast<size_t>(i) * slot_bytes; }
  char* SendBuf() { return memory.data() + static_cast<size_t>(kSlots) * slot_bytes; }
  int SlotOf(const OpContext* c) const { return static_cast<int>(c - recv_ctx); }
};

bool Fail(const std::string& what, const rpmp::Status& st) {
  std::fprintf(stderr, "rpmp-fabric-pingpong: %s: %s\n", what.c_str(), st.ToString().c_str());
  return false;
}

bool OpenEndpoint(const std::string& provider, bool listen, size_t slot_bytes, Endpoint* ep) {
  rpmp::FabricOptions o;
  o.provider = provider;
  o.node = "127.0.0.1";
  if (listen) o.service = "0";
  auto f = Fabric::Open(o);
  if (!f.ok()) return Fail("cannot open provider " + provider, f.status());
  ep->fabric = std::move(f).value();
  ep->slot_bytes = slot_bytes;
  ep->memory.assign((kSlots + 1) * slot_bytes, 'x');
  auto mr = ep->fabric->Register(ep->memory.data(), ep->memory.size(), rpmp::MrAccess::kLocalOnly);
  if (!mr.ok()) return Fail("cannot register memory", mr.status());
  ep->mr = std::move(mr).value();
  ep->send_ctx.kind = OpKind::kSend;
  for (int i = 0; i < kSlots; i++) {
    ep->recv_ctx[i].kind = OpKind::kRecv;
    rpmp::Status st = ep->fabric->PostRecv(&ep->recv_ctx[i], ep->RecvBuf(i), slot_bytes, ep->mr->desc());
    if (!st.ok()) return Fail("cannot post a receive", st);
  }
  return true;
}

// Waits for completions (sleeping or spinning); returns how many.
// `idle_expected`: what the queue held was handled and the caller waits for a reply (as
// a leading caller of link/Connection::DriveUntil does).
int Next(Fabric* f, Completion* c, int max, bool spin, bool idle_expected = false) {
  return spin ? f->Poll(c, max) : f->Wait(c, max, 50, idle_expected);
}

// One mode's run; false when the fabric failed.
bool Run(const std::string& provider, int clients, size_t request, size_t reply, double seconds, bool spin) {
  const size_t slot = std::max(request, reply);
  Endpoint server;
  if (!OpenEndpoint(provider, true, slot, &server)) return false;
  std::vector<std::unique_ptr<Endpoint>> eps;
  std::vector<PeerAddr> client_addr;  // in the server's address vector, by client index
  std::vector<PeerAddr> server_addr;  // in each client's
  for (int i = 0; i < clients; i++) {
    eps.push_back(std::make_unique<Endpoint>());
    if (!OpenEndpoint(provider, true, slot, eps.back().get())) return false;
    auto a = server.fabric->InsertPeer(eps.back()->fabric->LocalAddress());
    auto b = eps.back()->fabric->InsertPeer(server.fabric->LocalAddress());
    if (!a.ok() || !b.ok()) return Fail("cannot insert a peer", a.ok() ? b.status() : a.status());
    client_addr.push_back(*a);
    server_addr.push_back(*b);
  }
  std::atomic<bool> stop{false};
  std::atomic<bool> failed{false};
  // The echo thread: each request names its client in its first 4 bytes, and the reply
  // goes back at once from that client's send context (a client has one call out at a
  // time). Every reply sends the same bytes.
  std::vector<OpContext> reply_ctx(clients);
  for (auto& r : reply_ctx) r.kind = OpKind::kSend;
  std::thread echo([&] {
    Completion c[16];
    while (!stop.load() && !failed.load()) {
      int n = Next(server.fabric.get(), c, 16, spin);
      for (int i = 0; i < n; i++) {
        if (!c[i].status.ok()) {
          failed = true;
          continue;
        }
        if (c[i].ctx->kind == OpKind::kSend) continue;
        int s = server.SlotOf(c[i].ctx);
        int who = -1;
        std::memcpy(&who, server.RecvBuf(s), sizeof(who));
        (void)server.fabric->PostRecv(c[i].ctx, server.RecvBuf(s), slot, server.mr->desc());
        if (who < 0 || who >= clients) continue;
        if (!server.fabric->Send(&reply_ctx[who], client_addr[who], server.SendBuf(), reply, server.mr->desc()).ok())
          failed = true;
      }
    }
  });
  std::vector<std::vector<double>> rtts(clients);
  std::vector<double> elapsed(clients, 0);
  std::vector<std::thread> callers;
  for (int i = 0; i < clients; i++) {
    callers.emplace_back([&, i] {
      Endpoint& ep = *eps[i];
      std::memcpy(ep.SendBuf(), &i, sizeof(i));
      Completion c[16];
      auto& rtt = rtts[i];
      rtt.reserve(1 << 20);
      const auto start = Clock::now();
      const auto end = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
      while (Clock::now() < end && !failed.load()) {
        auto t0 = Clock::now();
        if (!ep.fabric->Send(&ep.send_ctx, server_addr[i], ep.SendBuf(), request, ep.mr->desc()).ok()) {
          failed = true;
          break;
        }
        bool sent = false, answered = false, handled = false;
        while ((!sent || !answered) && !failed.load()) {
          int n = Next(ep.fabric.get(), c, 16, spin, handled);
          handled = true;
          for (int k = 0; k < n; k++) {
            if (!c[k].status.ok()) failed = true;
            else if (c[k].ctx->kind == OpKind::kSend) sent = true;
            else {
              answered = true;
              int s = ep.SlotOf(c[k].ctx);
              (void)ep.fabric->PostRecv(c[k].ctx, ep.RecvBuf(s), slot, ep.mr->desc());
            }
          }
          if (Clock::now() > end + std::chrono::seconds(5)) failed = true;  // a lost reply
        }
        rtt.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
      }
      elapsed[i] = std::chrono::duration<double>(Clock::now() - start).count();
    });
  }
  for (auto& t : callers) t.join();
  stop = true;
  echo.join();
  if (failed.load()) {
    std::fprintf(stderr, "rpmp-fabric-pingpong: an operation failed or a reply was lost (%s, %s)\n",
                 provider.c_str(), spin ? "spin" : "sleep");
    return false;
  }
  std::vector<double> all;
  double rate = 0;
  for (int i = 0; i < clients; i++) {
    all.insert(all.end(), rtts[i].begin(), rtts[i].end());
    if (elapsed[i] > 0) rate += rtts[i].size() / elapsed[i];
  }
  if (all.empty()) return Fail("no round trip completed", rpmp::Status::Internal(""));
  std::sort(all.begin(), all.end());
  std::printf("peer=fabric_pingpong provider=%s mode=%s clients=%d request=%zu reply=%zu "
              "round_trips_per_s=%.0f p50_us=%.1f p99_us=%.1f\n",
              server.fabric->traits().name, spin ? "spin" : "sleep", clients, request, reply, rate,
              all[all.size() / 2], all[std::min(all.size() - 1, all.size() * 99 / 100)]);
  std::fflush(stdout);
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  std::string provider = "auto", modes = "sleep,spin";
  int clients = 2;
  size_t request = 64, reply = 4096;
  double seconds = 2;
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    bool has_value = i + 1 < argc;
    if (a == "--provider" && has_value) provider = argv[++i];
    else if (a == "--clients" && has_value) clients = std::atoi(argv[++i]);
    else if (a == "--request" && has_value) request = std::strtoull(argv[++i], nullptr, 10);
    else if (a == "--reply" && has_value) reply = std::strtoull(argv[++i], nullptr, 10);
    else if (a == "--seconds" && has_value) seconds = std::strtod(argv[++i], nullptr);
    else if (a == "--mode" && has_value) modes = argv[++i];
    else {
      std::fprintf(stderr,
                   "usage: rpmp-fabric-pingpong [--provider auto] [--clients N] [--request BYTES] "
                   "[--reply BYTES] [--seconds S] [--mode sleep,spin]\n");
      return 2;
    }
  }
  if (clients < 1 || clients > 64 || request < sizeof(int) || reply == 0 || seconds <= 0) {
    std::fprintf(stderr, "rpmp-fabric-pingpong: --clients 1..64, --request >= 4, --reply and --seconds positive\n");
    return 2;
  }
  bool ok = true;
  for (const char* m : {"sleep", "spin"})
    if (modes.find(m) != std::string::npos) ok = Run(provider, clients, request, reply, seconds, std::strcmp(m, "spin") == 0) && ok;
  return ok ? 0 : 1;
}
