// Implementation of the shared test helpers.
#include "tests/test_util.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <mutex>
#include <random>
#include <set>

namespace rpmp::testing {

namespace {

// True when nothing holds port on 127.0.0.1 (a bind without SO_REUSEADDR succeeds).
bool Bindable(int port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return false;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(static_cast<uint16_t>(port));
  bool ok = bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0;
  close(fd);
  return ok;
}

}  // namespace

int FreePort() {
  // Below the kernel's ephemeral range (32768 and up here), so that no outgoing
  // connection of this or another test can take the port between this call and the
  // bind of the process that uses it. 20000 and up belongs to the shell tests' base
  // ports. A port is never handed out twice by one process.
  static std::mutex mu;
  static std::set<int> given;
  static std::mt19937 rng(static_cast<unsigned>(getpid()) ^ static_cast<unsigned>(time(nullptr)));
  std::lock_guard<std::mutex> lock(mu);
  std::uniform_int_distribution<int> pick(10000, 19999);
  for (int tries = 0; tries < 1000; tries++) {
    int port = pick(rng);
    if (given.count(port) != 0 || !Bindable(port)) continue;
    given.insert(port);
    return port;
  }
  std::fprintf(stderr, "FreePort: no free port in 10000-19999\n");
  std::abort();
}

std::string Provider() {
  const char* p = std::getenv("RPMP_TEST_PROVIDER");
  return p != nullptr ? p : "auto";
}

std::string TempPath(const std::string& tag) {
  static std::atomic<int> n{0};
  return "/dev/shm/rpmp-test-" + std::to_string(getpid()) + "-" + std::to_string(n++) + "-" + tag;
}

}  // namespace rpmp::testing
