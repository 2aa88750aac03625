// Cluster integration: tenant tokens (docs/security.md "Tenants") on a local cluster
// whose servers hold a cluster secret. The cluster client passes a tenant's token to
// every server connection it opens: the tenant works on its own prefix and is refused
// on another's by the servers; replication between servers (replica links prove the
// secret itself) still makes every copy; the secret holder reads everything. A session
// quota (rpmpctl quota set P --sessions N) caps the sessions of P's credentials on each
// server, and only theirs.
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
  // The member it repaired serves reads once it has read the placement that counts it
  // in sync (read fencing, docs/cluster.md): poll for that.
  std::vector<std::unique_ptr<Client>> direct;
  for (const std::unique_ptr<ServerProcess>& s : h.servers()) {
    ClientOptions o;
    o.provider = Provider();
    o.timeout = std::chrono::seconds(5);
    o.secret = kSecret;
    o.buffer_cache_bytes = 8u << 20;
    auto c = Client::Connect(s->address(), o);
    REQUIRE(c.ok());
    direct.push_back(std::move(*c));
  }
  int copies = 0;
  Eventually([&] {
    copies = 0;
    for (auto& d : direct) {
      StatusOr<std::string> v = d->Get("app-a/shuffle", "k");
      if (v.ok() && *v == "a's") copies++;
    }
    return copies >= 2;
  }, std::chrono::seconds(15));
  CHECK(copies == 2);
}

TEST_CASE("a session quota caps a prefix's tenant sessions on each server, and only theirs") {
  SecretFile secret;
  ClusterHarness h;
  h.set_server_args({"--auth-secret-file", secret.path});
  REQUIRE(h.Start(1, 1));
  std::string out, err;
  REQUIRE(RunTool({"rpmpctl", "--proxy", h.proxy_list(), "quota", "set", "app-q", "--sessions", "2"}, "", &out,
                  &err) == 0);
  CHECK(Contains(out, "2/server"));
  ServerProcess& server = *h.servers().front();
  // The server learns of the quota from its next heartbeat reply.
  REQUIRE(Eventually([&] { return Contains(server.Log(), "session quota of prefix app-q: 2 per server"); },
                     std::chrono::seconds(15)));

  auto open = [&](const std::string& token, const std::string& secret_text) {
    ClientOptions o;
    o.provider = Provider();
    o.timeout = std::chrono::seconds(5);
    o.tenant_token = token;
    o.secret = secret_text;
    o.connections = 1;  // one session per client
    o.buffer_cache_bytes = 8u << 20;
    return Client::Connect(server.address(), o);
  };
  const std::string q_token = Token("app-q/");
  StatusOr<std::unique_ptr<Client>> first = open(q_token, "");
  StatusOr<std::unique_ptr<Client>> second = open(q_token, "");
  REQUIRE(first.ok());
  REQUIRE(second.ok());
  StatusOr<std::unique_ptr<Client>> third = open(q_token, "");
  INFO(third.status().ToString());
  CHECK(third.status().code() == StatusCode::kResourceExhausted);
  CHECK(Contains(third.status().message(),
                 "quota exceeded: prefix \"app-q\" holds 2 of its 2 sessions on this server"));
  // Other tenants and the secret's holders are not counted and not refused.
  CHECK(open(Token("app-r/"), "").ok());
  CHECK(open("", kSecret).ok());
  // The quota's sessions work; once one closes (BYE), a new one opens.
  CHECK((*first)->Get("app-q/ns", "k").status().code() == StatusCode::kNotFound);
  first->reset();
  CHECK(Eventually([&] { return open(q_token, "").ok(); }, std::chrono::seconds(10)));
}

}  // namespace rpmp::testing
