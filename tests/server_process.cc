// Implementation of ServerProcess and RunTool for integration tests.
#include "tests/server_process.h"

#include <dirent.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include "tests/test_util.h"

namespace rpmp::testing {
namespace {

std::vector<char*> CArgs(std::vector<std::string>& v) {
  std::vector<char*> out;
  for (std::string& s : v) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

std::string BinDir() {
  const char* d = std::getenv("RPMP_BIN_DIR");
  return d != nullptr ? d : "./bin";
}

ServerProcess::ServerProcess(const std::string& pool_size, std::vector<std::string> extra_args)
    : pool_(TempPath("server.pool")),
      pool_size_(pool_size),
      log_path_(TempPath("server.log")),
      extra_(std::move(extra_args)),
      port_(FreePort()) {}

ServerProcess::~ServerProcess() {
  if (pid_ > 0) Kill(SIGKILL);
  std::remove(pool_.c_str());
  std::remove(log_path_.c_str());
}

bool ServerProcess::Start() {
  for (int attempt = 1;; attempt++) {
    size_t before = Log().size();
    if (Launch()) {
      started_ = true;
      return true;
    }
    std::string log = Log().substr(std::min(before, Log().size()));
    // Another test on this machine bound the port between FreePort() and this bind: a
    // race of the tests' port choice, not of the server. A first start takes another
    // port; a restart keeps its address (clients come back to it).
    bool port_taken = log.find("Address already in use") != std::string::npos;
    if (port_taken && !started_ && attempt < 3) {
      std::fprintf(stderr, "ServerProcess: port %d was taken meanwhile; trying another\n", port_);
      port_ = FreePort();
      continue;
    }
    std::fprintf(stderr, "ServerProcess: rpmp-server on %s did not become ready; its log:\n%s\n",
                 address().c_str(), log.c_str());
    return false;
  }
}

bool ServerProcess::Launch() {
  int out[2];
  if (pipe(out) != 0) return false;
  std::vector<std::string> args = {BinDir() + "/rpmp-server", "--listen", address(), "--pool",
                                   pool_ + ":" + pool_size_};
  args.insert(args.end(), extra_.begin(), extra_.end());
  pid_ = fork();
  if (pid_ == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlive the test
    dup2(out[1], 1);
    int log = open(log_path_.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    dup2(log, 2);
    close(out[0]);
    std::vector<char*> argv = CArgs(args);
    execv(argv[0], argv.data());
    _exit(127);
  }
  close(out[1]);
  std::string seen;
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  bool ready = false;
  while (!ready && std::chrono::steady_clock::now() < until) {
    pollfd p{out[0], POLLIN, 0};
    if (poll(&p, 1, 1000) <= 0) continue;
    char buf[256];
    ssize_t n = read(out[0], buf, sizeof(buf));
    if (n <= 0) break;  // the server exited
    seen.append(buf, static_cast<size_t>(n));
    ready = seen.find("rpmp-server ready") != std::string::npos;
  }
  close(out[0]);
  if (!ready && pid_ > 0) Kill(SIGKILL);
  return ready;
}

int ServerProcess::Kill(int sig) {
  if (pid_ <= 0) return -1;
  kill(pid_, sig);
  int status = 0;
  waitpid(pid_, &status, 0);
  pid_ = -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

bool ServerProcess::DiedOnItsOwn() {
  if (pid_ <= 0) return false;
  int status = 0;
  if (waitpid(pid_, &status, WNOHANG) != pid_) return false;
  pid_ = -1;
  if (WIFSIGNALED(status)) {
    death_signal_ = WTERMSIG(status);
    death_ = "killed by signal " + std::to_string(death_signal_) + " (" + strsignal(death_signal_) + ")";
  } else {
    death_signal_ = 0;
    death_ = "exited with status " + std::to_string(WEXITSTATUS(status));
  }
  return true;
}

bool ServerProcess::Signal(int sig) const {
  if (pid_ <= 0) return false;
  kill(pid_, sig);
  if (sig != SIGSTOP) return true;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < deadline) {  // poll /proc: no sleeps as sync
    bool all_stopped = true;
    DIR* tasks = opendir(("/proc/" + std::to_string(pid_) + "/task").c_str());
    if (tasks == nullptr) return false;
    while (dirent* t = readdir(tasks)) {
      if (t->d_name[0] == '.') continue;
      std::string stat = ReadFile("/proc/" + std::to_string(pid_) + "/task/" + t->d_name + "/stat");
      size_t paren = stat.rfind(')');
      if (paren == std::string::npos || paren + 2 >= stat.size() || stat[paren + 2] != 'T')
        all_stopped = false;
    }
    closedir(tasks);
    if (all_stopped) return true;
    std::this_thread::yield();
  }
  return false;
}

std::string ServerProcess::Log() const { return ReadFile(log_path_); }

int RunTool(const std::vector<std::string>& argv_in, const std::string& input, std::string* out,
            std::string* err) {
  std::vector<std::string> argv = argv_in;
  if (argv[0].find('/') == std::string::npos) argv[0] = BinDir() + "/" + argv[0];
  std::string in_path = TempPath("tool.in"), out_path = TempPath("tool.out"),
              err_path = TempPath("tool.err");
  std::ofstream(in_path, std::ios::binary) << input;
  pid_t pid = fork();
  if (pid == 0) {
    int i = open(in_path.c_str(), O_RDONLY);
    int o = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int e = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(i, 0);
    dup2(o, 1);
    dup2(e, 2);
    std::vector<char*> a = CArgs(argv);
    execv(a[0], a.data());
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  if (out) *out = ReadFile(out_path);
  if (err) *err = ReadFile(err_path);
  for (auto& p : {in_path, out_path, err_path}) std::remove(p.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

double ScrapeMetric(int port, const std::string& name) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(static_cast<uint16_t>(port));
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof(sa)) != 0) {
    ::close(fd);
    return -1;
  }
  std::string req = "GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n", body;
  (void)!::write(fd, req.data(), req.size());
  char buf[4096];
  pollfd p{fd, POLLIN, 0};
  while (::poll(&p, 1, 2000) > 0) {
    ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n <= 0) break;
    body.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  size_t at = body.find("\n" + name + " ");
  if (at == std::string::npos) return -1;
  return std::stod(body.substr(at + name.size() + 2));
}

}  // namespace rpmp::testing
