// chaos_campaign: a seeded, randomized fault campaign against a real RPMP cluster
// (etcd, 2 proxies, 3-5 rpmp-servers as child processes on loopback; see
// tests/chaos/README.md). Client threads append and put unique, self-describing
// records to R=2 namespaces and keep a ledger (ledger.h) while faults are injected at
// random moments: kill -9 + restart of a server with its pool, SIGSTOP past the dead
// timeout + SIGCONT, kill -9 of the leader proxy, an etcd restart, and a server kill
// overlapping a leader-proxy kill. Then it waits for every namespace to be back to R
// identical copies and checks every acknowledged record is stored exactly once, byte
// for byte, on every copy, with no phantom or torn record.
//
// Prints the seed, each fault, the longest write-unavailability window per fault kind
// and the counts. Exit 0 when clean, 1 on any lost/duplicated/phantom/torn record or
// when the cluster does not recover, 2 on a setup failure. The fault schedule, the
// operations and every payload follow from --seed; process timing does not, so a
// failing seed replays the same faults and workload, not the same interleaving.
//
// Usage: chaos_campaign [--seed N] [--faults N] [--servers 3..5] [--threads N]
//                       [--namespaces N] [--gap-ms N] [--kinds kill,pause,proxy,etcd,overlap]
//                       [--groups 1]
// Needs RPMP_BIN_DIR (rpmp-server, rpmp-proxy) and /usr/bin/etcd.
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <thread>

#include "tests/chaos/ledger.h"
#include "tests/cluster/cluster_harness.h"
#include "tests/test_util.h"

