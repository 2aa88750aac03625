// Seeded driver for session_fuzz.cc where libFuzzer is not linked (the normal build,
// CI): runs -runs=N random inputs from -seed=S, each up to 512 bytes, and prints
// runs=N seed=S inputs_per_s=R (and a progress line every 1,000 inputs). A failing
// input aborts the process (reproduce with the same seed).
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

int main(int argc, char** argv) {
  long runs = 100;
  unsigned long seed = 1;
  for (int i = 1; i < argc; i++) {
    if (std::strncmp(argv[i], "-runs=", 6) == 0) runs = std::atol(argv[i] + 6);
    else if (std::strncmp(argv[i], "-seed=", 6) == 0) seed = std::strtoul(argv[i] + 6, nullptr, 10);
    else {
      std::fprintf(stderr, "usage: session_fuzz [-runs=N] [-seed=S]\n");
      return 2;
    }
  }
  std::mt19937_64 rng(seed);
  std::vector<uint8_t> input;
  auto t0 = std::chrono::steady_clock::now();
  auto rate = [&](long done) {
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return s > 0 ? static_cast<double>(done) / s : 0.0;
  };
  for (long r = 0; r < runs; r++) {
    input.resize(rng() % 512);
    for (uint8_t& b : input) b = static_cast<uint8_t>(rng());
    LLVMFuzzerTestOneInput(input.data(), input.size());
    if ((r + 1) % 1000 == 0) {
      std::printf("progress runs=%ld inputs_per_s=%.1f\n", r + 1, rate(r + 1));
      std::fflush(stdout);
    }
  }
  std::printf("runs=%ld seed=%lu inputs_per_s=%.1f\n", runs, seed, rate(runs));
  std::fflush(stdout);
  // The in-process server's threads still run: exit without atexit handlers (OpenSSL's
  // cleanup under a server thread drawing a nonce crashed a run here).
  std::_Exit(0);
}
