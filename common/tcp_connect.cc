// Implementation of ConnectTcp (tcp_connect.h).
#include "common/tcp_connect.h"

#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

namespace rpmp {

TcpConnectResult ConnectTcp(const std::string& host, const std::string& port,
                            std::chrono::milliseconds wait) {
  TcpConnectResult out;
  addrinfo hints{}, *res = nullptr;
  hints.ai_socktype = SOCK_STREAM;
  if (getaddrinfo(host.c_str(), port.c_str(), &hints, &res) != 0 || res == nullptr) return out;
  int fd = ::socket(res->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd >= 0) {
    int err = 0;
    if (::connect(fd, res->ai_addr, res->ai_addrlen) != 0) {
      err = errno;
      if (err == EINPROGRESS) {
        pollfd p{fd, POLLOUT, 0};
        err = ETIMEDOUT;
        if (::poll(&p, 1, static_cast<int>(wait.count())) == 1) {
          socklen_t len = sizeof(err);
          if (::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
        }
      }
    }
    if (err == 0) {
      out.fd = fd;
    } else {
      out.refused = err == ECONNREFUSED;
      ::close(fd);
    }
  }
  freeaddrinfo(res);
  return out;
}

}  // namespace rpmp
