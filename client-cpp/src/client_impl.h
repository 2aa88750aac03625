// ClientImpl: the Client of rpmp/client.h over one Connection. Builds requests,
// chooses inline or RMA transfer, verifies checksums, and turns responses into
// results. Internal to client-cpp (callers use rpmp::Client).
#pragma once

#include <memory>
#include <string>

#include "client-cpp/src/connection.h"
#include "rpmp/client.h"

namespace rpmp {

// A response that owns a copy of its inline bytes (the frame is reused after `done`).
struct CallResult {
  Status status;
  wire::Response resp;
  std::string inline_copy;
};

class ClientImpl : public Client {
 public:
  ClientImpl(std::unique_ptr<Connection> conn, const ClientOptions& options)
      : conn_(std::move(conn)), options_(options) {}

  StatusOr<Buffer> AllocBuffer(size_t size) override;
  Status Put(const std::string& ns, const std::string& key, const void* data, size_t len,
             uint64_t tag) override;
  Status Append(const std::string& ns, const std::string& key, const void* data, size_t len,
                uint64_t tag) override;
  StatusOr<std::string> Get(const std::string& ns, const std::string& key) override;
  Status Get(const std::string& ns, const std::string& key, Buffer* out) override;
  StatusOr<ObjectMeta> GetMeta(const std::string& ns, const std::string& key) override;
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

 private:
  // Sends req and waits for its response. Retries once on a fresh session when the
  // request provably did not reach the server and `idempotent` allows it.
  Status Call(wire::Request& req, std::shared_ptr<CallResult>* out, bool idempotent,
              std::shared_ptr<void> keepalive = nullptr);
  Status WriteSync(wire::Op op, const std::string& ns, const std::string& key, const void* data,
                   size_t len, uint64_t tag);
  void WriteAsync(wire::Op op, const std::string& ns, const std::string& key, const Buffer& buf,
                  uint64_t tag, Callback done);
  void SubmitGet(const std::string& ns, const std::string& key, Buffer* out, Callback done,
                 int attempt);
  Status CheckNode(const GlobalAddress& addr) const;

  std::unique_ptr<Connection> conn_;
  ClientOptions options_;
};

// Verifies per-record checksums of a concatenated object in [data, data+len).
Status VerifyRecords(const wire::Response& resp, const char* data, size_t len);

}  // namespace rpmp
