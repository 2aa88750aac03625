// Implementation of the TCP liveness probe (peer_probe.h).
#include "transport/peer_probe.h"

#include <unistd.h>

#include "common/tcp_connect.h"

namespace rpmp {

bool PeerRefusesConnections(const std::string& host, const std::string& port,
                            std::chrono::milliseconds wait) {
  TcpConnectResult c = ConnectTcp(host, port, wait);
  if (c.fd >= 0) ::close(c.fd);
  return c.refused;
}

}  // namespace rpmp
