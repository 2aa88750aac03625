// Connection: a session with one rpmp-server, librpmp's (ClientImpl, ClusterClient)
// or a primary server's with a replica (ReplicaLink). Owns the fabric endpoint, the
// registered buffer pool, the table of requests in flight (call slots) and the
// progress thread that completes them. Submit() encodes a request at once and calls
// `done` on the progress thread with the decoded response (or with the error that
// ended it: DeadlineExceeded after the timeout, Unavailable when the server is gone).
//
// Thread-safe: any thread may Submit. `done` must not block. Who calls it: link/ and
// client-cpp/ (the layer above both: docs/architecture.md); never the public API.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/config_util.h"
#include "common/wire.h"
#include "link/buffer_pool.h"
#include "transport/fabric.h"

namespace rpmp {

using ResponseFn = std::function<void(const Status&, const wire::Response&)>;

// What a Connection needs to know; librpmp fills it from its ClientOptions, the
// replica link from ReplicaLinkOptions.
struct LinkOptions {
  std::string provider = "auto";         // libfabric provider, or "auto"
  std::chrono::milliseconds timeout{30000};  // per call (and per one-sided read)
  std::string name = "rpmp-client";       // shows in server logs (HELLO)
  size_t buffer_cache_bytes = 256u << 20; // registered memory kept for reuse
  uint32_t max_inflight = 64;             // call slots (at most what the server advertises)
  // The cluster secret for HELLO (docs/security.md); empty: $RPMP_SECRET_FILE, if set.
  std::string secret;
  // A tenant token (docs/security.md "Tenants"), used before the secret; empty:
  // $RPMP_TOKEN_FILE, if set and no secret is given.
  std::string tenant_token;
  // Ask the first HELLO to name the server's data shards (shard_addresses()).
  bool ask_shards = true;
  // The deadline of the HELLOs that open the connection's first session; 0: timeout.
  // Connection::Open sets it while it finds out which provider the server serves.
  std::chrono::milliseconds first_hello_timeout{0};
};

class Connection {
 public:
  // Opens a session on the provider the server serves (provider_agreement.cc): with
  // options.provider "auto", the fastest this host offers, else whichever the server
  // answers on (its HELLO reply names it); with a named provider the server does not
  // answer on, fails naming both when another provider reaches it.
  static StatusOr<std::unique_ptr<Connection>> Open(const std::string& server,
                                                    const LinkOptions& options);
  // Opens a session over exactly options.provider ("auto" resolved here).
  static StatusOr<std::unique_ptr<Connection>> OpenOn(const std::string& server,
                                                      const LinkOptions& options);
  // A connection to `primary`'s server's data shard at fabric address `shard_address`
  // (from shard_addresses()), on a sibling endpoint of primary's: it shares primary's
  // buffer pool and memory registrations, and has a session of its own. `primary` must
  // outlive it.
  static StatusOr<std::unique_ptr<Connection>> OpenShard(Connection* primary,
                                                         const std::string& shard_address,
                                                         uint32_t shard);
  // The fabric addresses of the server's data shards as its first HELLO named them
  // (shard 0 first); empty when the server has one or predates shards.
  const std::vector<std::string>& shard_addresses() const { return shard_addresses_; }
  ~Connection();

  class PollingScope;  // below

  // Sends `req` (its header's op/flags set by the caller; ids filled in here).
  // `keepalive` is held until the server can no longer touch the request's buffers:
  // released before `done` when the call ends with a response, else (timeout, server
  // gone) kept in a quarantine for the connection's life. Returns false when the
  // request provably never left this client (no free slot, encoding or local send
  // failure; `done` has then been called already), true when it may have been sent.
  // `polling`, when given, begins once the request holds a call slot.
  bool Submit(wire::Request& req, ResponseFn done, std::shared_ptr<void> keepalive = nullptr,
              PollingScope* polling = nullptr);
  // One-sided RMA read of the server's memory into `dst` (registered in `region`).
  // `done` gets DeadlineExceeded when the read has not completed within the timeout;
  // `keepalive` is then kept for the connection's life (the read may still land).
  void ReadRemote(uint64_t raddr, uint64_t rkey, char* dst, size_t len, const MemoryRegion& region,
                  std::function<void(Status)> done, std::shared_ptr<void> keepalive = nullptr);

