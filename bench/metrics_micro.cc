// metrics-micro: the CPU cost of the server's per-request metrics (ServerMetrics::
// OnReply: one (op, status) counter, one latency histogram observation, two clock
// reads) measured directly, single-threaded and with two threads on the same
// instruments (the progress and commit threads of a server), against an empty loop
// of the same shape in the same run. rpmp-bench cannot resolve a cost this small on a
// shared 2-core machine (run-to-run spread is tens of percent); this can.
//   build/bin/metrics-micro [CALLS]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include "common/metrics.h"
#include "server/server_metrics.h"

namespace {

using Clock = std::chrono::steady_clock;

double NsPerCall(int threads, long calls, bool metrics_on, rpmp::ServerMetrics* m) {
  auto start = Clock::now();
  std::vector<std::thread> ts;
  for (int t = 0; t < threads; t++) {
    ts.emplace_back([=] {
      volatile long sink = 0;
      for (long i = 0; i < calls; i++) {
        Clock::time_point arrived = Clock::now();  // the server reads the clock on arrival
        if (metrics_on) {
          m->OnReply(rpmp::wire::Op::kPut, 0, arrived);
        } else {
          sink = sink + arrived.time_since_epoch().count();
        }
      }
    });
  }
  for (auto& t : ts) t.join();
  return std::chrono::duration<double, std::nano>(Clock::now() - start).count() / calls;
}

}  // namespace

int main(int argc, char** argv) {
  long calls = argc > 1 ? std::atol(argv[1]) : 5000000;
  rpmp::MetricsRegistry registry;
  rpmp::ServerMetrics metrics(&registry);
  std::printf("metrics-micro: calls=%ld per thread, cores=%u\n", calls, std::thread::hardware_concurrency());
  for (int threads : {1, 2}) {
    double base = NsPerCall(threads, calls, false, &metrics);
    double on = NsPerCall(threads, calls, true, &metrics);
    std::printf("threads=%d baseline_ns=%.1f on_reply_ns=%.1f added_ns=%.1f\n", threads, base, on, on - base);
  }
  return 0;
}
