// HostilePeer: a RawPeer (raw_peer.h) that also sends what no honest client sends and
// does not wait for answers: HELLOs claiming any address bytes (bad lengths and
// families, closed ports, someone else's address, junk padding), fired one after the
// other. Used by the unauthenticated-work attack tests (unauth_test.cc) and by the
// rpmp-hostile-peer flood tool (hostile_peer_main.cc). Tests only; one thread each.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>

#include <chrono>
#include <cstring>
#include <string>
#include <string_view>

#include "tests/raw_peer.h"

namespace rpmp::testing {

// The bytes of sockaddr_in ip:port, as a client's fabric address (tcp providers).
inline std::string InetAddress(const char* ip, uint16_t port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  inet_pton(AF_INET, ip, &a.sin_addr);
  return std::string(reinterpret_cast<const char*>(&a), sizeof(a));
}

struct HostilePeer : RawPeer {
  using RawPeer::RawPeer;

  // A HELLO claiming `address`: step 1 of the challenge-response (kFlagAuth, no
  // server nonce) when `auth`, a legacy HELLO otherwise.
  // `extra_flags`: e.g. wire::kFlagBoot | wire::kFlagProbe for a boot probe.
  std::string HelloClaiming(std::string_view address, bool auth = true, uint16_t extra_flags = 0) {
    std::string nonce = auth ? auth::RandomNonce() : "";  // wire::Request holds views
    wire::Request r;
    r.h.op = wire::Op::kHello;
    r.h.flags = static_cast<uint16_t>((auth ? wire::kFlagAuth : 0) | extra_flags);
    r.fabric_address = address;
    r.client_name = "hostile-peer";
    r.client_nonce = nonce;
    return Encode(r);
  }

  // Sends `frame` and waits only until the send is done (true), up to `ms`.
  bool Fire(const std::string& frame, int ms = 3000) {
    if (fabric == nullptr) return false;
    OpContext send;
    std::memcpy(mem.data(), frame.data(), frame.size());
    if (!fabric->Send(&send, server, mem.data(), frame.size(), mr->desc()).ok()) return false;
    auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
    Completion c[8];
    while (std::chrono::steady_clock::now() < until) {
      int n = fabric->Poll(c, 8);
      for (int i = 0; i < n; i++)
        if (c[i].ctx == &send) return c[i].status.ok();
    }
    fabric.reset();  // the send context must not outlive this call
    return false;
  }
};

}  // namespace rpmp::testing
