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

constexpr std::array<ProviderTraits, 5> kProviders = {{
    {"tcp;ofi_rxm", "TCP sockets under the RxM reliable-datagram layer (any NIC, loopback)",
     kAdaptableMrModes, FI_WAIT_FD, false, 16 * 1024, true, kSmallRxm},
    {"verbs;ofi_rxm", "RDMA verbs (InfiniBand, RoCE, iWARP) under RxM",
     kAdaptableMrModes, FI_WAIT_FD, false, 4 * 1024, false, kSmallRxm},
    {"tcp", "native TCP reliable-datagram endpoints (libfabric >= 1.18)",
     kAdaptableMrModes, FI_WAIT_FD, true, 16 * 1024, true, kNoEnv, true},
    {"net", "native TCP reliable-datagram endpoints (libfabric 1.17; renamed tcp in 1.18)",
     kAdaptableMrModes, FI_WAIT_FD, true, 16 * 1024, true, kNoEnv, true},
    {"shm", "shared memory within one host", kAdaptableMrModes, FI_WAIT_NONE, false, 4 * 1024, false, kNoEnv},
}};

// What "auto" (the default of servers and clients) tries: RDMA where the host has it,
// then the native TCP reliable-datagram provider under its 1.18+ and its 1.17 name, then
// RxM over TCP sockets, which every libfabric build offers. The native provider has half
// RxM's one-pair latency; it progresses a domain's endpoints under one lock, so sibling
// endpoints (data shards, a client's extra connections) get a domain of their own
// (sibling_own_domain above; docs/benchmarks.md "A domain per shard").
constexpr std::array<const char*, 4> kAutoOrder = {"verbs;ofi_rxm", "tcp", "net", "tcp;ofi_rxm"};

}  // namespace

bool IsProviderName(const std::string& provider) {
  return provider == kAutoProvider || FindProvider(provider) != nullptr;
}

std::vector<const ProviderTraits*> AutoCandidates() {
  std::vector<const ProviderTraits*> out;
  for (const char* name : kAutoOrder) out.push_back(FindProvider(name));
  return out;
}

const ProviderTraits* FindProvider(const std::string& provider) {
  for (const ProviderTraits& p : kProviders)
    if (provider == p.name) return &p;
  return nullptr;
}

std::string KnownProviders() {
  std::string s = kAutoProvider;
  for (const ProviderTraits& p : kProviders) {
    if (!s.empty()) s += ", ";
    s += p.name;
  }
  return s;
}

}  // namespace rpmp
