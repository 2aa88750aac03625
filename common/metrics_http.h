// MetricsHttpServer: serves a MetricsRegistry as Prometheus' text format on
// http://HOST:PORT/metrics (cpp-httplib, one worker thread). Setup only: Start binds
// (port 0 = any free port; Port() tells which) and serves on its own thread until the
// object is destroyed. The registry must outlive it. Who calls it: server/main.cc.
#pragma once

#include <memory>
#include <string>
#include <thread>

#include "common/config_util.h"
#include "common/metrics.h"
#include "common/status.h"

namespace httplib {
class Server;
}

namespace rpmp {

class MetricsHttpServer {
 public:
  // `listen` is HOST:PORT. Unavailable when the address cannot be bound.
  static StatusOr<std::unique_ptr<MetricsHttpServer>> Start(const std::string& listen,
                                                            const MetricsRegistry* registry);
  ~MetricsHttpServer();
  int Port() const { return port_; }
  std::string Url() const { return "http://" + host_ + ":" + std::to_string(port_) + "/metrics"; }

 private:
  MetricsHttpServer() = default;
  std::unique_ptr<httplib::Server> http_;
  std::thread thread_;
  std::string host_;
  int port_ = 0;
};

}  // namespace rpmp
