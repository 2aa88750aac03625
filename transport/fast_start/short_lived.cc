// See short_lived.h. The fopen() below interposes libc's for the whole process (the
// executable's definition comes first in symbol lookup); it changes exactly one path,
// and only after PrepareShortLivedFabric() enabled it.
#include "transport/fast_start/short_lived.h"

#include <dlfcn.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "transport/providers.h"

namespace rpmp {
namespace {

std::atomic<bool> g_skip_kallsyms{false};

using FopenFn = FILE* (*)(const char*, const char*);

FopenFn RealFopen() {
  static FopenFn real = reinterpret_cast<FopenFn>(dlsym(RTLD_NEXT, "fopen"));
  return real;
}

}  // namespace

void PrepareShortLivedFabric(const std::string& provider) {
  std::vector<const ProviderTraits*> rows;  // "auto": whichever it picks
  if (provider == kAutoProvider) rows = AutoCandidates();
  else if (const ProviderTraits* t = FindProvider(provider)) rows.push_back(t);
  if (rows.empty()) return;
  for (const ProviderTraits* t : rows) {
    for (const EnvDefault& e : t->short_lived_env) {
      if (e.name != nullptr) setenv(e.name, e.value, /*overwrite=*/0);
    }
  }
  RealFopen();
  g_skip_kallsyms.store(true);
}

}  // namespace rpmp

// The verbs provider's probe reads /proc/kallsyms line by line for two symbols; an empty
// file means "not there": no GPU peer-memory / dma-buf registration, which a tool never
// uses. Every other path, and every call before PrepareShortLivedFabric, goes to libc.
extern "C" FILE* fopen(const char* path, const char* mode) {
  if (rpmp::g_skip_kallsyms.load(std::memory_order_relaxed) && path != nullptr &&
      std::strcmp(path, "/proc/kallsyms") == 0 && mode != nullptr && mode[0] == 'r') {
    static char empty[1] = {0};
    return fmemopen(empty, 1, "r");
  }
  rpmp::FopenFn real = rpmp::RealFopen();
  return real(path, mode);
}
