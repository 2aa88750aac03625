// Unit tests of ConnectTcp: a listening port connects, a closed one is refused, and a name
// that does not resolve is neither.
#include "common/tcp_connect.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <string>

namespace rpmp {
namespace {

// Binds a listening socket on 127.0.0.1 and an ephemeral port; returns {fd, port}.
std::pair<int, std::string> Listen() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0);
  REQUIRE(::listen(fd, 4) == 0);
  socklen_t len = sizeof(a);
  REQUIRE(::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0);
  return {fd, std::to_string(ntohs(a.sin_port))};
}

TEST_CASE("ConnectTcp connects to a listener, is refused by a closed port, and resolves nothing else",
          "[tcp_connect]") {
  auto [lfd, port] = Listen();
  TcpConnectResult ok = ConnectTcp("127.0.0.1", port, std::chrono::milliseconds(2000));
  CHECK(ok.fd >= 0);
  CHECK_FALSE(ok.refused);
  if (ok.fd >= 0) ::close(ok.fd);
  ::close(lfd);  // now nothing listens on that port
  TcpConnectResult gone = ConnectTcp("127.0.0.1", port, std::chrono::milliseconds(2000));
  CHECK(gone.fd < 0);
  CHECK(gone.refused);
  TcpConnectResult bad = ConnectTcp("no-such-host.invalid", "80", std::chrono::milliseconds(2000));
  CHECK(bad.fd < 0);
  CHECK_FALSE(bad.refused);
}

}  // namespace
}  // namespace rpmp
