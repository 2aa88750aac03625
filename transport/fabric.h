// Fabric: one libfabric reliable-datagram endpoint (FI_EP_RDM, FI_MSG | FI_RMA) with
// its domain, address vector and completion queue. It is RPMP's whole transport
// contract: register memory, post receives, send, RMA read/write, poll completions.
//
// Setup (Open, Register, InsertPeer) lives in fabric_setup.cc; the fast path (posting
// and polling) in fabric_datapath.cc. Provider quirks come from providers.h.
//
// Threads: all methods are safe to call concurrently (the domain is opened
// FI_THREAD_SAFE). Operations the provider cannot take right now (FI_EAGAIN) are
// queued and retried by Poll(), in order per peer (a stalled peer holds up only its
// own operations), so posting never fails for lack of resources.
// Completions are reported through the OpContext the caller passed in; that context
// must stay alive until its completion is polled.
// Who calls it: server/ and client-cpp/ only.
#pragma once

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>

#include <cstdint>
#include <atomic>
#include <deque>
#include <thread>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/status.h"
#include "transport/providers.h"

namespace rpmp {

struct FabricOptions {
  std::string provider = kAutoProvider;  // or a row of transport/providers.cc
  std::string node;     // local address to bind; empty = let the provider choose
  std::string service;  // local port to listen on; empty = ephemeral
};

using PeerAddr = fi_addr_t;

// What a peer may do to a registered region (docs/security.md). Local use (sends,
// receives, the local side of RMA this endpoint posts) is always allowed.
enum class MrAccess : uint8_t {
  kLocalOnly,        // no peer may touch it (server request slots)
  kRemoteRead,       // peers may RMA-read it, never write (server pools)
  kRemoteReadWrite,  // peers may RMA-read and -write it (client buffers)
};

enum class OpKind : uint8_t { kSend, kRecv, kRead, kWrite };

// Callers embed this as the FIRST member of their per-operation context.
struct OpContext {
  fi_context2 fi;  // owned by libfabric while the operation is in flight
  OpKind kind = OpKind::kSend;
};

struct Completion {
  OpContext* ctx = nullptr;
  size_t length = 0;  // bytes received (receives)
  // Receives: the sender, when the provider reports sources (Fabric::reports_source)
  // and the sender is in the address vector; FI_ADDR_NOTAVAIL otherwise.
  PeerAddr src = FI_ADDR_NOTAVAIL;
  Status status;      // not OK when the operation failed (peer gone, access error)
};

class Fabric;

// A registered memory range. RmaAddr() gives the address a peer must use for RMA
// into it (virtual address or offset, as the provider wants). A region that peers may
// access, registered on a Fabric whose siblings have domains of their own, is also
// registered in each of those domains under the same key (copies_), for as long as both
// live: closing the region revokes the key everywhere.
class MemoryRegion {
 public:
  ~MemoryRegion();
  MemoryRegion(const MemoryRegion&) = delete;
  MemoryRegion& operator=(const MemoryRegion&) = delete;

  void* desc() const { return desc_; }
  uint64_t key() const { return key_; }
  char* base() const { return base_; }
  size_t length() const { return len_; }
  bool Contains(const void* p, size_t n) const {
    const char* c = static_cast<const char*>(p);
    return c >= base_ && n <= len_ && static_cast<size_t>(c - base_) <= len_ - n;
  }
  uint64_t RmaAddr(const void* p) const {
    uint64_t off = static_cast<uint64_t>(static_cast<const char*>(p) - base_);
    return virt_addr_ ? reinterpret_cast<uint64_t>(base_) + off : off;
  }

