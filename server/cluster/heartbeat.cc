// Implementation of ClusterAgent: the heartbeat loop.
#include "server/cluster/heartbeat.h"

#include <algorithm>

#include "common/config_util.h"
#include "common/log.h"
#include "common/thread_name.h"

namespace rpmp {

ClusterAgent::ClusterAgent(Store* store, ProxyClient* proxy, Replicator* replicator,
                           std::string endpoint, std::chrono::milliseconds interval)
    : store_(store), proxy_(proxy), replicator_(replicator), endpoint_(std::move(endpoint)),
      interval_(interval) {}

ClusterAgent::~ClusterAgent() { Stop(); }

void ClusterAgent::Start() {
  thread_ = std::thread([this] {
    NameThisThread("rpmp-heartbeat");
    Loop();
  });
}

void ClusterAgent::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

namespace {
// Appends store usage figures to a heartbeat's repeated NamespaceBytes field.
void AddUsage(const std::vector<NamespaceUsage>& usage,
              google::protobuf::RepeatedPtrField<v1::NamespaceBytes>* out) {
  for (const NamespaceUsage& u : usage) {
    v1::NamespaceBytes* nb = out->Add();
    nb->set_name(u.ns);
    nb->set_bytes(u.bytes);
  }
}
}  // namespace

Status ClusterAgent::Beat() {
  StoreStats st = store_->Stats();
  v1::HeartbeatRequest req;
  req.set_node_id(store_->NodeId());
  req.set_endpoint(endpoint_);
  uint64_t capacity = 0, used = 0, free = 0;
  for (const PoolStats& p : st.pools) {
    capacity += p.capacity;
    used += p.used;
    free += p.free;
    if (p.capacity_tier) {
      req.set_capacity_tier_capacity(req.capacity_tier_capacity() + p.capacity);
      req.set_capacity_tier_free(req.capacity_tier_free() + p.free);
    } else {
      req.set_fast_capacity(req.fast_capacity() + p.capacity);
      req.set_fast_free(req.fast_free() + p.free);
    }
  }
  std::vector<std::string> quota_prefixes = StartQuotaReport();
  if (!quota_prefixes.empty()) {
    AddUsage(store_->NamespaceBytes(quota_prefixes), req.mutable_namespace_bytes());
  }
  if (capacity >= kLargeNamespaceFraction) {
    AddUsage(store_->NamespacesOver(capacity / kLargeNamespaceFraction), req.mutable_large_namespaces());
  }
  req.set_capacity(capacity);
  req.set_used(used);
  req.set_free(free);
  req.set_pools(static_cast<uint32_t>(st.pools.size()));
  req.set_known_epoch(epoch_.load());
  for (const std::string& ns : acks_) req.add_deleted_namespaces(ns);
  auto sent = std::chrono::steady_clock::now();
  RPMP_ASSIGN_OR_RETURN(v1::HeartbeatReply reply, proxy_->Heartbeat(req));
  // The leader counts silence from when it received this beat, later than `sent`.
  std::chrono::milliseconds lease(reply.lease_ms() > 0 ? reply.lease_ms() : 1000);
  int64_t until = (sent + lease).time_since_epoch().count();
  if (until > lease_until_ns_.load()) {
    std::lock_guard<std::mutex> lock(mu_);
    lease_until_ns_.store(until);
  }
  cv_.notify_all();
  acks_.clear();  // the leader has them
  NoteByteQuotas(reply);
  for (const std::string& ns : reply.delete_namespaces()) {
    if (ApplyDeletion(ns)) acks_.push_back(ns);
  }
  if (!registered_) {
    RPMP_LOG_INFO("registered with proxy leader %s as node %016llx (%s), epoch %llu", reply.leader().c_str(),
                  static_cast<unsigned long long>(req.node_id()), endpoint_.c_str(),
                  static_cast<unsigned long long>(reply.epoch()));
    registered_ = true;
  }
  if (reply.epoch() != epoch_.load()) {
    epoch_.store(reply.epoch());
    if (replicator_ != nullptr) replicator_->ScanSoon();
  }
  if (reply.heartbeat_interval_ms() > 0) interval_ = std::chrono::milliseconds(reply.heartbeat_interval_ms());
  return Status::Ok();
}

namespace {
bool Covers(const std::string& prefix, const std::string& ns) {
  return ns.compare(0, prefix.size(), prefix) == 0 && (ns.size() == prefix.size() || ns[prefix.size()] == '/');
}
}  // namespace

std::vector<std::string> ClusterAgent::StartQuotaReport() {
  std::lock_guard<std::mutex> lock(quota_mu_);
  std::vector<std::string> prefixes;
  for (const ByteQuota& q : byte_quotas_) prefixes.push_back(q.prefix);
  report_base_ = written_;  // the store's figures about to be sent include these
  return prefixes;
}

void ClusterAgent::NoteByteQuotas(const v1::HeartbeatReply& reply) {
  std::lock_guard<std::mutex> lock(quota_mu_);
  std::vector<ByteQuota> now;
  for (const v1::ByteQuota& q : reply.byte_quotas()) {
    ByteQuota b{q.prefix(), q.max_bytes(), q.used_bytes(), 0};
    // Writes since this heartbeat's report: counted by NoteWritten for the old list,
    // less what the report already held (a failed heartbeat changes nothing).
    for (size_t i = 0; i < byte_quotas_.size() && i < written_.size(); i++) {
      uint64_t base = i < report_base_.size() ? report_base_[i] : 0;
      if (byte_quotas_[i].prefix == b.prefix) b.written = written_[i] - std::min(base, written_[i]);
    }
    bool was_over = false, known = false;
    for (const ByteQuota& old : byte_quotas_) {
      if (old.prefix != b.prefix) continue;
      was_over = old.used >= old.max;
      known = old.max == b.max;
    }
    if (!known) {
      RPMP_LOG_INFO("byte quota of prefix %s: %s (%s used)", b.prefix.c_str(), HumanBytes(b.max).c_str(),
                    HumanBytes(b.used).c_str());
    }
    if (b.used >= b.max && !was_over) {
      RPMP_LOG_INFO("prefix %s is at its byte quota (%s of %s): refusing its writes", b.prefix.c_str(),
                    HumanBytes(b.used).c_str(), HumanBytes(b.max).c_str());
    } else if (b.used < b.max && was_over) {
      RPMP_LOG_INFO("prefix %s is within its byte quota again (%s of %s)", b.prefix.c_str(),
                    HumanBytes(b.used).c_str(), HumanBytes(b.max).c_str());
    }
    now.push_back(std::move(b));
  }
  byte_quotas_ = std::move(now);
  std::vector<std::pair<std::string, uint32_t>> sessions;
  for (const v1::SessionQuota& q : reply.session_quotas()) {
    bool known = false;
    for (const auto& old : session_quotas_) known = known || (old.first == q.prefix() && old.second == q.max_sessions());
    if (!known) RPMP_LOG_INFO("session quota of prefix %s: %u per server", q.prefix().c_str(), q.max_sessions());
    sessions.emplace_back(q.prefix(), q.max_sessions());
  }
  session_quotas_ = std::move(sessions);
  written_.assign(byte_quotas_.size(), 0);
  for (size_t i = 0; i < byte_quotas_.size(); i++) written_[i] = byte_quotas_[i].written;
  report_base_.assign(byte_quotas_.size(), 0);
}

void ClusterAgent::NoteWritten(const std::string& ns, uint64_t length) {
  std::lock_guard<std::mutex> lock(quota_mu_);
  for (size_t i = 0; i < byte_quotas_.size() && i < written_.size(); i++) {
    if (Covers(byte_quotas_[i].prefix, ns)) written_[i] += length;
  }
}

uint32_t ClusterAgent::SessionQuotaFor(const std::string& tenant_prefix, std::string* quota_prefix) const {
  // A credential's prefix ends with '/' ("spark/app-1/"); a quota names a namespace
  // ("spark/app-1" or "spark") and covers it and all under it.
  std::string name = tenant_prefix;
  if (!name.empty() && name.back() == '/') name.pop_back();
  std::lock_guard<std::mutex> lock(quota_mu_);
  uint32_t best = 0;
  for (const auto& [prefix, max] : session_quotas_) {
    if (max == 0 || !Covers(prefix, name) || (best != 0 && max >= best)) continue;
    best = max;
    *quota_prefix = prefix;
  }
  return best;
}

Status ClusterAgent::CheckQuota(const std::string& ns, uint64_t length) const {
  std::lock_guard<std::mutex> lock(quota_mu_);
  for (size_t i = 0; i < byte_quotas_.size(); i++) {
    const ByteQuota& q = byte_quotas_[i];
    if (!Covers(q.prefix, ns)) continue;
    uint64_t use = q.used + (i < written_.size() ? written_[i] : 0);
    if (use + length > q.max || use + length < use) {
      return Status::NoSpace("quota exceeded: prefix \"" + q.prefix + "\" uses " + HumanBytes(use) + " of its " +
                             HumanBytes(q.max) + " byte quota, a write of " + HumanBytes(length) + " to " + ns +
                             " would pass it (delete data, or raise it: rpmpctl quota set " + q.prefix + " --bytes N)");
    }
  }
  return Status::Ok();
}

bool ClusterAgent::ApplyDeletion(const std::string& ns) {
  Status d = store_->DeleteNamespace(ns);
  if (d.ok()) RPMP_LOG_INFO("deleted namespace %s (told by the proxy leader)", ns.c_str());
  else if (!d.IsNotFound()) {
    RPMP_LOG_WARN("cannot delete namespace %s: %s", ns.c_str(), d.ToString().c_str());
    return false;
  }
  if (replicator_ != nullptr) replicator_->Forget(ns);
  return true;
}

bool ClusterAgent::LeaseValid() const {
  return std::chrono::steady_clock::now().time_since_epoch().count() < lease_until_ns_.load();
}

bool ClusterAgent::WaitLease(std::chrono::milliseconds max) {
  if (LeaseValid()) return true;
  std::unique_lock<std::mutex> lock(mu_);
  return cv_.wait_for(lock, max, [this] { return stop_ || LeaseValid(); }) && LeaseValid();
}

void ClusterAgent::Loop() {
  auto last_log = std::chrono::steady_clock::now() - std::chrono::hours(1);
  bool failing = false;
  while (true) {
    auto started = std::chrono::steady_clock::now();
    Status st = Beat();
    if (!st.ok()) {
      if (started - last_log > std::chrono::seconds(10)) {
        RPMP_LOG_WARN("heartbeat failed (still serving data, retrying every %lld ms): %s",
                      static_cast<long long>(interval_.count()), st.ToString().c_str());
        last_log = started;
      }
      failing = true;
    } else if (failing) {
      RPMP_LOG_INFO("heartbeats reach the proxy leader %s again", proxy_->leader().c_str());
      failing = false;
    }
    std::unique_lock<std::mutex> lock(mu_);
    if (cv_.wait_until(lock, started + interval_, [this] { return stop_; })) return;
  }
}

}  // namespace rpmp
