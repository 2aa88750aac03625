// rpmp-hostile-peer: fires hostile HELLOs at an rpmp-server, for trying the defences of
// docs/security.md ("unauthenticated work") by hand or under a benchmark.
//   rpmp-hostile-peer HOST:PORT KIND COUNT [SECONDS]
// KIND: badaddr (0-4 byte and bad-family addresses), closedport (127.0.0.1 ports that
// nothing listens on), junk (this peer's address with junk padding), mixed (all three),
// claim=PORT (127.0.0.1:PORT, e.g. another process's listening port). With SECONDS the
// COUNT HELLOs are spread evenly over that time (a steady rate, as in the flood test
// tests/security/flood_test.sh); without, they go as fast as the fabric takes them.
// SIGTERM or SIGINT stops the sending early; the summary is printed either way.
// Prints sent=N failed=N. Tests and operators only; never part of a deployment.
#include <csignal>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include "tests/hostile_peer.h"

namespace {
volatile std::sig_atomic_t g_stop = 0;
void Stop(int) { g_stop = 1; }
}  // namespace

int main(int argc, char** argv) {
  const char* usage = "usage: rpmp-hostile-peer HOST:PORT badaddr|closedport|junk|mixed|claim=PORT COUNT [SECONDS]\n";
  if (argc != 4 && argc != 5) {
    std::fprintf(stderr, "%s", usage);
    return 2;
  }
  std::string kind = argv[2];
  long count = std::atol(argv[3]);
  double seconds = argc == 5 ? std::atof(argv[4]) : 0;
  int claim = kind.rfind("claim=", 0) == 0 ? std::atoi(kind.c_str() + 6) : 0;
  if (count <= 0 || seconds < 0 ||
      (kind != "badaddr" && kind != "closedport" && kind != "junk" && kind != "mixed" && (claim <= 0 || claim > 65535))) {
    std::fprintf(stderr, "%s", usage);
    return 2;
  }
  std::signal(SIGTERM, Stop);
  std::signal(SIGINT, Stop);
  auto start = std::chrono::steady_clock::now();
  auto interval = std::chrono::duration<double>(seconds / static_cast<double>(count));
  rpmp::testing::HostilePeer peer(argv[1]);
  std::string own = peer.fabric->LocalAddress();
  long sent = 0, failed = 0;
  for (long i = 0; i < count && !g_stop; i++) {
    int which = kind == "badaddr" ? 0 : kind == "closedport" ? 1 : kind == "junk" ? 2 : static_cast<int>(i % 3);
    std::string address;
    if (claim > 0) {
      address = rpmp::testing::InetAddress("127.0.0.1", static_cast<uint16_t>(claim));
    } else if (which == 0) {
      address = i % 5 == 4 ? std::string(16, 'A') : std::string(static_cast<size_t>(i % 5), '\0');
    } else if (which == 1) {
      address = rpmp::testing::InetAddress("127.0.0.1", static_cast<uint16_t>(1 + i % 1000));
    } else {
      address = own + std::to_string(i);
    }
    if (peer.fabric == nullptr) break;
    if (seconds > 0) std::this_thread::sleep_until(start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(interval * i));
    if (g_stop) break;
    if (peer.Fire(peer.HelloClaiming(address))) sent++; else failed++;
  }
  double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("sent=%ld failed=%ld seconds=%.1f\n", sent, failed, took);
  return failed == 0 ? 0 : 1;
}
