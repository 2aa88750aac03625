// rpmp-tcp-pingpong: the machine's own floor for a synchronous request/reply over
// loopback TCP, the peer that bench/provider_ab.sh prints beside fi_pingpong. Two
// threads of one process bounce a SIZE-byte message over a 127.0.0.1 TCP connection
// for SECONDS, either sleeping in poll(2) for each message (as RPMP's progress threads
// and callers do by default) or spinning on non-blocking reads (as fi_pingpong and a
// --busy-poll server do). Prints one key=value line per mode:
//   peer=tcp_pingpong mode=sleep|spin size=4096 round_trips_per_s=N p50_us=X p99_us=Y
// A depth-1 call over TCP with sleeping threads cannot beat the sleep line, whatever the
// provider: it is the bound docs/benchmarks.md uses for issue 22's depth-1 bar.
//
//   rpmp-tcp-pingpong [--size 4096] [--seconds 2] [--mode sleep,spin]
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "bench/tcp_baseline.h"

namespace {

using Clock = std::chrono::steady_clock;

// Reads or writes exactly n bytes; sleeping mode waits in poll(2) when the socket would
// block, spinning mode retries at once. False on error or EOF.
bool Transfer(int fd, char* buf, size_t n, bool write, bool spin) {
  size_t done = 0;
  while (done < n) {
    ssize_t r = write ? ::send(fd, buf + done, n - done, MSG_DONTWAIT | MSG_NOSIGNAL)
                      : ::recv(fd, buf + done, n - done, MSG_DONTWAIT);
    if (r > 0) {
      done += static_cast<size_t>(r);
      continue;
    }
    if (r == 0 && !write) return false;
    if (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) return false;
    if (!spin) {
      pollfd p{fd, static_cast<short>(write ? POLLOUT : POLLIN), 0};
      if (::poll(&p, 1, 1000) < 0 && errno != EINTR) return false;
    }
  }
  return true;
}

// One mode's run; false when the sockets failed.
bool Run(size_t size, double seconds, bool spin) {
  auto [c, s] = rpmp::bench::LoopbackTcpPair();
  if (c < 0 || s < 0) {
    std::fprintf(stderr, "rpmp-tcp-pingpong: cannot open a loopback TCP connection: %s\n", std::strerror(errno));
    return false;
  }
  std::thread echo([&, s = s] {
    std::vector<char> buf(size);
    while (Transfer(s, buf.data(), size, false, spin) && Transfer(s, buf.data(), size, true, spin)) {
    }
  });
  std::vector<char> buf(size, 'x');
  std::vector<double> rtt;
  rtt.reserve(1 << 20);
  auto end = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  auto start = Clock::now();
  bool ok = true;
  while (Clock::now() < end) {
    auto t0 = Clock::now();
    if (!Transfer(c, buf.data(), size, true, spin) || !Transfer(c, buf.data(), size, false, spin)) {
      ok = false;
      break;
    }
    rtt.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
  }
  double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  ::shutdown(c, SHUT_RDWR);
  echo.join();
  ::close(c);
  ::close(s);
  if (!ok || rtt.empty()) {
    std::fprintf(stderr, "rpmp-tcp-pingpong: the loopback connection failed mid-run\n");
    return false;
  }
  std::sort(rtt.begin(), rtt.end());
  std::printf("peer=tcp_pingpong mode=%s size=%zu round_trips_per_s=%.0f p50_us=%.1f p99_us=%.1f\n",
              spin ? "spin" : "sleep", size, rtt.size() / elapsed, rtt[rtt.size() / 2],
              rtt[std::min(rtt.size() - 1, rtt.size() * 99 / 100)]);
  std::fflush(stdout);
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  size_t size = 4096;
  double seconds = 2;
  std::string modes = "sleep,spin";
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    bool has_value = i + 1 < argc;
    if (a == "--size" && has_value) size = std::strtoull(argv[++i], nullptr, 10);
    else if (a == "--seconds" && has_value) seconds = std::strtod(argv[++i], nullptr);
    else if (a == "--mode" && has_value) modes = argv[++i];
    else {
      std::fprintf(stderr, "usage: rpmp-tcp-pingpong [--size BYTES] [--seconds S] [--mode sleep,spin]\n");
      return 2;
    }
  }
  if (size == 0 || seconds <= 0) {
    std::fprintf(stderr, "rpmp-tcp-pingpong: --size and --seconds must be positive\n");
    return 2;
  }
  bool ok = true;
  for (const char* m : {"sleep", "spin"})
    if (modes.find(m) != std::string::npos) ok = Run(size, seconds, std::strcmp(m, "spin") == 0) && ok;
  return ok ? 0 : 1;
}
