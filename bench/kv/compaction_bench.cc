// rpmp-compaction-bench: what background compaction costs foreground requests, and
// whether an overwrite workload keeps pool usage bounded. Against one running
// rpmp-server (bench/kv/run-compaction-bench.sh starts it):
//
//   --mode p99: builds a backlog of segments 40% dead (below the default threshold),
//   measures 4 KiB put and get latency of `--threads` depth-1 clients while
//   compaction is idle, then overwrites another 15% of the backlog (the segments pass
//   the threshold, compaction starts) and measures the same clients while STAT shows
//   compaction running, then once more after it finished. One line per phase and op
//   (compaction_running: share of STAT samples during the phase that said running),
//   then the p99 ratios:
//     phase=idle op=get ops=... p50_us=... p99_us=... p999_us=... compaction_running=0.00
//     ratio_get_p99=... ratio_put_p99=...   (target <= 2)
//
//   --mode overwrite: overwrites `--keys` keys of `--value` bytes until `--factor`
//   times the pool's capacity was written (a small kept key every 16 puts, which pins
//   segments without compaction), sampling the pool's used bytes; then checks every
//   key's last value and prints written/max-used/final-used.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "common/config_util.h"
#include "rpmp/client.h"

namespace rpmp::bench {
namespace {

using Clock = std::chrono::steady_clock;

struct Config {
  std::string server, mode = "p99";
  int threads = 2;
  double seconds = 2;
  uint64_t backlog_bytes = 240ull << 20, backlog_value = 16 << 10;
  uint64_t keys = 48, value = 64 << 10, factor = 10;
};

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "rpmp-compaction-bench: %s\n", what.c_str());
  std::exit(1);
}

std::unique_ptr<Client> Connect(const Config& c) {
  ClientOptions o;
  o.timeout = std::chrono::seconds(30);
  auto cl = Client::Connect(c.server, o);
  if (!cl.ok()) Die("connect " + c.server + ": " + cl.status().ToString());
  return std::move(cl).value();
}

std::string Key(const char* prefix, uint64_t i) { return prefix + std::to_string(i); }

// Puts keys [0, n) whose index passes `pick`, from `threads` clients.
template <typename Pick>
void PutRange(const Config& c, const char* prefix, uint64_t n, uint64_t size, Pick pick) {
  std::vector<std::thread> ts;
  for (int t = 0; t < c.threads; t++) {
    ts.emplace_back([&, t] {
      auto cl = Connect(c);
      std::string v(size, static_cast<char>('a' + t));
      for (uint64_t i = t; i < n; i += c.threads) {
        if (!pick(i)) continue;
        Status st = cl->Put("cbench", Key(prefix, i), v.data(), v.size());
        if (!st.ok()) Die("backlog put: " + st.ToString());
      }
    });
  }
  for (auto& t : ts) t.join();
}

struct Latencies {
  std::vector<uint32_t> put, get;
};

uint32_t Pct(std::vector<uint32_t>& v, double p) {
  if (v.empty()) return 0;
  return v[std::min(v.size() - 1, static_cast<size_t>(p * v.size()))];
}

