// Loopback TCP stream measurement (see tcp_baseline.h).
#include "bench/tcp_baseline.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

namespace rpmp::bench {

std::pair<int, int> LoopbackTcpPair() {
  int listener = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(a);
  if (listener < 0 || bind(listener, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0 ||
      listen(listener, 1) != 0 || getsockname(listener, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    if (listener >= 0) close(listener);
    return {-1, -1};
  }
  int c = socket(AF_INET, SOCK_STREAM, 0);
  if (c < 0 || connect(c, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) {  // the backlog takes it
    close(listener);
    if (c >= 0) close(c);
    return {-1, -1};
  }
  int s = accept(listener, nullptr, nullptr);
  close(listener);
  if (s < 0) {
    close(c);
    return {-1, -1};
  }
  int one = 1;
  setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  return {c, s};
}

double LoopbackTcpMBps(size_t msg_size, std::chrono::milliseconds duration) {
  auto [fd, peer] = LoopbackTcpPair();
  if (fd < 0) return 0;
  std::atomic<uint64_t> received{0};
  std::thread sink([&, peer = peer] {
    std::vector<char> buf(std::max<size_t>(msg_size, 65536));
    ssize_t n;
    while ((n = read(peer, buf.data(), buf.size())) > 0) received += static_cast<uint64_t>(n);
    close(peer);
  });
  std::vector<char> msg(msg_size, 'x');
  auto t0 = std::chrono::steady_clock::now();
  auto until = t0 + duration;
  while (std::chrono::steady_clock::now() < until) {
    size_t off = 0;
    while (off < msg.size()) {
      ssize_t n = write(fd, msg.data() + off, msg.size() - off);
      if (n <= 0) break;
      off += static_cast<size_t>(n);
    }
  }
  shutdown(fd, SHUT_WR);
  close(fd);
  sink.join();
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return received.load() / secs / 1e6;
}

}  // namespace rpmp::bench
