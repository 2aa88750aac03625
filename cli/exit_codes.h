// rpmpctl's exit codes (docs/operations.md "rpmpctl"): 0 success, 1 a failure with one
// line on stderr saying why, 2 a usage error. Every rpmpctl command reports through these.
#pragma once

#include <cstdio>
#include <string>

#include "rpmp/status.h"

namespace rpmp::cli {

// Prints "rpmpctl: <status>" and returns 1.
inline int Fail(const Status& st) {
  std::fprintf(stderr, "rpmpctl: %s\n", st.ToString().c_str());
  return 1;
}

// Prints "rpmpctl: <why>" and returns 2.
inline int Bad(const std::string& why) {
  std::fprintf(stderr, "rpmpctl: %s\n", why.c_str());
  return 2;
}

}  // namespace rpmp::cli
