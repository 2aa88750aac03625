// Integration: client and server on one provider (link/provider_agreement.cc).
// Real rpmp-server processes on the native TCP provider (net on libfabric 1.17, tcp
// from 1.18) and on tcp;ofi_rxm: the HELLO reply names the server's provider, a client
// set to "auto" ends up on whichever the server serves, and a client set to the other
// provider fails naming both. Also a 64 MiB value over the native provider: put (the
// server reads it from the client), get, and a one-sided read of the stored record.
#include <catch2/catch.hpp>
#include <cstring>
#include <vector>

#include "rpmp/client.h"
#include "tests/server_process.h"
#include "transport/providers.h"

namespace rpmp {
namespace {

using testing::ServerProcess;

// "net" or "tcp": the native TCP provider under this libfabric's name for it.
std::string NativeTcp() {
  for (const char* name : {"tcp", "net"}) {
    fi_info* hints = ProviderHints(*FindProvider(name));
    fi_info* info = nullptr;
    int ret = fi_getinfo(FI_VERSION(1, 9), "127.0.0.1", nullptr, FI_SOURCE, hints, &info);
    bool native = ret == 0 && IsProvider(info, *FindProvider(name));
    fi_freeinfo(hints);
    if (info != nullptr) fi_freeinfo(info);
    if (native) return name;
  }
  return "";
}

StatusOr<std::unique_ptr<Client>> Connect(const ServerProcess& s, const std::string& provider) {
  ClientOptions o;
  o.provider = provider;
  o.timeout = std::chrono::milliseconds(3000);
  o.buffer_cache_bytes = 256u << 20;
  return Client::Connect(s.address(), o);
}

TEST_CASE("a client on another provider than the server's fails naming both") {
  std::string native = NativeTcp();
  REQUIRE_FALSE(native.empty());
  ServerProcess server("256m", {"--provider", native});
  REQUIRE(server.Start());
  CHECK(server.Log().find("(" + native + ")") != std::string::npos);
  auto c = Connect(server, "tcp;ofi_rxm");
  REQUIRE_FALSE(c.ok());
  CHECK(c.status().code() == StatusCode::kFailedPrecondition);
  CHECK(c.status().message().find("serves provider '" + native + "'") != std::string::npos);
  CHECK(c.status().message().find("configured for 'tcp;ofi_rxm'") != std::string::npos);
}

TEST_CASE("a client set to auto uses the provider the server serves") {
  std::string native = NativeTcp();
  REQUIRE_FALSE(native.empty());
  for (const std::string& served : {std::string("tcp;ofi_rxm"), native}) {
    INFO("server provider " << served);
    ServerProcess server("256m", {"--provider", served});
    REQUIRE(server.Start());
    auto c = Connect(server, "auto");
    REQUIRE(c.ok());
    std::string v = "value over " + served;
    REQUIRE((*c)->Put("ns", "k", v.data(), v.size()).ok());
    StatusOr<std::string> got = (*c)->Get("ns", "k");
    REQUIRE(got.ok());
    CHECK(*got == v);
  }
}

TEST_CASE("an auto client of a server on another provider connects without waiting its whole timeout") {
  std::string native = NativeTcp();
  REQUIRE_FALSE(native.empty());
  // The server serves the provider auto does not try first on this host.
  StatusOr<std::string> first = ResolveProvider(kAutoProvider, "127.0.0.1");
  REQUIRE(first.ok());
  std::string other = *first == "tcp;ofi_rxm" ? native : "tcp;ofi_rxm";
  ServerProcess server("256m", {"--provider", other});
  REQUIRE(server.Start());
  ClientOptions o;  // provider auto, the default 30 s timeout
  REQUIRE(o.provider == "auto");
  auto start = std::chrono::steady_clock::now();
  auto c = Client::Connect(server.address(), o);
  auto took = std::chrono::steady_clock::now() - start;
  REQUIRE(c.ok());
  CHECK(took < std::chrono::seconds(15));  // the first HELLO waits 2 s, not 30
  std::string v = "v";
  CHECK((*c)->Put("ns", "k", v.data(), v.size()).ok());
}

TEST_CASE("64 MiB values round-trip over the native TCP provider") {
  std::string native = NativeTcp();
  REQUIRE_FALSE(native.empty());
  ServerProcess server("512m", {"--provider", native});
  REQUIRE(server.Start());
  auto c = Connect(server, native);
  REQUIRE(c.ok());
  std::vector<char> v(64u << 20);
  for (size_t i = 0; i < v.size(); i += 4096) v[i] = static_cast<char>(i >> 12);
  REQUIRE((*c)->Put("ns", "big", v.data(), v.size()).ok());
  StatusOr<std::string> got = (*c)->Get("ns", "big");
  REQUIRE(got.ok());
  REQUIRE(got->size() == v.size());
  CHECK(std::memcmp(got->data(), v.data(), v.size()) == 0);
  // The one-sided path: the record's location, then an RMA read of the server's pool.
  StatusOr<ObjectMeta> meta = (*c)->GetMeta("ns", "big");
  REQUIRE(meta.ok());
  REQUIRE(meta->records.size() == 1);
  StatusOr<Buffer> dst = (*c)->AllocBuffer(v.size());
  REQUIRE(dst.ok());
  REQUIRE((*c)->ReadRecord(meta->records[0], &*dst).ok());
  CHECK(std::memcmp(dst->data(), v.data(), v.size()) == 0);
}

}  // namespace
}  // namespace rpmp
