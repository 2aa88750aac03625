// rpmp-bench: named workloads against one rpmp-server or a cluster, in the style of
// db_bench. Prints its configuration, the loopback TCP limit of this machine for each
// value size (measured in the same run), then one line per workload and size:
//   workload=put size=1048576 threads=4 depth=4 ops=... ops_per_s=...
//   client_cpu_us_per_op=... MBps=... p50_us=... p99_us=... p999_us=... tcp_MBps=...
//   ratio=... errors=... baseline_path=client_loopback
// ratio = MBps / tcp_MBps. The baseline is a TCP stream over this client host's own
// loopback (baseline_path=client_loopback), also when the servers are remote: then it is
// the client's own stack's limit, not the network's (a note line says so).
// client_cpu_us_per_op is this process's user + system CPU over the workload (from the
// moment every thread has set up), per completed op. Workloads: put, append, get, write,
// read (raw memory). Cluster mode with --groups N spreads the keys over namespaces
// NS/g0..NS/g(N-1), consecutive ops rotating through them (in runs of --group-run K ops)
// as a Spark map task's partitions rotate through a shuffle's placement groups
// (RpmpShuffleCoordinates.groupOf). In cluster mode a buffer is
// memory of its namespace's primary (AllocBufferForWrite), as the plugin's are.
#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <sstream>
#include <sys/resource.h>
#include <thread>
#include <unistd.h>

#include "bench/tcp_baseline.h"
#include "common/config_util.h"
#include "rpmp/client.h"
#include "rpmp/cluster.h"
#include "transport/providers.h"

namespace rpmp::bench {
namespace {

using Clock = std::chrono::steady_clock;

struct Config {
  std::string server, proxies, provider = "auto";
  std::string ns = "rpmp-bench";
  uint32_t replicas = 1;  // cluster mode: copies of every record
  std::vector<std::string> workloads = {"put", "get"};
  std::vector<uint64_t> sizes = {4096, 1 << 20};
  int threads = 2, depth = 4, clients = 1, keys = 16;
  int groups = 1;     // cluster mode: namespaces the keys spread over (Namespaces())
  int group_run = 1;  // consecutive ops per group before the next (the plugin's run)
  double seconds = 5;
  bool verify = true;
};

struct Result {
  uint64_t ops = 0, bytes = 0, errors = 0;
  std::vector<uint32_t> lat_us;
  std::string first_error;
};

// The namespaces a workload writes: cfg.ns, or its groups NS/g0.. with --groups > 1.
std::vector<std::string> Namespaces(const Config& cfg) {
  if (cfg.groups <= 1) return {cfg.ns};
  std::vector<std::string> out;
  for (int g = 0; g < cfg.groups; g++) out.push_back(cfg.ns + "/g" + std::to_string(g));
  return out;
}

// The workload's clock starts once every thread has set up (buffers, raw allocations,
// connections opened on first use): Ready() blocks a thread until Open() gives the end
// time, so the time and CPU a workload line reports are its ops' only.
class StartGate {
 public:
  explicit StartGate(int threads) : waiting_(threads) {}
  Clock::time_point Ready() {
    std::unique_lock<std::mutex> l(mu_);
    if (--waiting_ == 0) cv_.notify_all();
    cv_.wait(l, [&] { return open_; });
    return until_;
  }
  void WaitAllReady() {
    std::unique_lock<std::mutex> l(mu_);
    cv_.wait(l, [&] { return waiting_ == 0; });
  }
  void Open(Clock::time_point until) {
    std::lock_guard<std::mutex> l(mu_);
    until_ = until;
    open_ = true;
    cv_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int waiting_;
  bool open_ = false;
  Clock::time_point until_;
};

// This process's user + system CPU so far, in microseconds.
double CpuMicros() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return (u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1e6 + u.ru_utime.tv_usec + u.ru_stime.tv_usec;
}

std::vector<std::string> Split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) if (!item.empty()) out.push_back(item);
  return out;
}

// One thread's share of a key-value workload, with `depth` async requests in flight.
void RunKvThread(Client& c, const Config& cfg, const std::string& workload, uint64_t size, int tid,
                 StartGate* gate, Result* r) {
  // bufs[lane * groups + g]: in cluster mode, memory of group g's primary (no copy).
  const std::vector<std::string> spaces = Namespaces(cfg);
  const size_t groups = spaces.size();
  std::vector<Buffer> bufs;
  for (int i = 0; i < cfg.depth; i++) {
    for (size_t g = 0; g < groups; g++) {
      StatusOr<Buffer> b = c.AllocBufferForWrite(spaces[g], size);
      if (!b.ok()) {
        r->errors++;
        r->first_error = b.status().ToString();
        gate->Ready();
        return;
      }
      std::memset(b->data(), 'a' + i, size);
      b->set_size(size);
      bufs.push_back(std::move(b).value());
    }
  }
  std::mutex mu;
  std::condition_variable cv;
  std::vector<bool> busy(cfg.depth, false);
  int in_flight = 0;
  uint64_t n = 0;
  // Appends only grow objects: stop at a byte budget so the pool never fills.
  const uint64_t append_budget = (1ull << 30) / static_cast<uint64_t>(cfg.threads);
  const Clock::time_point until = gate->Ready();
  while (Clock::now() < until) {
    if (workload == "append") {
      std::lock_guard<std::mutex> l(mu);
      if (r->bytes + static_cast<uint64_t>(in_flight) * size >= append_budget) break;
    }
    int lane;
    {
      std::unique_lock<std::mutex> l(mu);
      cv.wait(l, [&] { return in_flight < cfg.depth; });
      lane = static_cast<int>(std::find(busy.begin(), busy.end(), false) - busy.begin());
      busy[lane] = true;
      in_flight++;
    }
    size_t g = (n / static_cast<uint64_t>(cfg.group_run)) % groups;
    const std::string& ns = spaces[g];
    Buffer& buf = bufs[static_cast<size_t>(lane) * groups + g];
    std::string key = "t" + std::to_string(tid) + "-" + std::to_string(n++ % cfg.keys);
    auto t0 = Clock::now();
    Callback done = [&, lane, t0](Status st) {
      auto us = std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - t0).count();
      std::lock_guard<std::mutex> l(mu);
      if (st.ok()) {
        r->ops++;
        r->bytes += size;
        r->lat_us.push_back(static_cast<uint32_t>(us));
      } else if (r->errors++ == 0) {
        r->first_error = st.ToString();
      }
      busy[lane] = false;
      in_flight--;
      cv.notify_one();
    };
    if (workload == "put") c.PutAsync(ns, key, buf, 0, done);
    else if (workload == "append") c.AppendAsync(ns, "a" + key, buf, n, done);
    else c.GetAsync(ns, key, &buf, done);
  }
  std::unique_lock<std::mutex> l(mu);
  cv.wait(l, [&] { return in_flight == 0; });
}

