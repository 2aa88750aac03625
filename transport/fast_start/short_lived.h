// Fast start for short-lived tools (rpmpctl): what a one-shot command needs from libfabric
// and nothing more. Measured on Debian 12's libfabric 1.17 (bench/rpmpctl_latency.sh);
// a one-shot `rpmpctl stat` spent its time on three things that have nothing to do
// with the provider it uses:
//   1. ~200 ms before main(): the PSM and PSM2 libraries that libfabric links calibrate
//      the cycle counter in their constructors (100 ms of usleep each). Fixed by the
//      no-device stand-ins in no_psm.c (linked by rpmp_fast_fabric_start() in CMake).
//   2. ~70 ms of CPU in the first fi_getinfo(): the verbs provider, initialized whether
//      or not it is asked for, reads all of /proc/kallsyms (looking for the kernel's GPU
//      peer-memory and dma-buf symbols). A short-lived tool never registers GPU memory,
//      so this unit answers that one read with an empty file (see short_lived.cc).
//   3. ~40 ms zeroing RxM's default queues (128 entries of 16 KiB buffers per
//      connection). A tool with a handful of requests in flight asks for small queues
//      (the provider table's short_lived_env); the server keeps its defaults.
// What is left (about 55 ms wall for `rpmpctl stat`, docs/benchmarks.md): RxM zeroing two
// ~17 MB buffer pools whose chunk size no environment variable changes.
// Long-running processes (servers, Spark executors) do not use this unit.
//
// Call PrepareShortLivedFabric once, first thing in main(), before any libfabric call,
// from the main thread. It only sets environment defaults: a variable the user already
// set wins.
#pragma once

#include <string>

namespace rpmp {

// Applies the short-lived defaults of `provider`'s row (no-op for an unknown provider:
// Fabric::Open reports that) and enables the /proc/kallsyms shortcut.
void PrepareShortLivedFabric(const std::string& provider);

}  // namespace rpmp
