// Slot: the state of one request inside the server, from the receive that brought it
// to the send of its reply. Slots are preallocated (one per receive buffer) and reused,
// so the fast path allocates nothing. Internal to server/.
#pragma once

#include <string>
#include <chrono>
#include <vector>

#include "common/wire.h"
#include "server/store/store.h"
#include "transport/fabric.h"

namespace rpmp {

struct Slot;
struct Shard;

// An OpContext that knows its slot (libfabric hands back only the context pointer).
struct SlotOp {
  OpContext op;
  Slot* slot = nullptr;
};

struct Slot {
  Shard* shard = nullptr;        // the shard whose endpoint received it (server/shard.h)
  Fabric* fabric = nullptr;      // that shard's endpoint: replies and RMA go through it
  SlotOp recv_op, send_op;
  std::vector<SlotOp> rma_ops;  // capacity kept across requests
  char* recv_buf = nullptr;
  char* send_buf = nullptr;
  void* desc = nullptr;          // of recv_buf and send_buf
  PeerAddr peer = 0;
  bool has_peer = false;
  wire::Request req;
  wire::Response resp;
  Reservation reservation;       // put/append by RMA
  ObjectView view;               // get: pins records while they are written out
  char* raw = nullptr;           // raw write/read target
  bool raw_pinned = false;       // raw_at is pinned in Server::raw_owners_ until recycled
  RawAddress raw_at;
  uint32_t counted_session = 0;  // its in-flight count includes this request
  std::string tenant;            // raw ops: the session's tenant prefix ("" = unrestricted)
  std::string peer_hold;         // an AV reference (by address, in fabric's AV) kept until the reply is sent
  // A HELLO being answered (counted in Server::hello_guard_): its reply is withdrawn
  // at hello_deadline if the provider has not taken it (Server::ExpireHellos).
  // Progress thread only (HELLO slots never reach a commit thread); Clear() leaves it
  // alone, ReleaseSessionHold resets it.
  bool hello_pending = false;
  // Its address had no AV entry before this HELLO: the reply goes out only if the
  // provider can send it at once (over the connection the HELLO came by), never by
  // opening a connection to the claimed address (Server::Reply).
  bool hello_unverified = false;
  std::chrono::steady_clock::time_point hello_deadline;
  size_t rma_pending = 0;
  Status rma_status;
  // When the slot's RMA in flight is abandoned (Server::WatchRma / ExpireRma); max()
  // when none is. Progress thread only, so Clear() (which may run on a commit thread)
  // leaves it alone: OnRmaDone and AbandonRma reset it.
  std::chrono::steady_clock::time_point rma_deadline = std::chrono::steady_clock::time_point::max();
  // An abandoned transfer (its RMA outlived rma_timeout): a heap copy holding the
  // provider's contexts and the memory they point at until the RMA really ends.
  bool abandoned = false;
  std::chrono::steady_clock::time_point started;  // arrival (set only with metrics on)

  void Clear() {
    has_peer = false;
    req = wire::Request();
    resp = wire::Response();
    reservation.Reset();
    view = ObjectView();
    raw = nullptr;
    raw_pinned = false;
    counted_session = 0;
    tenant.clear();
    peer_hold.clear();
    rma_pending = 0;
    rma_status = Status::Ok();
  }
};

}  // namespace rpmp