// One thread's share of a raw-memory workload (blocking calls).
void RunRawThread(Client& c, const std::string& workload, uint64_t size, StartGate* gate, Result* r) {
  StatusOr<GlobalAddress> a = c.Alloc(size);
  if (!a.ok()) {
    r->errors++;
    r->first_error = a.status().ToString();
    gate->Ready();
    return;
  }
  std::string data(size, 'r');
  const Clock::time_point until = gate->Ready();
  while (Clock::now() < until) {
    auto t0 = Clock::now();
    Status st = workload == "write" ? c.Write(*a, data.data(), size) : c.Read(*a, data.data(), size);
    auto us = std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - t0).count();
    if (!st.ok()) { if (r->errors++ == 0) r->first_error = st.ToString(); break; }
    r->ops++;
    r->bytes += size;
    r->lat_us.push_back(static_cast<uint32_t>(us));
  }
  c.Free(*a);
}

Status Prepare(Client& c, const Config& cfg, uint64_t size) {
  std::string v(size, 'p');
  for (const std::string& ns : Namespaces(cfg))
    for (int t = 0; t < cfg.threads; t++)
      for (int k = 0; k < cfg.keys; k++)
        RPMP_RETURN_IF_ERROR(c.Put(ns, "t" + std::to_string(t) + "-" + std::to_string(k), v.data(), v.size()));
  return Status::Ok();
}