  // Starts a new session when the last one is or may be lost (the server refused it
  // with kFlagSessionEnded, restarted or did not answer); a no-op otherwise. Among
  // concurrent callers exactly one sends the HELLO, the others wait for its outcome.
  // The old session is closed (BYE) first unless the server said it ended. Call from a
  // caller thread, never from `done`.
  Status EnsureSession();
  bool needs_hello() const { return needs_hello_.load(); }

  // Session events of this connection (ClusterCounters, logs).
  struct SessionCounts {
    uint64_t opened = 0;          // sessions opened (HELLOs that succeeded), the first included
    uint64_t reestablished = 0;   // of them, replacing a lost session
    uint64_t refused = 0;         // replies saying the session ended (kFlagSessionEnded)
  };
  SessionCounts session_counts() const {
    return {opened_.load(), reestablished_.load(), refused_.load()};
  }

  BufferPool& buffers() { return *pool_; }
  // Handles the completions waiting on the queue on the calling thread (any thread may;
  // the progress thread does the same). Returns how many it handled.
  int PollOnce();
  // A synchronous caller that takes its own reply off the completion queue holds a
  // PollingScope, in one of two ways:
  // - kSpin (ClientOptions::poll_for): it polls the queue without sleeping;
  // - kLead (the default): it drives the queue as the progress thread would, sleeping in
  //   the fabric's Wait, when no other thread drives it (DriveUntil). Only one thread
  //   drives the queue's blocking Wait at a time: the progress thread or one leading
  //   caller; a caller that finds it taken waits on its own latch, as before.
  // From Begin() until End(), the progress thread stays off the completion queue and
  // Submit does not wake it, so a request costs no progress-thread wake-up on this side
  // (docs/benchmarks.md, "The caller waits on the fabric"). Submit(..., scope) begins it
  // once the request holds a call slot, never before: a caller blocked waiting for a
  // slot does not poll, and holding the queue then would leave the calls that must free
  // a slot without anyone to complete them. End() (or the destructor) hands the queue
  // back, and wakes the progress thread when calls are still in flight.
  class PollingScope {
   public:
    enum class Mode { kOff, kSpin, kLead };
    PollingScope(Connection* c, Mode mode) : c_(mode == Mode::kOff ? nullptr : c), mode_(mode) {}
    ~PollingScope() { End(); }
    PollingScope(const PollingScope&) = delete;
    PollingScope& operator=(const PollingScope&) = delete;
    void Begin();
    void End();
    // Whether this scope drives the queue's blocking Wait (kLead, begun, and no other
    // thread drove it): the caller then waits with DriveUntil.
    bool leading() const { return begun_ && mode_ == Mode::kLead; }
    Mode mode() const { return mode_; }
   private:
    Connection* c_;
    Mode mode_;
    bool begun_ = false;
    bool nested_ = false;  // this thread already drives the queue (a callback's own call)
  };
  // Handles completions on the calling thread, sleeping in the fabric's Wait between
  // them, until `done()` is true. Only for the thread whose PollingScope is leading().
  void DriveUntil(const std::function<bool()>& done);
  // Whether the calling thread is this connection's progress thread: a completion
  // callback running there.
  bool OnProgressThread() const { return progress_id_.load() == std::this_thread::get_id(); }
  // For a blocking call made from a completion callback on the progress thread (against
  // the contract: `done` must not block). Nobody else would drive the queue or enforce
  // deadlines while the progress thread waits, so it does the progress loop's work
  // itself until `done()`: completions, deadlines, and on close the failing of what is
  // left. Progress thread only.
  void ProgressUntil(const std::function<bool()>& done);
  uint64_t node_id() const { return node_id_; }
  // The provider this connection runs on, and the one the server's HELLO reply named
  // ("" from servers that predate the field).
  const char* provider() const { return fabric_->traits().name; }
  const std::string& server_provider() const { return server_provider_; }
  size_t max_inline() const { return max_inline_; }
  const std::string& server() const { return server_; }
  // This connection's fabric address, as its HELLO names it.
  std::string local_address() const { return fabric_->LocalAddress(); }
  std::chrono::milliseconds timeout() const { return options_.timeout; }

