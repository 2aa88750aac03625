// NameThisThread: gives the calling thread a name that `top -H`, `perf` and /proc show
// (Linux keeps 15 characters). Native threads otherwise inherit their creator's name, so
// librpmp's threads inside a Spark executor would pass for "Executor task l...".
// Any RPMP thread may call it first thing in its body.
#pragma once

#include <pthread.h>

namespace rpmp {

inline void NameThisThread(const char* name) { (void)pthread_setname_np(pthread_self(), name); }

}  // namespace rpmp
