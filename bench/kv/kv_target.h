// The stores rpmp-kv-bench drives with the same keys, values and threads: RPMP
// (librpmp, one server or a cluster) and Redis (hiredis, a server the caller started).
// One KvTarget per benchmark thread; a target is used by one thread only.
#pragma once

#include <memory>
#include <string>

#include "rpmp/status.h"

namespace rpmp::bench {

class KvTarget {
 public:
  virtual ~KvTarget() = default;
  // Stores value under key, replacing what was there.
  virtual Status Put(const std::string& key, const std::string& value) = 0;
  // Reads key; *length is the value's size. NotFound when absent.
  virtual Status Get(const std::string& key, size_t* length) = 0;
};

// "rpmp:HOST:PORT" (one server), "rpmp-cluster:HOST:PORT[,...]" (proxies; namespace
// with `replicas` copies) or "redis:HOST:PORT". `ns` is RPMP's namespace (ignored by
// Redis); `max_value` sizes the read buffer; `provider` is the libfabric provider of an
// "rpmp:" target (the server's; a cluster's nodes say their own).
StatusOr<std::unique_ptr<KvTarget>> OpenKvTarget(const std::string& spec, const std::string& ns,
                                                 uint32_t replicas, size_t max_value,
                                                 const std::string& provider);

}  // namespace rpmp::bench
