// Status and StatusOr<T>: how librpmp and every RPMP C++ unit report success or failure.
// Public and self-contained (only the standard library): installed with librpmp as
// <rpmp/status.h>; the project's internal code reaches it through common/status.h.
//
// Codes are numerically identical to gRPC's status codes, so a Status crosses the
// control plane unchanged and maps one-to-one onto Java exception classes (see
// client-java). Functions on the fast path return Status instead of throwing; no
// exception crosses a module boundary. Status is a value type, safe to copy and to
// move between threads; a given object is not synchronized.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

namespace rpmp {

enum class StatusCode : uint16_t {
  kOk = 0,
  kCancelled = 1,
  kUnknown = 2,
  kInvalidArgument = 3,
  kDeadlineExceeded = 4,
  kNotFound = 5,
  kAlreadyExists = 6,
  kPermissionDenied = 7,
  kResourceExhausted = 8,  // no space in the pool, too many requests in flight
  kFailedPrecondition = 9,
  kAborted = 10,
  kOutOfRange = 11,
  kUnimplemented = 12,
  kInternal = 13,
  kUnavailable = 14,  // peer unreachable or gone; retrying elsewhere may help
  kDataLoss = 15,     // checksum mismatch, corrupt record
};

// Returns the lower-case name of a code, e.g. "not found".
const char* StatusCodeName(StatusCode code);

class Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }
  static Status InvalidArgument(std::string m) { return {StatusCode::kInvalidArgument, std::move(m)}; }
  static Status NotFound(std::string m) { return {StatusCode::kNotFound, std::move(m)}; }
  static Status AlreadyExists(std::string m) { return {StatusCode::kAlreadyExists, std::move(m)}; }
  static Status NoSpace(std::string m) { return {StatusCode::kResourceExhausted, std::move(m)}; }
  static Status FailedPrecondition(std::string m) {
    return {StatusCode::kFailedPrecondition, std::move(m)};
  }
  static Status OutOfRange(std::string m) { return {StatusCode::kOutOfRange, std::move(m)}; }
  static Status Unimplemented(std::string m) { return {StatusCode::kUnimplemented, std::move(m)}; }
  static Status Internal(std::string m) { return {StatusCode::kInternal, std::move(m)}; }
  static Status Unavailable(std::string m) { return {StatusCode::kUnavailable, std::move(m)}; }
  static Status DeadlineExceeded(std::string m) {
    return {StatusCode::kDeadlineExceeded, std::move(m)};
  }
  static Status DataLoss(std::string m) { return {StatusCode::kDataLoss, std::move(m)}; }
  static Status IOError(std::string m) { return {StatusCode::kInternal, "I/O error: " + m}; }
  static Status Cancelled(std::string m) { return {StatusCode::kCancelled, std::move(m)}; }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // "not found: key 'k' in namespace 'ns'"; "ok" for success.
  std::string ToString() const;

  bool IsNotFound() const { return code_ == StatusCode::kNotFound; }
  bool IsNoSpace() const { return code_ == StatusCode::kResourceExhausted; }

  // Returns a copy with "context: " put in front of the message.
  Status Annotate(const std::string& context) const {
    return ok() ? *this : Status(code_, context + ": " + message_);
  }

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

// A T or the Status saying why there is none. value() on an error is a programming
// error and aborts.
template <typename T>
class StatusOr {
 public:
  StatusOr(Status s) : status_(std::move(s)) {}  // NOLINT: implicit by design
  StatusOr(T v) : value_(std::move(v)) {}        // NOLINT: implicit by design

  bool ok() const { return status_.ok(); }
  const Status& status() const { return status_; }
  T& value() & { CheckOk(); return *value_; }
  const T& value() const& { CheckOk(); return *value_; }
  T&& value() && { CheckOk(); return std::move(*value_); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }

 private:
  void CheckOk() const;
  Status status_;
  std::optional<T> value_;
};

[[noreturn]] void DieOnBadStatusOrAccess(const Status& s);

template <typename T>
void StatusOr<T>::CheckOk() const {
  if (!status_.ok() || !value_.has_value()) DieOnBadStatusOrAccess(status_);
}

}  // namespace rpmp
