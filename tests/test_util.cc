// Implementation of the shared test helpers.
#include "tests/test_util.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>

namespace rpmp::testing {

int FreePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a));
  socklen_t len = sizeof(a);
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  close(fd);
  return ntohs(a.sin_port);
}

std::string Provider() {
  const char* p = std::getenv("RPMP_TEST_PROVIDER");
  return p != nullptr ? p : "tcp;ofi_rxm";
}

std::string TempPath(const std::string& tag) {
  static std::atomic<int> n{0};
  return "/dev/shm/rpmp-test-" + std::to_string(getpid()) + "-" + std::to_string(n++) + "-" + tag;
}

}  // namespace rpmp::testing
