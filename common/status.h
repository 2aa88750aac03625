// Status and StatusOr<T> for RPMP's own code: the public types (rpmp/status.h, installed
// with librpmp) plus the early-return macros that only the project's sources use.
#pragma once

#include "rpmp/status.h"  // IWYU pragma: export

// Returns early from the calling function when expr yields a non-OK Status.
#define RPMP_RETURN_IF_ERROR(expr)           \
  do {                                       \
    ::rpmp::Status _rpmp_st = (expr);        \
    if (!_rpmp_st.ok()) return _rpmp_st;     \
  } while (0)

#define RPMP_CONCAT_INNER(a, b) a##b
#define RPMP_CONCAT(a, b) RPMP_CONCAT_INNER(a, b)
// Declares `lhs` from a StatusOr, returning its Status early on error.
#define RPMP_ASSIGN_OR_RETURN(lhs, expr) \
  RPMP_ASSIGN_OR_RETURN_IMPL(RPMP_CONCAT(_rpmp_so_, __LINE__), lhs, expr)
#define RPMP_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                               \
  if (!tmp.ok()) return tmp.status();              \
  lhs = std::move(tmp).value()
