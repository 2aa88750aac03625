// ReplicaLink: a primary rpmp-server's data-plane session with another member of a
// namespace's placement. It stores records there as replicas (wire flag
// kFlagReplica: the receiver does not replicate them further), deletes keys and
// whole namespaces. Calls are synchronous: the caller (one replication worker per
// namespace) sends records one at a time, so every replica commits them in the
// primary's order and records stay byte-identical across replicas.
//
// Who calls it: server/cluster/ (replication and repair). Thread-safe. Built on
// link/'s Connection like librpmp, but none of the client's API: server and client
// are siblings over link/ (docs/architecture.md).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "common/write_id.h"
#include "link/connection.h"

namespace rpmp {

// The sending primary's fence, carried by every replica frame (wire::kFlagFence).
struct ReplicaFence {
  uint64_t epoch = 0;    // namespace epoch the primary acts in
  uint64_t primary = 0;  // its node id
};

// What repair compares: a record's identity on a member (tag, length, CRC-32C).
struct ReplicaRecord {
  uint64_t tag = 0, length = 0;
  uint32_t crc = 0;
  bool operator==(const ReplicaRecord& o) const { return tag == o.tag && length == o.length && crc == o.crc; }
};

// A replica link's connection options: a Connection's, with the defaults of a server's
// link to another server (short calls, a small buffer cache, few slots).
struct ReplicaLinkOptions : LinkOptions {
  ReplicaLinkOptions() {
    timeout = std::chrono::milliseconds(2000);  // per call
    name = "rpmp-server replica link";
    buffer_cache_bytes = 64u << 20;
    max_inflight = 16;
  }
};

class ReplicaLink {
 public:
  static StatusOr<std::unique_ptr<ReplicaLink>> Open(const std::string& endpoint,
                                                     const ReplicaLinkOptions& options);
  ~ReplicaLink();

  // Stores one record: kPut replaces the key, kAppend adds to it. The payload is
  // copied once into registered memory when it is larger than the inline limit.
  // `id` (may be invalid) is the client's write id: the member stores it with the
  // record and answers a repeat with the first outcome.
  // install_id: a repair's copy (wire::kFlagInstallId); needs a valid id.
  Status Write(WriteKind kind, const std::string& ns, const std::string& key, uint64_t tag,
               const char* data, uint64_t len, uint32_t crc, const WriteId& id, const ReplicaFence& fence,
               bool install_id = false);
  // Removes a key; absent keys are fine.
  Status Delete(const std::string& ns, const std::string& key, const WriteId& id, const ReplicaFence& fence);
  // Removes a namespace; absent namespaces are fine.
  Status DeleteNamespace(const std::string& ns, const ReplicaFence& fence);
  // Every key of ns on the member (empty when the namespace is absent).
  StatusOr<std::vector<std::string>> ListKeys(const std::string& ns);
  // The records of one key on the member, in order (empty when absent).
  StatusOr<std::vector<ReplicaRecord>> Records(const std::string& ns, const std::string& key);

  uint64_t node_id() const;
  const std::string& endpoint() const { return endpoint_; }

 private:
  ReplicaLink(std::string endpoint, std::unique_ptr<Connection> conn);
  std::string endpoint_;
  std::unique_ptr<Connection> conn_;
};

}  // namespace rpmp