// Cluster mode: every namespace of the run exists with the asked replication. A
// workload's end deletes them to free the space, and the proxies refuse to create a
// name again until every node has acknowledged its deletion (FAILED_PRECONDITION, until
// their next heartbeat): that is retried for up to 30 s.
Status EnsureNamespaces(Client& c, const Config& cfg) {
  ClusterControl* cc = AsCluster(&c);
  if (cc == nullptr) return Status::Ok();
  auto deadline = Clock::now() + std::chrono::seconds(30);
  for (const std::string& ns : Namespaces(cfg)) {
    while (true) {
      StatusOr<NamespaceInfo> info = cc->CreateNamespace(ns, {cfg.replicas, 0, 0});
      if (info.ok() || info.status().code() == StatusCode::kAlreadyExists) break;
      if (info.status().code() != StatusCode::kFailedPrecondition || Clock::now() > deadline)
        return info.status().Annotate("creating namespace " + ns);
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
  return Status::Ok();
}

void DeleteNamespaces(Client& c, const Config& cfg) {
  for (const std::string& ns : Namespaces(cfg)) c.DeleteNamespace(ns);
}

uint32_t Percentile(std::vector<uint32_t>& v, double p) {
  if (v.empty()) return 0;
  size_t i = std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size())));
  return v[i];
}

// The first server endpoint that is not on this host's loopback, "" when all are: the
// --server address, or the endpoints of the cluster's nodes.
std::string RemoteServer(const Config& cfg, Client* c) {
  std::vector<std::string> endpoints;
  if (cfg.proxies.empty()) {
    endpoints.push_back(cfg.server);
  } else if (ClusterControl* cc = AsCluster(c)) {
    StatusOr<std::vector<NodeStats>> nodes = cc->StatNodes();
    if (nodes.ok())
      for (const NodeStats& n : *nodes) endpoints.push_back(n.endpoint);
  }
  for (const std::string& e : endpoints) {
    StatusOr<HostPort> hp = ParseHostPort(e);
    if (hp.ok() && !IsLoopbackHost(hp->host)) return e;
  }
  return "";
}

