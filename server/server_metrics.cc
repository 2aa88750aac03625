// See server_metrics.h.
#include "server/server_metrics.h"

#include <array>
#include <atomic>
#include <memory>

#include <string>

namespace rpmp {
namespace {

std::atomic<ReplicationMetrics*> g_replication{nullptr};

std::string OpLabel(size_t op) { return wire::OpName(static_cast<wire::Op>(op)); }

// "ok", "not_found", ...: the status code's name with underscores.
std::string StatusLabel(size_t code) {
  std::string s = StatusCodeName(static_cast<StatusCode>(code));
  for (char& c : s)
    if (c == ' ') c = '_';
  return s;
}

}  // namespace

ReplicationMetrics::ReplicationMetrics(MetricsRegistry* r)
    : replicate_seconds(r->AddHistogram(
          "rpmp_server_replication_seconds",
          "Time from the local commit of a write to its required copies acknowledged (replication lag).",
          "", LatencyBuckets())),
      replica_misses(r->AddCounter("rpmp_server_replica_misses_total",
                                   "Updates a replica missed; that member is then repaired.")),
      repairs_running(r->AddGauge("rpmp_server_repairs_running", "Namespace repairs in progress.")),
      repairs_ok(r->AddCounter("rpmp_server_repairs_total", "Namespace repairs by result.",
                               "result=\"ok\"")),
      repairs_failed(r->AddCounter("rpmp_server_repairs_total", "Namespace repairs by result.",
                                   "result=\"failed\"")),
      repair_records(r->AddCounter("rpmp_server_repair_records_total",
                                   "Records copied to members under repair.")),
      repair_bytes(r->AddCounter("rpmp_server_repair_bytes_total",
                                 "Payload bytes copied to members under repair.")) {}

RepairProgress::RepairProgress(ReplicationMetrics* m) : m_(m) {
  if (m_ != nullptr) m_->repairs_running->Add(1);
}

RepairProgress::~RepairProgress() {
  if (m_ == nullptr) return;
  m_->repairs_running->Add(-1);
  (ok_ ? m_->repairs_ok : m_->repairs_failed)->Add();
}

void RepairProgress::Copied(uint64_t bytes) {
  if (m_ == nullptr) return;
  m_->repair_records->Add();
  m_->repair_bytes->Add(bytes);
}

ReplicationMetrics* ReplicationHooks() { return g_replication.load(std::memory_order_acquire); }
void InstallReplicationHooks(ReplicationMetrics* hooks) {
  g_replication.store(hooks, std::memory_order_release);
}

ServerMetrics::ServerMetrics(MetricsRegistry* r)
    : recovery_seconds(r->AddGauge("rpmp_server_recovery_seconds",
                                   "Time to open the pools at start, recovery included.")),
      registry_(r) {}

Counter* ServerMetrics::RequestCounter(size_t op, size_t code) {
  Counter* c = requests_[op][code].load(std::memory_order_acquire);
  if (c != nullptr) return c;
  std::lock_guard<std::mutex> lock(create_mu_);
  c = requests_[op][code].load(std::memory_order_acquire);
  if (c == nullptr) {
    c = registry_->AddCounter("rpmp_server_requests_total", "Requests answered, by op and status.",
                              "op=\"" + OpLabel(op) + "\",status=\"" + StatusLabel(code) + "\"");
    requests_[op][code].store(c, std::memory_order_release);
  }
  return c;
}

Histogram* ServerMetrics::LatencyHistogram(size_t op) {
  Histogram* h = latency_[op].load(std::memory_order_acquire);
  if (h != nullptr) return h;
  std::lock_guard<std::mutex> lock(create_mu_);
  h = latency_[op].load(std::memory_order_acquire);
  if (h == nullptr) {
    h = registry_->AddHistogram("rpmp_server_request_seconds",
                                "Time from a request's arrival to its reply being sent, by op.",
                                "op=\"" + OpLabel(op) + "\"", LatencyBuckets());
    latency_[op].store(h, std::memory_order_release);
  }
  return h;
}

void ServerMetrics::OnReply(wire::Op op, uint16_t status, Clock::time_point started) {
  size_t o = static_cast<size_t>(op) < kOps ? static_cast<size_t>(op) : 0;
  size_t c = status < kCodes ? status : static_cast<size_t>(StatusCode::kUnknown);
  RequestCounter(o, c)->Add();
  LatencyHistogram(o)->Observe(std::chrono::duration<double>(Clock::now() - started).count());
}

void ServerMetrics::SampleStore(Store* store) {
  Gauge* namespaces = registry_->AddGauge("rpmp_server_namespaces", "Namespaces holding data.");
  Gauge* keys = registry_->AddGauge("rpmp_server_keys", "Keys (objects) stored.");
  Gauge* records = registry_->AddGauge("rpmp_server_records", "Records stored (visible).");
  Gauge* segments = registry_->AddGauge("rpmp_server_segments", "Log segments allocated.");
  Gauge* live = registry_->AddGauge("rpmp_server_live_bytes", "Payload bytes of visible records.");
  Gauge* dead = registry_->AddGauge("rpmp_server_dead_bytes",
                                    "Bytes of dead records still held by segments (compaction's work).");
  // Compaction's counters come with Stats(): the sampler keeps them for the readers.
  auto compacted = std::make_shared<std::array<std::atomic<double>, 3>>();
  registry_->AddCounterFunc("rpmp_server_compacted_segments_total",
                            "Segments emptied by compaction since start.", "",
                            [compacted] { return (*compacted)[0].load(); });
  registry_->AddCounterFunc("rpmp_server_compacted_records_total",
                            "Records moved by compaction since start.", "",
                            [compacted] { return (*compacted)[1].load(); });
  registry_->AddCounterFunc("rpmp_server_compacted_bytes_total",
                            "Record bytes moved by compaction since start.", "",
                            [compacted] { return (*compacted)[2].load(); });
  StoreStats first = store->Stats();
  struct PoolGauges { Gauge *capacity, *used, *free; };
  std::vector<PoolGauges> pools;
  for (const PoolStats& p : first.pools) {
    std::string l = "pool=\"" + MetricsRegistry::LabelValue(p.path) + "\"";
    pools.push_back({registry_->AddGauge("rpmp_server_pool_capacity_bytes", "Pool size.", l),
                     registry_->AddGauge("rpmp_server_pool_used_bytes",
                                         "Pool bytes held by segments, raw allocations and reserve.", l),
                     registry_->AddGauge("rpmp_server_pool_free_bytes", "Pool bytes free.", l)});
  }
  // Per tier (docs/storage-format.md "Tiers"): sums over the fast pools and over the
  // capacity pools; a tier without pools reports 0.
  struct TierGauges { Gauge *capacity, *used, *free; };
  std::vector<TierGauges> tiers;
  for (const char* name : {"fast", "capacity"}) {
    std::string l = std::string("tier=\"") + name + "\"";
    tiers.push_back({registry_->AddGauge("rpmp_server_tier_capacity_bytes", "Pool bytes of a tier.", l),
                     registry_->AddGauge("rpmp_server_tier_used_bytes", "Used pool bytes of a tier.", l),
                     registry_->AddGauge("rpmp_server_tier_free_bytes", "Free pool bytes of a tier.", l)});
  }
  registry_->AddSampler([=] {
    StoreStats st = store->Stats();
    namespaces->Set(static_cast<double>(st.namespaces));
    keys->Set(static_cast<double>(st.keys));
    records->Set(static_cast<double>(st.records));
    segments->Set(static_cast<double>(st.segments));
    live->Set(static_cast<double>(st.live_bytes));
    dead->Set(static_cast<double>(st.dead_bytes));
    (*compacted)[0] = static_cast<double>(st.compacted_segments);
    (*compacted)[1] = static_cast<double>(st.compacted_records);
    (*compacted)[2] = static_cast<double>(st.compacted_bytes);
    for (size_t i = 0; i < pools.size() && i < st.pools.size(); i++) {
      pools[i].capacity->Set(static_cast<double>(st.pools[i].capacity));
      pools[i].used->Set(static_cast<double>(st.pools[i].used));
      pools[i].free->Set(static_cast<double>(st.pools[i].free));
    }
    double sum[2][3] = {};
    for (const PoolStats& p : st.pools) {
      double* t = sum[p.capacity_tier ? 1 : 0];
      t[0] += static_cast<double>(p.capacity), t[1] += static_cast<double>(p.used), t[2] += static_cast<double>(p.free);
    }
    for (size_t i = 0; i < tiers.size(); i++) {
      tiers[i].capacity->Set(sum[i][0]);
      tiers[i].used->Set(sum[i][1]);
      tiers[i].free->Set(sum[i][2]);
    }
  });
}

void ServerMetrics::SampleCompactor(const Compactor* compactor) {
  registry_->AddGaugeFunc("rpmp_server_compaction_enabled", "1 when background compaction is on.", "",
                          [compactor] { return compactor->status().enabled ? 1.0 : 0.0; });
  registry_->AddGaugeFunc("rpmp_server_compaction_running",
                          "1 while a compaction pass is moving records.", "",
                          [compactor] { return compactor->status().running ? 1.0 : 0.0; });
  registry_->AddCounterFunc("rpmp_server_compaction_steps_total",
                            "Compaction steps that moved records.", "",
                            [compactor] { return static_cast<double>(compactor->status().steps); });
  registry_->AddGaugeFunc("rpmp_server_compaction_last_run_timestamp_seconds",
                          "Unix time of the end of the last step that moved records (0 = never).", "",
                          [compactor] {
                            return static_cast<double>(compactor->status().last_run_unix_ms) / 1000.0;
                          });
}

}  // namespace rpmp
