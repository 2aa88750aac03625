// Status names and the abort path for misuse of StatusOr.
#include "common/status.h"

#include <cstdio>
#include <cstdlib>

namespace rpmp {

const char* StatusCodeName(StatusCode code) {
  switch (code) {
    case StatusCode::kOk: return "ok";
    case StatusCode::kCancelled: return "cancelled";
    case StatusCode::kUnknown: return "unknown";
    case StatusCode::kInvalidArgument: return "invalid argument";
    case StatusCode::kDeadlineExceeded: return "deadline exceeded";
    case StatusCode::kNotFound: return "not found";
    case StatusCode::kAlreadyExists: return "already exists";
    case StatusCode::kPermissionDenied: return "permission denied";
    case StatusCode::kResourceExhausted: return "no space";
    case StatusCode::kFailedPrecondition: return "failed precondition";
    case StatusCode::kAborted: return "aborted";
    case StatusCode::kOutOfRange: return "out of range";
    case StatusCode::kUnimplemented: return "unimplemented";
    case StatusCode::kInternal: return "internal";
    case StatusCode::kUnavailable: return "unavailable";
    case StatusCode::kDataLoss: return "data loss";
  }
  return "unknown";
}

std::string Status::ToString() const {
  if (ok()) return "ok";
  std::string s = StatusCodeName(code_);
  if (!message_.empty()) s += ": " + message_;
  return s;
}

void DieOnBadStatusOrAccess(const Status& s) {
  std::fprintf(stderr, "rpmp: value() called on a StatusOr holding %s\n", s.ToString().c_str());
  std::abort();
}

}  // namespace rpmp
