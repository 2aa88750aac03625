// GroupExtents: split instead of fail for C++ writers (rpmp/group_extents.h).
#include "rpmp/group_extents.h"

#include <algorithm>
#include <cstdio>

#include "common/no_space.h"
#include "common/status.h"

namespace rpmp {

std::string GroupExtents::ExtentName(const std::string& group, int k) {
  return k == 0 ? group : group + "/x" + std::to_string(k);
}

std::pair<std::string, int> GroupExtents::Parse(const std::string& ns) {
  size_t slash = ns.rfind('/');
  if (slash != std::string::npos && slash > 0) {
    std::string last = ns.substr(slash + 1);
    bool digits = last.size() >= 2 && last.size() <= 5 && last[0] == 'x' && last[1] != '0';
    for (size_t i = 1; digits && i < last.size(); i++) digits = last[i] >= '0' && last[i] <= '9';
    if (digits) return {ns.substr(0, slash), std::stoi(last.substr(1))};
  }
  return {ns, 0};
}

bool GroupExtents::IsNoSpace(const Status& st) { return IsStoreNoSpace(st); }

StatusOr<std::vector<std::string>> GroupExtents::ListExtents(Client* cluster, const std::string& group) {
  ClusterControl* cc = AsCluster(cluster);
  if (cc == nullptr) return Status::InvalidArgument("extents need a cluster client");
  std::vector<std::string> out;
  for (int k = 1; k <= kMaxExtents; k++) {
    StatusOr<NamespaceInfo> info = cc->DescribeNamespace(ExtentName(group, k));
    if (info.status().IsNotFound()) break;
    if (!info.ok()) return info.status();
    out.push_back(ExtentName(group, k));
  }
  return out;
}

std::string GroupExtents::WriteNamespace(const std::string& group) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = current_.find(group);
  return ExtentName(group, it == current_.end() ? 0 : it->second);
}

uint64_t GroupExtents::created() const {
  std::lock_guard<std::mutex> lock(mu_);
  return created_;
}

Status GroupExtents::Append(Client* cluster, const std::string& group, const std::string& key, const void* data,
                            size_t len, uint64_t tag, Outcome* out) {
  *out = Outcome{};
  out->extent = Parse(WriteNamespace(group)).second;
  Status st = cluster->Append(ExtentName(group, out->extent), key, data, len, tag);
  for (int moves = 0; !st.ok() && IsNoSpace(st); moves++) {
    out->refused.push_back(out->extent);
    if (moves == kMaxMovesPerChunk)
      return Status::NoSpace("append to group " + group + ": no space after moving through " +
                             std::to_string(kMaxMovesPerChunk) + " extents; the last append said: " + st.message());
    StatusOr<int> next = MoveOn(cluster, group, out->extent, len, st, &out->created);
    if (!next.ok()) return next.status();
    out->extent = *next;
    // The same bytes again: a copy the refusing primary kept repeats this one exactly.
    st = cluster->Append(ExtentName(group, out->extent), key, data, len, tag);
  }
  return st;
}

StatusOr<int> GroupExtents::MoveOn(Client* cluster, const std::string& group, int failed_k, uint64_t needed,
                                   const Status& cause, int* created) {
  std::lock_guard<std::mutex> move(move_mu_);
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = current_.find(group);
    if (it != current_.end() && it->second > failed_k) return it->second;  // moved meanwhile
  }
  ClusterControl* cc = AsCluster(cluster);
  if (cc == nullptr) return Status::InvalidArgument("extents need a cluster client");
  int k = failed_k;
  while (k < kMaxExtents) {  // another process split already: the highest that exists
    StatusOr<NamespaceInfo> info = cc->DescribeNamespace(ExtentName(group, k + 1));
    if (info.status().IsNotFound()) break;
    if (!info.ok()) return info.status();
    k++;
  }
  if (k == failed_k) {
    if (k >= kMaxExtents) return Status::NoSpace("group " + group + " has " + std::to_string(k) + " extents");
    RPMP_ASSIGN_OR_RETURN(NamespaceInfo base, cc->DescribeNamespace(group));
    RPMP_ASSIGN_OR_RETURN(std::vector<NodeSpace> nodes, cc->LiveNodeSpace());
    uint32_t roomy = 0;
    std::string free;
    for (const NodeSpace& n : nodes) {
      roomy += n.free > needed;
      char line[96];
      std::snprintf(line, sizeof line, "%s%016llx %llu of %llu", free.empty() ? "" : ", ",
                    static_cast<unsigned long long>(n.node_id), static_cast<unsigned long long>(n.free),
                    static_cast<unsigned long long>(n.capacity));
      free += line;
    }
    if (roomy < base.options.replicas)
      return Status::NoSpace("no space in the RPMP cluster for group " + group + ": a record of " +
                             std::to_string(needed) + " bytes needs " + std::to_string(base.options.replicas) +
                             " node(s) with room, " + std::to_string(roomy) + " have it (free bytes per live node: " +
                             free + "); the last append said: " + cause.message());
    RPMP_RETURN_IF_ERROR(cc->CreateNamespace(ExtentName(group, k + 1), base.options).status());
    k++;
    (*created)++;
    std::lock_guard<std::mutex> lock(mu_);
    created_++;
  }
  std::lock_guard<std::mutex> lock(mu_);
  int& known = current_[group];
  known = std::max(known, k);
  return known;
}

}  // namespace rpmp
