// ClientImpl: the Client of rpmp/client.h over one Connection per server data shard
// (docs/sharding.md; one when the server has one shard): each calling thread keeps to
// one of them, so one thread's calls stay in order. Builds requests,
// chooses inline or RMA transfer, verifies checksums, and turns responses into
// results. Internal to client-cpp (callers use rpmp::Client).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "client-cpp/src/call_latch.h"
#include "link/connection.h"
#include "client-cpp/src/helper_threads.h"
#include "client-cpp/src/write_ids.h"
#include "rpmp/client.h"

namespace rpmp {

// The request op of a put or an append.
inline wire::Op OpOf(WriteKind kind) {
  return kind == WriteKind::kPut ? wire::Op::kPut : wire::Op::kAppend;
}

// A response that owns a copy of its inline bytes (the frame is reused after `done`).
struct CallResult {
  Status status;
  wire::Response resp;
  std::string inline_copy;
  CallLatch done;  // set once the fields above are final
};

class ClientImpl : public Client {
 public:
  // The connections to data shards beyond the primary, and whether the primary's shard
  // (0) is among those that carry calls.
  struct ShardConnections {
    std::vector<std::unique_ptr<Connection>> extra;
    bool primary_carries_calls = true;
  };
  ClientImpl(std::unique_ptr<Connection> conn, ShardConnections shards, const ClientOptions& options);
  // Opens the connections to the data shards the primary's HELLO named (up to
  // options.connections; see ClientOptions). When there are more shards than
  // connections, the client takes a window of consecutive shards that starts at a random
  // one, so that many clients spread over every shard instead of all crowding the first
  // few. A shard that cannot be reached is left out (logged): its share of the calls
  // goes to the others.
  // What a Connection of this client's takes from its options (the link layer knows
  // nothing of ClientOptions).
  static LinkOptions LinkOptionsFor(const ClientOptions& options);
  static ShardConnections OpenShards(Connection* primary, const ClientOptions& options);

  StatusOr<Buffer> AllocBuffer(size_t size) override;
  Status Put(const std::string& ns, const std::string& key, const void* data, size_t len,
             uint64_t tag) override;
  Status Append(const std::string& ns, const std::string& key, const void* data, size_t len,
                uint64_t tag) override;
  StatusOr<std::string> Get(const std::string& ns, const std::string& key) override;
  Status Get(const std::string& ns, const std::string& key, Buffer* out) override;
  StatusOr<ObjectMeta> GetMeta(const std::string& ns, const std::string& key) override;
  StatusOr<ObjectMeta> GetMetaOfTags(const std::string& ns, const std::string& key,
                                     const std::vector<uint64_t>& tags) override;
  Status ReadRecord(const RecordRef& r, Buffer* dst, size_t dst_offset) override;
  Status Delete(const std::string& ns, const std::string& key) override;
  StatusOr<std::vector<KeyInfo>> List(const std::string& ns, const std::string& start_after,
                                      size_t max) override;
  Status DeleteNamespace(const std::string& ns) override;
  StatusOr<ServerStats> Stat() override;

  void PutAsync(const std::string& ns, const std::string& key, const Buffer& buf, uint64_t tag,
                Callback done) override;
  void AppendAsync(const std::string& ns, const std::string& key, const Buffer& buf, uint64_t tag,
                   Callback done) override;
  void GetAsync(const std::string& ns, const std::string& key, Buffer* out, Callback done) override;
  void ReadRecordAsync(const RecordRef& r, Buffer* dst, size_t dst_offset, Callback done) override;

  StatusOr<GlobalAddress> Alloc(uint64_t size) override;
  Status Free(const GlobalAddress& addr) override;
  Status Write(const GlobalAddress& addr, const void* data, size_t len) override;
  Status Read(const GlobalAddress& addr, void* dst, size_t len) override;

  uint64_t NodeId() const override { return conn_->node_id(); }
  const std::string& ServerAddress() const override { return conn_->server(); }

  // Forms with an explicit write id, for ClusterClient (which mints its own ids and
  // must resend the same id to every server it tries). `id` must be valid.
  Status WriteWithId(WriteKind kind, const std::string& ns, const std::string& key,
                     const void* data, size_t len, uint64_t tag, WriteId id);
  Status DeleteWithId(const std::string& ns, const std::string& key, WriteId id);
  void WriteAsyncWithId(WriteKind kind, const std::string& ns, const std::string& key,
                        const Buffer& buf, uint64_t tag, WriteId id, Callback done);
  uint64_t writer() const { return ids_.writer(); }
  Connection::SessionCounts session_counts() const;

