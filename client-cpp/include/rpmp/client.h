// librpmp: the C++ client of RPMP. The one implementation of the data-plane protocol;
// the Java client binds to it through JNI.
//
// A Client holds a connection to one rpmp-server (server-direct mode; the cluster
// mode through rpmp-proxy builds on the same calls). It owns a pool of memory
// registered with the fabric: values in a Buffer from AllocBuffer() move without any
// copy on the client; plain pointers are copied into such a buffer first (values up
// to max_inline travel inside the request frame instead).
//
// Every call has a blocking form returning Status, and an asynchronous form taking a
// callback (run on the client's progress thread, or on a thread of the same client
// waiting in a blocking call, which handles the completions it meets: keep it short,
// never block in it, never call a blocking Client method from it) or returning a
// std::future. Each call
// fails with DeadlineExceeded after ClientOptions::timeout. No exception leaves the
// library. A Client is thread-safe: any number of threads may issue calls at once.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <string>
#include <vector>

#include "rpmp/buffer.h"  // Buffer: registered memory of the client's pool
#include "rpmp/status.h"
#include "rpmp/write_kind.h"

namespace rpmp {

struct ClientOptions {
  std::string provider = "auto";          // libfabric provider; auto: verbs;ofi_rxm where
                                          // the host has RDMA, else tcp;ofi_rxm, else
                                          // whichever the server answers on
  std::chrono::milliseconds timeout{30000};
  std::string name = "rpmp-client";       // shows in server logs
  size_t buffer_cache_bytes = 256u << 20; // registered memory kept for reuse
  uint32_t max_inflight = 64;             // requests in flight on this connection (at most
                                          // what the server advertises at HELLO)
  bool verify_checksums = true;           // check CRC-32C of every record Get returns
  // The cluster secret for HELLO's challenge-response (docs/security.md). Empty: read
  // the file named by $RPMP_SECRET_FILE, if set. Never put it on a command line.
  std::string secret;
  // A tenant token (docs/security.md "Tenants"): "v1.PREFIX.APP.EXPIRY.MAC", as minted
  // by `rpmpctl token mint` or the proxy. When set it is used instead of the cluster
  // secret, and the server lets this client act only on namespaces under PREFIX. Only
  // its public part crosses the wire (the MAC is the key of the HELLO proof). Empty:
  // the file named by $RPMP_TOKEN_FILE when `secret` is empty too, else the secret.
  // The cluster client passes it to every connection it opens.
  std::string tenant_token;
  // How long a blocking call keeps retrying on a fresh session when the server went
  // away (Unavailable), e.g. across a restart. 0: one retry at once. Only calls that
  // are safe to repeat retry: reads, and puts/appends/deletes (they carry a write id,
  // so the server applies each at most once); others only when provably not sent.
  std::chrono::milliseconds retry_for{0};
  // A blocking call first polls the fabric on the caller's own thread for up to this
  // long before it sleeps: its reply is then taken off the completion queue by the
  // thread that waits for it, with no hand-off through the progress thread. For
  // latency-critical callers (it keeps a core busy while waiting). 0: sleep at once,
  // unless $RPMP_CLIENT_POLL_US sets a value (docs/benchmarks.md, key-value section).
  std::chrono::microseconds poll_for{0};
  // A blocking call that does not poll waits for its reply on the fabric itself (asleep
  // in the completion queue's wait, as the progress thread would) whenever no other
  // thread does, and so handles the reply on the thread that wants it: one thread
  // wake-up per call on this side instead of three (docs/benchmarks.md, "The caller
  // waits on the fabric"). Other calls' completions it meets are handled there too, as
  // the progress thread would. false: always hand replies over through the progress
  // thread. $RPMP_CLIENT_CALLER_WAITS (0 or 1), when set, overrides it.
  bool caller_waits = true;
  // Connections to the server's data shards (docs/sharding.md): the first goes to the
  // address given, which names the others in its HELLO reply; with fewer connections
  // than shards, calls use consecutive shards from a random first one, so that clients
  // spread over all of them. Each calling thread keeps to one connection, so its calls
  // stay in order. 0: one per shard, at most 4, unless $RPMP_CLIENT_CONNECTIONS sets a
  // number; 1: one connection. A number above the shards opens several connections per
  // shard (round the shards again), each with its own endpoint and session, so that
  // many calling threads share endpoints less (docs/sharding.md).
  uint32_t connections = 0;
};

// Where raw memory lives: stable across server restarts.
struct GlobalAddress {
  uint64_t node_id = 0;
  uint32_t pool = 0;
  uint64_t offset = 0;
  // "<node hex>:<pool>:<offset hex>"
  std::string ToString() const;
  static StatusOr<GlobalAddress> Parse(const std::string& s);
};

// Which object a RecordRef was listed from (shared by the refs of one GetMeta).
struct RecordOrigin {
  std::string ns, key;
};

// One record of an object, as listed by GetMeta: enough to read it one-sided.
// A location is not forever: the server's compaction may move the record (the old
// bytes stay readable for the server's grace period, see docs/storage-format.md
// "Compaction"). ReadRecord detects a stale location by the payload's CRC-32C and,
// for a ref that names its origin (every ref GetMeta returns), fetches the metadata
// again and reads the record from its new place.
struct RecordRef {
  uint64_t tag = 0;
  uint64_t length = 0;
  uint32_t crc = 0;      // CRC-32C of the payload
  uint32_t pool = 0;
  uint64_t rma_addr = 0;
  uint64_t rma_key = 0;
  uint64_t node_id = 0;  // cluster mode: the replica that listed it (0 = this server)
  std::shared_ptr<const RecordOrigin> origin;  // set by GetMeta; null for a hand-made ref
  uint32_t index = 0;    // place in the object's record list (with origin)
};

struct ObjectMeta {
  uint64_t total_length = 0;
  std::vector<RecordRef> records;  // in append order
};

struct KeyInfo {
  std::string key;
  uint64_t total_length = 0;
  uint32_t records = 0;
};

struct PoolInfo {
  std::string path, medium;
  uint64_t capacity = 0, used = 0, free = 0;
};

// Background compaction of a server (docs/operations.md "Space"). All zero when the
// server predates compaction statistics.
struct CompactionInfo {
  bool enabled = false;
  bool running = false;             // a pass is moving records right now
  uint64_t dead_bytes = 0;          // bytes of dead records still held by segments
  uint64_t segments = 0;            // segments emptied by compaction since start
  uint64_t records = 0, bytes = 0;  // records and bytes moved since start
  uint64_t steps = 0;               // steps that moved records
  uint64_t last_run_unix_ms = 0;    // end of the last such step; 0 = never
};

struct ServerStats {
  uint64_t node_id = 0, namespaces = 0, keys = 0, records = 0, live_bytes = 0;
  std::vector<PoolInfo> pools;
  CompactionInfo compaction;
};

using Callback = std::function<void(Status)>;

struct ClusterOptions;  // rpmp/cluster.h

class Client {
 public:
  // Connects to the rpmp-server at "host:port". Unavailable when it cannot be
  // reached within options.timeout.
  static StatusOr<std::unique_ptr<Client>> Connect(const std::string& server,
                                                   const ClientOptions& options = {});
  // Cluster mode (rpmp/cluster.h): talks to the cluster behind these proxies
  // ("host:port" each). InvalidArgument for an empty list; Unavailable when no proxy
  // answers within options.retry_for.
  static StatusOr<std::unique_ptr<Client>> ConnectCluster(const std::vector<std::string>& proxies,
                                                          const ClusterOptions& options);
  virtual ~Client() = default;

