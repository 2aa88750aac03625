// Reading a fault campaign's namespaces back once the cluster has recovered: every
// copy of every namespace (and, with --split, every extent of a group), compared member
// by member, into the checker's state. Called by campaign.cc only.
#include "tests/chaos/convergence.h"

#include <chrono>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "rpmp/group_extents.h"
#include "common/config_util.h"
#include "tests/test_util.h"

namespace rpmp::chaos {
namespace {

using namespace std::chrono_literals;
using testing::ClusterHarness;

// Reads every key of namespace `ns` through `c` as records.
Status ReadNamespace(Client* c, const std::string& ns, std::map<std::string, StoredObject>* out) {
  StatusOr<std::vector<KeyInfo>> keys = c->List(ns, "", 100000);
  if (keys.status().IsNotFound()) return Status::Ok();
  if (!keys.ok()) return keys.status();
  for (const KeyInfo& k : *keys) {
    StatusOr<ObjectMeta> meta = c->GetMeta(ns, k.key);
    if (meta.status().IsNotFound()) continue;
    if (!meta.ok()) return meta.status();
    StatusOr<std::string> all = c->Get(ns, k.key);
    if (!all.ok()) return all.status();
    StoredObject obj;
    size_t at = 0;
    for (const RecordRef& r : meta->records) {
      if (at + r.length > all->size()) return Status::Internal("meta and data of " + k.key + " disagree");
      obj.push_back(all->substr(at, r.length));
      at += r.length;
    }
    (*out)[k.key] = std::move(obj);
  }
  return Status::Ok();
}

// A namespace's copy without the records `skip` names.
using Copy = std::map<std::string, StoredObject>;
using RecordFilter = std::function<bool(const std::string&)>;
Copy Without(const Copy& c, const RecordFilter& skip) {
  Copy out;
  for (const auto& [key, records] : c)
    for (const std::string& r : records)
      if (!skip(r)) out[key].push_back(r);
  return out;
}

// Where two copies first differ: key, record index and the two records' ids.
std::string FirstDifference(const Copy& a, const Copy& b) {
  auto id = [](const std::string& r) {
    uint32_t t = 0;
    uint64_t q = 0;
    if (r.size() >= 16) {
      std::memcpy(&t, r.data() + 4, 4);
      std::memcpy(&q, r.data() + 8, 8);
    }
    return std::to_string(t) + "/" + std::to_string(q) + " (" + std::to_string(r.size()) + " B)";
  };
  for (const auto& [key, ra] : a) {
    auto it = b.find(key);
    if (it == b.end()) return ": key " + key + " only on the first";
    const StoredObject& rb = it->second;
    for (size_t i = 0; i < std::max(ra.size(), rb.size()); i++) {
      if (i < ra.size() && i < rb.size() && ra[i] == rb[i]) continue;
      return ": key " + key + " record " + std::to_string(i) + ": " + (i < ra.size() ? id(ra[i]) : "none") +
             " vs " + (i < rb.size() ? id(rb[i]) : "none") + " (" + std::to_string(ra.size()) + " vs " +
             std::to_string(rb.size()) + " records in the key)";
    }
  }
  return ": a key only on the second";
}

// True when every member of namespace `name`'s placement is LIVE and in the in-sync set
// (when the proxy reports one) and all copies are identical but for records `skip` names
// (--split: appends this namespace did not acknowledge; see Converged). Fills *out with
// the copy of the first LIVE in-sync member (what the checker reads). With `degraded`
// (--split) members that are not LIVE or not in sync are left out and *degraded set
// instead: a group that filled its nodes can be copied again only to a node with that
// much room. In-sync copies that differ are never accepted.
bool ReadConverged(ClusterHarness& h, const std::string& name, const RecordFilter& skip, Copy* out,
                   bool* degraded, std::string* why) {
  StatusOr<v1::Namespace> p = h.proxy().GetPlacement(name);
  if (!p.ok()) {
    *why = "placement of " + name + ": " + p.status().ToString();
    return false;
  }
  std::set<uint64_t> in_sync(p->in_sync().begin(), p->in_sync().end());
  bool whole = true, first = true;
  std::string first_at;
  for (int m = 0; m < p->placement_size(); m++) {
    const v1::Replica& r = p->placement(m);
    if (r.state() != v1::NODE_STATE_LIVE || (!in_sync.empty() && in_sync.count(r.node_id()) == 0)) {
      *why = name + ": member " + NodeIdHex(r.node_id()) + (r.state() != v1::NODE_STATE_LIVE ? " not LIVE" : " not in sync");
      whole = false;
      continue;
    }
    ClientOptions o;
    o.provider = testing::Provider();
    o.timeout = 5s;
    StatusOr<std::unique_ptr<Client>> c = Client::Connect(r.endpoint(), o);
    if (!c.ok()) {
      *why = "connect " + r.endpoint() + ": " + c.status().ToString();
      return false;
    }
    Copy copy;
    Status st = ReadNamespace(c->get(), name, &copy);
    if (!st.ok()) {
      *why = "read " + name + " at " + r.endpoint() + ": " + st.ToString();
      return false;
    }
    if (first) {
      *out = std::move(copy);
      first = false;
      first_at = r.endpoint();
      continue;
    }
    Copy a = Without(*out, skip), b = Without(copy, skip);
    if (a != b) {
      size_t na = 0, nb = 0;
      for (const auto& [k, recs] : a) na += recs.size();
      for (const auto& [k, recs] : b) nb += recs.size();
      *why = name + ": in-sync copies on " + first_at + " (" + std::to_string(na) + " records compared) and " +
             r.endpoint() + " (" + std::to_string(nb) + ") differ" + FirstDifference(a, b);
      return false;
    }
  }
  if (first) return false;  // no copy to read
  if (!whole && degraded != nullptr) {
    *degraded = true;
    return true;
  }
  return whole;
}

}  // namespace

// ReadConverged for every namespace of the campaign; with --split each group is read with
// all its extents (GroupExtents::ListExtents through `cluster`), in order, into *parts.
// With --split the copies of a group's namespace must agree on the appends it
// acknowledged; an append it did not acknowledge (refused for space, or failed) may be
// held by its primary alone: the primary committed it before replicating
// (docs/cluster.md "Split instead of fail", invariant 2), and a namespace the writers
// left for an extent takes no more writes, so nothing repairs the other copy (the
// checker still counts such a record twice if it is also in a later extent and that
// namespace did not refuse it). Reads everything it can even when it returns false.
bool Converged(ClusterHarness& h, const CampaignNamespaces& cfg, const OpIndex& ops, Client* cluster,
               std::map<uint32_t, GroupParts>* parts, std::vector<std::string>* degraded, std::string* why) {
  parts->clear();
  degraded->clear();
  why->clear();
  bool all = true;
  auto fail = [&](const std::string& w) {
    if (all) *why = w;
    all = false;
  };
  for (int i = 0; i < cfg.count; i++) {
    std::vector<std::string> names = {cfg.name(i)};
    if (cfg.split) {
      StatusOr<std::vector<std::string>> extents = GroupExtents::ListExtents(cluster, cfg.name(i));
      if (extents.ok()) names.insert(names.end(), extents->begin(), extents->end());
      else fail("extents of " + cfg.name(i) + ": " + extents.status().ToString());
    }
    for (size_t k = 0; k < names.size(); k++) {
      RecordFilter not_acked_here = [&ops, &cfg, k](const std::string& r) {
        if (!cfg.split) return false;
        const Op* op = ops.Find(r);
        return op != nullptr && (op->outcome != Outcome::kAcked || op->extent != static_cast<int>(k));
      };
      Copy copy;
      std::string w;
      bool short_of_copies = false;
      if (!ReadConverged(h, names[k], not_acked_here, &copy, cfg.split ? &short_of_copies : nullptr, &w)) fail(w);
      if (short_of_copies) degraded->push_back(w);
      (*parts)[i].push_back(std::move(copy));
    }
  }
  return all;
}

// Folds what Converged read into the checker's state: each group with its extents as one
// ordered set (MergeGroup). Returns the refused appends' copies dropped, and adds the
// extents read to *extents.
uint64_t ToState(const std::map<uint32_t, GroupParts>& parts, const std::vector<std::vector<Op>>& logs,
                 StoredState* state, uint64_t* extents) {
  uint64_t dropped = 0;
  state->clear();
  for (const auto& [i, group] : parts) {
    *extents += group.size() - 1;
    dropped += MergeGroup(logs, i, group, state);
  }
  return dropped;
}

}  // namespace rpmp::chaos
