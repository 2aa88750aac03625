// Integration: tenant tokens (docs/security.md "Tenants") against a real rpmp-server
// with a cluster secret, over the direct single-server path (librpmp's Connect and
// `rpmpctl --server`). A token for one prefix works there and is refused everywhere
// else, raw memory included; tampered and expired tokens are refused at HELLO; an
// expiring token ends its session; the secret holder acts on everything.
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>

#include "common/tenant_token.h"
#include "rpmp/client.h"
#include "tests/raw_peer.h"
#include "tests/server_process.h"

namespace rpmp {
namespace {

using testing::RawPeer;
using testing::RunTool;
using testing::ServerProcess;

constexpr const char* kSecret = "tenant-test-cluster-secret-0123";

// A private temporary file (removed with the object).
struct PrivateFile {
  std::string dir, path;
  explicit PrivateFile(const std::string& content) {
    char tmpl[] = "/tmp/rpmp-tenant-XXXXXX";
    REQUIRE(mkdtemp(tmpl) != nullptr);
    dir = tmpl;
    path = dir + "/f";
    std::ofstream(path) << content << "\n";
    chmod(path.c_str(), 0600);
  }
  ~PrivateFile() {
    unlink(path.c_str());
    rmdir(dir.c_str());
  }
};

std::string Token(const std::string& prefix, const std::string& app, int64_t ttl_s = 3600) {
  StatusOr<std::string> t = tenant::Mint(kSecret, prefix, app, tenant::NowUnix() + ttl_s);
  REQUIRE(t.ok());
  return *t;
}

StatusOr<std::unique_ptr<Client>> TryConnect(const ServerProcess& s, const std::string& token,
                                             const std::string& secret = "") {
  ClientOptions o;
  o.timeout = std::chrono::seconds(10);
  o.tenant_token = token;
  o.secret = secret;
  return Client::Connect(s.address(), o);
}

std::unique_ptr<Client> Connect(const ServerProcess& s, const std::string& token,
                                const std::string& secret = "") {
  auto c = TryConnect(s, token, secret);
  INFO(c.status().ToString());
  REQUIRE(c.ok());
  return std::move(c).value();
}

void CheckOutside(const Status& st, const std::string& ns, const std::string& prefix) {
  INFO(st.ToString());
  CHECK(st.code() == StatusCode::kPermissionDenied);
  CHECK(st.message().find("namespace \"" + ns + "\" is outside this credential's prefix \"" +
                          prefix + "\"") != std::string::npos);
}

// Two data shards: a client opens one connection (and HELLO) per shard, each with
// the token (docs/sharding.md).
struct Server {
  PrivateFile secret{kSecret};
  ServerProcess process{"128m", {"--auth-secret-file", secret.path, "--data-threads", "2"}};
  Server() {
    unsetenv("RPMP_SECRET_FILE");
    unsetenv("RPMP_TOKEN_FILE");
    REQUIRE(process.Start());
  }
};

}  // namespace

TEST_CASE("tenant: a token acts on its prefix only, the secret on all (direct server)") {
  Server server;
  auto admin = Connect(server.process, "", kSecret);
  REQUIRE(admin->Put("app-b/shuffle", "k", "b's", 3).ok());
  auto a = Connect(server.process, Token("app-a/", "app-a"));
  auto b = Connect(server.process, Token("app-b/", "app-b"));
  // Each of A's shard connections opened a session bound to its prefix.
  std::string log = server.process.Log();
  size_t a_sessions = 0;
  for (size_t at = log.find("tenant 'app-a', prefix \"app-a/\""); at != std::string::npos;
       at = log.find("tenant 'app-a', prefix \"app-a/\"", at + 1))
    a_sessions++;
  CHECK(a_sessions == 2);

  REQUIRE(a->Put("app-a/shuffle", "k", "a's", 3).ok());
  REQUIRE(a->Append("app-a/shuffle", "log", "1", 1, 7).ok());
  CHECK(*a->Get("app-a/shuffle", "k") == "a's");
  CHECK(a->GetMeta("app-a/shuffle", "log").ok());
  CHECK(a->List("app-a/shuffle").ok());
  CHECK(a->Put("app-a", "k", "x", 1).ok());  // N + "/" == PREFIX

  // Every namespace-addressed op on B's namespace is refused, with the reason.
  CheckOutside(a->Put("app-b/shuffle", "k", "evil", 4), "app-b/shuffle", "app-a/");
  CheckOutside(a->Append("app-b/shuffle", "k", "evil", 4, 1), "app-b/shuffle", "app-a/");
  CheckOutside(a->Get("app-b/shuffle", "k").status(), "app-b/shuffle", "app-a/");
  CheckOutside(a->GetMeta("app-b/shuffle", "k").status(), "app-b/shuffle", "app-a/");
  CheckOutside(a->Delete("app-b/shuffle", "k"), "app-b/shuffle", "app-a/");
  CheckOutside(a->List("app-b/shuffle").status(), "app-b/shuffle", "app-a/");
  CheckOutside(a->DeleteNamespace("app-b/shuffle"), "app-b/shuffle", "app-a/");
  CheckOutside(a->Put("app-ab", "k", "x", 1), "app-ab", "app-a/");
  // The refusals did not end A's session, and B's data is untouched.
  CHECK(*a->Get("app-a/shuffle", "k") == "a's");
  CHECK(*b->Get("app-b/shuffle", "k") == "b's");
  CHECK(*admin->Get("app-b/shuffle", "k") == "b's");

  // The secret holder acts on every prefix; STAT is served to tenants.
  CHECK(*admin->Get("app-a/shuffle", "k") == "a's");
  CHECK(a->Stat().ok());
  // A "*" token (minted with the secret, for admins) acts on all too.
  auto star = Connect(server.process, Token("*", "ops"));
  CHECK(*star->Get("app-b/shuffle", "k") == "b's");
  CHECK(star->Delete("app-a/shuffle", "log").ok());
  CHECK(b->DeleteNamespace("app-b/shuffle").ok());
  CHECK(admin->Get("app-b/shuffle", "k").status().code() == StatusCode::kNotFound);
}

TEST_CASE("tenant: raw memory of one credential is out of another's reach") {
  Server server;
  auto a = Connect(server.process, Token("app-a/", "app-a"));
  auto b = Connect(server.process, Token("app-b/", "app-b"));
  StatusOr<GlobalAddress> addr = a->Alloc(4096);
  REQUIRE(addr.ok());
  REQUIRE(a->Write(*addr, "secret-bytes", 12).ok());
  char buf[12];
  CHECK(b->Read(*addr, buf, 12).code() == StatusCode::kPermissionDenied);
  CHECK(b->Write(*addr, "evil", 4).code() == StatusCode::kPermissionDenied);
  CHECK(b->Free(*addr).code() == StatusCode::kPermissionDenied);
  // A's session ends: its allocation is an orphan, which B (another prefix) may not
  // adopt, and A's next session (same prefix) may.
  a.reset();
  auto b2 = Connect(server.process, Token("app-b/", "app-b"));
  CHECK(b2->Read(*addr, buf, 12).code() == StatusCode::kPermissionDenied);
  CHECK(b2->Free(*addr).code() == StatusCode::kPermissionDenied);
  auto a2 = Connect(server.process, Token("app-a/", "app-a"));
  REQUIRE(a2->Read(*addr, buf, 12).ok());
  CHECK(std::string(buf, 12) == "secret-bytes");
  CHECK(a2->Free(*addr).ok());
}

TEST_CASE("tenant: tampered, foreign and expired tokens are refused at HELLO") {
  Server server;
  std::string good = Token("app-a/", "app-a");
  REQUIRE(TryConnect(server.process, good).ok());

  std::string mac_flipped = good;
  mac_flipped.back() = mac_flipped.back() == '0' ? '1' : '0';
  auto st = TryConnect(server.process, mac_flipped).status();
  CHECK(st.code() == StatusCode::kPermissionDenied);
  CHECK(st.message().find("not minted with this cluster's secret, or was altered") != std::string::npos);

  // B's prefix with A's MAC: the widening an attacker would try.
  tenant::Token t = *tenant::Parse(good);
  t.prefix = "app-b/";
  std::string forged = tenant::PublicPart(t) + good.substr(good.rfind('.'));
  st = TryConnect(server.process, forged).status();
  CHECK(st.code() == StatusCode::kPermissionDenied);
  CHECK(st.message().find("altered") != std::string::npos);

  StatusOr<std::string> foreign =
      tenant::Mint("another-clusters-secret-xyz", "app-a/", "app-a", tenant::NowUnix() + 3600);
  st = TryConnect(server.process, *foreign).status();
  CHECK(st.code() == StatusCode::kPermissionDenied);

  st = TryConnect(server.process, Token("app-a/", "app-a", -120)).status();
  CHECK(st.code() == StatusCode::kPermissionDenied);
  CHECK(st.message().find("expired") != std::string::npos);

  st = TryConnect(server.process, good.substr(0, good.rfind('.'))).status();  // no MAC
  CHECK(st.code() == StatusCode::kInvalidArgument);
  st = TryConnect(server.process, "v1.garbage").status();
  CHECK(st.code() == StatusCode::kInvalidArgument);
  CHECK(st.message().find("malformed tenant token") != std::string::npos);

  // A client with a token refuses a server without a secret (it cannot prove K).
  ServerProcess open_server;
  REQUIRE(open_server.Start());
  st = TryConnect(open_server, good).status();
  CHECK(st.code() == StatusCode::kPermissionDenied);
  CHECK(st.message().find("does not authenticate clients") != std::string::npos);
  // And the honest server still serves after all that.
  CHECK(Connect(server.process, good)->Put("app-a/x", "k", "v", 1).ok());
}

TEST_CASE("tenant: a token that expires ends its session at the next call") {
  Server server;
  // Accepted at HELLO within the 60 s skew, and past it a few seconds later.
  // (8 s of life: room for a slow HELLO on a loaded machine.)
  auto c = Connect(server.process, Token("app-a/", "app-a", -(tenant::kSkewSeconds - 8)));
  REQUIRE(c->Put("app-a/x", "k", "v", 1).ok());
  Status st;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (std::chrono::steady_clock::now() < deadline) {
    st = c->Put("app-a/x", "k", "v", 1);
    if (!st.ok()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));  // polling, with a deadline
  }
  INFO(st.ToString());
  CHECK(st.code() == StatusCode::kPermissionDenied);
  CHECK(st.message().find("expired") != std::string::npos);
  // Later calls stay refused (a new HELLO with the same token is refused as expired).
  Status again = c->Get("app-a/x", "k").status();
  INFO(again.ToString());
  CHECK_FALSE(again.ok());
  CHECK(again.message().find("expired") != std::string::npos);
  CHECK(server.process.Log().find("its tenant token expired") != std::string::npos);
}

