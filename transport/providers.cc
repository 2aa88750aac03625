// Rows of the provider table (see providers.h).
#include "transport/providers.h"

#include <array>

namespace rpmp {
namespace {

// Modes every provider row may be asked for; fabric.cc adapts to whatever subset the
// provider answers with (virtual vs offset addressing, provider-chosen keys, local
// descriptors, endpoint binding).
constexpr uint64_t kAdaptableMrModes = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED |
                                       FI_MR_PROV_KEY | FI_MR_ENDPOINT;

// RxM message-endpoint and RxM queue depths for short-lived tools: enough for the 4
// requests rpmpctl keeps in flight and the 12 receives it posts.
constexpr std::array<EnvDefault, 4> kSmallRxm = {{{"FI_OFI_RXM_MSG_RX_SIZE", "16"},
                                                 {"FI_OFI_RXM_MSG_TX_SIZE", "16"},
                                                 {"FI_OFI_RXM_RX_SIZE", "32"},
                                                 {"FI_OFI_RXM_TX_SIZE", "32"}}};
constexpr std::array<EnvDefault, 4> kNoEnv = {};

constexpr std::array<ProviderTraits, 4> kProviders = {{
    {"tcp;ofi_rxm", "TCP sockets under the RxM reliable-datagram layer (any NIC, loopback)",
     kAdaptableMrModes, FI_WAIT_FD, 16 * 1024, true, kSmallRxm},
    {"verbs;ofi_rxm", "RDMA verbs (InfiniBand, RoCE, iWARP) under RxM",
     kAdaptableMrModes, FI_WAIT_FD, 4 * 1024, false, kSmallRxm},
    {"tcp", "native TCP reliable-datagram endpoints (libfabric >= 1.18)",
     kAdaptableMrModes, FI_WAIT_FD, 16 * 1024, true, kNoEnv},
    {"shm", "shared memory within one host", kAdaptableMrModes, FI_WAIT_NONE, 4 * 1024, false, kNoEnv},
}};

}  // namespace

const ProviderTraits* FindProvider(const std::string& provider) {
  for (const ProviderTraits& p : kProviders)
    if (provider == p.name) return &p;
  return nullptr;
}

std::string KnownProviders() {
  std::string s;
  for (const ProviderTraits& p : kProviders) {
    if (!s.empty()) s += ", ";
    s += p.name;
  }
  return s;
}

}  // namespace rpmp
