// Server: the data plane of one rpmp-server. Receives wire-protocol requests on a
// libfabric endpoint, runs them against a Store, moves bulk bytes by RMA straight
// between client buffers and the store's persistent memory, and replies.
//
// Threads: one progress thread per data shard (docs/sharding.md; config.data_threads)
// drives that shard's endpoint and runs every request that needs no persistence of
// bulk data; commit threads persist RMA-written payloads and reply;
// a Compactor thread compacts the store in the background (compactor.h).
// Requests in flight are bounded by the number of receive slots of each shard.
// Start/RequestShutdown/Wait may be called from any thread; RequestShutdown is safe
// from a signal handler's helper thread (it only sets a flag).
// Who calls it: server/main.cc and integration tests.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <random>
#include <thread>
#include <unordered_map>
#include <vector>

#include "common/wire.h"
#include "server/cluster/write_coordinator.h"
#include "server/compactor.h"
#include "server/config.h"
#include "server/raw_owners.h"
#include "server/segment_keys.h"
#include "server/hello_guard.h"
#include "server/shard.h"
#include "server/sessions.h"
#include "server/server_metrics.h"
#include "server/store/store.h"
#include "transport/fabric.h"

namespace rpmp {

class Server {
 public:
  // Opens the fabric endpoint on config.listen, registers the store's memory and
  // starts the threads. `store` must outlive the Server. In cluster mode client
  // writes and deletes go through `coordinator` (which must outlive the Server too).
  // With `metrics` (which must outlive the Server, and whose registry must not be
  // scraped after the Server is gone) every reply is counted and timed there.
  static StatusOr<std::unique_ptr<Server>> Start(const ServerConfig& config, Store* store,
                                                 WriteCoordinator* coordinator = nullptr,
                                                 ServerMetrics* metrics = nullptr);
  ~Server();

  // Stops taking new work, finishes what is in flight (up to the drain timeout), stops.
  void RequestShutdown();
  // Blocks until the server has stopped after RequestShutdown.
  void Wait();
  // Process exit only, after Wait(): this server's fabric (endpoint, completion queue,
  // domain) is left open for the OS to reclaim instead of being closed by the
  // destructor. Closing an rxm endpoint whose connections are still being torn down
  // can crash inside libfabric (seen here on SIGTERM; upstream: ofiwg/libfabric#6414,
  // #11828), and at exit closing gains nothing. Memory registrations still close.
  void LeaveFabricOpenAtExit();
  std::string ListenAddress() const { return fabric_->LocalAddressString(); }
  // "host:port" of every data shard's endpoint, shard 0 (ListenAddress) first.
  std::vector<std::string> ShardAddresses() const;

  struct Counters {
    std::atomic<uint64_t> requests{0}, errors{0}, malformed{0}, bytes_in{0}, bytes_out{0};
  };
  const Counters& counters() const { return counters_; }

 private:
  Server(const ServerConfig& config, Store* store);
  Status Setup();
  void RegisterMetrics();
  Status SetupShard(Shard* shard);
  static uint32_t DefaultDataThreads();  // data_threads 0: clamp(cores / 2, 1, 16)
  void ProgressLoop(Shard* shard);
  void CommitLoop();
  void OnCompletion(Shard* shard, const Completion& c);
  void OnRequest(Slot* s, size_t len, PeerAddr src);
  // session_check.cc: binds a decoded request to its session (id, tag, sender) and
  // enforces the per-session in-flight limit; false when the frame was refused.
  bool AdmitRequest(Slot* s, PeerAddr src);
  void ExpireSessions();
  // RMA deadlines (rma_deadline.cc): WatchRma after posting a slot's RMA; ExpireRma
  // abandons transfers past config_.rma_timeout (drops the session, frees the slot).
  void WatchRma(Slot* s);
  void ExpireRma(Shard* shard);
  void AbandonRma(Slot* s);
  void EndAbandoned(Slot* z);
  void ReleaseSessionHold(Slot* s);
  void EndSession(Slot* s, uint32_t id);  // s: the BYE being answered
  // Guards sessions_: the progress threads and, through Recycle and the RMA deadline,
  // commit threads reach it. Also guards a slot's in-flight count and HELLO AV reference.
  std::mutex sessions_mu_;
  void Dispatch(Slot* s);
  bool Draining() const { return shutdown_.load(std::memory_order_relaxed); }

