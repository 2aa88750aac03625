// ClusterHarness: a real RPMP cluster for tests — one etcd, N rpmp-proxy and M
// rpmp-server child processes on random free 127.0.0.1 ports, pools and etcd data
// under /dev/shm, short heartbeat/failover timeouts. Everything is started and
// checked by polling with deadlines (log lines, the proxy's node map), never by
// sleeping. Destroying the harness kills every child and removes its files.
// Tests only; not thread-safe.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "proto/proxy_client.h"
#include "rpmp/client.h"
#include "rpmp/cluster.h"
#include "tests/server_process.h"

namespace rpmp::testing {

// A child process whose stdout and stderr go to a log file.
class ChildProcess {
 public:
  ChildProcess(std::string name, std::vector<std::string> argv);
  ~ChildProcess();
  bool Start();
  // Polls the log until it contains `text` (true) or the deadline passes.
  bool WaitForLog(const std::string& text, std::chrono::milliseconds within) const;
  int Kill(int sig);
  // Sends sig without reaping (SIGSTOP / SIGCONT).
  bool Signal(int sig);
  bool Running() const { return pid_ > 0; }
  std::string Log() const;

 private:
  std::string name_, log_path_;
  std::vector<std::string> argv_;
  pid_t pid_ = -1;
};

// Polls `cond` every 20 ms until it is true (returns true) or `within` passes.
bool Eventually(const std::function<bool()>& cond, std::chrono::milliseconds within);

class ClusterHarness {
 public:
  ClusterHarness();
  ~ClusterHarness();
  // Starts etcd, `proxies` proxies and `servers` servers and waits until every
  // server is LIVE in the node map. False on failure, after printing to stderr the step
  // that failed and every process's log.
  bool Start(int proxies, int servers);
  // Adds one more server (started, not yet necessarily LIVE).
  ServerProcess* AddServer();
  bool WaitLive(size_t n, std::chrono::milliseconds within);

  std::vector<std::string> proxy_addresses() const { return proxy_addrs_; }
  std::string proxy_list() const;
  ProxyClient& proxy() { return *proxy_client_; }
  ChildProcess& proxy_process(size_t i) { return *proxies_[i]; }
  ChildProcess& etcd_process() { return *etcd_; }
  // Pool size of servers started from now on (default "256m").
  void set_server_pool_size(std::string size) { pool_size_ = std::move(size); }
  std::vector<std::unique_ptr<ServerProcess>>& servers() { return servers_; }
  // Index into proxy_addresses() of the current leader, -1 if unknown.
  int LeaderIndex();
  // The server process serving node `id`, nullptr if none.
  ServerProcess* ServerOfNode(uint64_t id);
  uint64_t NodeIdOf(ServerProcess* s);
  // ConnectCluster with test timeouts (2 s per call unless given, 30 s of retries);
  // with a tenant token or a cluster secret when given.
  std::unique_ptr<Client> Connect(const std::string& token = "", const std::string& secret = "",
                                  std::chrono::milliseconds call_timeout = std::chrono::seconds(2));
  std::unique_ptr<Client> Connect(std::chrono::milliseconds call_timeout) { return Connect("", "", call_timeout); }
  // Extra arguments of servers started from now on (e.g. --auth-secret-file PATH).
  void set_server_args(std::vector<std::string> args) { server_args_ = std::move(args); }
  // Logs of all processes, for failure messages.
  std::string Describe() const;

 private:
  // Start's steps: "" when every one succeeded, else what failed.
  std::string Launch(int proxies, int servers);

  std::string etcd_dir_;
  std::unique_ptr<ChildProcess> etcd_;
  std::vector<std::unique_ptr<ChildProcess>> proxies_;
  std::vector<std::string> proxy_addrs_;
  std::vector<std::unique_ptr<ServerProcess>> servers_;
  std::vector<uint64_t> node_ids_;
  std::string pool_size_ = "256m";
  std::vector<std::string> server_args_;
  std::unique_ptr<ProxyClient> proxy_client_;
};

}  // namespace rpmp::testing
