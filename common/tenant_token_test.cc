// Unit test of tenant_token.h: the shared test vector (the Go proxy checks the same),
// tampering with each field, expiry with its skew, the prefix rule, token files.
#include "common/tenant_token.h"

#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <fstream>

namespace rpmp::tenant {
namespace {

std::string Hex(const std::string& b) {
  static const char* d = "0123456789abcdef";
  std::string out;
  for (unsigned char c : b) { out += d[c >> 4]; out += d[c & 15]; }
  return out;
}

constexpr const char* kVector =
    "v1.c3BhcmsvYXBwLTEv.YXBwLTE.1893456000."
    "7aa2e339ad1891068bc250c8fa21f34ce0a0657c3a54ce7baaf9d61d030c3157";

}  // namespace

TEST_CASE("tenant token: the shared test vector") {
  CHECK(Hex(DeriveKey("test-cluster-secret")) ==
        "9ff8c0c19aceb5150b38e9676fba09766399532e4660743cdd9d0e803df9bf72");
  StatusOr<std::string> t = Mint("test-cluster-secret", "spark/app-1/", "app-1", 1893456000);
  REQUIRE(t.ok());
  CHECK(*t == kVector);
  StatusOr<Token> p = Parse(*t);
  REQUIRE(p.ok());
  CHECK(p->prefix == "spark/app-1/");
  CHECK(p->app == "app-1");
  CHECK(p->expiry == 1893456000);
  CHECK(Verify(DeriveKey("test-cluster-secret"), *p, 1893456000).ok());
  CHECK(PublicPart(*p) == "v1.c3BhcmsvYXBwLTEv.YXBwLTE.1893456000");
  StatusOr<Token> pub = Parse(PublicPart(*p));
  REQUIRE(pub.ok());
  CHECK(pub->mac.empty());
  CHECK(pub->prefix == "spark/app-1/");
}

TEST_CASE("tenant token: tampering with any field fails the MAC") {
  std::string key = DeriveKey("test-cluster-secret");
  Token good = *Parse(kVector);
  REQUIRE(Verify(key, good, 1893456000).ok());
  Token t = good;
  t.prefix = "spark/";  // widened prefix
  CHECK(Verify(key, t, 1893456000).code() == StatusCode::kPermissionDenied);
  t = good;
  t.app = "app-2";
  CHECK(Verify(key, t, 1893456000).code() == StatusCode::kPermissionDenied);
  t = good;
  t.expiry += 1;  // extended
  CHECK(Verify(key, t, 1893456000).code() == StatusCode::kPermissionDenied);
  t = good;
  t.mac[5] ^= 1;
  CHECK(Verify(key, t, 1893456000).code() == StatusCode::kPermissionDenied);
  CHECK(Verify(DeriveKey("another-cluster-secret"), good, 1893456000).code() ==
        StatusCode::kPermissionDenied);
  // The string form: a changed prefix parses but no longer verifies.
  std::string s = kVector;
  s.replace(3, 16, "c3BhcmsvYXBwLTIv");  // spark/app-2/
  StatusOr<Token> other = Parse(s);
  REQUIRE(other.ok());
  CHECK(other->prefix == "spark/app-2/");
  CHECK_FALSE(Verify(key, *other, 1893456000).ok());
}

TEST_CASE("tenant token: expiry, with 60 s of skew") {
  std::string key = DeriveKey("test-cluster-secret");
  Token t = *Parse(kVector);
  CHECK(Verify(key, t, t.expiry + kSkewSeconds).ok());
  Status late = Verify(key, t, t.expiry + kSkewSeconds + 1);
  CHECK(late.code() == StatusCode::kPermissionDenied);
  CHECK(late.message().find("expired") != std::string::npos);
  CHECK(CheckExpiry(t, t.expiry - 1000).ok());
}

TEST_CASE("tenant token: malformed strings are refused, saying which field") {
  for (const char* bad : {"", "v1", "v1.a.b", "v2.c3BhcmsvYXBwLTEv.YXBwLTE.1893456000",
                          "v1..YXBwLTE.1893456000", "v1.c3BhcmsvYXBwLTEv..1893456000",
                          "v1.c3BhcmsvYXBwLTEv.YXBwLTE.0", "v1.c3BhcmsvYXBwLTEv.YXBwLTE.-5",
                          "v1.c3BhcmsvYXBwLTEv.YXBwLTE.01893456000",
                          "v1.c3BhcmsvYXBwLTEv.YXBwLTE.18934x6000",
                          "v1.c3BhcmsvYXBwLTEv.YXBwLTE.1893456000.abc",
                          "v1.c3BhcmsvYXBwLTEv.YXBwLTE.1893456000.7AA2E339AD1891068BC250C8FA21F34CE0A0657C3A54CE7BAAF9D61D030C3157",
                          "v1.c3BhcmsvYXBwLTEv.YXBwLTE.1893456000.00.00",
                          "v1.c3BhcmsvYXBwLTEv=.YXBwLTE.1893456000",  // padding
                          "v1.c3BhcmsvYXBwLTEv.YXBwLTF.1893456000",   // non-canonical
                          "v1.c3Bhc+svYXBwLTEv.YXBwLTE.1893456000"}) {
    INFO(bad);
    StatusOr<Token> t = Parse(bad);
    CHECK(t.status().code() == StatusCode::kInvalidArgument);
  }
  CHECK(Mint("test-cluster-secret", "", "a", 5).status().code() == StatusCode::kInvalidArgument);
  CHECK(Mint("test-cluster-secret", "p/", "", 5).status().code() == StatusCode::kInvalidArgument);
  CHECK(Mint("test-cluster-secret", std::string(256, 'p'), "a", 5).status().code() ==
        StatusCode::kInvalidArgument);
}

TEST_CASE("tenant token: the prefix rule") {
  CHECK(Authorizes("app-1/", "app-1/shuffle"));
  CHECK(Authorizes("app-1/", "app-1/"));
  CHECK(Authorizes("app-1/", "app-1"));  // N + "/" == PREFIX
  CHECK_FALSE(Authorizes("app-1/", "app-10"));
  CHECK_FALSE(Authorizes("app-1/", "app-2/x"));
  CHECK_FALSE(Authorizes("app-1/", "app-"));
  CHECK_FALSE(Authorizes("app-1/", ""));
  CHECK(Authorizes("app", "application"));  // a prefix without '/' is a plain prefix
  CHECK_FALSE(Authorizes("app", "ap"));
  CHECK(Authorizes("*", "anything"));
  CHECK(Authorizes("*", ""));
  CHECK_FALSE(Authorizes("", "x"));
}

TEST_CASE("tenant token: token files are private and hold a full token") {
  char dir[] = "/tmp/rpmp-token-XXXXXX";
  REQUIRE(mkdtemp(dir) != nullptr);
  std::string path = std::string(dir) + "/token";
  std::ofstream(path) << kVector << "\n";
  chmod(path.c_str(), 0600);
  CHECK(*LoadTokenFile(path) == kVector);
  chmod(path.c_str(), 0640);
  CHECK(LoadTokenFile(path).status().code() == StatusCode::kPermissionDenied);
  std::ofstream(path) << "v1.c3BhcmsvYXBwLTEv.YXBwLTE.1893456000\n";  // public part only
  chmod(path.c_str(), 0600);
  CHECK(LoadTokenFile(path).status().code() == StatusCode::kInvalidArgument);
  CHECK(LoadTokenFile(std::string(dir) + "/none").status().code() == StatusCode::kNotFound);
  unlink(path.c_str());
  rmdir(dir);
}

}  // namespace rpmp::tenant
