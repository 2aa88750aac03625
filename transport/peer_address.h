// Peer address checks: what a peer's claimed fabric address must look like before any
// of it reaches libfabric's address vector (docs/security.md, "unauthenticated work").
// libfabric 1.17's IP address vector trusts the bytes: fi_av_insert of an address with
// an unknown family records an address length of 0 for the whole AV, and every later
// insert then fails ("Address too large for AV"), so one bad HELLO would lock out all
// new clients until restart. Addresses are therefore checked here and reduced to one
// canonical form (padding zeroed), which is also the identity per-address limits use.
//
// Pure functions, thread-safe. Called by Fabric::InsertPeer and the server's HELLO.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"

namespace rpmp {

// Longest address accepted for providers whose addresses are not sockaddrs (shm).
constexpr size_t kMaxPeerAddress = 256;

// The canonical bytes of `address` for an endpoint whose fi_info addr_format is
// `addr_format` (FI_SOCKADDR_IN, FI_SOCKADDR_IN6, FI_SOCKADDR, ...) and whose own
// address has family `local_family` (AF_INET/AF_INET6, for FI_SOCKADDR).
// Sockaddr formats: exactly sizeof(sockaddr_in) or sizeof(sockaddr_in6) bytes, the
// endpoint's own family, a port other than 0, not the wildcard address; the result
// has sin_zero / sin6_flowinfo zeroed. Other formats: 1..kMaxPeerAddress bytes, as
// given. InvalidArgument (saying what is wrong) otherwise.
StatusOr<std::string> CanonicalPeerAddress(uint32_t addr_format, int local_family,
                                           std::string_view address);

}  // namespace rpmp
