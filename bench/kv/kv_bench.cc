// rpmp-kv-bench: YCSB-style key-value workloads (A: 50% read 50% update, B: 95/5,
// C: read only, F: 50% read, 50% read-modify-write) with a Zipfian key choice, driven
// with the same keys, values and threads against each target named on the command
// line: RPMP (one server or a cluster) and Redis. Prints its setup first, then one line
// per target, workload and value size:
//   workload=B target=rpmp size=4096 keys=... threads=2 ops=... ops_per_s=...
//   p50_us=... p99_us=... p999_us=... errors=...
// then the ratio of each target's ops/s to the baseline target's (default: the first).
// bench/kv/run-kv-bench.sh starts the servers and adds fi_pingpong and loopback TCP.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <map>
#include <random>
#include <stdexcept>
#include <thread>
#include <unistd.h>

#include "bench/kv/kv_target.h"
#include "rpmp/client.h"
#include "bench/kv/zipfian.h"
#include "common/config_util.h"

namespace rpmp::bench {
namespace {

using Clock = std::chrono::steady_clock;

struct Target { std::string label, spec; };

struct Config {
  std::vector<Target> targets;
  std::vector<std::string> workloads = {"A", "B", "C", "F"};
  std::vector<uint64_t> sizes = {100, 4096, 65536};
  uint64_t keys = 1000000, max_data = 2ull << 30;
  int threads = 2;
  double seconds = 5, theta = 0.99;
  uint32_t replicas = 1;
  std::string ns = "kv-bench", baseline;
  std::string provider = ClientOptions().provider;
};

struct Result {
  uint64_t ops = 0, errors = 0;
  std::vector<uint32_t> lat_us;
  std::string first_error;
  void Fail(const Status& st) {
    if (errors++ == 0) first_error = st.ToString();
  }
};

std::string KeyName(uint64_t i) {
  char b[32];
  std::snprintf(b, sizeof b, "user%012llu", static_cast<unsigned long long>(i));
  return b;
}

uint32_t Percentile(const std::vector<uint32_t>& sorted, double p) {
  if (sorted.empty()) return 0;
  return sorted[std::min(sorted.size() - 1, static_cast<size_t>(p * sorted.size()))];
}

// Fraction of operations that are reads; the rest are updates (A, B) or
// read-modify-writes (F).
double ReadFraction(const std::string& w) {
  if (w == "A" || w == "F") return 0.5;
  if (w == "B") return 0.95;
  return 1.0;
}

Status Load(const Config& cfg, const Target& t, uint64_t keys, uint64_t size) {
  std::vector<std::thread> threads;
  std::vector<Status> errors(cfg.threads);
  for (int tid = 0; tid < cfg.threads; tid++) {
    threads.emplace_back([&, tid] {
      StatusOr<std::unique_ptr<KvTarget>> kv = OpenKvTarget(t.spec, cfg.ns, cfg.replicas, size, cfg.provider);
      if (!kv.ok()) { errors[tid] = kv.status(); return; }
      std::string value(size, static_cast<char>('a' + tid));
      for (uint64_t k = tid; k < keys; k += cfg.threads) {
        Status st = (*kv)->Put(KeyName(k), value);
        if (!st.ok()) { errors[tid] = st; return; }
      }
    });
  }
  for (auto& th : threads) th.join();
  for (const Status& st : errors) if (!st.ok()) return st;
  return Status::Ok();
}

void RunThread(const Config& cfg, KvTarget* kv, const std::string& w, uint64_t keys, uint64_t size,
               int tid, Clock::time_point until, Result* r) {
  ZipfianChooser zipf(keys, cfg.theta, 1000 + tid);
  std::mt19937_64 rng(2000 + tid);
  std::uniform_real_distribution<double> coin(0.0, 1.0);
  std::string value(size, static_cast<char>('A' + tid));
  const double reads = ReadFraction(w);
  r->lat_us.reserve(1 << 20);
  while (Clock::now() < until) {
    std::string key = KeyName(zipf.Next());
    auto t0 = Clock::now();
    Status st;
    size_t got = 0;
    if (coin(rng) < reads) {
      st = kv->Get(key, &got);
      if (st.ok() && got != size) st = Status::DataLoss("read " + std::to_string(got) + " bytes of " + key);
    } else if (w == "F") {
      st = kv->Get(key, &got);
      if (st.ok()) st = kv->Put(key, value);
    } else {
      st = kv->Put(key, value);
    }
    if (!st.ok()) { r->Fail(st); continue; }
    r->ops++;
    r->lat_us.push_back(static_cast<uint32_t>(
        std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - t0).count()));
  }
}

int Run(const Config& cfg) {
#ifndef NDEBUG
  std::printf("WARNING: assertions are enabled (debug build): figures are not representative\n");
#endif
  std::printf("rpmp-kv-bench: threads=%d seconds=%.1f theta=%.2f keys=%llu max_data=%llu cores=%ld targets=",
              cfg.threads, cfg.seconds, cfg.theta, static_cast<unsigned long long>(cfg.keys),
              static_cast<unsigned long long>(cfg.max_data), sysconf(_SC_NPROCESSORS_ONLN));
  for (const Target& t : cfg.targets) std::printf("%s=%s ", t.label.c_str(), t.spec.c_str());
  std::printf("\n");
  std::map<std::pair<std::string, uint64_t>, std::map<std::string, double>> ops_per_s;
  bool failed = false;
  for (uint64_t size : cfg.sizes) {
    uint64_t keys = std::max<uint64_t>(1, std::min(cfg.keys, cfg.max_data / size));
    for (const Target& t : cfg.targets) {
      auto l0 = Clock::now();
      Status st = Load(cfg, t, keys, size);
      if (!st.ok()) {
        std::fprintf(stderr, "rpmp-kv-bench: loading %s: %s\n", t.label.c_str(), st.ToString().c_str());
        return 1;
      }
      std::printf("load target=%s size=%llu keys=%llu seconds=%.1f\n", t.label.c_str(),
                  static_cast<unsigned long long>(size), static_cast<unsigned long long>(keys),
                  std::chrono::duration<double>(Clock::now() - l0).count());
      for (const std::string& w : cfg.workloads) {
        // Connect first: the clock runs only while operations do.
        std::vector<std::unique_ptr<KvTarget>> conns;
        for (int tid = 0; tid < cfg.threads; tid++) {
          StatusOr<std::unique_ptr<KvTarget>> kv = OpenKvTarget(t.spec, cfg.ns, cfg.replicas, size, cfg.provider);
          if (!kv.ok()) {
            std::fprintf(stderr, "rpmp-kv-bench: connecting to %s: %s\n", t.label.c_str(),
                         kv.status().ToString().c_str());
            return 1;
          }
          conns.push_back(std::move(kv).value());
        }
        std::vector<Result> results(cfg.threads);
        std::vector<std::thread> threads;
        auto t0 = Clock::now();
        auto until = t0 + std::chrono::milliseconds(static_cast<int64_t>(cfg.seconds * 1000));
        for (int tid = 0; tid < cfg.threads; tid++)
          threads.emplace_back(RunThread, std::cref(cfg), conns[tid].get(), std::cref(w), keys, size, tid,
                               until, &results[tid]);
        for (auto& th : threads) th.join();
        double secs = std::chrono::duration<double>(Clock::now() - t0).count();
        Result all;
        for (Result& r : results) {
          all.ops += r.ops;
          all.errors += r.errors;
          if (all.first_error.empty()) all.first_error = r.first_error;
          all.lat_us.insert(all.lat_us.end(), r.lat_us.begin(), r.lat_us.end());
        }
        std::sort(all.lat_us.begin(), all.lat_us.end());
        double rate = all.ops / secs;
        ops_per_s[{w, size}][t.label] = rate;
        std::printf("workload=%s target=%s size=%llu keys=%llu threads=%d ops=%llu ops_per_s=%.0f "
                    "p50_us=%u p99_us=%u p999_us=%u errors=%llu\n",
                    w.c_str(), t.label.c_str(), static_cast<unsigned long long>(size),
                    static_cast<unsigned long long>(keys), cfg.threads, static_cast<unsigned long long>(all.ops),
                    rate, Percentile(all.lat_us, 0.5), Percentile(all.lat_us, 0.99),
                    Percentile(all.lat_us, 0.999), static_cast<unsigned long long>(all.errors));
        if (all.errors > 0) {
          std::printf("  first error: %s\n", all.first_error.c_str());
          failed = true;
        }
        if (all.ops == 0) {
          std::printf("  no operation completed in %.1f s\n", secs);
          failed = true;
        }
        std::fflush(stdout);
      }
    }
  }
  const std::string& base = cfg.baseline.empty() ? cfg.targets.front().label : cfg.baseline;
  for (const auto& [ws, by_target] : ops_per_s) {
    auto b = by_target.find(base);
    if (b == by_target.end() || b->second <= 0) continue;
    for (const auto& [label, rate] : by_target) {
      if (label == base) continue;
      std::printf("ratio workload=%s size=%llu %s_over_%s=%.2f\n", ws.first.c_str(),
                  static_cast<unsigned long long>(ws.second), label.c_str(), base.c_str(), rate / b->second);
    }
  }
  return failed ? 1 : 0;
}

std::vector<std::string> Split(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t end = s.find(sep, start);
    if (end == std::string::npos) end = s.size();
    if (end > start) out.push_back(s.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

int Main(int argc, char** argv) {
  Config cfg;
  const char* usage =
      "usage: rpmp-kv-bench --target LABEL=SPEC [--target LABEL=SPEC ...]\n"
      "         SPEC: rpmp:HOST:PORT | rpmp-cluster:HOST:PORT[,HOST:PORT] | redis:HOST:PORT\n"
      "       [--workloads A,B,C,F] [--sizes 100,4k,64k] [--keys N] [--max-data SIZE]\n"
      "       [--threads N] [--seconds S] [--theta Z] [--replicas R] [--baseline LABEL]\n"
      "       [--provider P]   (of rpmp: targets; default auto, as the server's)\n"
      "  keys per size = min(--keys, --max-data / size); the baseline defaults to the first target\n";
  for (int i = 1; i < argc; i++) {
    std::string f = argv[i];
    if (f == "--help" || f == "-h") { std::fputs(usage, stdout); return 0; }
    if (i + 1 >= argc) { std::fprintf(stderr, "rpmp-kv-bench: %s needs a value\n%s", f.c_str(), usage); return 2; }
    std::string v = argv[++i];
    try {
      if (f == "--target") {
        size_t eq = v.find('=');
        if (eq == std::string::npos || eq == 0) throw std::invalid_argument(v);
        cfg.targets.push_back({v.substr(0, eq), v.substr(eq + 1)});
      } else if (f == "--workloads") {
        cfg.workloads = Split(v, ',');
        for (const std::string& w : cfg.workloads)
          if (w != "A" && w != "B" && w != "C" && w != "F") throw std::invalid_argument(w);
      } else if (f == "--sizes") {
        cfg.sizes.clear();
        for (const std::string& s : Split(v, ',')) {
          StatusOr<uint64_t> n = ParseSize(s);
          if (!n.ok() || *n == 0) throw std::invalid_argument(s);
          cfg.sizes.push_back(*n);
        }
      } else if (f == "--max-data") {
        StatusOr<uint64_t> n = ParseSize(v);
        if (!n.ok()) throw std::invalid_argument(v);
        cfg.max_data = *n;
      } else if (f == "--keys") cfg.keys = std::stoull(v);
      else if (f == "--threads") cfg.threads = std::stoi(v);
      else if (f == "--seconds") cfg.seconds = std::stod(v);
      else if (f == "--theta") cfg.theta = std::stod(v);
      else if (f == "--replicas") cfg.replicas = static_cast<uint32_t>(std::stoul(v));
      else if (f == "--baseline") cfg.baseline = v;
      else if (f == "--provider") cfg.provider = v;
      else { std::fprintf(stderr, "rpmp-kv-bench: unknown flag %s\n%s", f.c_str(), usage); return 2; }
    } catch (const std::exception&) {
      std::fprintf(stderr, "rpmp-kv-bench: bad value '%s' for %s\n", v.c_str(), f.c_str());
      return 2;
    }
  }
  if (cfg.targets.empty() || cfg.threads < 1 || cfg.seconds <= 0 || cfg.keys < 1 || cfg.theta <= 0 ||
      cfg.theta >= 1 || cfg.replicas < 1) {
    std::fprintf(stderr, "rpmp-kv-bench: at least one --target; counts and seconds positive; 0 < theta < 1\n%s",
                 usage);
    return 2;
  }
  return Run(cfg);
}

}  // namespace
}  // namespace rpmp::bench

int main(int argc, char** argv) { return rpmp::bench::Main(argc, argv); }
