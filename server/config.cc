// Reading and validating rpmp-server configuration (see config.h).
#include "server/config.h"

#include <arpa/inet.h>
#include <yaml-cpp/yaml.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <utility>

#include "common/config_util.h"
#include "transport/providers.h"

namespace rpmp {
namespace {

StatusOr<PoolConfig> ParsePoolSpec(const std::string& spec) {
  size_t colon = spec.rfind(':');
  if (colon == std::string::npos || colon == 0)
    return Status::InvalidArgument("pool '" + spec + "' is not PATH:SIZE (e.g. /dev/shm/a.pool:1G)");
  PoolConfig p;
  p.path = spec.substr(0, colon);
  RPMP_ASSIGN_OR_RETURN(p.size, ParseSize(spec.substr(colon + 1)));
  return p;
}

std::vector<std::string> SplitComma(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t end = s.find(',', start);
    if (end == std::string::npos) end = s.size();
    if (end > start) out.push_back(s.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

// "off" or a number in [0, 1) (0 = off): the dead share that makes a segment worth
// compacting. 1 would never trigger (a fully dead segment is freed without it).
StatusOr<double> ParseFraction(const std::string& s) {
  if (s == "off") return 0.0;
  char* end = nullptr;
  double d = std::strtod(s.c_str(), &end);
  if (s.empty() || end == nullptr || *end != '\0' || !(d >= 0 && d < 1))
    return Status::InvalidArgument("compaction threshold '" + s + "' is not 'off' or a fraction "
                                   "in [0, 1) such as 0.5");
  return d;
}

// The TLS files to the proxy: all three or none, each readable.
Status CheckTlsFiles(const ServerConfig& c) {
  const std::pair<const char*, const std::string*> files[] = {
      {"tls_ca_file (--tls-ca)", &c.tls_ca_file},
      {"tls_cert_file (--tls-cert)", &c.tls_cert_file},
      {"tls_key_file (--tls-key)", &c.tls_key_file}};
  int set = 0;
  for (const auto& [name, path] : files) set += path->empty() ? 0 : 1;
  if (set == 0) return Status::Ok();
  for (const auto& [name, path] : files) {
    if (set != 3 && path->empty())
      return Status::InvalidArgument(std::string(name) + " is missing: the TLS CA, certificate and key go together");
    if (!std::ifstream(*path)) return Status::InvalidArgument(std::string(name) + " '" + *path + "' cannot be read");
  }
  return Status::Ok();
}

}  // namespace

bool IsWildcardHost(const std::string& host) {
  std::string h = host.size() >= 2 && host.front() == '[' && host.back() == ']' ? host.substr(1, host.size() - 2) : host;
  in_addr v4;
  if (inet_pton(AF_INET, h.c_str(), &v4) == 1) return v4.s_addr == htonl(INADDR_ANY);
  in6_addr v6;
  return inet_pton(AF_INET6, h.c_str(), &v6) == 1 && IN6_IS_ADDR_UNSPECIFIED(&v6);
}

const char* ServerUsage() {
  return "usage: rpmp-server [--config FILE] [--listen HOST:PORT] [--pool PATH:SIZE]...\n"
         "                   [--capacity-pool PATH:SIZE]...\n"
         "                   [--provider auto|net|tcp|tcp;ofi_rxm|verbs;ofi_rxm|shm] [--segment-size SIZE]\n"
         "                   [--proxy HOST:PORT[,HOST:PORT]] [--replication-timeout DURATION]\n"
         "                   [--auth-secret-file FILE] [--insecure] [--metrics-listen HOST:PORT]\n"
         "                   [--busy-poll] [--prefault] [--rma-timeout DURATION] [--hello-timeout DURATION]\n"
         "                   [--compaction-threshold FRACTION|off] [--compaction-rate SIZE]\n"
         "                   [--compaction-grace DURATION] [--data-threads N]\n"
         "                   [--tls-ca FILE --tls-cert FILE --tls-key FILE]\n"
         "  --pool may be repeated; a missing pool file is created with SIZE,\n"
         "  an existing one is reopened (SIZE is then ignored). Devdax: --pool /dev/dax0.0:0\n"
         "  --capacity-pool PATH:SIZE (repeatable): a pool of the capacity tier (e.g. a file on\n"
         "  an SSD), used when no --pool has room; keep the order of all pools across restarts\n"
         "  Without --auth-secret-file only loopback addresses are served unless --insecure\n"
         "  (docs/security.md). --tls-*: mutual TLS to rpmp-proxy with this node's certificate.\n"
         "  --metrics-listen serves Prometheus metrics on http://HOST:PORT/metrics (off by\n"
         "  default; port 0 picks a free port, printed on the ready line)\n"
         "  --busy-poll: the progress thread polls without sleeping (lower latency, one core\n"
         "  kept busy; docs/operations.md)\n"
         "  --data-threads N: data shards, each an endpoint with a progress thread (default 0:\n"
         "  half the cores, 1 to 16, or $RPMP_DATA_THREADS; 1 = one endpoint on --listen;\n"
         "  docs/sharding.md)\n"
         "  --prefault: map every pool page at start (slower start; no first-touch page\n"
         "  faults while serving; docs/operations.md)\n"
         "  --compaction-threshold: compact segments at least this share dead (default 0.5;\n"
         "  0 or off: never); --compaction-rate: bytes copied per second at most (default\n"
         "  64M); --compaction-grace: how long an emptied segment is kept for one-sided\n"
         "  readers, and a closed one waits before it is compacted (default 5s)\n";
}

Status LoadServerConfigFile(const std::string& path, ServerConfig* c) {
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const YAML::BadFile&) {
    return Status::InvalidArgument("cannot read config file '" + path + "'");
  } catch (const YAML::Exception& e) {
    return Status::InvalidArgument("config file '" + path + "': " + e.what());
  }
  try {
    if (!root.IsMap()) return Status::InvalidArgument("config file '" + path + "' is not a YAML map");
    for (const auto& entry : root) {  // copies: yaml-cpp iterators yield temporaries
      std::string k = entry.first.as<std::string>();
      YAML::Node v = entry.second;
      if (k == "listen") c->listen = v.as<std::string>();
      else if (k == "provider") c->provider = v.as<std::string>();
      else if (k == "segment_size") { RPMP_ASSIGN_OR_RETURN(c->segment_size, ParseSize(v.as<std::string>())); }
      else if (k == "recv_slots") c->recv_slots = v.as<uint32_t>();
      else if (k == "max_inflight_per_client") c->max_inflight_per_client = v.as<uint32_t>();
      else if (k == "commit_threads") c->commit_threads = v.as<uint32_t>();
      else if (k == "data_threads") c->data_threads = v.as<uint32_t>();
      else if (k == "drain_timeout") { RPMP_ASSIGN_OR_RETURN(c->drain_timeout, ParseDuration(v.as<std::string>())); }
      else if (k == "replication_timeout") { RPMP_ASSIGN_OR_RETURN(c->replication_timeout, ParseDuration(v.as<std::string>())); }
      else if (k == "auth_secret_file") c->auth_secret_file = v.as<std::string>();
      else if (k == "insecure") c->insecure = v.as<bool>();
      else if (k == "busy_poll") c->busy_poll = v.as<bool>();
      else if (k == "prefault") c->prefault = v.as<bool>();
      else if (k == "tls_ca_file") c->tls_ca_file = v.as<std::string>();
      else if (k == "tls_cert_file") c->tls_cert_file = v.as<std::string>();
      else if (k == "tls_key_file") c->tls_key_file = v.as<std::string>();
      else if (k == "max_sessions_per_address") c->max_sessions_per_address = v.as<uint32_t>();
      else if (k == "max_sessions") c->max_sessions = v.as<uint32_t>();
      else if (k == "max_pending_hellos") c->max_pending_hellos = v.as<uint32_t>();
      else if (k == "hello_rate_per_address") c->hello_rate_per_address = v.as<uint32_t>();
      else if (k == "hello_timeout") { RPMP_ASSIGN_OR_RETURN(c->hello_timeout, ParseDuration(v.as<std::string>())); }
      else if (k == "session_idle_timeout") { RPMP_ASSIGN_OR_RETURN(c->session_idle_timeout, ParseDuration(v.as<std::string>())); }
      else if (k == "rma_timeout") { RPMP_ASSIGN_OR_RETURN(c->rma_timeout, ParseDuration(v.as<std::string>())); }
      else if (k == "metrics_listen") c->metrics_listen = v.as<std::string>();
      else if (k == "compaction_threshold") { RPMP_ASSIGN_OR_RETURN(c->compaction_threshold, ParseFraction(v.as<std::string>())); }
      else if (k == "compaction_rate") { RPMP_ASSIGN_OR_RETURN(c->compaction_rate, ParseSize(v.as<std::string>())); }
      else if (k == "compaction_grace") { RPMP_ASSIGN_OR_RETURN(c->compaction_grace, ParseDuration(v.as<std::string>())); }
      else if (k == "proxies") { for (const auto& p : v) c->proxies.push_back(p.as<std::string>()); }
      else if (k == "pools") {
        for (const auto& p : v) {
          PoolConfig pc;
          pc.path = p["path"].as<std::string>();
          RPMP_ASSIGN_OR_RETURN(pc.size, ParseSize(p["size"] ? p["size"].as<std::string>() : "0"));
          std::string tier = p["tier"] ? p["tier"].as<std::string>() : "fast";
          if (tier != "fast" && tier != "capacity")
            return Status::InvalidArgument("config file '" + path + "': pool tier '" + tier +
                                           "' is neither fast nor capacity");
          pc.capacity_tier = tier == "capacity";
          c->pools.push_back(pc);
        }
      } else {
        return Status::InvalidArgument("config file '" + path + "': unknown key '" + k + "'");
      }
    }
  } catch (const YAML::Exception& e) {
    return Status::InvalidArgument("config file '" + path + "': " + e.what());
  }
  return Status::Ok();
}

Status ValidateServerConfig(const ServerConfig& c) {
  RPMP_RETURN_IF_ERROR(ParseHostPort(c.listen).status().Annotate("--listen"));
  if (!IsProviderName(c.provider))
    return Status::InvalidArgument("unknown provider '" + c.provider + "'; known: " + KnownProviders());
  if (c.pools.empty()) return Status::InvalidArgument("no pool configured: give --pool PATH:SIZE");
  if (c.segment_size < (1u << 20) || c.segment_size > (1ull << 32))
    return Status::InvalidArgument("segment size must be between 1 MiB and 4 GiB");
  if (c.recv_slots < 8 || c.recv_slots > 65536)
    return Status::InvalidArgument("recv_slots must be between 8 and 65536");
  if (c.data_threads > 64) return Status::InvalidArgument("data_threads must be 0 (automatic) to 64");
  if (c.max_inflight_per_client < 1 || c.commit_threads < 1 || c.commit_threads > 64)
    return Status::InvalidArgument("max_inflight_per_client and commit_threads (1-64) must be positive");
  for (const std::string& p : c.proxies) RPMP_RETURN_IF_ERROR(ParseHostPort(p).status().Annotate("--proxy"));
  if (c.max_sessions_per_address < 1) return Status::InvalidArgument("max_sessions_per_address must be positive");
  if (c.max_sessions < 1) return Status::InvalidArgument("max_sessions must be positive");
  if (c.hello_rate_per_address < 1) return Status::InvalidArgument("hello_rate_per_address must be positive");
  if (c.hello_timeout < std::chrono::milliseconds(100))
    return Status::InvalidArgument("hello_timeout must be at least 100ms");
  if (c.rma_timeout < std::chrono::milliseconds(100))
    return Status::InvalidArgument("rma_timeout must be at least 100ms");
  if (c.auth_secret_file.empty() && !c.insecure && !IsLoopbackHost(ParseHostPort(c.listen)->host))
    return Status::InvalidArgument(
        "refusing to listen on " + c.listen + " without a cluster secret (protected mode): "
        "set auth_secret_file / --auth-secret-file, or pass --insecure to serve it unauthenticated");
  if (IsWildcardHost(ParseHostPort(c.listen)->host))
    return Status::InvalidArgument(
        "listen address " + c.listen + " is a wildcard, but it is also the endpoint this node "
        "registers with the proxies and that clients and the other servers dial: set listen / "
        "--listen to this host's own address that the other hosts reach (e.g. 10.0.0.21:" +
        ParseHostPort(c.listen)->port + ")");
  if (c.compaction_threshold != 0 && c.compaction_rate == 0)
    return Status::InvalidArgument("compaction_rate must be positive (turn compaction off with "
                                   "compaction_threshold 0)");
  RPMP_RETURN_IF_ERROR(CheckTlsFiles(c));
  if (!c.metrics_listen.empty())
    RPMP_RETURN_IF_ERROR(ParseListenAddress(c.metrics_listen).status().Annotate("--metrics-listen"));
  return Status::Ok();
}

StatusOr<ServerConfig> LoadServerConfig(int argc, char** argv) {
  ServerConfig c;
  for (int i = 1; i < argc; i++) {  // the config file first, so flags override it
    if (std::strcmp(argv[i], "--config") == 0 && i + 1 < argc)
      RPMP_RETURN_IF_ERROR(LoadServerConfigFile(argv[i + 1], &c));
  }
  bool pools_from_flags = false;
  for (int i = 1; i < argc; i++) {
    std::string f = argv[i];
    if (f == "--help" || f == "-h") return Status::FailedPrecondition(ServerUsage());
    if (f == "--insecure") {
      c.insecure = true;
      continue;
    }
    if (f == "--busy-poll") {
      c.busy_poll = true;
      continue;
    }
    if (f == "--prefault") {
      c.prefault = true;
      continue;
    }
    if (i + 1 >= argc) return Status::InvalidArgument("flag " + f + " needs a value\n" + ServerUsage());
    std::string v = argv[++i];
    if (f == "--config") continue;
    if (f == "--listen") c.listen = v;
    else if (f == "--provider") c.provider = v;
    else if (f == "--segment-size") { RPMP_ASSIGN_OR_RETURN(c.segment_size, ParseSize(v)); }
    else if (f == "--proxy") c.proxies = SplitComma(v);
    else if (f == "--auth-secret-file") c.auth_secret_file = v;
    else if (f == "--tls-ca") c.tls_ca_file = v;
    else if (f == "--tls-cert") c.tls_cert_file = v;
    else if (f == "--tls-key") c.tls_key_file = v;
    else if (f == "--metrics-listen") c.metrics_listen = v;
    else if (f == "--compaction-threshold") { RPMP_ASSIGN_OR_RETURN(c.compaction_threshold, ParseFraction(v)); }
    else if (f == "--compaction-rate") { RPMP_ASSIGN_OR_RETURN(c.compaction_rate, ParseSize(v)); }
    else if (f == "--compaction-grace") { RPMP_ASSIGN_OR_RETURN(c.compaction_grace, ParseDuration(v)); }
    else if (f == "--replication-timeout") { RPMP_ASSIGN_OR_RETURN(c.replication_timeout, ParseDuration(v)); }
    else if (f == "--rma-timeout") { RPMP_ASSIGN_OR_RETURN(c.rma_timeout, ParseDuration(v)); }
    else if (f == "--hello-timeout") { RPMP_ASSIGN_OR_RETURN(c.hello_timeout, ParseDuration(v)); }
    else if (f == "--data-threads") {
      char* end = nullptr;
      unsigned long n = std::strtoul(v.c_str(), &end, 10);
      if (v.empty() || *end != '\0' || n > 64)
        return Status::InvalidArgument("--data-threads takes a number from 0 (automatic) to 64");
      c.data_threads = static_cast<uint32_t>(n);
    }
    else if (f == "--pool" || f == "--capacity-pool") {
      if (!pools_from_flags) c.pools.clear();
      pools_from_flags = true;
      RPMP_ASSIGN_OR_RETURN(PoolConfig p, ParsePoolSpec(v));
      p.capacity_tier = f == "--capacity-pool";
      c.pools.push_back(p);
    } else {
      return Status::InvalidArgument("unknown flag " + f + "\n" + ServerUsage());
    }
  }
  RPMP_RETURN_IF_ERROR(ValidateServerConfig(c));
  return c;
}

}  // namespace rpmp