int Run(const Config& cfg) {
  std::vector<std::unique_ptr<Client>> clients;
  for (int i = 0; i < cfg.clients; i++) {
    ClientOptions o;
    o.provider = cfg.provider;
    o.name = "rpmp-bench";
    o.verify_checksums = cfg.verify;
    o.max_inflight = static_cast<uint32_t>(std::max(64, cfg.threads * cfg.depth + 4));
    StatusOr<std::unique_ptr<Client>> c = Status::Unavailable("");
    if (cfg.proxies.empty()) {
      c = Client::Connect(cfg.server, o);
    } else {
      ClusterOptions co;
      co.client = o;
      co.namespace_defaults.replicas = cfg.replicas;
      c = Client::ConnectCluster(ProxyList(cfg.proxies), co);
    }
    if (!c.ok()) { std::fprintf(stderr, "rpmp-bench: %s\n", c.status().ToString().c_str()); return 1; }
    clients.push_back(std::move(c).value());
  }
  if (!cfg.proxies.empty()) {  // fresh namespaces with the asked replication
    ClusterControl* cc = AsCluster(clients[0].get());
    for (const std::string& ns : Namespaces(cfg)) cc->DeleteNamespaces(ns, false);
    Status st = EnsureNamespaces(*clients[0], cfg);
    if (!st.ok()) {
      std::fprintf(stderr, "rpmp-bench: %s\n", st.ToString().c_str());
      return 1;
    }
  }
#ifndef NDEBUG
  std::printf("WARNING: assertions are enabled (debug build): figures are not representative\n");
#endif
  if (cfg.proxies.empty())
    std::printf("rpmp-bench: server=%s", cfg.server.c_str());
  else
    std::printf("rpmp-bench: cluster proxies=%s replicas=%u namespace=%s groups=%d", cfg.proxies.c_str(),
                cfg.replicas, cfg.ns.c_str(), cfg.groups);
  // provider= names the provider in use ("auto" resolved on this host); provider_setting=
  // what was asked for, when that was "auto".
  StatusOr<std::string> resolved = ResolveProvider(cfg.provider, "");
  std::string provider = resolved.ok() ? *resolved : cfg.provider;
  if (provider != cfg.provider) provider += " provider_setting=" + cfg.provider;
  std::printf(" provider=%s threads=%d depth=%d clients=%d seconds=%.1f verify_checksums=%s cores=%ld\n",
              provider.c_str(), cfg.threads, cfg.depth, cfg.clients, cfg.seconds,
              cfg.verify ? "on" : "off", sysconf(_SC_NPROCESSORS_ONLN));
  std::string remote = RemoteServer(cfg, clients[0].get());
  if (!remote.empty())
    std::printf("note: the servers are on other hosts (%s): tcp_MBps (baseline_path=client_loopback) is this "
                "client's own loopback TCP stream, the limit of its network stack, not of the network to the "
                "servers\n", remote.c_str());
  // The limit is the median of three short streams: one stream is too noisy on a
  // small shared machine.
  auto round = std::chrono::milliseconds(static_cast<int64_t>(std::min(2.0, cfg.seconds) * 1000 / 3) + 1);
  for (uint64_t size : cfg.sizes) {
    std::vector<double> rounds;
    for (int i = 0; i < 3; i++) rounds.push_back(LoopbackTcpMBps(size, round));
    std::sort(rounds.begin(), rounds.end());
    double tcp = rounds[1];
    std::printf("baseline size=%llu tcp_MBps=%.1f (median of 3 loopback TCP streams: %.0f %.0f %.0f) "
                "baseline_path=client_loopback\n",
                static_cast<unsigned long long>(size), tcp, rounds[0], rounds[1], rounds[2]);
    for (const std::string& w : cfg.workloads) {
      if (Status st = EnsureNamespaces(*clients[0], cfg); !st.ok()) {
        std::fprintf(stderr, "rpmp-bench: %s\n", st.ToString().c_str());
        return 1;
      }
      if (w == "get") {
        Status st = Prepare(*clients[0], cfg, size);
        if (!st.ok()) { std::fprintf(stderr, "rpmp-bench: preparing get: %s\n", st.ToString().c_str()); return 1; }
      }
      std::vector<Result> results(cfg.threads);
      std::vector<std::thread> threads;
      StartGate gate(cfg.threads);
      for (int t = 0; t < cfg.threads; t++) {
        Client& c = *clients[t % clients.size()];
        threads.emplace_back([&, t] {
          if (w == "write" || w == "read") RunRawThread(c, w, size, &gate, &results[t]);
          else RunKvThread(c, cfg, w, size, t, &gate, &results[t]);
        });
      }
      gate.WaitAllReady();
      double cpu0 = CpuMicros();
      auto t0 = Clock::now();
      gate.Open(t0 + std::chrono::milliseconds(static_cast<int64_t>(cfg.seconds * 1000)));
      for (auto& t : threads) t.join();
      double secs = std::chrono::duration<double>(Clock::now() - t0).count();
      double cpu_us = CpuMicros() - cpu0;
      Result all;
      for (Result& r : results) {
        all.ops += r.ops;
        all.bytes += r.bytes;
        all.errors += r.errors;
        if (all.first_error.empty()) all.first_error = r.first_error;
        all.lat_us.insert(all.lat_us.end(), r.lat_us.begin(), r.lat_us.end());
      }
      std::sort(all.lat_us.begin(), all.lat_us.end());
      double mbps = all.bytes / secs / 1e6;
      std::printf("workload=%s size=%llu threads=%d depth=%d ops=%llu ops_per_s=%.0f client_cpu_us_per_op=%.1f "
                  "MBps=%.1f p50_us=%u p99_us=%u p999_us=%u tcp_MBps=%.1f ratio=%.2f errors=%llu "
                  "baseline_path=client_loopback\n",
                  w.c_str(), static_cast<unsigned long long>(size), cfg.threads,
                  (w == "write" || w == "read") ? 1 : cfg.depth, static_cast<unsigned long long>(all.ops),
                  all.ops / secs, all.ops > 0 ? cpu_us / all.ops : 0.0, mbps, Percentile(all.lat_us, 0.5),
                  Percentile(all.lat_us, 0.99), Percentile(all.lat_us, 0.999), tcp, tcp > 0 ? mbps / tcp : 0,
                  static_cast<unsigned long long>(all.errors));
      if (all.errors > 0) std::printf("  first error: %s\n", all.first_error.c_str());
      std::fflush(stdout);
      if (w == "append" || w == "put") DeleteNamespaces(*clients[0], cfg);  // free the space
    }
    DeleteNamespaces(*clients[0], cfg);
  }
  return 0;
}

