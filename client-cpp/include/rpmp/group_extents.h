// Split instead of fail, for C++ writers of a cluster (docs/cluster.md "Split instead of
// fail"): the one C++ implementation of the protocol the Spark plugin implements in
// Scala (GroupExtents.scala, ChunkAppender.scala). A placement group that cannot take an
// append for space continues in an extent, namespace <group>/x<k> (k = 1, 2, ...), which
// the proxy places on the nodes with the most room (nodemap.ExtentIDs).
//
// - Writers: GroupExtents::Append appends to the group's highest extent this object
//   knows; an append refused for space (IsNoSpace) moves on: to the highest extent that
//   exists above the refusing one (another writer split already), else, when as many
//   LIVE nodes as the group has copies have more free bytes than the record, to a new
//   extent created with the group's options (CreateNamespace is idempotent for equal
//   options, so writers that hit no-space together get the same x<k+1>), and appends the
//   same bytes there; at most kMaxMovesPerChunk moves per record.
// - Readers: ListExtents gives x1..xn (describe until the first unknown name); a group is
//   its base namespace then those extents, one ordered set. A refused replicated append
//   may have left its bytes in the namespace that refused it (the primary commits before
//   replicating), so a reader drops a record that repeats an earlier one of the same
//   group byte for byte (Spark: same seq, length and CRC). The record format is the
//   caller's, so that dropping is the caller's.
//
// One object stands for one process's writers (as one JVM's GroupExtents): it keeps the
// highest extent known per group. Thread-safe; the Client passed to each call must be a
// cluster client (AsCluster non-null) and is used by the calling thread only.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "rpmp/cluster.h"

namespace rpmp {

class GroupExtents {
 public:
  static constexpr int kMaxMovesPerChunk = 8;  // extents one record may move through
  static constexpr int kMaxExtents = 1000;     // bound on listing

  // Extent k of group (k = 0: the group namespace itself).
  static std::string ExtentName(const std::string& group, int k);
  // (group, k) of a namespace: "<group>/x<k>" with k >= 1 without leading zeros, else (ns, 0).
  static std::pair<std::string, int> Parse(const std::string& ns);
  // Whether a write's failure says the namespace's nodes have no room (the store's "no
  // pool can hold", its own or a required replica's as the primary reports it). Other
  // ResourceExhausted answers (session limits, a busy peer) are not space.
  static bool IsNoSpace(const Status& st);
  // The extents x1..xn of group that exist, in order. Errors of DescribeNamespace other
  // than NotFound are returned.
  static StatusOr<std::vector<std::string>> ListExtents(Client* cluster, const std::string& group);

  // What one Append did.
  struct Outcome {
    int extent = 0;            // the extent that acknowledged (or last refused) the record
    std::vector<int> refused;  // extents that refused it for space, in order
    int created = 0;           // extents this call created (0 or more)
  };

  // Where this object's writers append group's next records.
  std::string WriteNamespace(const std::string& group) const;
  // Appends (key, data) to group, splitting on no-space as above. Ok once one namespace
  // of the group acknowledged it; a refusal that is not for space as the Client returns
  // it; ResourceExhausted "no space in the RPMP cluster ..." when fewer than the group's
  // copies LIVE nodes have room, or "no space after moving through 8 extents".
  Status Append(Client* cluster, const std::string& group, const std::string& key, const void* data, size_t len,
                uint64_t tag, Outcome* out);
  // Extents this object created so far.
  uint64_t created() const;

 private:
  // Extent failed_k of group refused `needed` bytes (cause): the extent to use next.
  StatusOr<int> MoveOn(Client* cluster, const std::string& group, int failed_k, uint64_t needed,
                       const Status& cause, int* created);

  std::mutex move_mu_;  // one move at a time (held across proxy calls, as Scala's synchronized)
  mutable std::mutex mu_;  // guards the two below (never held across a call)
  std::map<std::string, int> current_;  // group -> highest extent known (absent: 0)
  uint64_t created_ = 0;
};

}  // namespace rpmp
