// Implementation of ClusterHarness and ChildProcess (tests only).
#include "tests/cluster/cluster_harness.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <thread>

#include "tests/test_util.h"

namespace rpmp::testing {
namespace {

// Short timeouts so failover tests run in seconds.
const std::vector<std::string> kProxyFlags = {
    "--heartbeat-timeout", "1500ms", "--suspect-after", "700ms", "--heartbeat-interval", "200ms",
    "--ttl-check", "300ms", "--session-ttl", "2", "--op-timeout", "1s"};

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

bool Eventually(const std::function<bool()>& cond, std::chrono::milliseconds within) {
  auto until = std::chrono::steady_clock::now() + within;
  while (true) {
    if (cond()) return true;
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

ChildProcess::ChildProcess(std::string name, std::vector<std::string> argv)
    : name_(std::move(name)), log_path_(TempPath(name_ + ".log")), argv_(std::move(argv)) {}

ChildProcess::~ChildProcess() {
  if (pid_ > 0) Kill(SIGKILL);
  std::remove(log_path_.c_str());
}

bool ChildProcess::Start() {
  pid_ = fork();
  if (pid_ < 0) return false;
  if (pid_ == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlive the test
    int log = open(log_path_.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    dup2(log, 1);
    dup2(log, 2);
    std::vector<char*> a;
    for (std::string& s : argv_) a.push_back(s.data());
    a.push_back(nullptr);
    execv(a[0], a.data());
    _exit(127);
  }
  return true;
}

bool ChildProcess::WaitForLog(const std::string& text, std::chrono::milliseconds within) const {
  return Eventually([&] { return Log().find(text) != std::string::npos; }, within);
}

int ChildProcess::Kill(int sig) {
  if (pid_ <= 0) return -1;
  kill(pid_, sig);
  int status = 0;
  waitpid(pid_, &status, 0);
  pid_ = -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

bool ChildProcess::Signal(int sig) { return pid_ > 0 && kill(pid_, sig) == 0; }

std::string ChildProcess::Log() const { return ReadAll(log_path_); }

ClusterHarness::ClusterHarness() : etcd_dir_(TempPath("etcd")) {}

ClusterHarness::~ClusterHarness() {
  servers_.clear();
  proxies_.clear();
  etcd_.reset();
  std::system(("rm -rf '" + etcd_dir_ + "'").c_str());
}

bool ClusterHarness::Start(int nproxies, int nservers) {
  std::string failed = Launch(nproxies, nservers);
  if (failed.empty()) return true;
  // A test only sees REQUIRE(h.Start(...)) fail: say which step, and every log so far.
  std::fprintf(stderr, "ClusterHarness::Start(%d, %d): %s\n%s\n", nproxies, nservers, failed.c_str(),
               Describe().c_str());
  return false;
}

std::string ClusterHarness::Launch(int nproxies, int nservers) {
  int client_port = FreePort(), peer_port = FreePort();
  std::string client_url = "http://127.0.0.1:" + std::to_string(client_port);
  std::string peer_url = "http://127.0.0.1:" + std::to_string(peer_port);
  etcd_ = std::make_unique<ChildProcess>(
      "etcd", std::vector<std::string>{"/usr/bin/etcd", "--name", "t", "--data-dir", etcd_dir_,
                                       "--listen-client-urls", client_url, "--advertise-client-urls", client_url,
                                       "--listen-peer-urls", peer_url, "--initial-advertise-peer-urls", peer_url,
                                       "--initial-cluster", "t=" + peer_url});
  if (!etcd_->Start()) return "etcd did not fork";
  if (!etcd_->WaitForLog("ready to serve client requests", std::chrono::seconds(30)))
    return "etcd not ready within 30 s";
  for (const char* binary : {"rpmp-proxy", "rpmp-server"})
    if (access((BinDir() + "/" + binary).c_str(), X_OK) != 0)
      return BinDir() + "/" + binary + " is not an executable (run from the build directory, or set RPMP_BIN_DIR)";
  for (int i = 0; i < nproxies; i++) {
    std::string addr = "127.0.0.1:" + std::to_string(FreePort());
    std::vector<std::string> argv = {BinDir() + "/rpmp-proxy", "--listen", addr, "--etcd", client_url};
    argv.insert(argv.end(), kProxyFlags.begin(), kProxyFlags.end());
    proxies_.push_back(std::make_unique<ChildProcess>("proxy" + std::to_string(i), argv));
    proxy_addrs_.push_back(addr);
    if (!proxies_.back()->Start()) return "proxy " + std::to_string(i) + " did not fork";
  }
  for (size_t i = 0; i < proxies_.size(); i++)
    if (!proxies_[i]->WaitForLog("listening on", std::chrono::seconds(30)))
      return "proxy " + std::to_string(i) + " not listening within 30 s";
  ProxyClientOptions po;
  po.retry_for = std::chrono::seconds(10);
  proxy_client_ = std::make_unique<ProxyClient>(proxy_addrs_, po);
  for (int i = 0; i < nservers; i++)
    if (AddServer() == nullptr) return "server " + std::to_string(i) + " did not start (its log is above)";
  if (!WaitLive(static_cast<size_t>(nservers), std::chrono::seconds(60)))
    return std::to_string(nservers) + " servers not LIVE in the node map within 60 s";
  return "";
}

ServerProcess* ClusterHarness::AddServer() {
  std::vector<std::string> args{"--proxy", proxy_list(), "--provider", Provider(), "--segment-size", "4m",
                                "--replication-timeout", "6s"};
  args.insert(args.end(), server_args_.begin(), server_args_.end());
  auto s = std::make_unique<ServerProcess>(pool_size_, args);
  if (!s->Start()) return nullptr;  // it printed its log
  servers_.push_back(std::move(s));
  node_ids_.push_back(0);
  return servers_.back().get();
}

bool ClusterHarness::WaitLive(size_t n, std::chrono::milliseconds within) {
  return Eventually([&] {
    StatusOr<v1::NodeMap> m = proxy_client_->GetNodeMap();
    if (!m.ok()) return false;
    size_t live = 0;
    for (const v1::Node& node : m->nodes()) live += node.state() == v1::NODE_STATE_LIVE;
    return live >= n;
  }, within);
}

std::string ClusterHarness::proxy_list() const {
  std::string out;
  for (const std::string& a : proxy_addrs_) out += (out.empty() ? "" : ",") + a;
  return out;
}

int ClusterHarness::LeaderIndex() {
  StatusOr<v1::NodeMap> m = proxy_client_->GetNodeMap();
  if (!m.ok()) return -1;
  for (size_t i = 0; i < proxy_addrs_.size(); i++)
    if (proxy_addrs_[i] == m->leader()) return static_cast<int>(i);
  return -1;
}

uint64_t ClusterHarness::NodeIdOf(ServerProcess* s) {
  for (size_t i = 0; i < servers_.size(); i++) {
    if (servers_[i].get() != s) continue;
    if (node_ids_[i] == 0) {
      ClientOptions o;
      o.provider = Provider();
      o.timeout = std::chrono::seconds(5);
      StatusOr<std::unique_ptr<Client>> c = Client::Connect(s->address(), o);
      if (c.ok()) node_ids_[i] = (*c)->NodeId();
    }
    return node_ids_[i];
  }
  return 0;
}

ServerProcess* ClusterHarness::ServerOfNode(uint64_t id) {
  for (auto& s : servers_)
    if (NodeIdOf(s.get()) == id) return s.get();
  return nullptr;
}

std::unique_ptr<Client> ClusterHarness::Connect(const std::string& token, const std::string& secret,
                                                std::chrono::milliseconds call_timeout) {
  ClusterOptions o;
  o.client.tenant_token = token;
  o.client.secret = secret;
  o.client.provider = Provider();
  o.client.timeout = call_timeout;
  o.client.buffer_cache_bytes = 32u << 20;
  o.retry_for = std::chrono::seconds(30);
  StatusOr<std::unique_ptr<Client>> c = Client::ConnectCluster(proxy_addrs_, o);
  return c.ok() ? std::move(c).value() : nullptr;
}

std::string ClusterHarness::Describe() const {
  std::string out;
  if (etcd_) out += "--- etcd (tail)\n" + etcd_->Log().substr(etcd_->Log().size() > 2000 ? etcd_->Log().size() - 2000 : 0);
  for (size_t i = 0; i < proxies_.size(); i++) out += "--- proxy" + std::to_string(i) + "\n" + proxies_[i]->Log();
  for (size_t i = 0; i < servers_.size(); i++) out += "--- server" + std::to_string(i) + "\n" + servers_[i]->Log();
  return out;
}

}  // namespace rpmp::testing