  void HandleHello(Slot* s, PeerAddr src);  // session_check.cc
  // Refuses a frame AdmitRequest did not admit (sessions_mu_ held by *lock, released here).
  void RefuseFrame(Slot* s, PeerAddr src, Session* session, std::unique_lock<std::mutex>* lock);
  bool AdmitTenant(Slot* s, Session* session, std::unique_lock<std::mutex>* lock);
  // Withdraws HELLO replies the provider has not taken within hello_timeout, freeing
  // their slots and address entries (session_check.cc).
  void ExpireHellos(Shard* shard);
  // Makes room for one more HELLO reply: withdraws the oldest pending one the
  // provider has not taken (session_check.cc).
  void WithdrawOldestHello(Shard* shard);
  // handlers.cc
  void HandleWrite(Slot* s);
  void HandleGet(Slot* s);
  void HandleGetMeta(Slot* s);
  void HandleList(Slot* s);
  void HandleStat(Slot* s);
  void HandleRaw(Slot* s);
  void HandleSimple(Slot* s);
  void OnRmaDone(Slot* s, const Status& st);
  void FinishWrite(Slot* s);  // on a commit thread
  // Cluster mode: true when the request must go through coordinator_.
  bool Coordinated(const Slot* s) const;
  Status CheckFence(const Slot* s) const;
  Status CheckRead(const Slot* s) const;
  void CommitOrCoordinate(Slot* s);

  // Replies with the slot's response (status set by the caller) and recycles the slot
  // once the send completes.
  void Reply(Slot* s);
  void ReplyError(Slot* s, const Status& st);
  void Recycle(Slot* s);

  ServerConfig config_;
  Store* store_;
  WriteCoordinator* coordinator_ = nullptr;
  ServerMetrics* metrics_ = nullptr;
  std::atomic<size_t> session_count_{0};  // mirror of sessions_->size() for metrics
  std::unique_ptr<Fabric> fabric_;  // shard 0's endpoint; owns the domain and the AV
  // Whole pools, local access only: descriptors for the server's own RMA into and out
  // of PMem. Peers read only through segment_keys_ (one key per segment).
  std::vector<std::unique_ptr<MemoryRegion>> pool_mrs_;  // by pool index
  std::unique_ptr<SegmentKeys> segment_keys_;
  std::vector<std::unique_ptr<Shard>> shards_;  // the data shards (shard.h)
  std::unique_ptr<SessionTable> sessions_;  // under sessions_mu_ (sessions.h)
  std::string secret_;                      // the cluster secret; empty = none
  std::string tenant_key_;                  // K of tenant tokens, from secret_ (tenant_token.h)
  // This process's boot id (wire.h kFlagBoot): a client whose call waits long probes
  // whether the server at its address is still the process it sent the call to.
  uint64_t boot_ = 0;
  std::chrono::steady_clock::time_point next_expiry_{};  // shard 0's progress thread only
  RawOwners raw_owners_;  // who may touch which raw allocation (raw_handlers.cc)
  std::atomic<uint64_t> hellos_dropped_{0}, hellos_withdrawn_{0};
  std::atomic<uint64_t> rma_timeouts_{0};
  std::atomic<size_t> abandoned_count_{0};  // abandoned transfers of all shards, for metrics

  std::atomic<bool> shutdown_{false};
  std::atomic<int> busy_slots_{0};
  std::vector<std::thread> committers_;
  std::unique_ptr<Compactor> compactor_;  // background compaction (config.compaction_*)
  std::mutex commit_mu_;
  std::condition_variable commit_cv_;
  std::deque<Slot*> commit_queue_;
  bool commit_stop_ = false;
  Counters counters_;
};

}  // namespace rpmp
