// Unit test of auth.h: proofs differ by every input, secret files are checked.
#include "common/auth.h"

#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <fstream>

namespace rpmp::auth {

TEST_CASE("auth: proofs depend on the secret, both nonces and the address") {
  std::string sn = RandomNonce(), cn = RandomNonce();
  REQUIRE(sn.size() == kNonceSize);
  CHECK(sn != cn);
  std::string p = ClientProof("0123456789abcdef", sn, cn, "addr");
  CHECK(p.size() == kProofSize);
  CHECK(Equal(p, ClientProof("0123456789abcdef", sn, cn, "addr")));
  CHECK_FALSE(Equal(p, ClientProof("0123456789abcdeX", sn, cn, "addr")));
  CHECK_FALSE(Equal(p, ClientProof("0123456789abcdef", cn, sn, "addr")));
  CHECK_FALSE(Equal(p, ClientProof("0123456789abcdef", sn, cn, "addr2")));
  CHECK_FALSE(Equal(p, ServerProof("0123456789abcdef", sn, cn, 1)));
  CHECK(RandomTag48() != 0);
  CHECK(RandomTag48() < (1ull << 48));
}

TEST_CASE("auth: secret files must be private and long enough") {
  char dir[] = "/tmp/rpmp-auth-XXXXXX";
  REQUIRE(mkdtemp(dir) != nullptr);
  std::string path = std::string(dir) + "/secret";
  std::ofstream(path) << "a-long-enough-secret\n";
  chmod(path.c_str(), 0600);
  CHECK(*LoadSecretFile(path) == "a-long-enough-secret");
  chmod(path.c_str(), 0644);
  CHECK(LoadSecretFile(path).status().code() == StatusCode::kPermissionDenied);
  // Group access is refused too (0640 was accepted: only "others" bits were checked).
  for (mode_t mode : {0640, 0620, 0610, 0604, 0602, 0660}) {
    chmod(path.c_str(), mode);
    INFO("mode " << std::oct << mode);
    CHECK(LoadSecretFile(path).status().code() == StatusCode::kPermissionDenied);
  }
  CHECK(LoadSecretFile(path).status().message().find("0660") != std::string::npos);
  chmod(path.c_str(), 0400);
  CHECK(LoadSecretFile(path).ok());
  chmod(path.c_str(), 0600);
  std::ofstream(path) << "short\n";
  chmod(path.c_str(), 0600);
  CHECK(LoadSecretFile(path).status().code() == StatusCode::kInvalidArgument);
  CHECK(LoadSecretFile(path + ".missing").status().code() == StatusCode::kNotFound);
  setenv(kSecretFileEnv, (path + ".missing").c_str(), 1);
  CHECK(SecretFromEnvironment().status().message().find(kSecretFileEnv) != std::string::npos);
  unsetenv(kSecretFileEnv);
  CHECK(SecretFromEnvironment()->empty());
  unlink(path.c_str());
  rmdir(dir);
}

}  // namespace rpmp::auth
