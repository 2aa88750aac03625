// Tests of rpmp-server configuration: flags, YAML files, and the errors for bad ones.
#include "server/config.h"

#include <catch2/catch.hpp>
#include <cstdio>
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

// The files WriteFile made, removed when the test program exits.
struct WrittenFiles {
  std::vector<std::string> paths;
  ~WrittenFiles() {
    for (const std::string& p : paths) std::remove(p.c_str());
  }
};

std::string WriteFile(const std::string& text) {
  static WrittenFiles written;
  std::string path = testing::TempPath("config.yaml");
  std::ofstream(path) << text;
  written.paths.push_back(path);
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

TEST_CASE("compaction flags and keys: defaults, off, bad values explained") {
  auto d = Load({"--pool", "/dev/shm/a.pool:1G"});
  REQUIRE(d.ok());
  CHECK(d->compaction_threshold == 0.5);
  CHECK(d->compaction_rate == (64ull << 20));
  CHECK(d->compaction_grace == std::chrono::seconds(5));
  auto c = Load({"--pool", "/dev/shm/a.pool:1G", "--compaction-threshold", "0.25",
                 "--compaction-rate", "8m", "--compaction-grace", "500ms"});
  REQUIRE(c.ok());
  CHECK(c->compaction_threshold == 0.25);
  CHECK(c->compaction_rate == (8ull << 20));
  CHECK(c->compaction_grace == std::chrono::milliseconds(500));
  auto off = Load({"--pool", "/dev/shm/a.pool:1G", "--compaction-threshold", "off"});
  REQUIRE(off.ok());
  CHECK(off->compaction_threshold == 0);
  CHECK(Load({"--pool", "/x:1G", "--compaction-threshold", "1.5"}).status().message().find("fraction") !=
        std::string::npos);
  CHECK(Load({"--pool", "/x:1G", "--compaction-rate", "0"}).status().message().find("compaction_rate") !=
        std::string::npos);
  ServerConfig f;
  REQUIRE(LoadServerConfigFile(WriteFile("compaction_threshold: 0.7\ncompaction_rate: 1g\n"
                                         "compaction_grace: 2s\n"), &f).ok());
  CHECK(f.compaction_threshold == 0.7);
  CHECK(f.compaction_rate == (1ull << 30));
  CHECK(f.compaction_grace == std::chrono::seconds(2));
}

TEST_CASE("busy polling, prefault and the RMA timeout: flags, YAML keys, bad values explained") {
  auto d = Load({"--pool", "/dev/shm/a.pool:1G"});
  REQUIRE(d.ok());
  CHECK_FALSE(d->busy_poll);  // sleeping progress thread by default
  CHECK_FALSE(d->prefault);   // pool pages mapped on first touch by default
  auto f = Load({"--pool", "/dev/shm/a.pool:1G", "--busy-poll", "--prefault", "--rma-timeout", "2s"});
  REQUIRE(f.ok());
  CHECK(f->busy_poll);
  CHECK(f->prefault);
  CHECK(f->rma_timeout == std::chrono::seconds(2));
  auto y = Load({"--config", WriteFile("pools: [{path: /dev/shm/a.pool, size: 1G}]\nbusy_poll: true\n"
                                       "prefault: true\nrma_timeout: 500ms\n")});
  REQUIRE(y.ok());
  CHECK(y->busy_poll);
  CHECK(y->prefault);
  CHECK(y->rma_timeout == std::chrono::milliseconds(500));
  auto bad = Load({"--config", WriteFile("pools: [{path: /dev/shm/a.pool, size: 1G}]\nbusy_poll: sometimes\n")});
  CHECK_FALSE(bad.ok());
  CHECK(bad.status().code() == StatusCode::kInvalidArgument);
  auto short_timeout = Load({"--pool", "/dev/shm/a.pool:1G", "--rma-timeout", "10ms"});
  CHECK(short_timeout.status().message().find("rma_timeout must be at least 100ms") != std::string::npos);
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

TEST_CASE("a wildcard listen address is refused with the address to set instead") {
  for (const char* wildcard : {"0.0.0.0:7300", "[::]:7300", "[0:0::0]:7300"}) {
    auto c = Load({"--listen", wildcard, "--pool", "/x:1G", "--insecure"});
    REQUIRE_FALSE(c.ok());
    CHECK(c.status().code() == StatusCode::kInvalidArgument);
    CHECK(c.status().message().find(std::string(wildcard) + " is a wildcard") != std::string::npos);
    CHECK(c.status().message().find("this host's own address that the other hosts reach") != std::string::npos);
  }
  auto yaml = Load({"--config", WriteFile("listen: 0.0.0.0:7301\ninsecure: true\npools: [{path: /x, size: 1G}]\n")});
  CHECK(yaml.status().message().find("0.0.0.0:7301 is a wildcard") != std::string::npos);
  CHECK(Load({"--listen", "10.0.0.21:7300", "--pool", "/x:1G", "--insecure"}).ok());
  CHECK(Load({"--listen", "127.0.0.1:7300", "--pool", "/x:1G"}).ok());  // the bare form keeps working
  CHECK(IsWildcardHost("::"));
  CHECK_FALSE(IsWildcardHost("0.0.0.1"));
  CHECK_FALSE(IsWildcardHost("node3"));
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

TEST_CASE("capacity-tier pools from flags and YAML, in the order given") {
  auto c = Load({"--pool", "/dev/shm/fast.pool:64m", "--capacity-pool", "/var/lib/rpmp/cap.pool:1G"});
  REQUIRE(c.ok());
  REQUIRE(c->pools.size() == 2);
  CHECK_FALSE(c->pools[0].capacity_tier);
  CHECK(c->pools[1].capacity_tier);
  CHECK(c->pools[1].size == (1ull << 30));
  std::string path = WriteFile(
      "pools:\n  - path: /dev/shm/f.pool\n    size: 64m\n  - path: /ssd/c.pool\n    size: 1g\n"
      "    tier: capacity\n");
  auto y = Load({"--config", path});
  REQUIRE(y.ok());
  REQUIRE(y->pools.size() == 2);
  CHECK_FALSE(y->pools[0].capacity_tier);
  CHECK(y->pools[1].capacity_tier);
  std::string bad = WriteFile("pools:\n  - path: /x.pool\n    size: 1g\n    tier: slow\n");
  CHECK(Load({"--config", bad}).status().message().find("neither fast nor capacity") != std::string::npos);
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

TEST_CASE("TLS files to the proxy: from YAML or flags, all three or none, readable") {
  std::string pem = WriteFile("-----BEGIN CERTIFICATE-----\n");
  std::string path = WriteFile("pools:\n  - path: /dev/shm/y.pool\n    size: 256m\n"
                               "tls_ca_file: " + pem + "\ntls_cert_file: " + pem + "\ntls_key_file: " + pem + "\n");
  auto c = Load({"--config", path});
  REQUIRE(c.ok());
  CHECK(c->tls_ca_file == pem);
  CHECK(c->tls_key_file == pem);
  auto f = Load({"--pool", "/x:1G", "--tls-ca", pem, "--tls-cert", pem, "--tls-key", pem});
  REQUIRE(f.ok());
  CHECK(f->tls_cert_file == pem);
  Status partial = Load({"--pool", "/x:1G", "--tls-ca", pem}).status();
  CHECK(partial.message().find("tls_cert_file (--tls-cert) is missing") != std::string::npos);
  Status unreadable = Load({"--pool", "/x:1G", "--tls-ca", pem, "--tls-cert", "/nonexistent.crt", "--tls-key", pem}).status();
  CHECK(unreadable.message().find("'/nonexistent.crt' cannot be read") != std::string::npos);
  std::remove(path.c_str());
  std::remove(pem.c_str());
}

}  // namespace
}  // namespace rpmp