namespace rpmp::chaos {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using testing::ClusterHarness;
using testing::Eventually;

struct Config {
  uint64_t seed = 1;
  int faults = 20, servers = 3, threads = 4, namespaces = 3, gap_ms = 1500;
  std::vector<std::string> kinds = {"kill", "pause", "proxy", "etcd", "overlap"};
  uint64_t append_budget = 48ull << 20;  // payload bytes; then threads only put
};

double Secs(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

// With --groups the namespaces are placement groups of one parent (`chaos/shuffle/g<i>`,
// as the Spark plugin names a shuffle's groups), which the proxy stripes over every node;
// without, independent namespaces (`chaos/ns<i>`), each placed by its own hash.
std::string g_ns_prefix = "chaos/ns";
std::string NsName(uint32_t i) { return g_ns_prefix + std::to_string(i); }

// Workload: one client per thread; each op is in the ledger before it is sent.
class Workload {
 public:
  Workload(const Config& cfg, ClusterHarness* h)
      : cfg_(cfg), h_(h), logs_(cfg.threads), last_ack_ns_(static_cast<size_t>(cfg.namespaces)) {}

  bool Start() {
    for (int t = 0; t < cfg_.threads; t++) {
      std::unique_ptr<Client> c = h_->Connect();
      if (!c) return false;
      clients_.push_back(std::move(c));
    }
    for (auto& a : last_ack_ns_) a = Clock::now().time_since_epoch().count();
    for (int t = 0; t < cfg_.threads; t++) threads_.emplace_back([this, t] { Run(static_cast<uint32_t>(t)); });
    return true;
  }
  void Stop() {
    stop_ = true;
    for (auto& t : threads_) t.join();
    threads_.clear();
  }
  // The longest time since the last acknowledged write of any one namespace (a
  // namespace whose primary is gone stalls while the others go on).
  Clock::duration SinceLastAck() const {
    int64_t oldest = INT64_MAX;
    for (const auto& a : last_ack_ns_) oldest = std::min<int64_t>(oldest, a.load());
    return Clock::now() - Clock::time_point(Clock::duration(oldest));
  }
  uint64_t acked() const { return acked_.load(); }
  const std::vector<std::vector<Op>>& logs() const { return logs_; }

 private:
  void Run(uint32_t t) {
    std::mt19937_64 rng(cfg_.seed * 1000003 + t);
    Client* c = clients_[t].get();
    for (uint64_t seq = 1; !stop_.load(); seq++) {
      Op op;
      op.thread = t;
      op.seq = seq;
      op.ns = static_cast<uint32_t>(rng() % cfg_.namespaces);
      bool append = rng() % 10 < 7 && appended_.load() < cfg_.append_budget;
      op.kind = append ? OpKind::kAppend : OpKind::kPut;
      op.key = append ? "a" + std::to_string(rng() % 8) : "p" + std::to_string(t) + "-" + std::to_string(rng() % 4);
      size_t len = PayloadLength(cfg_.seed, t, seq);
      std::string p = Payload(cfg_.seed, t, seq, len);
      logs_[t].push_back(op);
      Status st = append ? c->Append(NsName(op.ns), op.key, p.data(), p.size(), seq)
                         : c->Put(NsName(op.ns), op.key, p.data(), p.size(), seq);
      logs_[t].back().outcome = st.ok() ? Outcome::kAcked : Outcome::kFailed;
      if (st.ok()) {
        acked_++;
        if (append) appended_ += len;
        last_ack_ns_[op.ns] = Clock::now().time_since_epoch().count();
      }
    }
  }

  const Config& cfg_;
  ClusterHarness* h_;
  std::vector<std::vector<Op>> logs_;
  std::vector<std::unique_ptr<Client>> clients_;
  std::vector<std::thread> threads_;
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> acked_{0}, appended_{0};
  std::vector<std::atomic<int64_t>> last_ack_ns_;  // per namespace
};

// Samples the workload's write gap while a fault is in progress.
class GapMeter {
 public:
  explicit GapMeter(const Workload* w) : w_(w), thread_([this] { Loop(); }) {}
  ~GapMeter() {
    stop_ = true;
    thread_.join();
  }
  void Begin() {
    std::lock_guard<std::mutex> l(mu_);
    max_ = Clock::duration::zero();
  }
  Clock::duration End() {
    std::lock_guard<std::mutex> l(mu_);
    return max_;
  }

 private:
  void Loop() {
    while (!stop_) {
      Clock::duration g = w_->SinceLastAck();
      {
        std::lock_guard<std::mutex> l(mu_);
        max_ = std::max(max_, g);
      }
      std::this_thread::sleep_for(5ms);  // sampling period, not synchronization
    }
  }
  const Workload* w_;
  std::mutex mu_;
  Clock::duration max_{};
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// The campaign's phase, printed by the watchdog when the campaign hangs.
std::atomic<const char*> g_phase{"setup"};

void Phase(const char* p) {
  g_phase = p;
  std::printf("phase: %s\n", p);
  std::fflush(stdout);
}

// Ends a hung campaign with a message (children die with it: PR_SET_PDEATHSIG).
void StartWatchdog(std::chrono::seconds budget) {
  std::thread([budget] {
    std::this_thread::sleep_for(budget);
    std::printf("HUNG: campaign exceeded %llds in phase '%s'\nRESULT hung FAIL\n",
                static_cast<long long>(budget.count()), g_phase.load());
    std::fflush(stdout);
    std::_Exit(1);
  }).detach();
}

bool AllServersRunning(ClusterHarness& h) {
  for (auto& s : h.servers())
    if (!s->Running()) return false;
  return true;
}

// A server that died without being killed by the campaign (the OOM killer on a shared
// machine) makes the run say nothing about the cluster: reported as an environment
// failure (exit 2), not a verdict.
bool SomeServerDiedOnItsOwn(ClusterHarness& h) {
  for (auto& s : h.servers())
    if (s->DiedOnItsOwn()) return true;
  return false;
}

// Injects one fault of `kind`; returns false when the cluster could not be restored.
bool InjectFault(const std::string& kind, ClusterHarness& h, std::mt19937_64& rng, std::string* what) {
  auto& servers = h.servers();
  auto pause_for = [&](int lo, int hi) { std::this_thread::sleep_for(std::chrono::milliseconds(lo + rng() % (hi - lo + 1))); };
  size_t victim = rng() % servers.size();
  if (kind == "kill" || kind == "overlap") {
    int proxy = -1;
    if (kind == "overlap") proxy = h.LeaderIndex();
    servers[victim]->Kill(SIGKILL);
    if (proxy >= 0) h.proxy_process(proxy).Kill(SIGKILL);
    *what = "kill -9 server" + std::to_string(victim) + (proxy >= 0 ? " + leader proxy" + std::to_string(proxy) : "");
    pause_for(0, 2500);
    if (proxy >= 0 && !h.proxy_process(proxy).Start()) return false;
    return servers[victim]->Restart();
  }
  if (kind == "pause") {
    servers[victim]->Signal(SIGSTOP);
    *what = "SIGSTOP server" + std::to_string(victim);
    pause_for(1800, 3500);  // past the 1.5 s dead timeout
    servers[victim]->Signal(SIGCONT);
    return true;
  }
  if (kind == "proxy") {
    int p = h.LeaderIndex();
    if (p < 0) p = static_cast<int>(rng() % h.proxy_addresses().size());
    h.proxy_process(p).Kill(SIGKILL);
    *what = "kill -9 leader proxy" + std::to_string(p);
    pause_for(0, 1000);
    return h.proxy_process(p).Start();
  }
  if (kind == "etcd") {
    h.etcd_process().Kill(SIGKILL);
    *what = "kill -9 etcd";
    pause_for(0, 1500);
    return h.etcd_process().Start();
  }
  *what = "unknown fault kind " + kind;
  return false;
}

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

// True when every member of every namespace's placement is LIVE (and, when the
// proxy reports an in-sync set, all R are in it) and all copies are identical;
// fills *state with the copies of the primary.
bool Converged(ClusterHarness& h, const Config& cfg, StoredState* state, std::string* why) {
  state->clear();
  for (int i = 0; i < cfg.namespaces; i++) {
    StatusOr<v1::Namespace> p = h.proxy().GetPlacement(NsName(i));
    if (!p.ok()) {
      *why = "placement of " + NsName(i) + ": " + p.status().ToString();
      return false;
    }
    if (p->in_sync_size() > 0 && p->in_sync_size() != p->placement_size()) {
      *why = NsName(i) + ": " + std::to_string(p->in_sync_size()) + " of " + std::to_string(p->placement_size()) +
             " members in sync";
      return false;
    }
    std::map<std::string, StoredObject> first;
    for (int m = 0; m < p->placement_size(); m++) {
      const v1::Replica& r = p->placement(m);
      if (r.state() != v1::NODE_STATE_LIVE) {
        *why = NsName(i) + ": member " + std::to_string(r.node_id()) + " not LIVE";
        return false;
      }
      ClientOptions o;
      o.provider = testing::Provider();
      o.timeout = 5s;
      StatusOr<std::unique_ptr<Client>> c = Client::Connect(r.endpoint(), o);
      if (!c.ok()) {
        *why = "connect " + r.endpoint() + ": " + c.status().ToString();
        return false;
      }
      std::map<std::string, StoredObject> copy;
      Status st = ReadNamespace(c->get(), NsName(i), &copy);
      if (!st.ok()) {
        *why = "read " + NsName(i) + " at " + r.endpoint() + ": " + st.ToString();
        return false;
      }
      if (m == 0) {
        first = std::move(copy);
      } else if (copy != first) {
        *why = NsName(i) + ": copies on " + p->placement(0).endpoint() + " and " + r.endpoint() + " differ";
        return false;
      }
    }
    (*state)[i] = std::move(first);
  }
  return true;
}

int RunCampaign(const Config& cfg) {
  std::printf("chaos seed=%llu faults=%d servers=%d threads=%d namespaces=%d (%s*) gap_ms=%d\n",
              static_cast<unsigned long long>(cfg.seed), cfg.faults, cfg.servers, cfg.threads, cfg.namespaces,
              g_ns_prefix.c_str(), cfg.gap_ms);
  std::fflush(stdout);
  StartWatchdog(std::chrono::seconds(300 + 30 * cfg.faults));
  ClusterHarness h;
  h.set_server_pool_size("256m");
  if (!h.Start(2, cfg.servers)) {
    std::printf("setup failed\n%s\n", h.Describe().c_str());
    return 2;
  }
  {
    std::unique_ptr<Client> admin = h.Connect();
    if (!admin) return 2;
    for (int i = 0; i < cfg.namespaces; i++) {
      StatusOr<NamespaceInfo> ns = AsCluster(admin.get())->CreateNamespace(NsName(i), {2, 0, 0});
      if (!ns.ok()) {
        std::printf("create %s: %s\n", NsName(i).c_str(), ns.status().ToString().c_str());
        return 2;
      }
    }
  }
  Workload w(cfg, &h);
  if (!w.Start()) return 2;
  Phase("faults");
  std::mt19937_64 rng(cfg.seed);
  std::map<std::string, double> worst_gap;
  std::map<std::string, int> per_kind;
  bool recovered = true;
  {
    GapMeter meter(&w);
    auto t0 = Clock::now();
    for (int f = 1; f <= cfg.faults && recovered; f++) {
      std::this_thread::sleep_for(std::chrono::milliseconds(rng() % (cfg.gap_ms + 1)));  // random moment
      std::string kind = cfg.kinds[rng() % cfg.kinds.size()];
      meter.Begin();
      std::string what;
      auto at = Clock::now();
      bool ok = InjectFault(kind, h, rng, &what);
      // Wait until the cluster is whole again (every server LIVE) and writes flow.
      uint64_t acked_before = w.acked();
      ok = ok && AllServersRunning(h) && h.WaitLive(static_cast<size_t>(cfg.servers), 60s) &&
           Eventually([&] { return w.acked() > acked_before; }, 60s);
      double gap = Secs(meter.End());
      worst_gap[kind] = std::max(worst_gap[kind], gap);
      per_kind[kind]++;
      if (!ok && SomeServerDiedOnItsOwn(h)) {
        std::printf("ENVIRONMENT: a server died without being killed (OOM killer?); no verdict\nRESULT seed=%llu "
                    "environment-failure\n", static_cast<unsigned long long>(cfg.seed));
        std::fflush(stdout);
        std::_Exit(2);
      }
      std::printf("fault %d at %.1fs: %s -> %s, longest write gap %.2fs, acked so far %llu\n", f, Secs(at - t0),
                  what.c_str(), ok ? "recovered" : "NOT RECOVERED", gap, static_cast<unsigned long long>(w.acked()));
      std::fflush(stdout);
      recovered = ok;
    }
  }
  Phase("stopping the workload");
  w.Stop();
  Phase("waiting for R identical in-sync copies");
  StoredState state;
  std::string why;
  bool converged = recovered && Eventually([&] { return Converged(h, cfg, &state, &why); }, 90s);
  if (!converged) {
    std::printf("NOT CONVERGED: %s\n", why.c_str());
    Converged(h, cfg, &state, &why);  // check what is there anyway
  }
  Phase("checking the ledger");
  Counts c;
  std::vector<std::string> problems;
  Check(cfg.seed, w.logs(), state, &c, &problems);
  for (const std::string& p : problems) std::printf("  %s\n", p.c_str());
  for (const auto& [kind, n] : per_kind)
    std::printf("fault_kind=%s count=%d longest_write_gap_s=%.2f\n", kind.c_str(), n, worst_gap[kind]);
  int faults = 0;
  for (const auto& [kind, n] : per_kind) faults += n;
  std::printf("RESULT seed=%llu faults=%d attempted=%llu acknowledged=%llu failed=%llu lost=%llu duplicated=%llu "
              "phantom=%llu torn=%llu stale_put=%llu converged=%d %s\n",
              static_cast<unsigned long long>(cfg.seed), faults, static_cast<unsigned long long>(c.attempted),
              static_cast<unsigned long long>(c.acked), static_cast<unsigned long long>(c.failed),
              static_cast<unsigned long long>(c.lost), static_cast<unsigned long long>(c.duplicated),
              static_cast<unsigned long long>(c.phantom), static_cast<unsigned long long>(c.torn),
              static_cast<unsigned long long>(c.stale_put), converged ? 1 : 0,
              c.clean() && converged ? "PASS" : "FAIL");
  if (!(c.clean() && converged) && std::getenv("RPMP_CHAOS_LOGS") != nullptr) std::printf("%s\n", h.Describe().c_str());
  return c.clean() && converged ? 0 : 1;
}

}  // namespace
}  // namespace rpmp::chaos

int main(int argc, char** argv) {
  rpmp::chaos::Config cfg;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string k = argv[i], v = argv[i + 1];
    if (k == "--seed") cfg.seed = std::strtoull(v.c_str(), nullptr, 10);
    else if (k == "--faults") cfg.faults = std::atoi(v.c_str());
    else if (k == "--servers") cfg.servers = std::clamp(std::atoi(v.c_str()), 3, 5);
    else if (k == "--threads") cfg.threads = std::max(1, std::atoi(v.c_str()));
    else if (k == "--namespaces") cfg.namespaces = std::max(1, std::atoi(v.c_str()));
    else if (k == "--gap-ms") cfg.gap_ms = std::max(0, std::atoi(v.c_str()));
    else if (k == "--groups") rpmp::chaos::g_ns_prefix = v == "1" ? "chaos/shuffle/g" : "chaos/ns";
    else if (k == "--kinds") {
      cfg.kinds.clear();
      size_t at = 0;
      while (at <= v.size()) {
        size_t comma = v.find(',', at);
        if (comma == std::string::npos) comma = v.size();
        cfg.kinds.push_back(v.substr(at, comma - at));
        at = comma + 1;
      }
    } else {
      std::fprintf(stderr, "unknown flag %s\n", k.c_str());
      return 2;
    }
  }
  return rpmp::chaos::RunCampaign(cfg);
}