 private:
  friend class Fabric;
  MemoryRegion() = default;
  struct Copy {
    const Fabric* domain_of;  // an own-domain sibling of owner_
    fid_mr* mr;
  };
  Fabric* owner_ = nullptr;  // set while owner_->remote_regions_ lists this region
  std::vector<Copy> copies_;  // under owner_->siblings_mu_
  fid_mr* mr_ = nullptr;
  void* desc_ = nullptr;
  uint64_t key_ = 0;
  char* base_ = nullptr;
  size_t len_ = 0;
  uint64_t access_ = 0;  // fi_mr_reg access bits
  bool virt_addr_ = false;
};

class Fabric {
 public:
  // Opens the provider and an endpoint; with options.service set, the endpoint
  // listens on node:service. InvalidArgument for an unknown provider, Unavailable
  // when the provider or address cannot be had (the message says which).
  static StatusOr<std::unique_ptr<Fabric>> Open(const FabricOptions& options);
  // A sibling endpoint of this Fabric, with its own completion queue, on this
  // endpoint's host and `port` ("0": ephemeral). Usually it shares the domain and the
  // address vector: memory registered here is usable on it, and a PeerAddr names the
  // same peer on both. Where the provider progresses a domain's endpoints under one lock
  // (ProviderTraits::sibling_own_domain) it opens a domain and an address vector of its
  // own: regions peers may access that are registered here are registered there too,
  // under the same key, and its PeerAddrs are its own (docs/sharding.md). Memory a
  // sibling itself registers is usable on it only. Unimplemented when the provider binds
  // registrations to one endpoint (FI_MR_ENDPOINT) or addresses are not sockaddrs. This
  // Fabric must outlive the sibling; call on the Fabric that Open returned, never on a
  // sibling.
  StatusOr<std::unique_ptr<Fabric>> OpenSibling(uint16_t port);
  // True for a sibling with a domain and an address vector of its own.
  bool own_domain() const { return own_domain_; }
  // The Fabric whose address vector this endpoint uses: itself, or the parent whose AV
  // a sibling shares. A PeerAddr is meaningful only within one AV owner.
  Fabric* AvOwner() { return parent_ != nullptr && !own_domain_ ? parent_ : this; }
  ~Fabric();
  Fabric(const Fabric&) = delete;
  Fabric& operator=(const Fabric&) = delete;

  // Registers [base, base+len) for local use and the remote access `access` allows,
  // under a key of its own: random where the provider takes requested keys, the
  // provider's otherwise (FI_MR_PROV_KEY). Closing the region revokes the key. A region
  // with remote access registered on a parent is valid on its own-domain siblings too.
  StatusOr<std::unique_ptr<MemoryRegion>> Register(void* base, size_t len,
                                                   MrAccess access = MrAccess::kRemoteReadWrite);
  // This endpoint's address, to hand to peers (opaque bytes).
  std::string LocalAddress() const;
  // "127.0.0.1:7000" of this endpoint, for logs.
  std::string LocalAddressString() const;
  // `address` checked and in canonical form (transport/peer_address.h); InvalidArgument
  // for bytes that must never reach the address vector.
  StatusOr<std::string> CanonicalPeer(std::string_view address) const;
  // Makes a peer addressable from its address bytes (checked by CanonicalPeer first).
  StatusOr<PeerAddr> InsertPeer(std::string_view address);
  // Makes a peer addressable from host and port (resolved by the provider).
  StatusOr<PeerAddr> InsertPeer(const std::string& host, const std::string& port);
  // Removes a peer; operations still queued for it (never posted), here or on a
  // sibling, complete with an error through Poll.
  void RemovePeer(PeerAddr peer);

  Status PostRecv(OpContext* ctx, void* buf, size_t len, void* desc);
  Status Send(OpContext* ctx, PeerAddr peer, const void* buf, size_t len, void* desc);
  // A send that is never queued: ResourceExhausted (nothing posted, no completion)
  // when the provider cannot take it at once. With connection-based providers
  // (tcp;ofi_rxm) that is the case for an address with no connection yet, which is
  // how the server avoids connecting to an address a HELLO merely claims.
  Status SendNow(OpContext* ctx, PeerAddr peer, const void* buf, size_t len, void* desc);
  // RMA read of the peer's [raddr, raddr+len) under rkey into local buf.
  Status Read(OpContext* ctx, PeerAddr peer, void* buf, size_t len, void* desc, uint64_t raddr,
              uint64_t rkey);
  // RMA write of local buf into the peer's [raddr, raddr+len).
  Status Write(OpContext* ctx, PeerAddr peer, const void* buf, size_t len, void* desc,
               uint64_t raddr, uint64_t rkey);

  // Takes back an operation still waiting in this Fabric's queue (the provider said
  // FI_EAGAIN and it was never posted): true when it was there; its context is free
  // again and no completion will come. False when the provider owns it (or it ended).
  bool CancelDeferred(OpContext* ctx);

  // Drives progress and returns up to `max` completions (0 when none) without blocking.
  int Poll(Completion* out, int max);
  // Like Poll, but blocks up to timeout_ms for the first completion when the provider
  // has a wait object; otherwise polls for that long. One thread should do all the
  // waiting (the progress thread): posts from other threads wake it, because with
  // manual-progress providers an operation moves only while someone drives the CQ.
  // `idle_expected`: the caller just handled what the queue held and waits for something
  // new (a leading caller's reply): the first check then also clears the wait signal
  // instead of reading the queue once more before it (one system call fewer per sleep).
  int Wait(Completion* out, int max, int timeout_ms, bool idle_expected = false);

