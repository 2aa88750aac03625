// Implementation of the TCP liveness probe (peer_probe.h).
#include "transport/peer_probe.h"

#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

namespace rpmp {

bool PeerRefusesConnections(const std::string& host, const std::string& port,
                            std::chrono::milliseconds wait) {
  addrinfo hints{}, *res = nullptr;
  hints.ai_socktype = SOCK_STREAM;
  if (getaddrinfo(host.c_str(), port.c_str(), &hints, &res) != 0 || res == nullptr) return false;
  bool refused = false;
  int fd = socket(res->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd >= 0) {
    int r = connect(fd, res->ai_addr, res->ai_addrlen);
    if (r != 0 && errno == ECONNREFUSED) {
      refused = true;
    } else if (r != 0 && errno == EINPROGRESS) {
      pollfd p{fd, POLLOUT, 0};
      if (poll(&p, 1, static_cast<int>(wait.count())) == 1) {
        int err = 0;
        socklen_t len = sizeof(err);
        getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
        refused = err == ECONNREFUSED;
      }
    }
    close(fd);
  }
  freeaddrinfo(res);
  return refused;
}

}  // namespace rpmp
