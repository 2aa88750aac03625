// Key choosers for the YCSB-style key-value benchmark (rpmp-kv-bench): a uniform one
// and YCSB's scrambled Zipfian (Gray et al., "Quickly generating billion-record
// synthetic databases", as YCSB's ZipfianGenerator uses it, with the rank hashed so
// that popular keys are spread over the key space). One generator per thread: not
// thread-safe.
#pragma once

#include <cmath>
#include <cstdint>
#include <random>

namespace rpmp::bench {

class ZipfianChooser {
 public:
  // Ranks 0..n-1; theta 0.99 is YCSB's default skew.
  ZipfianChooser(uint64_t n, double theta, uint64_t seed) : n_(n), theta_(theta), rng_(seed) {
    zetan_ = Zeta(n, theta);
    double zeta2 = Zeta(2, theta);
    alpha_ = 1.0 / (1.0 - theta);
    eta_ = (1.0 - std::pow(2.0 / static_cast<double>(n), 1.0 - theta)) / (1.0 - zeta2 / zetan_);
  }

  // A key index in 0..n-1, popular ranks scattered by a 64-bit FNV-1a hash.
  uint64_t Next() { return Fnv1a(NextRank()) % n_; }

  // The unscrambled rank: 0 is the most popular.
  uint64_t NextRank() {
    double u = uniform_(rng_);
    double uz = u * zetan_;
    if (uz < 1.0) return 0;
    if (uz < 1.0 + std::pow(0.5, theta_)) return 1;
    uint64_t r = static_cast<uint64_t>(static_cast<double>(n_) * std::pow(eta_ * u - eta_ + 1.0, alpha_));
    return r < n_ ? r : n_ - 1;
  }

  static double Zeta(uint64_t n, double theta) {
    double sum = 0;
    for (uint64_t i = 1; i <= n; i++) sum += 1.0 / std::pow(static_cast<double>(i), theta);
    return sum;
  }

  static uint64_t Fnv1a(uint64_t v) {
    uint64_t h = 0xcbf29ce484222325ull;
    for (int i = 0; i < 8; i++) {
      h ^= (v >> (8 * i)) & 0xff;
      h *= 0x100000001b3ull;
    }
    return h;
  }

 private:
  uint64_t n_;
  double theta_, zetan_, alpha_, eta_;
  std::mt19937_64 rng_;
  std::uniform_real_distribution<double> uniform_{0.0, 1.0};
};

}  // namespace rpmp::bench
