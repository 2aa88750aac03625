// RawPeer: a hand-driven fabric peer for attack tests. It speaks the wire protocol
// frame by frame (any session id, any op, any RMA reference) and can post one-sided
// RMA at the server's memory, so a test can try what a hostile client would.
// Tests only; one thread per RawPeer.
#pragma once

#include <catch2/catch.hpp>
#include <chrono>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/auth.h"
#include "common/crc32c.h"
#include "common/wire.h"
#include "transport/fabric.h"

namespace rpmp::testing {

struct RawPeer {
  std::unique_ptr<Fabric> fabric;
  std::unique_ptr<MemoryRegion> mr;
  std::vector<char> mem = std::vector<char>(4 * wire::kMaxFrame + (1 << 20));
  PeerAddr server = 0;
  uint32_t session = 0;
  uint64_t tag = 0;

  explicit RawPeer(const std::string& address) {
    FabricOptions o;
    o.node = "127.0.0.1";
    fabric = std::move(Fabric::Open(o)).value();
    mr = std::move(fabric->Register(mem.data(), mem.size())).value();
    size_t colon = address.rfind(':');
    server = *fabric->InsertPeer(address.substr(0, colon), address.substr(colon + 1));
  }
  bool Fabric_ok() const { return fabric != nullptr; }
  // Bulk area (1 MiB) for RMA, after the frame buffers.
  char* bulk() { return mem.data() + 4 * wire::kMaxFrame; }

  // Sends `frame` and waits up to `ms` for a reply frame; false when none came.
  bool Exchange(const std::string& frame, wire::Response* resp, int ms = 3000) {
    OpContext recv, send;
    char* in = mem.data() + wire::kMaxFrame;
    REQUIRE(fabric->PostRecv(&recv, in, wire::kMaxFrame, mr->desc()).ok());
    std::memcpy(mem.data(), frame.data(), frame.size());
    REQUIRE(fabric->Send(&send, server, mem.data(), frame.size(), mr->desc()).ok());
    auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
    Completion c[4];
    while (std::chrono::steady_clock::now() < until) {
      int n = fabric->Poll(c, 4);
      for (int i = 0; i < n; i++)
        if (c[i].ctx == &recv) return wire::DecodeResponse(in, c[i].length, resp).ok();
    }
    // No reply: leave the fabric (and its posted receive) for the next peer instance.
    fabric.reset();
    return false;
  }

  // Posts a one-sided RMA at the server and waits for its completion. Returns the
  // completion's status, or DeadlineExceeded when none came within `ms`.
  Status Rma(bool write, uint64_t raddr, uint64_t rkey, size_t len, int ms = 5000) {
    OpContext op;
    Status st = write ? fabric->Write(&op, server, bulk(), len, mr->desc(), raddr, rkey)
                      : fabric->Read(&op, server, bulk(), len, mr->desc(), raddr, rkey);
    if (!st.ok()) return st;
    auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
    Completion c[4];
    while (std::chrono::steady_clock::now() < until) {
      int n = fabric->Poll(c, 4);
      for (int i = 0; i < n; i++)
        if (c[i].ctx == &op) return c[i].status;
    }
    fabric.reset();  // the operation may still be owned by the provider
    return Status(StatusCode::kDeadlineExceeded, "no RMA completion");
  }

  // A put of `value` carried inline in the frame, with its CRC. The views stay those of
  // the arguments: keep them alive until the request is encoded.
  static wire::Request InlinePut(std::string_view ns, std::string_view key, std::string_view value) {
    wire::Request put;
    put.h.op = wire::Op::kPut;
    put.h.flags = wire::kFlagInline;
    put.ns = ns;
    put.key = key;
    put.inline_data = value;
    put.length = value.size();
    put.crc = Crc32c(value.data(), value.size());
    return put;
  }

  std::string Encode(wire::Request r) {
    r.h.session = session;
    r.h.session_tag = tag;
    std::string buf(wire::kMaxFrame, '\0');
    buf.resize(wire::EncodeRequest(r, buf.data(), buf.size()));
    return buf;
  }

  // Opens a session like librpmp does (challenge-response when the server asks for
  // one, with `secret` as the proof's key). With `token`, the HELLO carries it (a tenant
  // token's public part, or anything) and `secret` is the key to prove with.
  // Returns the final reply; session/tag are set when it is OK. `flags` are added to the
  // HELLO's (wire::kFlagShards: the reply lists the server's data shards).
  wire::Response Hello(const std::string& secret = "", const std::string& token = "", uint16_t flags = 0) {
    wire::Request r;
    r.h.op = wire::Op::kHello;
    r.h.flags = wire::kFlagAuth | flags;
    if (!token.empty()) {
      r.h.flags |= wire::kFlagToken;
      r.token = token;
    }
    std::string addr = fabric->LocalAddress();
    std::string cn = auth::RandomNonce();
    r.fabric_address = addr;
    r.client_name = "raw-peer";
    r.client_nonce = cn;
    wire::Response resp;
    REQUIRE(Exchange(Encode(r), &resp));
    std::string challenge = resp.challenge, proof;
    if (resp.h.status == 0 && !challenge.empty()) {
      proof = auth::ClientProof(secret, challenge, cn, addr);
      r.server_nonce = challenge;
      r.proof = proof;
      REQUIRE(Exchange(Encode(r), &resp));
    }
    if (resp.h.status == 0) {
      session = resp.session;
      tag = resp.h.session_tag;
    }
    return resp;
  }
  // A HELLO of a pre-tag client (no kFlagAuth).
  wire::Response LegacyHello() {
    wire::Request r;
    r.h.op = wire::Op::kHello;
    std::string addr = fabric->LocalAddress();
    r.fabric_address = addr;
    r.client_name = "raw-peer";
    wire::Response resp;
    REQUIRE(Exchange(Encode(r), &resp));
    if (resp.h.status == 0) session = resp.session;
    return resp;
  }
  // STAT on the session: true when it answers OK.
  bool Serves() {
    wire::Request r;
    r.h.op = wire::Op::kStat;
    wire::Response resp;
    return Exchange(Encode(r), &resp) && resp.h.status == 0;
  }
};

}  // namespace rpmp::testing
