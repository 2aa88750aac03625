// chaos_campaign: a seeded, randomized fault campaign against a real RPMP cluster
// (etcd, 2 proxies, 3-5 rpmp-servers as child processes on loopback; see
// tests/chaos/README.md). Client threads append and put unique, self-describing
// records to R=2 namespaces and keep a ledger (ledger.h) while faults are injected at
// random moments: kill -9 + restart of a server with its pool, SIGSTOP past the dead
// timeout + SIGCONT, kill -9 of the leader proxy, an etcd restart, and a server kill
// overlapping a leader-proxy kill. Then it waits for every namespace to be back to R
// identical copies and checks every acknowledged record is stored exactly once, byte
// for byte, on every copy, with no phantom or torn record (reading the copies back:
// convergence.h; checking them against the ledger: ledger.h).
//
// Prints the seed, each fault, the longest write-unavailability window per fault kind
// and the counts. Exit 0 when clean, 1 on any lost/duplicated/phantom/torn record or
// when the cluster does not recover, 2 on a setup failure. The fault schedule, the
// operations and every payload follow from --seed; process timing does not, so a
// failing seed replays the same faults and workload, not the same interleaving.
//
// --split 1: the namespaces are placement groups on small pools that fill during the
// campaign; writers append through GroupExtents (rpmp/group_extents.h, the C++ split
// path), so groups continue in extents <group>/x<k> while faults happen; the checker
// reads each group and all its extents as one ordered set. Fails when no extent was made.
//
// Usage: chaos_campaign [--seed N] [--faults N] [--servers 3..5] [--threads N]
//                       [--namespaces N] [--gap-ms N] [--kinds kill,pause,proxy,etcd,overlap]
//                       [--groups 1] [--split 1] [--pool-mb N]
// Needs RPMP_BIN_DIR (rpmp-server, rpmp-proxy) and /usr/bin/etcd.
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <sstream>
#include <thread>
#include <vector>

