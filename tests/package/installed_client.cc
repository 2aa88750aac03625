// A program an application developer would write against the installed librpmp package
// (tests/package_test.sh compiles it with only the staged root's usr/include and links
// usr/lib/librpmp.so): puts a record on the server named by argv[1] ("host:port") and
// reads it back. Prints "installed client ok" and exits 0 when the bytes match.
#include <rpmp/client.h>
#include <rpmp/cluster.h>
#include <rpmp/status.h>

#include <cstdio>
#include <string>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s HOST:PORT\n", argv[0]);
    return 2;
  }
  rpmp::StatusOr<std::unique_ptr<rpmp::Client>> client = rpmp::Client::Connect(argv[1]);
  if (!client.ok()) {
    std::fprintf(stderr, "connect: %s\n", client.status().ToString().c_str());
    return 1;
  }
  const std::string value = "written through the installed headers";
  rpmp::Status st = (*client)->Put("pkg", "k", value.data(), value.size());
  if (!st.ok()) {
    std::fprintf(stderr, "put: %s\n", st.ToString().c_str());
    return 1;
  }
  rpmp::StatusOr<std::string> got = (*client)->Get("pkg", "k");
  if (!got.ok() || *got != value) {
    std::fprintf(stderr, "get: %s\n", got.ok() ? "different bytes" : got.status().ToString().c_str());
    return 1;
  }
  std::printf("installed client ok: %s\n", rpmp::StatusCodeName(rpmp::StatusCode::kOk));
  return 0;
}