 private:
  struct Call;
  struct RecvSlot;
  struct ReadOp;
  Connection(const std::string& server, const LinkOptions& options);
  Status Setup();
  // Frames, call slots and receives on fabric_ (Setup, OpenShard).
  Status SetupFrames();
  Status Hello();
  Status HelloKey(std::string* key, std::string* token) const;
  // Starts the progress thread, then says HELLO under hello_mu_ (OpenOn, OpenShard).
  Status StartProgressAndHello();
  // BYE for the current session, waiting at most a second for the answer (hello_mu_ held
  // or the destructor): the server frees it instead of keeping it until it expires.
  void SayBye();
  // One HELLO exchange (connection_hello.cc).
  StatusOr<wire::Response> HelloStep(wire::Request& req);
  // The server's data shard addresses now, from a probe HELLO to its listen address
  // (opens no session); empty when the server does not name them. Caller threads only.
  StatusOr<std::vector<std::string>> ProbeShards();
  // A shard connection about to open a new session: a restarted server listens on new
  // shard ports, so ask the primary where this shard is now and move there. hello_mu_ held.
  void RepointShard();
  void ProgressLoop();
  void ProgressRound(std::chrono::milliseconds nap, const std::function<bool()>& woken);
  void FailAllInFlight();
  void OnCompletion(const Completion& c);
  void OnResponse(RecvSlot* r, size_t len, PeerAddr src);
  void ExpireCalls();
  void ExpireReads(std::chrono::steady_clock::time_point now);
  // Answers call c once (a later Finish of it does nothing). With `gen` (a reply's
  // generation), only if c still carries that request: a reply handled on one thread
  // must not finish the next request another thread put into the same slot.
  // `server_answered`: `st` is the server's reply, not a local failure (a send error, a
  // deadline, a refused port); only a local failure marks the session lost.
  void Finish(Call* c, const Status& st, const wire::Response& resp, int64_t gen = -1,
              bool server_answered = false);
  void MaybeFree(Call* c);
  // A free call slot holding `done` and `keepalive` (set under the lock, so a reply
  // to the slot's previous request can never see a half-set-up call); null on timeout.
  // A probe's never waits (null when none is free) and may use the slot past the window.
  // A `hello` call names no session (session and tag 0).
  Call* AcquireCall(ResponseFn* done, std::shared_ptr<void>* keepalive, bool probe, bool hello);
  // Encodes and sends `req` in call c (Submit, ProbeBoot).
  bool Send(Call* c, wire::Request& req);
  // Progress thread, for calls waiting long at a port that still accepts connections:
  // asks the server there for its boot id (wire.h kFlagProbe), at most one probe at a
  // time. When the id differs from the session's, the server restarted and will never
  // answer: the calls of that session end Unavailable at once instead of at their
  // deadline (and the session is marked lost). A server without boot ids is not asked.
  void ProbeBoot();
  // Ends every unanswered call sent in session `epoch` with `why` (buffers quarantined).
  void FailCallsOf(uint64_t epoch, const Status& why);
  // Ends each (call, generation) still unanswered with `why`, as unanswered calls end:
  // timed out, buffers quarantined (the server may have run them).
  void AbandonCalls(const std::vector<std::pair<Call*, uint32_t>>& calls, const Status& why);
  // True when the provider's endpoints are TCP listeners and the server's refuses.
  bool PeerIsGone() const;
  // The host and port of a data shard's fabric address (a socket address).
  static StatusOr<HostPort> ShardHostPort(const std::string& shard_address);
  static constexpr std::chrono::milliseconds kProbeAfter{1000};

