// The honest client of session_fuzz.cc: connects with the secret, writes and reads back
// one record, all within `bound`. Its own unit because librpmp's public headers and
// the server's internal ones both define rpmp::KeyInfo.
#include <chrono>
#include <string>

#include "rpmp/client.h"

namespace rpmp::fuzz {

bool HonestClientServed(const std::string& address, const std::string& secret,
                        std::chrono::milliseconds bound, std::string* why) {
  ClientOptions o;
  o.secret = secret;
  o.timeout = bound;
  auto t0 = std::chrono::steady_clock::now();
  auto c = Client::Connect(address, o);
  if (!c.ok()) return *why = c.status().ToString(), false;
  Status put = (*c)->Put("fuzz-honest", "k", "v", 1);
  if (!put.ok()) return *why = put.ToString(), false;
  StatusOr<std::string> got = (*c)->Get("fuzz-honest", "k");
  if (!got.ok()) return *why = got.status().ToString(), false;
  if (*got != "v") return *why = "read back '" + *got + "'", false;
  if (std::chrono::steady_clock::now() - t0 > bound) return *why = "too slow", false;
  return true;
}

}  // namespace rpmp::fuzz