int Main(int argc, char** argv) {
  Config cfg;
  const char* usage =
      "usage: rpmp-bench (--server HOST:PORT | --proxy HOST:PORT[,...] [--replicas R])\n"
      "                  [--workloads put,get,append,write,read] [--sizes 4k,1m]\n"
      "                  [--threads N] [--depth N] [--clients N] [--seconds S] [--keys N]\n"
      "                  [--provider P] [--no-verify] [--namespace NS] [--groups N [--group-run K]]\n"
      "  --namespace: the namespace it writes (default rpmp-bench); give each of several\n"
      "  rpmp-bench processes against one server its own\n"
      "  --proxy (or RPMP_PROXIES) benchmarks a cluster: namespace rpmp-bench-rR with R copies\n"
      "  --groups N (cluster): keys spread over namespaces NS/g0..NS/g(N-1), ops rotating\n"
      "  through them, K at a time (default 1), as a Spark shuffle's partitions rotate through\n"
      "  its placement groups\n";
  for (int i = 1; i < argc; i++) {
    std::string f = argv[i];
    if (f == "--help" || f == "-h") { std::fputs(usage, stdout); return 0; }
    if (f == "--no-verify") { cfg.verify = false; continue; }
    if (i + 1 >= argc) { std::fprintf(stderr, "rpmp-bench: %s needs a value\n%s", f.c_str(), usage); return 2; }
    std::string v = argv[++i];
    try {
      if (f == "--server") cfg.server = v;
      else if (f == "--proxy") cfg.proxies = v;
      else if (f == "--replicas") cfg.replicas = static_cast<uint32_t>(std::stoul(v));
      else if (f == "--provider") cfg.provider = v;
      else if (f == "--namespace") cfg.ns = v;
      else if (f == "--workloads") cfg.workloads = Split(v);
      else if (f == "--threads") cfg.threads = std::stoi(v);
      else if (f == "--depth") cfg.depth = std::stoi(v);
      else if (f == "--clients") cfg.clients = std::stoi(v);
      else if (f == "--keys") cfg.keys = std::stoi(v);
      else if (f == "--groups") cfg.groups = std::stoi(v);
      else if (f == "--group-run") cfg.group_run = std::stoi(v);
      else if (f == "--seconds") cfg.seconds = std::stod(v);
      else if (f == "--sizes") {
        cfg.sizes.clear();
        for (const std::string& s : Split(v)) {
          StatusOr<uint64_t> n = ParseSize(s);
          if (!n.ok()) { std::fprintf(stderr, "rpmp-bench: %s\n", n.status().message().c_str()); return 2; }
          cfg.sizes.push_back(*n);
        }
      } else { std::fprintf(stderr, "rpmp-bench: unknown flag %s\n%s", f.c_str(), usage); return 2; }
    } catch (const std::exception&) {
      std::fprintf(stderr, "rpmp-bench: bad value '%s' for %s\n", v.c_str(), f.c_str());
      return 2;
    }
  }
  for (const std::string& w : cfg.workloads)
    if (w != "put" && w != "get" && w != "append" && w != "write" && w != "read") {
      std::fprintf(stderr, "rpmp-bench: unknown workload '%s'\n%s", w.c_str(), usage);
      return 2;
    }
  if (cfg.server.empty() && cfg.proxies.empty() && std::getenv("RPMP_PROXIES") != nullptr)
    cfg.proxies = std::getenv("RPMP_PROXIES");
  if (!cfg.proxies.empty() && cfg.ns == "rpmp-bench") cfg.ns = "rpmp-bench-r" + std::to_string(cfg.replicas);
  if ((cfg.server.empty() && cfg.proxies.empty()) || cfg.replicas < 1 || cfg.threads < 1 || cfg.depth < 1 || cfg.clients < 1 || cfg.seconds <= 0 ||
      cfg.keys < 1 || cfg.groups < 1 || cfg.group_run < 1 || (cfg.groups > 1 && cfg.proxies.empty())) {
    std::fprintf(stderr, "rpmp-bench: --server or --proxy is required; counts and seconds must be positive; "
                 "--groups needs --proxy\n%s", usage);
    return 2;
  }
  return Run(cfg);
}

}  // namespace
}  // namespace rpmp::bench

int main(int argc, char** argv) { return rpmp::bench::Main(argc, argv); }