  // Registered memory of at least `size` bytes (size() set to 0).
  virtual StatusOr<Buffer> AllocBuffer(size_t size) = 0;
  // The same, for puts and appends to namespace `ns`. A cluster client keeps one
  // connection per server, and memory is registered with one of them: this memory
  // belongs to the connection of ns's primary, so writing it there moves no extra copy
  // (memory of another connection is copied once). Server-direct: AllocBuffer.
  virtual StatusOr<Buffer> AllocBufferForWrite(const std::string& ns, size_t size) {
    (void)ns;
    return AllocBuffer(size);
  }
  // The same, for a one-sided read of r (memory of the connection to r's node, when the
  // cluster client has one already). Server-direct: AllocBuffer.
  virtual StatusOr<Buffer> AllocBufferForRead(const RecordRef& r, size_t size) {
    (void)r;
    return AllocBuffer(size);
  }

  // --- key-value: blocking forms -------------------------------------------------
  // Replaces (ns, key) with one record.
  virtual Status Put(const std::string& ns, const std::string& key, const void* data, size_t len,
                     uint64_t tag = 0) = 0;
  // Adds one record at the end of (ns, key), creating it if needed.
  virtual Status Append(const std::string& ns, const std::string& key, const void* data,
                        size_t len, uint64_t tag) = 0;
  // All records of (ns, key), concatenated. NotFound when absent; DataLoss when a
  // checksum does not match.
  virtual StatusOr<std::string> Get(const std::string& ns, const std::string& key) = 0;
  // Same, into *out (grown from the pool if too small).
  virtual Status Get(const std::string& ns, const std::string& key, Buffer* out) = 0;
  virtual StatusOr<ObjectMeta> GetMeta(const std::string& ns, const std::string& key) = 0;
  // GetMeta listing only the records whose tag is one of `tags` (a reader that wants
  // some writers' records, e.g. a Spark map range), in append order; total_length is
  // still the whole object's. Empty `tags`: every record. The server filters, so the
  // listing costs what it returns, not the object's size (up to 4096 tags; more are
  // filtered here).
  virtual StatusOr<ObjectMeta> GetMetaOfTags(const std::string& ns, const std::string& key,
                                             const std::vector<uint64_t>& tags);
  // One-sided read of one record (from GetMeta) into dst (>= r.length bytes),
  // checksum always verified (whatever verify_checksums says: it is how a location
  // made stale by compaction is detected). A stale location of a ref with an origin
  // is handled here: the metadata is fetched again and the record (same index, tag,
  // length and CRC) read from its new place. Errors: DataLoss when the record no
  // longer exists (the key was overwritten or deleted since GetMeta); Aborted
  // ("moved, fetch the metadata again") for a stale ref without an origin.
  virtual Status ReadRecord(const RecordRef& r, Buffer* dst, size_t dst_offset = 0) = 0;
  // NotFound when absent.
  virtual Status Delete(const std::string& ns, const std::string& key) = 0;
  // Keys of ns after start_after (all of them when max is 0).
  virtual StatusOr<std::vector<KeyInfo>> List(const std::string& ns,
                                              const std::string& start_after = "",
                                              size_t max = 0) = 0;
  virtual Status DeleteNamespace(const std::string& ns) = 0;
  virtual StatusOr<ServerStats> Stat() = 0;

