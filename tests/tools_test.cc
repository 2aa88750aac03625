// Integration: rpmpctl and rpmp-bench as people and scripts use them, against a real
// server: outputs, exit codes (0 ok, 1 operation failed, 2 usage), one-line reasons.
#include <catch2/catch.hpp>
#include <regex>

#include "tests/server_process.h"
#include "tests/test_util.h"

namespace rpmp {
namespace {

using testing::RunTool;
using testing::ServerProcess;

int Ctl(const ServerProcess& s, std::vector<std::string> args, const std::string& in,
        std::string* out, std::string* err) {
  args.insert(args.begin(), {"rpmpctl", "--server", s.address(), "--timeout", "10s"});
  return RunTool(args, in, out, err);
}

TEST_CASE("rpmpctl stores and reads through stdin/stdout and files") {
  ServerProcess server;
  REQUIRE(server.Start());
  std::string out, err;
  REQUIRE(Ctl(server, {"put", "ns", "k", "-"}, "hello\n", &out, &err) == 0);
  REQUIRE(Ctl(server, {"get", "ns", "k", "-"}, "", &out, &err) == 0);
  CHECK(out == "hello\n");
  std::string big(100000, 'b');
  REQUIRE(Ctl(server, {"append", "ns", "log", "-", "--tag", "7"}, big, &out, &err) == 0);
  REQUIRE(Ctl(server, {"append", "ns", "log", "-", "--tag", "8"}, "tail", &out, &err) == 0);
  REQUIRE(Ctl(server, {"get", "ns", "log", "-"}, "", &out, &err) == 0);
  CHECK(out == big + "tail");
  REQUIRE(Ctl(server, {"meta", "ns", "log"}, "", &out, &err) == 0);
  CHECK(out.find("tag=7\tlength=100000") != std::string::npos);
  CHECK(out.find("tag=8\tlength=4") != std::string::npos);
  REQUIRE(Ctl(server, {"ls", "ns"}, "", &out, &err) == 0);
  CHECK(out == "k\t6\t1\nlog\t100004\t2\n");
  REQUIRE(Ctl(server, {"stat"}, "", &out, &err) == 0);
  CHECK(out.find("keys 2 records 3") != std::string::npos);
  CHECK(out.find("pool " + server.pool_path()) != std::string::npos);
  REQUIRE(Ctl(server, {"del", "ns", "k"}, "", &out, &err) == 0);
  REQUIRE(Ctl(server, {"alloc", "64k"}, "", &out, &err) == 0);
  std::string addr = out.substr(0, out.find('\n'));
  REQUIRE(Ctl(server, {"write", addr, "-"}, "raw bytes", &out, &err) == 0);
  REQUIRE(Ctl(server, {"read", addr, "9", "-"}, "", &out, &err) == 0);
  CHECK(out == "raw bytes");
  CHECK(Ctl(server, {"free", addr}, "", &out, &err) == 0);
}

TEST_CASE("rpmpctl failures exit 1 with one line saying why") {
  ServerProcess server;
  REQUIRE(server.Start());
  std::string out, err;
  CHECK(Ctl(server, {"get", "ns", "missing", "-"}, "", &out, &err) == 1);
  CHECK(err == "rpmpctl: not found: key 'missing' in namespace 'ns'\n");
  CHECK(Ctl(server, {"del", "ns", "missing"}, "", &out, &err) == 1);
  CHECK(err.find("not found") != std::string::npos);
  CHECK(Ctl(server, {"put", "ns", "k", "/nonexistent/file"}, "", &out, &err) == 1);
  CHECK(err.find("cannot read '/nonexistent/file'") != std::string::npos);
  CHECK(std::count(err.begin(), err.end(), '\n') == 1);
  CHECK(RunTool({"rpmpctl", "--server", "127.0.0.1:" + std::to_string(testing::FreePort()),
                 "--timeout", "3s", "stat"}, "", &out, &err) == 1);
  CHECK(err.find("cannot reach rpmp-server") != std::string::npos);
}

TEST_CASE("rpmpctl usage errors exit 2") {
  ServerProcess server;
  REQUIRE(server.Start());
  std::string out, err;
  CHECK(RunTool({"rpmpctl", "stat"}, "", &out, &err) == 2);
  CHECK(err.find("no server given") != std::string::npos);
  CHECK(Ctl(server, {}, "", &out, &err) == 2);
  CHECK(Ctl(server, {"frobnicate"}, "", &out, &err) == 2);
  CHECK(Ctl(server, {"put", "ns"}, "", &out, &err) == 2);
  CHECK(Ctl(server, {"append", "ns", "k", "-", "--tag", "seven"}, "x", &out, &err) == 2);
  CHECK(err.find("--tag 'seven' is not a number") != std::string::npos);
  CHECK(Ctl(server, {"alloc", "lots"}, "", &out, &err) == 2);
  CHECK(Ctl(server, {"stat", "--bogus", "1"}, "", &out, &err) == 2);
  CHECK(RunTool({"rpmpctl", "--help"}, "", &out, &err) == 0);
  CHECK(out.find("usage: rpmpctl") != std::string::npos);
}

TEST_CASE("rpmp-server refuses bad flags and unusable pools with a clear message") {
  std::string out, err;
  CHECK(RunTool({"rpmp-server", "--listen", "127.0.0.1:1"}, "", &out, &err) == 2);
  CHECK(err.find("no pool configured") != std::string::npos);
  CHECK(RunTool({"rpmp-server", "--pool", "/dev/shm/x:1G", "--provider", "carrier-pigeon"}, "", &out, &err) == 2);
  CHECK(err.find("unknown provider") != std::string::npos);
  std::string port = std::to_string(testing::FreePort());
  CHECK(RunTool({"rpmp-server", "--listen", "127.0.0.1:" + port, "--pool", "/nonexistent-dir/a.pool:1G"}, "", &out, &err) == 1);
  CHECK(err.find("/nonexistent-dir/a.pool") != std::string::npos);
  std::string junk = testing::TempPath("junk.pool");
  RunTool({"/bin/sh", "-c", "head -c 20000000 /dev/urandom > " + junk}, "", &out, &err);
  CHECK(RunTool({"rpmp-server", "--listen", "127.0.0.1:" + port, "--pool", junk + ":1G"}, "", &out, &err) == 1);
  CHECK(err.find("cannot open pools") != std::string::npos);
  std::remove(junk.c_str());
  std::string tiny = testing::TempPath("tiny.pool");
  CHECK(RunTool({"rpmp-server", "--listen", "127.0.0.1:" + port, "--pool", tiny + ":1m"}, "", &out, &err) == 1);
  CHECK(err.find("MiB") != std::string::npos);
  std::remove(tiny.c_str());
}

TEST_CASE("rpmp-bench prints its setup, the TCP baseline and one parsable line per workload") {
  ServerProcess server("1g");
  REQUIRE(server.Start());
  std::string out, err;
  REQUIRE(RunTool({"rpmp-bench", "--server", server.address(), "--workloads", "put,get,append,write,read",
                   "--sizes", "4k,256k", "--threads", "2", "--seconds", "0.3"}, "", &out, &err) == 0);
  CHECK(out.find("rpmp-bench: server=" + server.address()) != std::string::npos);
  CHECK(out.find("baseline size=262144 tcp_MBps=") != std::string::npos);
  // The baseline says what it measured; a server on loopback needs no note about it.
  CHECK(std::regex_search(out, std::regex(R"(\nbaseline size=262144 tcp_MBps=[\d.]+ .* baseline_path=client_loopback\n)")));
  CHECK(out.find("note: the servers are on other hosts") == std::string::npos);
  std::regex line(R"(workload=(\w+) size=(\d+) .* client_cpu_us_per_op=([\d.]+) MBps=([\d.]+) p50_us=\d+ p99_us=\d+ p999_us=\d+ tcp_MBps=[\d.]+ ratio=[\d.]+ errors=0 baseline_path=client_loopback\n)");
  int lines = 0;
  for (std::sregex_iterator it(out.begin(), out.end(), line), end; it != end; ++it) {
    lines++;
    CHECK(std::stod((*it)[3]) > 0);  // the ops cost this process some CPU
    CHECK(std::stod((*it)[4]) > 0);
  }
  CHECK(lines == 10);
  CHECK(RunTool({"rpmp-bench", "--server", server.address(), "--workloads", "scan"}, "", &out, &err) == 2);
  CHECK(err.find("unknown workload 'scan'") != std::string::npos);
  // Placement groups are a cluster's: one server has none.
  CHECK(RunTool({"rpmp-bench", "--server", server.address(), "--groups", "4"}, "", &out, &err) == 2);
  CHECK(err.find("--groups needs --proxy") != std::string::npos);
  // A run of no ops would never move on to the next group.
  CHECK(RunTool({"rpmp-bench", "--proxy", "127.0.0.1:1", "--groups", "2", "--group-run", "0"}, "", &out, &err) == 2);
  CHECK(err.find("counts and seconds must be positive") != std::string::npos);
}

}  // namespace
}  // namespace rpmp
