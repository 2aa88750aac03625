// Cluster integration: tenant tokens (docs/security.md "Tenants") on a local cluster
// whose servers hold a cluster secret. The cluster client passes a tenant's token to
// every server connection it opens: the tenant works on its own prefix and is refused
// on another's by the servers; replication between servers (replica links prove the
// secret itself) still makes every copy; the secret holder reads everything.
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <fstream>

#include "common/tenant_token.h"
#include "tests/cluster/cluster_harness.h"
#include "tests/test_util.h"

namespace rpmp::testing {
namespace {

constexpr const char* kSecret = "tenant-cluster-test-secret-0123";

struct SecretFile {
  std::string dir, path;
  SecretFile() {
    char tmpl[] = "/tmp/rpmp-tenant-XXXXXX";
    REQUIRE(mkdtemp(tmpl) != nullptr);
    dir = tmpl;
    path = dir + "/secret";
    std::ofstream(path) << kSecret << "\n";
    chmod(path.c_str(), 0600);
  }
  ~SecretFile() {
    unlink(path.c_str());
    rmdir(dir.c_str());
  }
};

std::string Token(const std::string& prefix) {
  StatusOr<std::string> t = tenant::Mint(kSecret, prefix, prefix.substr(0, prefix.size() - 1),
                                         tenant::NowUnix() + 3600);
  REQUIRE(t.ok());
  return *t;
}

bool Contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("tenants on a cluster: a token acts on its own prefix, replicas still copy") {
  SecretFile secret;
  ClusterHarness h;
  h.set_server_args({"--auth-secret-file", secret.path});
  REQUIRE(h.Start(1, 3));
  std::unique_ptr<Client> a = h.Connect(Token("app-a/"));
  std::unique_ptr<Client> b = h.Connect(Token("app-b/"));
  std::unique_ptr<Client> admin = h.Connect("", kSecret);
  REQUIRE(a != nullptr);
  REQUIRE(b != nullptr);
  REQUIRE(admin != nullptr);

  // Namespaces are created implicitly (replicas 2) by the first write.
  REQUIRE(a->Put("app-a/shuffle", "k", "a's", 3).ok());
  REQUIRE(b->Put("app-b/shuffle", "k", "b's", 3).ok());
  CHECK(*a->Get("app-a/shuffle", "k") == "a's");

  Status put = b->Put("app-a/shuffle", "k", "evil", 4);
  INFO(put.ToString());
  CHECK(put.code() == StatusCode::kPermissionDenied);
  CHECK(Contains(put.message(), "namespace \"app-a/shuffle\" is outside this credential's prefix \"app-b/\""));
  CHECK(b->Get("app-a/shuffle", "k").status().code() == StatusCode::kPermissionDenied);
  CHECK(b->Delete("app-a/shuffle", "k").code() == StatusCode::kPermissionDenied);
  CHECK(b->GetMeta("app-a/shuffle", "k").status().code() == StatusCode::kPermissionDenied);
  CHECK(*admin->Get("app-a/shuffle", "k") == "a's");
  CHECK(*admin->Get("app-b/shuffle", "k") == "b's");

  // Both copies exist: the primary replicated over its secret-proved replica link.
  int copies = 0;
  for (const std::unique_ptr<ServerProcess>& s : h.servers()) {
    ClientOptions o;
    o.provider = Provider();
    o.timeout = std::chrono::seconds(5);
    o.secret = kSecret;
    o.buffer_cache_bytes = 8u << 20;
    auto direct = Client::Connect(s->address(), o);
    REQUIRE(direct.ok());
    StatusOr<std::string> v = (*direct)->Get("app-a/shuffle", "k");
    if (v.ok() && *v == "a's") copies++;
  }
  CHECK(copies == 2);
}

}  // namespace rpmp::testing
