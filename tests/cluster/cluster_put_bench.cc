// cluster_put_bench: a quick throughput probe of cluster-mode puts, to compare
// replication factors on a running cluster (e.g. deploy/local-cluster.sh). Not a
// test. rpmp-bench is the real benchmark (server-direct); this one only measures
// what replication costs.
//   cluster_put_bench [--proxy LIST] [--size BYTES] [--threads N] [--seconds S] [--replicas R]...
// Prints one line per replication factor: ops/s, MiB/s, mean latency.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "rpmp/client.h"
#include "rpmp/cluster.h"

int main(int argc, char** argv) {
  using namespace rpmp;
  std::string proxy;
  size_t size = 65536;
  int threads = 4;
  double seconds = 5;
  std::vector<uint32_t> factors;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string f = argv[i], v = argv[i + 1];
    if (f == "--proxy") proxy = v;
    else if (f == "--size") size = std::stoul(v);
    else if (f == "--threads") threads = std::stoi(v);
    else if (f == "--seconds") seconds = std::stod(v);
    else if (f == "--replicas") factors.push_back(static_cast<uint32_t>(std::stoul(v)));
    else { std::fprintf(stderr, "unknown flag %s\n", f.c_str()); return 2; }
  }
  if (factors.empty()) factors = {1, 2};
  ClusterOptions o;
  StatusOr<std::unique_ptr<Client>> c = Client::ConnectCluster(ProxyList(proxy), o);
  if (!c.ok()) { std::fprintf(stderr, "%s\n", c.status().ToString().c_str()); return 1; }
  std::string value(size, 'v');
  for (uint32_t r : factors) {
    std::string ns = "bench/r" + std::to_string(r) + "/" + std::to_string(std::time(nullptr));
    StatusOr<NamespaceInfo> info = AsCluster(c->get())->CreateNamespace(ns, {r, 0, 0});
    if (!info.ok()) { std::fprintf(stderr, "%s\n", info.status().ToString().c_str()); return 1; }
    std::atomic<uint64_t> ops{0}, errors{0};
    auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    auto start = std::chrono::steady_clock::now();
    std::vector<std::thread> ts;
    for (int t = 0; t < threads; t++)
      ts.emplace_back([&, t] {
        for (uint64_t i = 0; std::chrono::steady_clock::now() < until; i++) {
          Status st = (*c)->Put(ns, std::to_string(t) + "/" + std::to_string(i % 256), value.data(), value.size());
          (st.ok() ? ops : errors)++;
        }
      });
    for (auto& t : ts) t.join();
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("R=%u size=%zu threads=%d: %.0f puts/s, %.1f MiB/s, mean latency %.3f ms, %llu errors\n", r, size,
                threads, ops / secs, ops * size / secs / 1048576.0, secs * threads * 1000.0 / std::max<uint64_t>(ops, 1),
                static_cast<unsigned long long>(errors.load()));
    AsCluster(c->get())->DeleteNamespaces(ns, false);
  }
  return 0;
}
