// Integration: the capacity tier of a real rpmp-server. With a 64 MiB fast pool on
// /dev/shm and a 1 GiB capacity pool on a file (the temp directory, a disk here), the
// server holds 512 MiB (most of it in the capacity pool), then is killed with SIGKILL and
// restarted, and every record reads back byte for byte.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include "rpmp/client.h"
#include "tests/server_process.h"
#include "tests/test_util.h"

namespace rpmp {
namespace {

using testing::ServerProcess;

std::string ValueOf(int i) {
  std::string v(1 << 20, static_cast<char>('A' + i % 26));
  std::snprintf(v.data(), 32, "record %d", i);
  return v;
}

std::unique_ptr<Client> ConnectTo(const ServerProcess& s) {
  ClientOptions o;
  o.provider = testing::Provider();
  o.timeout = std::chrono::seconds(30);
  auto c = Client::Connect(s.address(), o);
  REQUIRE(c.ok());
  return std::move(c).value();
}

TEST_CASE("a 64 MiB fast pool and a 1 GiB file pool hold 512 MiB across a kill -9") {
  const std::string capacity_pool =
      (std::filesystem::temp_directory_path() / ("rpmp-tier-test-" + std::to_string(getpid()) + ".pool"))
          .string();
  std::remove(capacity_pool.c_str());
  struct Cleanup {
    std::string path;
    ~Cleanup() { std::remove(path.c_str()); }
  } cleanup{capacity_pool};
  ServerProcess server("64m", {"--capacity-pool", capacity_pool + ":1g"});
  REQUIRE(server.Start());
  auto c = ConnectTo(server);
  constexpr int kRecords = 512;  // of 1 MiB
  for (int i = 0; i < kRecords; i++) {
    std::string v = ValueOf(i);
    Status s = c->Put("tiered/" + std::to_string(i % 8), "k" + std::to_string(i), v.data(), v.size());
    INFO("record " << i << ": " << s.ToString());
    REQUIRE(s.ok());
  }
  StatusOr<ServerStats> st = c->Stat();
  REQUIRE(st.ok());
  REQUIRE(st->pools.size() == 2);
  INFO("fast used " << st->pools[0].used << ", capacity used " << st->pools[1].used);
  CHECK(st->pools[1].used > (448ull << 20));  // most of it is in the capacity tier
  c.reset();
  server.Kill(SIGKILL);
  REQUIRE(server.Restart());
  c = ConnectTo(server);
  for (int i = 0; i < kRecords; i++) {
    StatusOr<std::string> got = c->Get("tiered/" + std::to_string(i % 8), "k" + std::to_string(i));
    INFO("record " << i << ": " << got.status().ToString());
    REQUIRE(got.ok());
    REQUIRE(*got == ValueOf(i));
  }
}

}  // namespace
}  // namespace rpmp