  // Which failed calls may be sent again (the retry rule, see Call).
  enum class Repeat {
    kRead,       // reads: again after the session was lost (Unavailable)
    kWrite,      // puts/appends/deletes with a write id: also after a timeout
    kIfNotSent,  // anything else: only when the request provably never left
  };
  // True when a call of class `repeat` that ended with `st` may be sent again;
  // `sent` is false when the request provably never left this client.
  static bool MayRetry(Repeat repeat, const Status& st, bool sent, bool session_lost);

 private:
  // Sends req and waits for its response. On a failure that may have lost the session
  // (the server went away: Unavailable), opens a new session and sends again while
  // MayRetry allows it, for up to max(options.retry_for, min_retry_for) (at least once).
  Status Call(wire::Request& req, std::shared_ptr<CallResult>* out, Repeat repeat,
              std::shared_ptr<void> keepalive = nullptr,
              std::chrono::milliseconds min_retry_for = std::chrono::milliseconds(0));
  // GetMeta and GetMetaOfTags: pages through (ns, key)'s records, filtered by `tags` on
  // the server when not empty; each ref carries its origin and index (compaction's
  // refetch). Retries a lost session for at least min_retry_for.
  StatusOr<ObjectMeta> ListRecords(const std::string& ns, const std::string& key,
                                   const std::vector<uint64_t>& tags,
                                   std::chrono::milliseconds min_retry_for);
  // Puts `data` inline in *req when small, else copies it into a registered buffer
  // (*staged, kept alive by the call) and names that buffer as the RMA source.
  Status AttachPayload(wire::Request* req, const void* data, size_t len,
                       std::shared_ptr<Buffer>* staged);
  Status WriteSync(wire::Op op, const std::string& ns, const std::string& key, const void* data,
                   size_t len, uint64_t tag, WriteId id);
  void WriteAsync(wire::Op op, const std::string& ns, const std::string& key, const Buffer& buf,
                  uint64_t tag, WriteId id, Callback done);
  // ReadRecordAsync's attempt `attempt` (0 = the caller's ref); on a stale location
  // it refetches the metadata on a helper thread (never on the progress thread).
  void ReadRecordAttempt(const RecordRef& r, Buffer* dst, size_t dst_offset, Callback done,
                         int attempt);
  void RereadMoved(const RecordRef& r, Buffer* dst, size_t dst_offset, Callback done, int attempt);
  // GetAsync's attempt `attempt`: on a helper thread when the session must be
  // re-established first; sent again when refused because the session ended.
  void SubmitGet(const std::string& ns, const std::string& key, Buffer* out, Callback done,
                 int attempt);
  void SubmitGetNow(const std::string& ns, const std::string& key, Buffer* out, Callback done,
                    int attempt);
  // WriteAsync's submission; `attempt` 1 resends it on a new session after the server
  // refused it (session ended, so it did not run).
  struct AsyncWrite;
  void SubmitWrite(const std::shared_ptr<AsyncWrite>& w, int attempt);
  Status CheckNode(const GlobalAddress& addr) const;
  // Waits for `done`: driving the fabric on this thread while `polling` leads, or first
  // polling it for options.poll_for (the reply is then handled here, not handed over by
  // the progress thread), then ends `polling` (taken before the submission) and sleeps.
  void Await(CallLatch& done, Connection::PollingScope* polling);
  // How a blocking call waits for its reply: spinning (options.poll_for), leading the
  // queue (options.caller_waits), or asleep on its latch.
  Connection::PollingScope::Mode WaitMode() const;

  // The calling thread's connection: one of lanes_, by a per-thread index plus this
  // client's random first_lane_ (so that processes with fewer threads than lanes do not
  // all use the same first few shards).
  Connection* Pick() const;

  std::unique_ptr<Connection> conn_;  // to the address given (data shard 0)
  std::vector<std::unique_ptr<Connection>> shards_;  // to other shards (closed before conn_)
  std::vector<Connection*> lanes_;  // those that carry calls: conn_ and/or shards_; never empty
  uint32_t first_lane_ = 0;         // random, set once lanes_ is
  ClientOptions options_;
  WriteIdMinter ids_;
  HelperThreads helpers_;  // last: waited for before conn_ goes
};

// Verifies per-record checksums of a concatenated object in [data, data+len).
Status VerifyRecords(const wire::Response& resp, const char* data, size_t len);

}  // namespace rpmp
