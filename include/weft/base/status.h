// Status and Result<T>: how every weft library function reports failure.
//
// A Status is a code plus a message a person can act on ("block 'notes' not
// found; known labels: ..."). Library code never throws across its public API;
// it returns Status or Result<T>. Codes follow absl's canonical ones, with two
// file-system codes (is a directory / not a directory) that the filesystem
// protocol maps one-to-one onto its error table.
//
// Thread safety: Status and Result are values; distinct objects may be used
// from different threads freely, a shared one only for reading.
#ifndef WEFT_BASE_STATUS_H_
#define WEFT_BASE_STATUS_H_

#include <cassert>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>

namespace weft {

enum class StatusCode : int {
  kOk = 0,
  kCancelled = 1,
  kUnknown = 2,
  kInvalidArgument = 3,    // the caller's input is malformed
  kDeadlineExceeded = 4,   // a time limit ran out
  kNotFound = 5,           // a named thing does not exist
  kAlreadyExists = 6,      // create of something that exists
  kPermissionDenied = 7,   // a rule forbids it
  kResourceExhausted = 8,  // a size or count limit was hit
  kFailedPrecondition = 9, // the system is not in a state to do it
  kAborted = 10,           // a compare-and-set or transaction lost a race
  kOutOfRange = 11,        // a position or index past the end
  kUnimplemented = 12,     // not supported (yet): the message says what is
  kInternal = 13,          // a bug in weft
  kUnavailable = 14,       // try again later (busy, closed, offline)
  kDataLoss = 15,          // corrupt or truncated stored/received data
  kIsADirectory = 100,     // a file operation named a directory
  kNotADirectory = 101,    // a directory operation named a file
};

// The code's stable lower-case name, e.g. "not found".
std::string_view status_code_name(StatusCode code);

class [[nodiscard]] Status {
 public:
  // An OK status; costs one null pointer.
  Status() noexcept = default;
  Status(StatusCode code, std::string_view message);

  Status(const Status& other);
  Status& operator=(const Status& other);
  Status(Status&&) noexcept = default;
  Status& operator=(Status&&) noexcept = default;

  static Status ok_status() { return Status(); }

  bool ok() const { return rep_ == nullptr; }
  StatusCode code() const { return rep_ ? rep_->code : StatusCode::kOk; }
  // The message without the code; empty when ok().
  std::string_view message() const { return rep_ ? std::string_view(rep_->message) : ""; }
  // "not found: block 'x' ..." or "ok".
  std::string to_string() const;

  // Returns a copy whose message is "context: <old message>"; OK stays OK.
  Status with_context(std::string_view context) const;

  // Ignores the status on purpose (for best-effort cleanup paths).
  void ignore_error() const {}

  friend bool operator==(const Status& a, const Status& b) {
    return a.code() == b.code() && a.message() == b.message();
  }

 private:
  struct Rep {
    StatusCode code;
    std::string message;
  };
  std::unique_ptr<Rep> rep_;
};

std::ostream& operator<<(std::ostream& os, const Status& status);

// Factories, one per code: weft::not_found("block 'x' does not exist").
Status cancelled_error(std::string_view message);
Status invalid_argument(std::string_view message);
Status deadline_exceeded(std::string_view message);
Status not_found(std::string_view message);
Status already_exists(std::string_view message);
Status permission_denied(std::string_view message);
Status resource_exhausted(std::string_view message);
Status failed_precondition(std::string_view message);
Status aborted(std::string_view message);
Status out_of_range(std::string_view message);
Status unimplemented(std::string_view message);
Status internal_error(std::string_view message);
Status unavailable(std::string_view message);
Status data_loss(std::string_view message);
Status is_a_directory(std::string_view message);
Status not_a_directory(std::string_view message);

// Result<T>: either a T or a non-OK Status.
//   Result<int> r = parse(x);
//   if (!r.ok()) return r.status();
//   use(*r);
template <typename T>
class [[nodiscard]] Result {
  static_assert(!std::is_same_v<std::decay_t<T>, Status>, "Result<Status> makes no sense");

 public:
  // REQUIRES: !status.ok() (an OK status carries no value; this becomes kInternal).
  Result(Status status) : data_(std::move(status)) {  // NOLINT: implicit by design
    if (std::get<Status>(data_).ok()) {
      data_ = Status(StatusCode::kInternal, "Result constructed from an OK status without a value");
    }
  }
  Result(const T& value) : data_(value) {}        // NOLINT
  Result(T&& value) : data_(std::move(value)) {}  // NOLINT
  template <typename U,
            typename = std::enable_if_t<std::is_constructible_v<T, U&&> &&
                                        !std::is_same_v<std::decay_t<U>, Status> &&
                                        !std::is_same_v<std::decay_t<U>, Result<T>> &&
                                        !std::is_same_v<std::decay_t<U>, T>>>
  Result(U&& value) : data_(T(std::forward<U>(value))) {}  // NOLINT

  bool ok() const { return data_.index() == 0; }
  // OK when a value is held.
  Status status() const { return ok() ? Status() : std::get<Status>(data_); }

  // REQUIRES: ok().
  T& value() & { assert(ok()); return std::get<0>(data_); }
  const T& value() const& { assert(ok()); return std::get<0>(data_); }
  T&& value() && { assert(ok()); return std::get<0>(std::move(data_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  // The value, or `fallback` when this holds an error.
  T value_or(T fallback) const& { return ok() ? std::get<0>(data_) : std::move(fallback); }

 private:
  std::variant<T, Status> data_;
};

}  // namespace weft

#define WEFT_STATUS_CONCAT_INNER_(a, b) a##b
#define WEFT_STATUS_CONCAT_(a, b) WEFT_STATUS_CONCAT_INNER_(a, b)

// Returns from the enclosing function if `expr` (a Status) is not OK.
#define WEFT_RETURN_IF_ERROR(expr)                 \
  do {                                             \
    ::weft::Status weft_status_tmp_ = (expr);      \
    if (!weft_status_tmp_.ok()) return weft_status_tmp_; \
  } while (0)

// WEFT_ASSIGN_OR_RETURN(auto x, make_x()); declares x from a Result or returns its error.
#define WEFT_ASSIGN_OR_RETURN(lhs, expr) \
  WEFT_ASSIGN_OR_RETURN_IMPL_(WEFT_STATUS_CONCAT_(weft_result_, __LINE__), lhs, expr)
#define WEFT_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                                \
  if (!tmp.ok()) return tmp.status();               \
  lhs = std::move(tmp).value()

#endif  // WEFT_BASE_STATUS_H_
