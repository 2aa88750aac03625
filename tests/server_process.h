// ServerProcess: a real rpmp-server child process for integration tests, on a free
// loopback port with its pool under /dev/shm. Start() waits for the server's "ready"
// line (no sleeps); Kill() sends any signal (SIGKILL to crash it, SIGTERM to stop it);
// Restart() starts it again on the same port and pool. The pool file is removed when
// the object is destroyed. Tests only.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <string>
#include <vector>

namespace rpmp::testing {

// <build>/bin from RPMP_BIN_DIR (set by ctest), for the daemons and tools.
std::string BinDir();

class ServerProcess {
 public:
  explicit ServerProcess(const std::string& pool_size = "256m",
                         std::vector<std::string> extra_args = {});
  ~ServerProcess();

  // Starts and waits up to 30 s for readiness; false on failure, after printing the
  // server's log to stderr. A first start whose port another process took meanwhile
  // tries another port (twice at most).
  bool Start();
  // Sends sig and reaps the process; returns its exit status (or 128+signal).
  int Kill(int sig);
  bool Restart() { return Start(); }
  // Sends sig without reaping (SIGSTOP / SIGCONT to pause and resume it). For SIGSTOP,
  // returns once every thread of the server is stopped (false after 10 s).
  bool Signal(int sig) const;
  bool Running() const { return pid_ > 0; }
  // True when the process ended without Kill() (a crash, or the OOM killer); reaps it
  // and records how it ended (death(), death_signal()).
  bool DiedOnItsOwn();
  // How the last self-inflicted end went: "exited with status N" or "killed by signal N
  // (name)"; empty when none was seen. death_signal() is the signal, or 0.
  const std::string& death() const { return death_; }
  int death_signal() const { return death_signal_; }

  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  const std::string& pool_path() const { return pool_; }
  // What the server wrote to stderr so far (its log).
  std::string Log() const;

 private:
  std::string pool_, pool_size_, log_path_;
  std::vector<std::string> extra_;
  int port_;
  pid_t pid_ = -1;
  bool started_ = false;  // it became ready once: a restart keeps port_
  std::string death_;
  int death_signal_ = 0;

  // One start: fork, exec, wait up to 30 s for the ready line.
  bool Launch();
};

// Runs a command (argv[0] looked up in BinDir() when it has no '/'), feeding `input`
// to stdin; returns its exit status and fills *out / *err.
int RunTool(const std::vector<std::string>& argv, const std::string& input, std::string* out,
            std::string* err);

// GET http://127.0.0.1:port/metrics (an rpmp-server's --metrics-listen): the value of
// the series `name` as printed, labels included (e.g. rpmp_server_shard_replies_total{shard="1"});
// -1 when absent or unreachable.
double ScrapeMetric(int port, const std::string& name);

}  // namespace rpmp::testing
