// The honest client of session_fuzz.cc (honest_client.h): librpmp's Client, writing and
// reading back one record.
#include "fuzz/honest_client.h"

#include "rpmp/client.h"

namespace rpmp::fuzz {
namespace {

class LibClient : public HonestClient {
 public:
  explicit LibClient(std::unique_ptr<Client> c) : c_(std::move(c)) {}
  bool Served(std::chrono::milliseconds bound, std::string* why) override {
    auto t0 = std::chrono::steady_clock::now();
    std::string value = "v" + std::to_string(++n_);
    Status put = c_->Put("fuzz-honest", "k", value.data(), value.size());
    if (!put.ok()) return *why = put.ToString(), false;
    StatusOr<std::string> got = c_->Get("fuzz-honest", "k");
    if (!got.ok()) return *why = got.status().ToString(), false;
    if (*got != value) return *why = "read back '" + *got + "', wrote '" + value + "'", false;
    if (std::chrono::steady_clock::now() - t0 > bound) return *why = "too slow", false;
    return true;
  }

 private:
  std::unique_ptr<Client> c_;
  uint64_t n_ = 0;
};

}  // namespace

std::unique_ptr<HonestClient> HonestClient::Connect(const std::string& address, const std::string& secret,
                                                    std::chrono::milliseconds bound, std::string* why) {
  ClientOptions o;
  o.secret = secret;
  o.timeout = bound;
  auto c = Client::Connect(address, o);
  if (!c.ok()) return *why = c.status().ToString(), nullptr;
  return std::make_unique<LibClient>(std::move(c).value());
}

}  // namespace rpmp::fuzz
