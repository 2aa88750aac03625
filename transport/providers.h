// The table of libfabric provider differences, as data (not ifs in the fast path).
//
// Each supported provider string maps to the hints RPMP asks for and the choices it
// makes around the provider's quirks. fabric.cc reads only this table. Add a row here
// to support a new provider. Thread-safe (constant data).
#pragma once

#include <rdma/fabric.h>
#include <rdma/fi_eq.h>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"

namespace rpmp {

// An environment variable a short-lived tool sets (unless the user did) for this provider.
struct EnvDefault {
  const char* name;   // nullptr = unused slot
  const char* value;
};

struct ProviderTraits {
  const char* name;           // what the user writes: "tcp;ofi_rxm"
  const char* description;    // for logs and docs
  uint64_t mr_mode_hints;     // memory-registration modes we can honour
  int cq_wait_obj;            // FI_WAIT_FD where the provider can block; FI_WAIT_NONE to poll
  // The CQ blocks on a wait set RPMP opens and clears itself (fi_wait(set, 0)) instead of
  // fi_trywait: libfabric's native TCP provider before 1.19 ("net" in 1.17, "tcp" in 1.18)
  // never clears the CQ's signal in fi_trywait, so its fd stays readable after the first
  // completion and every wait returns at once (upstream 9057c4c95, "Fix spinning on
  // fi_trywait()"). Needs cq_wait_obj FI_WAIT_FD.
  bool own_wait_set;
  size_t default_inline;      // payloads up to this size travel inside the frame
  // The peer's endpoint is a TCP listener on its address: a refused TCP connect there
  // proves it is gone (the provider itself only reports that by timing out).
  bool tcp_listener;
  // Small queues for a process with a few requests in flight (rpmpctl); see
  // transport/fast_start/short_lived.h. RxM's defaults zero ~16 MiB per endpoint.
  std::array<EnvDefault, 4> short_lived_env;
  // Sibling endpoints (Fabric::OpenSibling: a server's data shards, a client's extra
  // connections) open a domain and an address vector of their own instead of sharing the
  // parent's: the native TCP provider (libfabric 1.17 "net", 1.18 "tcp") progresses all
  // endpoints of a domain through one engine under one lock, so shards sharing a domain
  // take turns (docs/sharding.md, "A domain per shard"). Used only where the provider
  // takes requested keys and needs no local descriptors (mr_mode without FI_MR_PROV_KEY,
  // FI_MR_LOCAL or FI_MR_ENDPOINT): a region is then registered in every domain under
  // the same key, so a key handed to a peer is valid on every shard.
  bool sibling_own_domain = false;
};

// The provider name that means "the fastest one this host's libfabric offers":
// Fabric::Open resolves it (ResolveProvider in fabric.h) to a row of the table.
inline constexpr char kAutoProvider[] = "auto";
// Set, it names what "auto" means in this process (tests force a provider with it).
inline constexpr char kProviderEnv[] = "RPMP_PROVIDER";

// The traits for `provider`, or nullptr when RPMP does not know it ("auto" is no row).
const ProviderTraits* FindProvider(const std::string& provider);
// A row's name or "auto": what a configuration may name.
bool IsProviderName(const std::string& provider);
// The rows "auto" tries, in order of preference (fastest first).
std::vector<const ProviderTraits*> AutoCandidates();
// What `provider` means here: itself when it is a row; for "auto", $RPMP_PROVIDER when
// set, else the first of
// AutoCandidates() that this libfabric offers natively at local address `node` (empty:
// any), remembered per address. InvalidArgument for an unknown name, Unavailable when
// none is offered. (provider_select.cc)
StatusOr<std::string> ResolveProvider(const std::string& provider, const std::string& node);
// The fi_getinfo hints for a row (caller frees with fi_freeinfo), and whether what
// libfabric answered is that row itself (libfabric 1.17 answers "tcp" with tcp;ofi_rxm).
fi_info* ProviderHints(const ProviderTraits& t);
bool IsProvider(const fi_info* info, const ProviderTraits& t);
// "auto, tcp;ofi_rxm, verbs;ofi_rxm, tcp, net, shm" — for error messages.
std::string KnownProviders();

}  // namespace rpmp
