// Reading a fault campaign's namespaces back once the cluster has recovered (campaign.cc
// polls Converged until it holds, then ToState feeds the checker in ledger.h). A
// namespace has converged when every member of its placement is LIVE and in sync and
// all copies are identical (with --split, but for appends that namespace did not
// acknowledge). Callers: tests/chaos/campaign.cc only.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "rpmp/client.h"
#include "tests/chaos/ledger.h"
#include "tests/cluster/cluster_harness.h"

namespace rpmp::chaos {

// Which namespaces a campaign wrote: `count` of them, named by `name`; with `split`,
// each is a group whose extents (GroupExtents) are read after it, in order.
struct CampaignNamespaces {
  int count = 0;
  bool split = false;
  std::function<std::string(uint32_t)> name;
};

// Reads every namespace of `cfg` (and its extents) into *parts, copy by copy; true when
// all have converged. Members left out for room (--split) are named in *degraded; the
// first reason for false is in *why. Reads everything it can even when it returns false.
bool Converged(testing::ClusterHarness& h, const CampaignNamespaces& cfg, const OpIndex& ops, Client* cluster,
               std::map<uint32_t, GroupParts>* parts, std::vector<std::string>* degraded, std::string* why);

// Folds what Converged read into the checker's state: each group with its extents as one
// ordered set (MergeGroup). Returns the refused appends' copies dropped, and adds the
// extents read to *extents.
uint64_t ToState(const std::map<uint32_t, GroupParts>& parts, const std::vector<std::vector<Op>>& logs,
                 StoredState* state, uint64_t* extents);

}  // namespace rpmp::chaos