  const ProviderTraits& traits() const { return *traits_; }
  const fi_info* info() const { return info_; }
  bool needs_local_desc() const { return (mr_mode_ & FI_MR_LOCAL) != 0; }
  // True when receive completions name their sender (FI_SOURCE): docs/security.md.
  bool reports_source() const { return source_; }

 private:
  friend class MemoryRegion;  // ~MemoryRegion calls ForgetRegion
  Fabric() = default;
  Status OpenResources(const FabricOptions& options);
  Status OpenEndpoint();  // CQ and endpoint in domain_, bound to av_ (Open, OpenSibling)
  struct Deferred {
    OpKind kind;
    OpContext* ctx;
    PeerAddr peer;
    void* buf;
    size_t len;
    void* desc;
    uint64_t raddr, rkey;
  };
  ssize_t Post(const Deferred& d);
  // Fails the operations queued for `peer` (RemovePeer).
  void FailDeferred(PeerAddr peer);
  uint64_t RandomKey() const;  // nonzero, of the domain's key size
  // fi_mr_reg of [base, base+len) in this endpoint's domain under `key` (0: the
  // provider's choice), bound to the endpoint where the provider wants that.
  int RegisterIn(void* base, size_t len, uint64_t access, uint64_t key, fid_mr** mr);
  // Whether this (parent) Fabric's siblings open domains of their own: the one rule both
  // OpenSibling and Register follow.
  bool SiblingsOwnDomains() const;
  // An own-domain sibling OpenSibling made: registers every region of remote_regions_ in it.
  Status CopyRegionsTo(Fabric* sibling);
  // ~MemoryRegion of a region in remote_regions_: its copies closed, the region forgotten.
  void ForgetRegion(MemoryRegion* r);
  Status PostOrDefer(const Deferred& d);
  void RetryDeferred();
  int ReadCq(Completion* out, int max);
  // Interrupts a Wait() in progress on another thread, so it drives what was posted.
  void WakeIfNotWaiter();

  const ProviderTraits* traits_ = nullptr;
  fi_info* info_ = nullptr;
  // A sibling borrows fabric_ (and, unless own_domain_, domain_ and av_) from parent_,
  // and closes only its own.
  Fabric* parent_ = nullptr;
  bool own_domain_ = false;
  std::mutex siblings_mu_;  // guards siblings_, remote_regions_ and their copies_
  std::vector<Fabric*> siblings_;  // open siblings of this (parent) Fabric
  // Regions with remote access registered on this (parent) Fabric while it may have
  // own-domain siblings: each is registered in every such sibling's domain too.
  std::vector<MemoryRegion*> remote_regions_;
  fid_fabric* fabric_ = nullptr;
  fid_domain* domain_ = nullptr;
  fid_av* av_ = nullptr;
  fid_cq* cq_ = nullptr;
  fid_wait* wait_set_ = nullptr;  // the CQ's, where traits_->own_wait_set
  fid_ep* ep_ = nullptr;
  uint64_t mr_mode_ = 0;
  bool source_ = false;
  int local_family_ = 0;  // sa_family of this endpoint's own address (sockaddr formats)
  int wait_fd_ = -1;
  int event_fd_ = -1;                      // kicks the waiting thread
  std::atomic<std::thread::id> waiter_{};  // the thread that calls Wait()
  // Posts by other threads, and whether the waiter is (about to be) asleep in poll(2):
  // a post kicks event_fd_ only then, so posting costs no syscall while the waiter is
  // busy, and none is missed (both sides use sequentially consistent order).
  std::atomic<uint64_t> posts_{0};
  std::atomic<bool> in_poll_{false};
  std::mutex mu_;  // guards deferred_, deferred_per_peer_ and failed_
  std::deque<Deferred> deferred_;  // in posting order; order is kept per peer
  std::unordered_map<PeerAddr, uint32_t> deferred_per_peer_;  // entries of deferred_ by peer
  std::deque<Completion> failed_;  // deferred posts the provider refused
};

// "fi_getinfo: No data available (-61)" style text for a libfabric return code.
std::string FabricError(const char* call, int ret);

}  // namespace rpmp