TEST_CASE("tenant: rpmpctl token mint, and rpmpctl --server with a token cannot rmns another's") {
  Server server;
  std::string out, err;
  // token mint needs the secret; usage errors exit 2.
  CHECK(RunTool({"rpmpctl", "token", "mint", "--prefix", "app-a/", "--app", "app-a"}, "", &out, &err) == 1);
  CHECK(err.find("RPMP_SECRET_FILE") != std::string::npos);
  CHECK(RunTool({"rpmpctl", "token", "mint", "--app", "app-a"}, "", &out, &err) == 2);
  CHECK(RunTool({"rpmpctl", "token", "mint", "--prefix", "", "--app", "a", "--ttl", "1h"}, "", &out, &err) == 2);
  setenv("RPMP_SECRET_FILE", server.secret.path.c_str(), 1);
  int rc = RunTool({"rpmpctl", "token", "mint", "--prefix", "app-a/", "--app", "app-a", "--ttl", "2h"}, "",
                   &out, &err);
  std::string admin_put_err;
  std::string in = "b's data";
  int put_rc = RunTool({"rpmpctl", "--server", server.process.address(), "put", "app-b/ns", "k", "-"}, in,
                       &admin_put_err, &admin_put_err);
  unsetenv("RPMP_SECRET_FILE");
  REQUIRE(rc == 0);
  REQUIRE(put_rc == 0);
  while (!out.empty() && out.back() == '\n') out.pop_back();
  StatusOr<tenant::Token> t = tenant::Parse(out);
  REQUIRE(t.ok());
  CHECK(t->prefix == "app-a/");
  int64_t ttl = t->expiry - tenant::NowUnix();
  CHECK(ttl > 7000);
  CHECK(ttl <= 7200);
  CHECK(tenant::Verify(tenant::DeriveKey(kSecret), *t, tenant::NowUnix()).ok());

  PrivateFile token_file(out);
  setenv("RPMP_TOKEN_FILE", token_file.path.c_str(), 1);
  int rmns_b = RunTool({"rpmpctl", "--server", server.process.address(), "rmns", "app-b/ns"}, "", &out, &err);
  std::string rmns_err = err;
  int put_a = RunTool({"rpmpctl", "--server", server.process.address(), "put", "app-a/ns", "k", "-"}, "a",
                      &out, &err);
  int rmns_a = RunTool({"rpmpctl", "--server", server.process.address(), "rmns", "app-a/ns"}, "", &out, &err);
  unsetenv("RPMP_TOKEN_FILE");
  CHECK(rmns_b == 1);
  CHECK(rmns_err.find("outside this credential's prefix \"app-a/\"") != std::string::npos);
  CHECK(put_a == 0);
  CHECK(rmns_a == 0);
  CHECK(*Connect(server.process, "", kSecret)->Get("app-b/ns", "k") == "b's data");
}