#include "rpmp/group_extents.h"
#include "common/config_util.h"
#include "tests/chaos/convergence.h"
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
  int pool_mb = 256;                     // each server's pool
  // --split: appends only, through GroupExtents: large ones paced so that append_budget
  // (a multiple of one pool: the group's nodes fill and it splits) is reached after about
  // split_pace_s, then tiny ones (the extent keeps taking writes without filling up).
  bool split = false;
  double split_pace_s = 60;
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
      : cfg_(cfg), h_(h), logs_(cfg.threads), last_ack_ns_(static_cast<size_t>(cfg.split ? 1 : cfg.namespaces)) {}

  bool Start() {
    for (int t = 0; t < cfg_.threads; t++) {
      // --split: a call waits past the server's replication timeout (10 s), as the Spark
      // writer's does, since a replica's no-space refusal is answered only after it.
      std::unique_ptr<Client> c = cfg_.split ? h_->Connect(15s) : h_->Connect();
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
  uint64_t extents_created() const { return extents_.created(); }
  uint64_t moved() const { return moved_.load(); }  // appends acknowledged by a later extent
  const std::vector<std::vector<Op>>& logs() const { return logs_; }

 private:
  // --split: false while large appends are ahead of their pace (the caller waits a
  // moment); always true once the budget is spent (tiny appends from then on).
  bool SplitPhaseReady() {
    if (appended_.load() >= cfg_.append_budget) return true;
    double due = cfg_.append_budget * std::min(1.0, Secs(Clock::now() - start_) / cfg_.split_pace_s);
    return appended_.load() < due;
  }

  void Run(uint32_t t) {
    std::mt19937_64 rng(cfg_.seed * 1000003 + t);
    Client* c = clients_[t].get();
    for (uint64_t seq = 1; !stop_.load(); seq++) {
      if (cfg_.split && !SplitPhaseReady()) {
        std::this_thread::sleep_for(2ms);  // pacing (a rate), not synchronization
        seq--;
        continue;
      }
      Op op;
      op.thread = t;
      op.seq = seq;
      op.ns = static_cast<uint32_t>(rng() % cfg_.namespaces);
      bool append = cfg_.split || (rng() % 10 < 7 && appended_.load() < cfg_.append_budget);
      if (cfg_.split) op.sizes = appended_.load() < cfg_.append_budget ? Sizes::kLarge : Sizes::kTiny;
      op.key = append ? "a" + std::to_string(rng() % 8) : "p" + std::to_string(t) + "-" + std::to_string(rng() % 4);
      size_t len = PayloadLength(cfg_.seed, t, seq, op.sizes);
      std::string p = Payload(cfg_.seed, t, seq, len);
      op.kind = append ? OpKind::kAppend : OpKind::kPut;
      logs_[t].push_back(op);
      // --split counts attempts: appends a full cluster refuses still end the large ones.
      if (cfg_.split) appended_ += len;
      Status st;
      if (cfg_.split && append) {
        GroupExtents::Outcome how;
        st = extents_.Append(c, NsName(op.ns), op.key, p.data(), p.size(), seq, &how);
        for (int k : how.refused) logs_[t].back().refused_mask |= k < 64 ? 1ull << k : 0;
        logs_[t].back().extent = how.extent;
        if (st.ok() && !how.refused.empty()) moved_++;
      } else {
        st = append ? c->Append(NsName(op.ns), op.key, p.data(), p.size(), seq)
                    : c->Put(NsName(op.ns), op.key, p.data(), p.size(), seq);
      }
      logs_[t].back().outcome = st.ok() ? Outcome::kAcked : Outcome::kFailed;
      if (st.ok()) {
        acked_++;
        if (append && !cfg_.split) appended_ += len;
        last_ack_ns_[cfg_.split ? 0 : op.ns] = Clock::now().time_since_epoch().count();
      }
    }
  }

  const Config& cfg_;
  ClusterHarness* h_;
  std::vector<std::vector<Op>> logs_;
  std::vector<std::unique_ptr<Client>> clients_;
  std::vector<std::thread> threads_;
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> acked_{0}, appended_{0}, moved_{0};
  GroupExtents extents_;  // --split: this process's writers' extents
  Clock::time_point start_ = Clock::now();
  std::vector<std::atomic<int64_t>> last_ack_ns_;  // per namespace (--split: one for all, as
                                                   // writes move between a group's namespaces)
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

// The last `n` lines of `text`, each prefixed with "  | " (so that a filter of the
// client library's log lines keeps them).
std::string LastLines(const std::string& text, int n) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) lines.push_back(line);
  std::string out;
  for (size_t i = lines.size() > static_cast<size_t>(n) ? lines.size() - n : 0; i < lines.size(); i++)
    out += "  | " + lines[i] + "\n";
  return out;
}

