// Choosing a provider: the hints RPMP asks libfabric for, and what "auto" resolves to on
// this host (see providers.h). Slow path only; called when a Fabric opens.
#include <rdma/fi_errno.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>

#include "common/log.h"
#include "transport/providers.h"

namespace rpmp {

fi_info* ProviderHints(const ProviderTraits& t) {
  fi_info* hints = fi_allocinfo();
  hints->ep_attr->type = FI_EP_RDM;
  hints->caps = FI_MSG | FI_RMA | FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE |
                FI_SEND | FI_RECV;
  hints->mode = FI_CONTEXT | FI_CONTEXT2;
  hints->domain_attr->mr_mode = static_cast<int>(t.mr_mode_hints);
  hints->domain_attr->threading = FI_THREAD_SAFE;
  hints->fabric_attr->prov_name = strdup(t.name);
  return hints;
}

bool IsProvider(const fi_info* info, const ProviderTraits& t) {
  return info != nullptr && info->fabric_attr != nullptr &&
         info->fabric_attr->prov_name != nullptr &&
         std::strcmp(info->fabric_attr->prov_name, t.name) == 0;
}

namespace {

// True when libfabric offers `t` itself (not layered under RxM) at the local address
// `node` (empty: any).
bool Offers(const ProviderTraits& t, const std::string& node) {
  fi_info* hints = ProviderHints(t);
  fi_info* info = nullptr;
  int ret = fi_getinfo(FI_VERSION(1, 9), node.empty() ? nullptr : node.c_str(), nullptr,
                       node.empty() ? 0 : FI_SOURCE, hints, &info);
  fi_freeinfo(hints);
  bool ok = ret == 0 && IsProvider(info, t);
  if (info != nullptr) fi_freeinfo(info);
  return ok;
}

}  // namespace

StatusOr<std::string> ResolveProvider(const std::string& provider, const std::string& node) {
  if (provider != kAutoProvider) {
    if (FindProvider(provider) == nullptr)
      return Status::InvalidArgument("unknown fabric provider '" + provider +
                                     "'; known: " + KnownProviders());
    return provider;
  }
  if (const char* env = std::getenv(kProviderEnv); env != nullptr && *env != '\0') {
    if (FindProvider(env) == nullptr)
      return Status::InvalidArgument(std::string("$") + kProviderEnv + " names unknown provider '" +
                                     env + "'; known: " + KnownProviders());
    return std::string(env);
  }
  static std::mutex mu;
  static std::map<std::string, std::string> chosen;  // per local address
  std::lock_guard<std::mutex> lock(mu);
  auto it = chosen.find(node);
  if (it != chosen.end()) return it->second;
  for (const ProviderTraits* t : AutoCandidates()) {
    if (!Offers(*t, node)) continue;
    RPMP_LOG_DEBUG("provider auto: %s at %s", t->name, node.empty() ? "*" : node.c_str());
    chosen[node] = t->name;
    return std::string(t->name);
  }
  return Status::Unavailable("provider auto: libfabric offers none of verbs;ofi_rxm, tcp, net, "
                             "tcp;ofi_rxm at " + (node.empty() ? std::string("*") : node));
}

}  // namespace rpmp