TEST_CASE("tenant: hostile token HELLOs get a clear error, a tenant cannot send replica frames") {
  Server server;
  std::string full = Token("app-a/", "app-a");
  tenant::Token t = *tenant::Parse(full);
  std::string pub = tenant::PublicPart(t);
  auto hello = [&](const std::string& key, const std::string& token) {
    RawPeer peer(server.process.address());
    return peer.Hello(key, token);
  };
  wire::Response r = hello(t.mac, "v1.%%%.x.1");
  CHECK(r.h.status == static_cast<uint16_t>(StatusCode::kInvalidArgument));
  CHECK(r.message.find("malformed tenant token") != std::string::npos);
  r = hello(t.mac, std::string(wire::kMaxToken, 'v'));
  CHECK(r.h.status == static_cast<uint16_t>(StatusCode::kInvalidArgument));
  r = hello(t.mac, full);  // the whole token (with its MAC) must never cross the wire
  CHECK(r.h.status == static_cast<uint16_t>(StatusCode::kInvalidArgument));
  CHECK(r.message.find("must not carry the token's MAC") != std::string::npos);
  r = hello(kSecret, pub);  // a token proved with the secret instead of its MAC
  CHECK(r.h.status == static_cast<uint16_t>(StatusCode::kPermissionDenied));

  // A tenant session's replica frame (stored without replication or fence checks) is
  // refused even in its own namespace.
  RawPeer tenant_peer(server.process.address());
  REQUIRE(tenant_peer.Hello(t.mac, pub).h.status == 0);
  wire::Request put;
  put.h.op = wire::Op::kPut;
  put.h.flags = wire::kFlagInline | wire::kFlagReplica;
  put.ns = "app-a/x";
  put.key = "k";
  put.length = 1;
  put.inline_data = "v";
  wire::Response resp;
  REQUIRE(tenant_peer.Exchange(tenant_peer.Encode(put), &resp));
  CHECK(resp.h.status == static_cast<uint16_t>(StatusCode::kPermissionDenied));
  CHECK(resp.message.find("replica frames need the cluster secret") != std::string::npos);
  // Nor its replica list: a repair's read, which read fencing lets through
  // (server/cluster/read_fence.cc), is not a way around the fence for a tenant.
  wire::Request list;
  list.h.op = wire::Op::kList;
  list.h.flags = wire::kFlagReplica;
  list.ns = "app-a/x";
  list.max = 10;
  REQUIRE(tenant_peer.Exchange(tenant_peer.Encode(list), &resp));
  CHECK(resp.h.status == static_cast<uint16_t>(StatusCode::kPermissionDenied));
  CHECK(resp.message.find("replica frames need the cluster secret") != std::string::npos);
  CHECK(tenant_peer.Serves());  // the session goes on
  CHECK(Connect(server.process, full)->Put("app-a/x", "k", "v", 1).ok());
}

}  // namespace rpmp

