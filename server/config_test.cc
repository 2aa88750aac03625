// Tests of rpmp-server configuration: flags, YAML files, and the errors for bad ones.
#include "server/config.h"

#include <catch2/catch.hpp>
#include <fstream>
#include <vector>

#include "tests/test_util.h"

namespace rpmp {
namespace {

StatusOr<ServerConfig> Load(std::vector<std::string> args) {
  std::vector<char*> argv;
  static std::string prog = "rpmp-server";
  argv.push_back(prog.data());
  for (std::string& a : args) argv.push_back(a.data());
  return LoadServerConfig(static_cast<int>(argv.size()), argv.data());
}

std::string WriteFile(const std::string& text) {
  std::string path = testing::TempPath("config.yaml");
  std::ofstream(path) << text;
  return path;
}

TEST_CASE("flags give a valid config") {
  auto c = Load({"--listen", "127.0.0.1:7400", "--pool", "/dev/shm/a.pool:1G", "--pool",
                 "/dev/shm/b.pool:64m"});
  REQUIRE(c.ok());
  CHECK(c->listen == "127.0.0.1:7400");
  REQUIRE(c->pools.size() == 2);
  CHECK(c->pools[0].size == (1ull << 30));
  CHECK(c->pools[1].path == "/dev/shm/b.pool");
}

TEST_CASE("bad flags are explained") {
  CHECK(Load({"--listen", "127.0.0.1:7400"}).status().message().find("no pool") != std::string::npos);
  CHECK(Load({"--pool", "/dev/shm/a.pool"}).status().message().find("PATH:SIZE") != std::string::npos);
  CHECK(Load({"--pool", "/x:1G", "--listen", "nohost"}).status().message().find("HOST:PORT") != std::string::npos);
  CHECK(Load({"--pool", "/x:1G", "--provider", "udp"}).status().message().find("unknown provider") != std::string::npos);
  CHECK(Load({"--pool", "/x:1G", "--bogus", "1"}).status().message().find("unknown flag --bogus") != std::string::npos);
  CHECK(Load({"--pool"}).status().message().find("needs a value") != std::string::npos);
  CHECK(Load({"--help"}).status().code() == StatusCode::kFailedPrecondition);
}

TEST_CASE("a YAML file is read and flags override it") {
  std::string path = WriteFile(
      "listen: 127.0.0.1:7500\nprovider: tcp;ofi_rxm\nsegment_size: 8m\n"
      "pools:\n  - path: /dev/shm/y.pool\n    size: 256m\n");
  auto c = Load({"--config", path});
  REQUIRE(c.ok());
  CHECK(c->listen == "127.0.0.1:7500");
  CHECK(c->segment_size == (8u << 20));
  REQUIRE(c->pools.size() == 1);
  CHECK(c->pools[0].size == (256u << 20));
  auto o = Load({"--config", path, "--listen", "127.0.0.1:7600"});
  REQUIRE(o.ok());
  CHECK(o->listen == "127.0.0.1:7600");
  std::remove(path.c_str());
}

TEST_CASE("bad YAML files are explained") {
  CHECK(Load({"--config", "/nonexistent/rpmp.yaml"}).status().message().find("cannot read") != std::string::npos);
  std::string p1 = WriteFile("listen: [unclosed\n");
  CHECK_FALSE(Load({"--config", p1}).ok());
  std::string p2 = WriteFile("lisen: 127.0.0.1:1\n");
  CHECK(Load({"--config", p2}).status().message().find("unknown key 'lisen'") != std::string::npos);
  std::string p3 = WriteFile("pools:\n  - path: /dev/shm/z\n    size: lots\n");
  CHECK_FALSE(Load({"--config", p3}).ok());
  for (auto& p : {p1, p2, p3}) std::remove(p.c_str());
}

}  // namespace
}  // namespace rpmp
