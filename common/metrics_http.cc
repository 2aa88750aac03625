// See metrics_http.h.
#include "common/metrics_http.h"

#include <httplib.h>

#include "common/config_util.h"

namespace rpmp {


StatusOr<std::unique_ptr<MetricsHttpServer>> MetricsHttpServer::Start(
    const std::string& listen, const MetricsRegistry* registry) {
  RPMP_ASSIGN_OR_RETURN(HostPort hp, ParseListenAddress(listen));
  std::unique_ptr<MetricsHttpServer> m(new MetricsHttpServer());
  m->http_ = std::make_unique<httplib::Server>();
  m->http_->new_task_queue = [] { return new httplib::ThreadPool(1); };
  m->http_->Get("/metrics", [registry](const httplib::Request&, httplib::Response& res) {
    res.set_content(registry->Render(), "text/plain; version=0.0.4; charset=utf-8");
  });
  m->host_ = hp.host;
  int port = std::stoi(hp.port);
  if (port == 0) {
    port = m->http_->bind_to_any_port(hp.host);
    if (port <= 0) return Status::Unavailable("metrics: cannot bind " + listen);
  } else if (!m->http_->bind_to_port(hp.host, port)) {
    return Status::Unavailable("metrics: cannot bind " + listen + " (port in use?)");
  }
  m->port_ = port;
  httplib::Server* http = m->http_.get();
  m->thread_ = std::thread([http] { http->listen_after_bind(); });
  return m;
}

MetricsHttpServer::~MetricsHttpServer() {
  if (http_) http_->stop();
  if (thread_.joinable()) thread_.join();
}

}  // namespace rpmp