namespace rpmp {

TEST_CASE("tenant: a full session table crowds out the largest tenant's idle sessions, others are served") {
  // max_sessions 12. A quiet tenant opens one session first (so it is the least
  // recently used of all), then a flooding tenant fills the table and goes on saying
  // HELLO from new addresses. Each HELLO past the limit ends the flooder's own least
  // recently used session (docs/security.md, "How a session ends": crowded_out); the
  // quiet tenant keeps its session, and a client with the secret is still served.
  PrivateFile secret{kSecret};
  PrivateFile config{"max_sessions: 12"};
  ServerProcess server{"128m", {"--auth-secret-file", secret.path, "--data-threads", "1",
                                "--config", config.path}};
  unsetenv("RPMP_SECRET_FILE");
  unsetenv("RPMP_TOKEN_FILE");
  REQUIRE(server.Start());
  tenant::Token quiet_token = *tenant::Parse(Token("quiet/", "quiet"));
  tenant::Token flood_token = *tenant::Parse(Token("flood/", "flood"));
  RawPeer quiet(server.address());
  REQUIRE(quiet.Hello(quiet_token.mac, tenant::PublicPart(quiet_token)).h.status == 0);
  std::vector<std::unique_ptr<RawPeer>> flood;
  for (int i = 0; i < 25; i++) {
    flood.push_back(std::make_unique<RawPeer>(server.address()));
    wire::Response r = flood.back()->Hello(flood_token.mac, tenant::PublicPart(flood_token));
    INFO("flood HELLO " << i << ": " << r.message);
    REQUIRE(r.h.status == 0);  // never refused: the flooder's oldest idle session makes room
  }
  // The first 14 flood sessions were crowded out (1 quiet + 25 flood - 12), oldest first.
  wire::Request stat;
  stat.h.op = wire::Op::kStat;
  wire::Response resp;
  REQUIRE(flood.front()->Exchange(flood.front()->Encode(stat), &resp));
  CHECK(resp.h.status == static_cast<uint16_t>(StatusCode::kUnavailable));
  CHECK((resp.h.flags & wire::kFlagSessionEnded) != 0);
  CHECK(resp.message.find("crowded out: the server reached max_sessions (12)") != std::string::npos);
  CHECK(flood[13]->Exchange(flood[13]->Encode(stat), &resp));
  CHECK((resp.h.flags & wire::kFlagSessionEnded) != 0);
  CHECK(flood[14]->Serves());  // the 11 newest are open
  CHECK(flood.back()->Serves());
  CHECK(quiet.Serves());       // the quiet tenant was never the one to go

  // The secret holder (a tenant of its own, with none open) is served; the flooder pays.
  auto c = Connect(server, "", kSecret);
  REQUIRE(c->Put("mine", "k", "v", 1).ok());
  CHECK(*c->Get("mine", "k") == "v");
  CHECK(quiet.Serves());
  CHECK(server.Log().find("crowded out: the server reached max_sessions (12)") != std::string::npos);
}

}  // namespace rpmp