  // --- key-value: zero-copy and asynchronous forms ---------------------------------
  // buf.size() bytes of buf are stored; buf must stay untouched until `done` runs.
  virtual void PutAsync(const std::string& ns, const std::string& key, const Buffer& buf,
                        uint64_t tag, Callback done) = 0;
  virtual void AppendAsync(const std::string& ns, const std::string& key, const Buffer& buf,
                           uint64_t tag, Callback done) = 0;
  // Fills *out (which must stay alive until `done` runs); NeedsBuffer is handled
  // internally by growing *out from the pool.
  virtual void GetAsync(const std::string& ns, const std::string& key, Buffer* out,
                        Callback done) = 0;
  virtual void ReadRecordAsync(const RecordRef& r, Buffer* dst, size_t dst_offset,
                               Callback done) = 0;
  std::future<Status> PutFuture(const std::string& ns, const std::string& key, const Buffer& buf,
                                uint64_t tag = 0);
  std::future<Status> AppendFuture(const std::string& ns, const std::string& key,
                                   const Buffer& buf, uint64_t tag);
  std::future<Status> GetFuture(const std::string& ns, const std::string& key, Buffer* out);

  // --- raw memory ------------------------------------------------------------------
  virtual StatusOr<GlobalAddress> Alloc(uint64_t size) = 0;
  virtual Status Free(const GlobalAddress& addr) = 0;
  // [addr, addr+len) must lie inside one allocation: OutOfRange otherwise.
  virtual Status Write(const GlobalAddress& addr, const void* data, size_t len) = 0;
  virtual Status Read(const GlobalAddress& addr, void* dst, size_t len) = 0;

  virtual uint64_t NodeId() const = 0;
  virtual const std::string& ServerAddress() const = 0;
};

}  // namespace rpmp
