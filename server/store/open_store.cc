// OpenPmemStore and NewMemStore: build the media, then LogStore::Open.
#include "server/store/open_store.h"

#include <set>

#include "server/store/dram_medium.h"
#include "server/store/log_store.h"
#include "server/store/pmem_medium.h"

namespace rpmp {

StatusOr<std::unique_ptr<Store>> OpenPmemStore(const StoreOptions& options) {
  if (options.pools.empty()) {
    return Status::InvalidArgument("store options list no pools; give at least one path");
  }
  std::set<std::string> seen;
  std::vector<std::unique_ptr<Medium>> media;
  for (const PoolSpec& spec : options.pools) {
    if (!seen.insert(spec.path).second) {
      return Status::InvalidArgument("pool path " + spec.path + " is listed twice");
    }
    RPMP_ASSIGN_OR_RETURN(std::unique_ptr<PmemMedium> medium,
                          OpenPmemMedium(spec.path, spec.size, options.create_if_missing,
                                         options.prefault));
    media.push_back(std::move(medium));
  }
  RPMP_ASSIGN_OR_RETURN(std::unique_ptr<LogStore> store,
                        LogStore::Open(std::move(media), options.segment_size,
                                       options.first_segment_size));
  for (size_t i = 0; i < options.pools.size(); i++) {
    if (options.pools[i].capacity_tier) store->SetCapacityTier(static_cast<uint32_t>(i));
  }
  return std::unique_ptr<Store>(std::move(store));
}

std::unique_ptr<Store> NewMemStore(uint64_t capacity, uint64_t segment_size) {
  std::vector<std::unique_ptr<Medium>> media;
  media.push_back(std::make_unique<DramMedium>(capacity));
  StatusOr<std::unique_ptr<LogStore>> store =
      LogStore::Open(std::move(media), segment_size);
  return std::move(store).value();
}

}  // namespace rpmp