// A server that ended without being killed by the campaign. Killed by SIGKILL from
// outside (the OOM killer on a shared machine), the run says nothing about the cluster:
// an environment failure (exit 2), not a verdict. Any other end (a crash, an abort, an
// exit) is the server's own doing: a failure, reported with the end of its log.
// Returns 0 when every server is alive, 2 for an environment failure, 1 for a crash.
int ReportServerThatDiedOnItsOwn(ClusterHarness& h, uint64_t seed) {
  auto& servers = h.servers();
  for (size_t i = 0; i < servers.size(); i++) {
    if (!servers[i]->DiedOnItsOwn()) continue;
    bool outside_kill = servers[i]->death_signal() == SIGKILL;
    std::printf("%s: server%zu %s without being killed by the campaign; the end of its log:\n%s",
                outside_kill ? "ENVIRONMENT" : "CRASH", i, servers[i]->death().c_str(),
                LastLines(servers[i]->Log(), 40).c_str());
    std::printf("RESULT seed=%llu %s\n", static_cast<unsigned long long>(seed),
                outside_kill ? "environment-failure (SIGKILL from outside: the OOM killer?); no verdict" : "crash FAIL");
    std::fflush(stdout);
    return outside_kill ? 2 : 1;
  }
  return 0;
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

int RunCampaign(const Config& cfg) {
  std::printf("chaos seed=%llu faults=%d servers=%d threads=%d namespaces=%d (%s*) gap_ms=%d pool_mb=%d split=%d\n",
              static_cast<unsigned long long>(cfg.seed), cfg.faults, cfg.servers, cfg.threads, cfg.namespaces,
              g_ns_prefix.c_str(), cfg.gap_ms, cfg.pool_mb, cfg.split ? 1 : 0);
  if (cfg.split)
    std::printf("split: appends through GroupExtents, %.0f MiB paced over %.0fs, then tiny ones\n",
                cfg.append_budget / 1048576.0, cfg.split_pace_s);
  std::fflush(stdout);
  StartWatchdog(std::chrono::seconds(300 + 30 * cfg.faults));
  ClusterHarness h;
  h.set_server_pool_size(std::to_string(cfg.pool_mb) + "m");
  if (!h.Start(2, cfg.servers)) {
    std::printf("setup failed\n%s\n", h.Describe().c_str());
    return 2;
  }
  std::unique_ptr<Client> admin = h.Connect();
  if (!admin) return 2;
  {
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
  uint64_t splits_in_faults = 0;  // extents made while a fault was in progress
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
      uint64_t extents_before = w.extents_created();
      bool ok = InjectFault(kind, h, rng, &what);
      // Wait until the cluster is whole again (every server LIVE) and writes flow.
      uint64_t acked_before = w.acked();
      ok = ok && AllServersRunning(h) && h.WaitLive(static_cast<size_t>(cfg.servers), 60s) &&
           Eventually([&] { return w.acked() > acked_before; }, 60s);
      double gap = Secs(meter.End());
      uint64_t splits = w.extents_created() - extents_before;
      splits_in_faults += splits;
      worst_gap[kind] = std::max(worst_gap[kind], gap);
      per_kind[kind]++;
      if (int died = ok ? 0 : ReportServerThatDiedOnItsOwn(h, cfg.seed); died != 0) {
        std::printf("(the fault in progress: %s)\n", what.c_str());
        if (std::getenv("RPMP_CHAOS_LOGS") != nullptr) std::printf("%s\n", h.Describe().c_str());
        std::fflush(stdout);
        std::_Exit(died);
      }
      std::printf("fault %d at %.1fs: %s -> %s, longest write gap %.2fs, acked so far %llu%s\n", f, Secs(at - t0),
                  what.c_str(), ok ? "recovered" : "NOT RECOVERED", gap, static_cast<unsigned long long>(w.acked()),
                  splits ? (", " + std::to_string(splits) + " extent(s) made during it").c_str() : "");
      // $RPMP_CHAOS_LOG_GAP_S: the processes' logs after any fault whose write gap passed
      // that many seconds (a slow recovery passes, so it would leave no logs otherwise).
      if (const char* slow = std::getenv("RPMP_CHAOS_LOG_GAP_S"); slow != nullptr && gap > std::atof(slow))
        std::printf("slow recovery (gap %.2fs):\n%s\n", gap, h.Describe().c_str());
      std::fflush(stdout);
      recovered = ok;
    }
  }
  Phase("stopping the workload");
  w.Stop();
  Phase("waiting for R identical in-sync copies");
  std::map<uint32_t, GroupParts> parts;
  std::string why;
  OpIndex ops(w.logs());
  std::vector<std::string> degraded;
  // --split: a namespace short of copies is waited for too, then accepted as degraded.
  const CampaignNamespaces scope{cfg.namespaces, cfg.split, NsName};
  auto whole = [&] { return Converged(h, scope, ops, admin.get(), &parts, &degraded, &why) && degraded.empty(); };
  bool converged =
      recovered && (Eventually(whole, cfg.split ? 45s : 90s) || (cfg.split && why.empty() && !degraded.empty()));
  if (!converged) {
    if (why.empty() && degraded.empty()) Converged(h, scope, ops, admin.get(), &parts, &degraded, &why);
    std::printf("NOT CONVERGED: %s\n", why.c_str());
  }
  for (const std::string& d : degraded) std::printf("degraded (fewer in-sync copies, see README): %s\n", d.c_str());
  Phase("checking the ledger");
  StoredState state;
  uint64_t extents = 0;
  uint64_t dropped = ToState(parts, w.logs(), &state, &extents);
  bool split_ok = !cfg.split || extents > 0;
  if (cfg.split)
    std::printf("split: extents=%llu made_by_writers=%llu made_during_faults=%llu moved_appends=%llu "
                "refused_copies_dropped=%llu degraded_namespaces=%zu%s\n",
                static_cast<unsigned long long>(extents), static_cast<unsigned long long>(w.extents_created()),
                static_cast<unsigned long long>(splits_in_faults), static_cast<unsigned long long>(w.moved()),
                static_cast<unsigned long long>(dropped), degraded.size(),
                split_ok ? "" : " (NO SPLIT: the groups never filled)");
  Counts c;
  std::vector<std::string> problems;
  Check(cfg.seed, w.logs(), state, &c, &problems);
  for (const std::string& p : problems) std::printf("  %s\n", p.c_str());
  for (const auto& [kind, n] : per_kind)
    std::printf("fault_kind=%s count=%d longest_write_gap_s=%.2f\n", kind.c_str(), n, worst_gap[kind]);
  int faults = 0;
  for (const auto& [kind, n] : per_kind) faults += n;
  std::printf("RESULT seed=%llu faults=%d attempted=%llu acknowledged=%llu failed=%llu lost=%llu duplicated=%llu "
              "phantom=%llu torn=%llu stale_put=%llu converged=%d extents=%llu %s\n",
              static_cast<unsigned long long>(cfg.seed), faults, static_cast<unsigned long long>(c.attempted),
              static_cast<unsigned long long>(c.acked), static_cast<unsigned long long>(c.failed),
              static_cast<unsigned long long>(c.lost), static_cast<unsigned long long>(c.duplicated),
              static_cast<unsigned long long>(c.phantom), static_cast<unsigned long long>(c.torn),
              static_cast<unsigned long long>(c.stale_put), converged ? 1 : 0,
              static_cast<unsigned long long>(extents), c.clean() && converged && split_ok ? "PASS" : "FAIL");
  bool pass = c.clean() && converged && split_ok;
  if (!pass && std::getenv("RPMP_CHAOS_LOGS") != nullptr) std::printf("%s\n", h.Describe().c_str());
  return pass ? 0 : 1;
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
    else if (k == "--split") cfg.split = v == "1";
    else if (k == "--pool-mb") cfg.pool_mb = std::max(16, std::atoi(v.c_str()));
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
  if (cfg.split) {
    // Pools that the group's nodes fill, each group on 2 of 5 nodes (3 when a dead
    // member was replaced), so its extents find 2 other nodes with room. Unless given: 5
    // servers, 1 group, 128 MiB (a full pool's free bytes, its 4 MiB delete reserve and
    // the allocator's overhead, stay under the proxy's 1/16 "room" mark only from about
    // 96 MiB: a full smaller pool looks roomy and gets extents it refuses).
    bool given_servers = false, given_ns = false, given_pool = false;
    for (int i = 1; i < argc; i += 2) {
      given_servers |= std::strcmp(argv[i], "--servers") == 0;
      given_ns |= std::strcmp(argv[i], "--namespaces") == 0;
      given_pool |= std::strcmp(argv[i], "--pool-mb") == 0;
    }
    if (!given_servers) cfg.servers = 5;
    if (!given_ns) cfg.namespaces = 1;
    if (!given_pool) cfg.pool_mb = 128;
    rpmp::chaos::g_ns_prefix = "chaos/shuffle/g";
    cfg.append_budget = static_cast<uint64_t>(cfg.pool_mb) * (1ull << 20) * 13 / 10;  // 1.3 pools
    // A fault takes 2-5 s: the group fills (at ~0.75 of the budget) in the first half.
    cfg.split_pace_s = std::max(15.0, cfg.faults * 1.5);
  }
  return rpmp::chaos::RunCampaign(cfg);
}
