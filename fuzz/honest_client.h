// The honest client of session_fuzz.cc, behind an interface free of librpmp's headers
// (librpmp's public headers and the server's internal ones both define rpmp::KeyInfo).
// One thread; the fuzzer only.
#pragma once

#include <chrono>
#include <memory>
#include <string>

namespace rpmp::fuzz {

class HonestClient {
 public:
  virtual ~HonestClient() = default;
  // Connects (HELLO with the secret) within `bound`; nullptr with *why on failure.
  static std::unique_ptr<HonestClient> Connect(const std::string& address, const std::string& secret,
                                               std::chrono::milliseconds bound, std::string* why);
  // Writes one record and reads it back within `bound`; false with *why otherwise.
  virtual bool Served(std::chrono::milliseconds bound, std::string* why) = 0;
};

}  // namespace rpmp::fuzz
