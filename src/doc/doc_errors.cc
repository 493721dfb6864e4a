#include "weft/doc/doc_errors.h"

#include <string>

#include "weft/doc/permission.h"

namespace weft::doc {
namespace {

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

}  // namespace

DocErrorKind doc_error_kind(const Status& status) {
  std::string_view m = status.message();
  switch (status.code()) {
    case StatusCode::kOk:
      return DocErrorKind::kNone;
    case StatusCode::kPermissionDenied:
      if (starts_with(m, "read-only field: ")) return DocErrorKind::kReadOnlyField;
      if (starts_with(m, "read-only section: ")) return DocErrorKind::kReadOnlySection;
      return DocErrorKind::kPermissionDenied;
    case StatusCode::kFailedPrecondition:
      return is_needs_approval(status) ? DocErrorKind::kNeedsApproval : DocErrorKind::kOther;
    case StatusCode::kInvalidArgument:
      return starts_with(m, "schema mismatch: ") ? DocErrorKind::kSchemaMismatch
                                                 : DocErrorKind::kOther;
    case StatusCode::kNotFound:
      return starts_with(m, "missing section: ") ? DocErrorKind::kMissingSection
                                                 : DocErrorKind::kNotFound;
    case StatusCode::kOutOfRange:
      return DocErrorKind::kOutOfRange;
    case StatusCode::kResourceExhausted:
      return starts_with(m, "char limit exceeded: ") ? DocErrorKind::kCharLimitExceeded
                                                     : DocErrorKind::kOther;
    default:
      return DocErrorKind::kOther;
  }
}

std::string_view doc_error_kind_name(DocErrorKind kind) {
  switch (kind) {
    case DocErrorKind::kNone:
      return "none";
    case DocErrorKind::kReadOnlyField:
      return "read_only_field";
    case DocErrorKind::kReadOnlySection:
      return "read_only_section";
    case DocErrorKind::kPermissionDenied:
      return "permission_denied";
    case DocErrorKind::kNeedsApproval:
      return "needs_approval";
    case DocErrorKind::kSchemaMismatch:
      return "schema_mismatch";
    case DocErrorKind::kMissingSection:
      return "missing_section";
    case DocErrorKind::kOutOfRange:
      return "out_of_range";
    case DocErrorKind::kCharLimitExceeded:
      return "char_limit_exceeded";
    case DocErrorKind::kNotFound:
      return "not_found";
    case DocErrorKind::kOther:
      return "other";
  }
  return "other";
}

Status read_only_field_error(std::string_view label, std::string_view field) {
  return permission_denied("read-only field: field '" + std::string(field) + "' of block '" +
                           std::string(label) +
                           "' is read-only and cannot be modified by an agent");
}

Status read_only_section_error(std::string_view label, std::string_view section) {
  return permission_denied("read-only section: section '" + std::string(section) + "' of block '" +
                           std::string(label) +
                           "' is read-only and cannot be modified by an agent");
}

Status schema_mismatch_error(std::string_view detail) {
  return invalid_argument("schema mismatch: " + std::string(detail));
}

Status missing_section_error(std::string_view detail) {
  return not_found("missing section: " + std::string(detail));
}

Status char_limit_error(std::string_view label, size_t would_be, size_t limit) {
  return resource_exhausted("char limit exceeded: block '" + std::string(label) + "' would hold " +
                            std::to_string(would_be) + " characters; its limit is " +
                            std::to_string(limit));
}

}  // namespace weft::doc