  std::string server_;
  LinkOptions options_;
  std::unique_ptr<Fabric> fabric_;
  std::shared_ptr<BufferPool> pool_;  // shared with the shard connections (OpenShard)
  std::vector<std::string> shard_addresses_;  // set by the first HELLO only
  bool is_shard_ = false;                     // opened by OpenShard
  // A shard connection's primary (the server's listen address) and shard index, and the
  // fabric address it now sends to (RepointShard may move it after a server restart).
  Connection* primary_ = nullptr;
  uint32_t shard_index_ = 0;
  std::string shard_address_;
  std::atomic<PeerAddr> peer_{0};
  mutable std::mutex peer_host_mu_;  // guards peer_host_ (PeerIsGone reads it)
  HostPort peer_host_;
  std::chrono::steady_clock::time_point last_probe_{};  // progress thread only
  std::chrono::steady_clock::time_point last_expire_{};  // progress thread only
  uint64_t node_id_ = 0;
  std::string server_provider_;
  size_t max_inline_ = 0;
  // The session: id, 48-bit tag carried by every frame, and an epoch counting sessions
  // (a call remembers the epoch it was sent in: a failure of a call of an older session
  // says nothing about the current one). Written under mu_ by Hello, read under mu_.
  uint32_t session_ = 0;
  uint64_t session_tag_ = 0;
  uint64_t epoch_ = 0;
  std::atomic<bool> needs_hello_{false};
  std::atomic<bool> server_ended_{false};  // the server said the current session ended
  std::mutex hello_mu_;                    // one HELLO at a time (EnsureSession, Open)
  std::atomic<uint64_t> hello_tries_{0};   // EnsureSession's attempts
  Status last_hello_;                      // the last attempt's outcome (hello_mu_)
  uint64_t hello_failures_ = 0;            // attempts failed in a row (hello_mu_)
  std::atomic<uint64_t> opened_{0}, reestablished_{0}, refused_{0};
  std::atomic<uint64_t> boot_{0};       // the current session's server boot id (0: none given)
  std::atomic<bool> probing_{false};    // a boot probe is out

  std::vector<char> frame_memory_;  // send frames of calls, then receive frames
  std::unique_ptr<MemoryRegion> frame_mr_;
  std::vector<std::unique_ptr<Call>> calls_;
  std::vector<std::unique_ptr<RecvSlot>> recvs_;

  std::mutex mu_;  // guards the call table and quarantine_
  std::condition_variable free_cv_, work_cv_;
  std::vector<Call*> free_calls_;
  size_t active_ = 0;
  // Calls that may be in flight at once: the call table's size, or less when the
  // server advertised a lower max_inflight at HELLO (it drops frames past its limit).
  size_t window_ = 0;
  std::atomic<int> reads_in_flight_{0};
  std::atomic<int> pollers_{0};  // callers polling the queue themselves (PollingScope)
  // The thread in (or about to enter) the fabric's blocking Wait on this connection: the
  // progress thread, or a leading caller (PollingScope kLead); none when nobody drives.
  std::atomic<std::thread::id> driver_{};
  // Takes driving for this thread when nobody drives; false when another thread does.
  bool TryDrive() {
    std::thread::id none;
    return driver_.compare_exchange_strong(none, std::this_thread::get_id());
  }
  void StopDriving() { driver_.store(std::thread::id()); }
  std::vector<std::shared_ptr<void>> quarantine_;  // buffers of timed-out calls
  std::vector<ReadOp*> reads_;                     // one-sided reads in flight
  std::atomic<bool> stop_{false};
  std::thread progress_;
  std::atomic<std::thread::id> progress_id_{};  // set by the progress thread itself
};

}  // namespace rpmp
