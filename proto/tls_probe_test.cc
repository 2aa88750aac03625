// Unit tests of ProbeTls against fake peers on loopback: one that answers like a TLS
// server (an alert record), one that answers like a plaintext server (other bytes), one
// that closes without a word, a refused port, and a peer that never answers.
#include "proto/tls_probe.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <string>
#include <thread>

namespace rpmp {
namespace {

// A listening socket on 127.0.0.1 and an ephemeral port; Serve answers one connection.
class FakePeer {
 public:
  FakePeer() {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0);
    REQUIRE(::listen(fd_, 4) == 0);
    socklen_t len = sizeof(a);
    REQUIRE(::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len) == 0);
    port_ = ntohs(a.sin_port);
  }
  ~FakePeer() {
    if (server_.joinable()) server_.join();
    ::close(fd_);
  }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  // Accepts one connection, reads the hello, writes `reply` (may be empty) and closes.
  void Serve(std::string reply) {
    server_ = std::thread([this, reply] {
      int c = ::accept(fd_, nullptr, nullptr);
      if (c < 0) return;
      char buf[512];
      (void)!::recv(c, buf, sizeof(buf), 0);
      if (!reply.empty()) (void)!::send(c, reply.data(), reply.size(), MSG_NOSIGNAL);
      ::close(c);
    });
  }

 private:
  int fd_ = -1;
  int port_ = 0;
  std::thread server_;
};

constexpr std::chrono::milliseconds kTimeout{2000};

TEST_CASE("ProbeTls: a TLS alert record in reply is TLS", "[tls_probe]") {
  FakePeer peer;
  peer.Serve(std::string("\x15\x03\x03\x00\x02\x02\x28", 7));  // alert: handshake_failure
  CHECK(ProbeTls(peer.address(), kTimeout) == TlsProbe::kTls);
}

TEST_CASE("ProbeTls: a TLS handshake record in reply is TLS", "[tls_probe]") {
  FakePeer peer;
  peer.Serve(std::string("\x16\x03\x03\x00\x04\x02\x00\x00\x00", 9));  // a ServerHello's start
  CHECK(ProbeTls(peer.address(), kTimeout) == TlsProbe::kTls);
}

TEST_CASE("ProbeTls: other bytes in reply, or a close without a word, are not TLS", "[tls_probe]") {
  FakePeer http;
  http.Serve("HTTP/1.1 400 Bad Request\r\n\r\n");
  CHECK(ProbeTls(http.address(), kTimeout) == TlsProbe::kNotTls);
  FakePeer silent;
  silent.Serve("");
  CHECK(ProbeTls(silent.address(), kTimeout) == TlsProbe::kNotTls);
}

TEST_CASE("ProbeTls: a refused port, a bad address or a silent peer is no answer", "[tls_probe]") {
  int port;
  {
    FakePeer gone;  // a port that was free a moment ago, now closed
    port = std::stoi(gone.address().substr(gone.address().rfind(':') + 1));
  }
  CHECK(ProbeTls("127.0.0.1:" + std::to_string(port), kTimeout) == TlsProbe::kNoAnswer);
  CHECK(ProbeTls("not an address", kTimeout) == TlsProbe::kNoAnswer);
  FakePeer mute;  // listens (the kernel accepts) but never reads or answers
  auto start = std::chrono::steady_clock::now();
  CHECK(ProbeTls(mute.address(), std::chrono::milliseconds(200)) == TlsProbe::kNoAnswer);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(5));  // the timeout holds
}

}  // namespace
}  // namespace rpmp
