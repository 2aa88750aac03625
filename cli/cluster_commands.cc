// Implementation of rpmpctl's cluster commands (see cluster_commands.h).
#include "cli/exit_codes.h"
#include "cli/cluster_commands.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <ctime>

#include "cli/quota_command.h"
#include "cli/token_issue_command.h"
#include "common/config_util.h"
#include "common/tenant_token.h"
#include "proto/proxy_client.h"

namespace rpmp {
namespace {

using cli::Bad;
using cli::Fail;

void PrintNamespace(const v1::Namespace& ns, bool detail) {
  std::string members;
  for (const v1::Replica& r : ns.placement()) {
    char buf[64];
    std::snprintf(buf, sizeof(buf), "%s%016" PRIx64 "(%s)", members.empty() ? "" : ",", r.node_id(),
                  NodeStateName(r.state()));
    members += buf;
  }
  std::printf("%s\treplicas=%u\tmin_replicas=%u\tttl=%" PRIu64 "s\tepoch=%" PRIu64 "\t%s%s\n",
              ns.name().c_str(), ns.options().replicas(), ns.options().min_replicas(), ns.options().ttl_seconds(),
              ns.epoch(), members.c_str(), ns.degraded() ? "\tDEGRADED" : "");
  if (!detail) return;
  for (const v1::Replica& r : ns.placement())
    std::printf("  member %016" PRIx64 " %s %s\n", r.node_id(), r.endpoint().c_str(), NodeStateName(r.state()));
  for (const v1::Substitution& s : ns.substitutions())
    std::printf("  substitution index=%u %016" PRIx64 " -> %016" PRIx64 " epoch=%" PRIu64 " reason=%s\n",
                s.index(), s.replaced_node(), s.replacement_node(), s.epoch(), s.reason().c_str());
}

StatusOr<uint32_t> ParseCount(const std::map<std::string, std::string>& opts, const std::string& name) {
  auto it = opts.find(name);
  if (it == opts.end()) return uint32_t{0};
  char* end = nullptr;
  unsigned long v = std::strtoul(it->second.c_str(), &end, 10);
  if (end == it->second.c_str() || *end != '\0' || v > 1000)
    return Status::InvalidArgument(name + " '" + it->second + "' is not a small number");
  return static_cast<uint32_t>(v);
}

int Nodes(ProxyClient& proxy) {
  StatusOr<v1::NodeMap> map = proxy.GetNodeMap();
  if (!map.ok()) return Fail(map.status());
  std::printf("leader %s epoch %" PRIu64 "\n", map->leader().empty() ? "(none: election in progress)" : map->leader().c_str(),
              map->epoch());
  // The per-tier columns come after the original six (scripts may read those by
  // position); "-" for a tier the node does not have or does not report.
  std::printf("%-16s  %-21s  %-8s  %10s  %10s  %10s  %10s  %10s  %10s  %10s\n", "NODE", "ENDPOINT", "STATE", "USED",
              "FREE", "CAPACITY", "FAST_USED", "FAST_CAP", "CAP_USED", "CAP_CAP");
  auto tier = [](uint64_t capacity, uint64_t free, bool used) {
    if (capacity == 0) return std::string("-");
    return HumanBytes(used ? capacity - std::min(free, capacity) : capacity);
  };
  for (const v1::Node& n : map->nodes())
    std::printf("%016" PRIx64 "  %-21s  %-8s  %10s  %10s  %10s  %10s  %10s  %10s  %10s\n", n.id(), n.endpoint().c_str(),
                NodeStateName(n.state()), HumanBytes(n.used()).c_str(), HumanBytes(n.free()).c_str(),
                HumanBytes(n.capacity()).c_str(), tier(n.fast_capacity(), n.fast_free(), true).c_str(),
                tier(n.fast_capacity(), n.fast_free(), false).c_str(),
                tier(n.capacity_tier_capacity(), n.capacity_tier_free(), true).c_str(),
                tier(n.capacity_tier_capacity(), n.capacity_tier_free(), false).c_str());
  return 0;
}

// A node id as 'nodes' prints it: 1 to 16 hex digits, not zero.
StatusOr<uint64_t> ParseNodeId(const std::string& s) {
  if (s.empty() || s.size() > 16 || s.find_first_not_of("0123456789abcdefABCDEF") != std::string::npos)
    return Status::InvalidArgument("node id '" + s + "' is not 16 hex digits as 'rpmpctl nodes' prints it");
  uint64_t id = std::strtoull(s.c_str(), nullptr, 16);
  if (id == 0) return Status::InvalidArgument("node id 0 does not exist");
  return id;
}

int RemoveNode(ProxyClient& proxy, const std::string& arg) {
  StatusOr<uint64_t> id = ParseNodeId(arg);
  if (!id.ok()) return Bad(id.status().message());
  StatusOr<v1::RemoveNodeReply> r = proxy.RemoveNode(*id);
  if (!r.ok()) return Fail(r.status());
  std::printf("removed %016" PRIx64 " %s\n", r->node().id(), r->node().endpoint().c_str());
  return 0;
}

int Namespaces(ProxyClient& proxy, const std::vector<std::string>& w, const std::map<std::string, std::string>& opts) {
  if (w.size() < 2) return Bad("ns needs a subcommand: create, ls, show, rm");
  const std::string& sub = w[1];
  if (sub == "create" && w.size() == 3) {
    StatusOr<uint32_t> r = ParseCount(opts, "--replicas"), m = ParseCount(opts, "--min-replicas");
    if (!r.ok()) return Bad(r.status().message());
    if (!m.ok()) return Bad(m.status().message());
    v1::NamespaceOptions o;
    o.set_replicas(*r == 0 ? 1 : *r);
    o.set_min_replicas(*m);
    auto ttl = opts.find("--ttl");
    if (ttl != opts.end()) {
      StatusOr<std::chrono::milliseconds> d = ParseDuration(ttl->second);
      if (!d.ok()) return Bad("--ttl: " + d.status().message());
      o.set_ttl_seconds(static_cast<uint64_t>((d->count() + 999) / 1000));
    }
    StatusOr<v1::Namespace> ns = proxy.CreateNamespace(w[2], o);
    if (!ns.ok()) return Fail(ns.status());
    PrintNamespace(*ns, false);
    return 0;
  }
  if (sub == "ls" && w.size() <= 3) {
    StatusOr<v1::ListNamespacesReply> l = proxy.ListNamespaces(w.size() == 3 ? w[2] : "");
    if (!l.ok()) return Fail(l.status());
    for (const v1::Namespace& ns : l->namespaces()) PrintNamespace(ns, false);
    return 0;
  }
  if (sub == "show" && w.size() == 3) {
    StatusOr<v1::Namespace> ns = proxy.GetPlacement(w[2]);
    if (!ns.ok()) return Fail(ns.status());
    PrintNamespace(*ns, true);
    return 0;
  }
  if (sub == "rm" && w.size() == 3) {
    StatusOr<v1::DeleteNamespaceReply> d = proxy.DeleteNamespace(w[2], opts.count("--recursive") > 0);
    if (!d.ok()) return Fail(d.status());
    for (const std::string& n : d->deleted()) std::printf("deleted %s\n", n.c_str());
    return 0;
  }
  return Bad("bad arguments for 'ns " + sub + "'");
}

}  // namespace

bool IsClusterCommand(const std::string& cmd) {
  return cmd == "nodes" || cmd == "ns" || cmd == "drain" || cmd == "quota" || cmd == "token";
}

int RunClusterCommand(const std::vector<std::string>& proxies, const std::vector<std::string>& words,
                      const std::map<std::string, std::string>& opts) {
  if (proxies.empty()) return Bad("no proxy given: use --proxy HOST:PORT[,HOST:PORT] or set RPMP_PROXIES");
  ProxyClientOptions po;
  po.retry_for = std::chrono::milliseconds(10000);
  if (words[0] == "ns") {  // namespace calls act as the tenant of $RPMP_TOKEN_FILE, if set
    StatusOr<std::string> token = tenant::TokenFromEnvironment();
    if (!token.ok()) return Fail(token.status());
    po.tenant_token = *token;
  }
  ProxyClient proxy(proxies, po);
  if (words[0] == "nodes" && words.size() == 1) return Nodes(proxy);
  if (words[0] == "nodes" && words.size() == 3 && words[1] == "rm") return RemoveNode(proxy, words[2]);
  if (words[0] == "ns") return Namespaces(proxy, words, opts);
  if (words[0] == "quota") return RunQuotaCommand(proxy, words, opts);
  if (words[0] == "token") return RunTokenIssueCommand(proxy, words, opts);
  if (words[0] == "drain" && words.size() == 2) {
    uint64_t id = std::strtoull(words[1].c_str(), nullptr, 16);
    if (id == 0) return Bad("drain needs a node id (hex, as 'nodes' prints it)");
    StatusOr<v1::DrainReply> r = proxy.Drain(id, opts.count("--cancel") > 0);
    if (!r.ok()) return Fail(r.status());
    std::printf("%016" PRIx64 " %s\n", r->node().id(), NodeStateName(r->node().state()));
    return 0;
  }
  return Bad("bad arguments for '" + words[0] + "'");
}

}  // namespace rpmp
