// Peer address checks (see peer_address.h).
#include "transport/peer_address.h"

#include <netinet/in.h>
#include <rdma/fabric.h>
#include <sys/socket.h>

#include <cstring>

namespace rpmp {
namespace {

StatusOr<std::string> CanonicalInet(std::string_view a) {
  if (a.size() != sizeof(sockaddr_in))
    return Status::InvalidArgument("an IPv4 fabric address is " + std::to_string(sizeof(sockaddr_in)) +
                                   " bytes, not " + std::to_string(a.size()));
  sockaddr_in in{};
  std::memcpy(&in, a.data(), sizeof(in));
  if (in.sin_family != AF_INET)
    return Status::InvalidArgument("fabric address family " + std::to_string(in.sin_family) +
                                   " is not this endpoint's (IPv4)");
  if (in.sin_port == 0) return Status::InvalidArgument("fabric address with port 0");
  if (in.sin_addr.s_addr == htonl(INADDR_ANY))
    return Status::InvalidArgument("fabric address 0.0.0.0 (the wildcard)");
  sockaddr_in c{};
  c.sin_family = AF_INET;
  c.sin_port = in.sin_port;
  c.sin_addr = in.sin_addr;
  return std::string(reinterpret_cast<const char*>(&c), sizeof(c));
}

StatusOr<std::string> CanonicalInet6(std::string_view a) {
  if (a.size() != sizeof(sockaddr_in6))
    return Status::InvalidArgument("an IPv6 fabric address is " + std::to_string(sizeof(sockaddr_in6)) +
                                   " bytes, not " + std::to_string(a.size()));
  sockaddr_in6 in{};
  std::memcpy(&in, a.data(), sizeof(in));
  if (in.sin6_family != AF_INET6)
    return Status::InvalidArgument("fabric address family " + std::to_string(in.sin6_family) +
                                   " is not this endpoint's (IPv6)");
  if (in.sin6_port == 0) return Status::InvalidArgument("fabric address with port 0");
  if (std::memcmp(&in.sin6_addr, &in6addr_any, sizeof(in6addr_any)) == 0)
    return Status::InvalidArgument("fabric address :: (the wildcard)");
  sockaddr_in6 c{};
  c.sin6_family = AF_INET6;
  c.sin6_port = in.sin6_port;
  c.sin6_addr = in.sin6_addr;
  c.sin6_scope_id = in.sin6_scope_id;
  return std::string(reinterpret_cast<const char*>(&c), sizeof(c));
}

}  // namespace

StatusOr<std::string> CanonicalPeerAddress(uint32_t addr_format, int local_family,
                                           std::string_view address) {
  switch (addr_format) {
    case FI_SOCKADDR_IN: return CanonicalInet(address);
    case FI_SOCKADDR_IN6: return CanonicalInet6(address);
    case FI_SOCKADDR:
      if (local_family == AF_INET6) return CanonicalInet6(address);
      return CanonicalInet(address);
    default:
      if (address.empty() || address.size() > kMaxPeerAddress)
        return Status::InvalidArgument("fabric address of " + std::to_string(address.size()) +
                                       " bytes (1 to " + std::to_string(kMaxPeerAddress) + " expected)");
      return std::string(address);
  }
}

}  // namespace rpmp
