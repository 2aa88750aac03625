// Loopback TCP stream measurement (see tcp_baseline.h).
#include "bench/tcp_baseline.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <thread>
#include <vector>

namespace rpmp::bench {

double LoopbackTcpMBps(size_t msg_size, std::chrono::milliseconds duration) {
  int ls = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(a);
  if (bind(ls, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0 || listen(ls, 1) != 0 ||
      getsockname(ls, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    close(ls);
    return 0;
  }
  std::atomic<uint64_t> received{0};
  std::thread sink([&] {
    int fd = accept(ls, nullptr, nullptr);
    std::vector<char> buf(std::max<size_t>(msg_size, 65536));
    ssize_t n;
    while ((n = read(fd, buf.data(), buf.size())) > 0) received += static_cast<uint64_t>(n);
    close(fd);
  });
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  double mbps = 0;
  if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0) {
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
    mbps = received.load() / secs / 1e6;
  } else {
    close(fd);
    shutdown(ls, SHUT_RDWR);
    sink.join();
  }
  close(ls);
  return mbps;
}

}  // namespace rpmp::bench
