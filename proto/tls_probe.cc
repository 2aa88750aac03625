// Implementation of ProbeTls (tls_probe.h).
#include "proto/tls_probe.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <vector>

#include "common/config_util.h"
#include "common/tcp_connect.h"

namespace rpmp {
namespace {

// A minimal TLS 1.2 ClientHello: version 3.3, zero random, no session, two cipher suites
// (ECDHE-RSA-AES128-GCM-SHA256, TLS_AES_128_GCM_SHA256), null compression, no
// extensions. Servers may refuse it (with an alert record): that answer is TLS too.
std::vector<uint8_t> ClientHello() {
  std::vector<uint8_t> body = {0x03, 0x03};
  body.insert(body.end(), 32, 0);                          // random
  body.push_back(0);                                       // session id length
  for (uint8_t b : {0x00, 0x04, 0xc0, 0x2f, 0x13, 0x01})  // cipher suites
    body.push_back(b);
  for (uint8_t b : {0x01, 0x00, 0x00, 0x00}) body.push_back(b);  // compression; no extensions
  std::vector<uint8_t> hs = {0x01, 0x00, static_cast<uint8_t>(body.size() >> 8),
                             static_cast<uint8_t>(body.size())};
  hs.insert(hs.end(), body.begin(), body.end());
  std::vector<uint8_t> rec = {0x16, 0x03, 0x01, static_cast<uint8_t>(hs.size() >> 8),
                              static_cast<uint8_t>(hs.size())};
  rec.insert(rec.end(), hs.begin(), hs.end());
  return rec;
}

bool WaitReadable(int fd, std::chrono::steady_clock::time_point until) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
  if (left.count() <= 0) return false;
  pollfd p{fd, POLLIN, 0};
  return ::poll(&p, 1, static_cast<int>(left.count())) == 1 && (p.revents & (POLLIN | POLLHUP));
}

}  // namespace

TlsProbe ProbeTls(const std::string& host_port, std::chrono::milliseconds timeout) {
  StatusOr<HostPort> hp = ParseHostPort(host_port);
  if (!hp.ok()) return TlsProbe::kNoAnswer;
  const auto until = std::chrono::steady_clock::now() + timeout;
  TcpConnectResult c = ConnectTcp(hp->host, hp->port, timeout);
  if (c.fd < 0) return TlsProbe::kNoAnswer;
  TlsProbe answer = TlsProbe::kNoAnswer;
  std::vector<uint8_t> hello = ClientHello();
  uint8_t first = 0;
  if (::send(c.fd, hello.data(), hello.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(hello.size()) &&
      WaitReadable(c.fd, until)) {
    ssize_t n = ::recv(c.fd, &first, 1, 0);
    if (n == 1 && (first == 0x15 || first == 0x16)) {  // alert or handshake record
      answer = TlsProbe::kTls;
    } else if (n >= 0) {  // other bytes, or closed
      answer = TlsProbe::kNotTls;
    }
  }
  ::close(c.fd);
  return answer;
}

}  // namespace rpmp