// `threads` depth-1 clients alternating a 4 KiB put and a get of their own keys for
// c.seconds; meanwhile STAT is sampled to report the share of samples where
// compaction was running, and the bytes it moved.
Latencies Probe(const Config& c, const char* phase, Client* stat_client) {
  std::vector<Latencies> per(c.threads);
  std::atomic<bool> stop{false};
  std::vector<std::thread> ts;
  for (int t = 0; t < c.threads; t++) {
    ts.emplace_back([&, t] {
      auto cl = Connect(c);
      std::string v(4096, 'p');
      Buffer out;
      for (uint64_t i = 0; !stop; i++) {
        std::string key = "probe" + std::to_string(t) + "-" + std::to_string(i % 1000);
        auto t0 = Clock::now();
        Status st = cl->Put("cbench", key, v.data(), v.size());
        auto t1 = Clock::now();
        if (!st.ok()) Die("probe put: " + st.ToString());
        st = cl->Get("cbench", key, &out);
        auto t2 = Clock::now();
        if (!st.ok()) Die("probe get: " + st.ToString());
        per[t].put.push_back(static_cast<uint32_t>(std::chrono::duration_cast<std::chrono::microseconds>(t1 - t0).count()));
        per[t].get.push_back(static_cast<uint32_t>(std::chrono::duration_cast<std::chrono::microseconds>(t2 - t1).count()));
      }
    });
  }
  int samples = 0, running = 0;
  StatusOr<ServerStats> first = stat_client->Stat();
  auto end = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(c.seconds));
  while (Clock::now() < end) {
    StatusOr<ServerStats> s = stat_client->Stat();
    if (s.ok()) {
      samples++;
      running += s->compaction.running ? 1 : 0;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  stop = true;
  for (auto& t : ts) t.join();
  StatusOr<ServerStats> last = stat_client->Stat();
  Latencies all;
  for (auto& p : per) {
    all.put.insert(all.put.end(), p.put.begin(), p.put.end());
    all.get.insert(all.get.end(), p.get.begin(), p.get.end());
  }
  std::sort(all.put.begin(), all.put.end());
  std::sort(all.get.begin(), all.get.end());
  double share = samples ? static_cast<double>(running) / samples : 0;
  uint64_t moved = first.ok() && last.ok() ? last->compaction.bytes - first->compaction.bytes : 0;
  for (auto [op, v] : {std::pair<const char*, std::vector<uint32_t>*>{"put", &all.put}, {"get", &all.get}}) {
    std::printf("phase=%s op=%s threads=%d ops=%zu p50_us=%u p99_us=%u p999_us=%u compaction_running=%.2f "
                "moved_mib=%.1f\n",
                phase, op, c.threads, v->size(), Pct(*v, 0.5), Pct(*v, 0.99), Pct(*v, 0.999), share,
                static_cast<double>(moved) / (1 << 20));
  }
  std::fflush(stdout);
  return all;
}

// Polls STAT until compaction is (or is not) running; false at the deadline.
bool WaitRunning(Client* stat, bool running, int seconds) {
  auto deadline = Clock::now() + std::chrono::seconds(seconds);
  while (Clock::now() < deadline) {
    StatusOr<ServerStats> s = stat->Stat();
    if (s.ok() && s->compaction.running == running) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return false;
}

int P99Mode(const Config& c) {
  auto stat = Connect(c);
  uint64_t n = c.backlog_bytes / c.backlog_value;
  std::printf("setup: backlog %llu keys x %llu B; 40%% overwritten (below the threshold: idle), "
              "then 55%% (compacting), then idle again once compaction is done\n",
              static_cast<unsigned long long>(n), static_cast<unsigned long long>(c.backlog_value));
  PutRange(c, "b", n, c.backlog_value, [](uint64_t) { return true; });
  PutRange(c, "b", n, c.backlog_value, [](uint64_t i) { return i % 20 < 8; });
  WaitRunning(stat.get(), false, 30);
  Latencies idle = Probe(c, "idle", stat.get());
  PutRange(c, "b", n, c.backlog_value, [](uint64_t i) { return i % 20 >= 8 && i % 20 <= 10; });
  WaitRunning(stat.get(), true, 30);
  Latencies busy = Probe(c, "compacting", stat.get());
  WaitRunning(stat.get(), false, 120);
  Latencies after = Probe(c, "idle-after", stat.get());
  // Against the lower (better) of the two idle phases: the conservative ratio, since a
  // burst of load from other processes in one idle phase must not flatter compaction.
  auto ratio = [](std::vector<uint32_t>& b, std::vector<uint32_t>& i1, std::vector<uint32_t>& i2) {
    double base = std::max<uint32_t>(1, std::min(Pct(i1, 0.99), Pct(i2, 0.99)));
    return Pct(b, 0.99) / base;
  };
  std::printf("ratio_put_p99=%.2f ratio_get_p99=%.2f (compacting / the better idle phase, target <= 2)\n",
              ratio(busy.put, idle.put, after.put), ratio(busy.get, idle.get, after.get));
  return 0;
}

int OverwriteMode(const Config& c) {
  auto cl = Connect(c);
  StatusOr<ServerStats> s0 = cl->Stat();
  if (!s0.ok() || s0->pools.empty()) Die("stat: " + s0.status().ToString());
  uint64_t capacity = s0->pools[0].capacity;
  uint64_t total = c.factor * capacity, written = 0, max_used = 0, no_space = 0;
  std::vector<uint64_t> last(c.keys, 0);
  std::string v(c.value, 'x');
  auto started = Clock::now();
  for (uint64_t i = 1; written < total; i++) {
    uint64_t k = i % c.keys;
    std::memcpy(v.data(), &i, sizeof(i));
    Status st;
    while ((st = cl->Put("cbench", Key("o", k), v.data(), v.size())).code() == StatusCode::kResourceExhausted) {
      no_space++;  // compaction catching up
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    if (!st.ok()) Die("overwrite put: " + st.ToString());
    last[k] = i;
    written += v.size();
    if (i % 16 == 0 && !cl->Put("cbench", Key("pin", i), "kept", 4).ok()) Die("pin put");
    if (i % 64 == 0) {
      StatusOr<ServerStats> s = cl->Stat();
      if (s.ok()) max_used = std::max(max_used, s->pools[0].used);
    }
  }
  double secs = std::chrono::duration<double>(Clock::now() - started).count();
  for (uint64_t k = 0; k < c.keys; k++) {
    StatusOr<std::string> got = cl->Get("cbench", Key("o", k));
    uint64_t version = 0;
    if (!got.ok() || got->size() != c.value) Die("key " + std::to_string(k) + " lost");
    std::memcpy(&version, got->data(), sizeof(version));
    if (version != last[k]) Die("key " + std::to_string(k) + " has an old value");
  }
  StatusOr<ServerStats> s1 = cl->Stat();
  if (!s1.ok()) Die("stat");
  uint64_t end_used = s1->pools[0].used;
  // Settled: the least usage seen over the next 5 s (grace passed, last steps done).
  for (int i = 0; i < 50; i++) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    StatusOr<ServerStats> s = cl->Stat();
    if (s.ok() && s->pools[0].used < s1->pools[0].used) s1 = std::move(s);
  }
  std::printf("overwrite capacity_mib=%.0f written_mib=%.0f factor=%llu seconds=%.1f max_used_mib=%.1f "
              "end_used_mib=%.1f settled_used_mib=%.1f live_mib=%.1f dead_mib=%.1f compacted_segments=%llu moved_mib=%.1f "
              "no_space_waits=%llu all_keys_last_value=yes\n",
              capacity / 1048576.0, written / 1048576.0, static_cast<unsigned long long>(c.factor), secs,
              max_used / 1048576.0, end_used / 1048576.0, s1->pools[0].used / 1048576.0, s1->live_bytes / 1048576.0,
              s1->compaction.dead_bytes / 1048576.0, static_cast<unsigned long long>(s1->compaction.segments),
              s1->compaction.bytes / 1048576.0, static_cast<unsigned long long>(no_space));
  return 0;
}

uint64_t SizeFlag(const std::string& f, const std::string& v) {
  StatusOr<uint64_t> n = ParseSize(v);
  if (!n.ok()) Die(f + ": " + n.status().message());
  return *n;
}

int Main(int argc, char** argv) {
  Config c;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string f = argv[i], v = argv[i + 1];
    if (f == "--server") c.server = v;
    else if (f == "--mode") c.mode = v;
    else if (f == "--threads") c.threads = std::stoi(v);
    else if (f == "--seconds") c.seconds = std::stod(v);
    else if (f == "--backlog") c.backlog_bytes = SizeFlag(f, v);
    else if (f == "--keys") c.keys = std::stoull(v);
    else if (f == "--value") c.value = SizeFlag(f, v);
    else if (f == "--factor") c.factor = std::stoull(v);
    else Die("unknown flag " + f + " (--server --mode p99|overwrite --threads --seconds --backlog "
             "--keys --value --factor)");
  }
  if (c.server.empty()) Die("--server HOST:PORT is required");
#ifndef NDEBUG
  std::printf("WARNING: debug build: latencies are not representative\n");
#endif
  return c.mode == "overwrite" ? OverwriteMode(c) : P99Mode(c);
}

}  // namespace
}  // namespace rpmp::bench

int main(int argc, char** argv) { return rpmp::bench::Main(argc, argv); }
