#include "weft/base/status.h"

namespace weft {

std::string_view status_code_name(StatusCode code) {
  switch (code) {
    case StatusCode::kOk: return "ok";
    case StatusCode::kCancelled: return "cancelled";
    case StatusCode::kUnknown: return "unknown";
    case StatusCode::kInvalidArgument: return "invalid argument";
    case StatusCode::kDeadlineExceeded: return "deadline exceeded";
    case StatusCode::kNotFound: return "not found";
    case StatusCode::kAlreadyExists: return "already exists";
    case StatusCode::kPermissionDenied: return "permission denied";
    case StatusCode::kResourceExhausted: return "resource exhausted";
    case StatusCode::kFailedPrecondition: return "failed precondition";
    case StatusCode::kAborted: return "aborted";
    case StatusCode::kOutOfRange: return "out of range";
    case StatusCode::kUnimplemented: return "unimplemented";
    case StatusCode::kInternal: return "internal";
    case StatusCode::kUnavailable: return "unavailable";
    case StatusCode::kDataLoss: return "data loss";
    case StatusCode::kIsADirectory: return "is a directory";
    case StatusCode::kNotADirectory: return "not a directory";
  }
  return "unknown";
}

Status::Status(StatusCode code, std::string_view message) {
  if (code != StatusCode::kOk) rep_ = std::make_unique<Rep>(Rep{code, std::string(message)});
}

Status::Status(const Status& other)
    : rep_(other.rep_ ? std::make_unique<Rep>(*other.rep_) : nullptr) {}

Status& Status::operator=(const Status& other) {
  if (this != &other) rep_ = other.rep_ ? std::make_unique<Rep>(*other.rep_) : nullptr;
  return *this;
}

std::string Status::to_string() const {
  if (ok()) return "ok";
  std::string out(status_code_name(rep_->code));
  if (!rep_->message.empty()) {
    out += ": ";
    out += rep_->message;
  }
  return out;
}

Status Status::with_context(std::string_view context) const {
  if (ok()) return Status();
  std::string message(context);
  message += ": ";
  message += rep_->message;
  return Status(rep_->code, message);
}

std::ostream& operator<<(std::ostream& os, const Status& status) {
  return os << status.to_string();
}

Status cancelled_error(std::string_view m) { return Status(StatusCode::kCancelled, m); }
Status invalid_argument(std::string_view m) { return Status(StatusCode::kInvalidArgument, m); }
Status deadline_exceeded(std::string_view m) { return Status(StatusCode::kDeadlineExceeded, m); }
Status not_found(std::string_view m) { return Status(StatusCode::kNotFound, m); }
Status already_exists(std::string_view m) { return Status(StatusCode::kAlreadyExists, m); }
Status permission_denied(std::string_view m) { return Status(StatusCode::kPermissionDenied, m); }
Status resource_exhausted(std::string_view m) { return Status(StatusCode::kResourceExhausted, m); }
Status failed_precondition(std::string_view m) {
  return Status(StatusCode::kFailedPrecondition, m);
}
Status aborted(std::string_view m) { return Status(StatusCode::kAborted, m); }
Status out_of_range(std::string_view m) { return Status(StatusCode::kOutOfRange, m); }
Status unimplemented(std::string_view m) { return Status(StatusCode::kUnimplemented, m); }
Status internal_error(std::string_view m) { return Status(StatusCode::kInternal, m); }
Status unavailable(std::string_view m) { return Status(StatusCode::kUnavailable, m); }
Status data_loss(std::string_view m) { return Status(StatusCode::kDataLoss, m); }
Status is_a_directory(std::string_view m) { return Status(StatusCode::kIsADirectory, m); }
Status not_a_directory(std::string_view m) { return Status(StatusCode::kNotADirectory, m); }

}  // namespace weft
