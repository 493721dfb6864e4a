// The kinds of error a StructuredDocument operation reports, recoverable from
// the returned Status (its code plus a stable message prefix), so a tool can
// branch on them without matching whole messages.
//
//   kind               code                  message starts with
//   kReadOnlyField     kPermissionDenied     "read-only field: "
//   kReadOnlySection   kPermissionDenied     "read-only section: "
//   kPermissionDenied  kPermissionDenied     "permission denied: "
//   kNeedsApproval     kFailedPrecondition   "needs approval: "
//   kSchemaMismatch    kInvalidArgument      "schema mismatch: "
//   kMissingSection    kNotFound             "missing section: "
//   kOutOfRange        kOutOfRange           (any)
//   kCharLimitExceeded kResourceExhausted    "char limit exceeded: "
//   kNotFound          kNotFound             (other: e.g. replace found no match)
//
// Thread safety: stateless free functions.
#ifndef WEFT_DOC_DOC_ERRORS_H_
#define WEFT_DOC_DOC_ERRORS_H_

#include <string_view>

#include "weft/base/status.h"

namespace weft::doc {

enum class DocErrorKind : uint8_t {
  kNone,  // OK
  kReadOnlyField,
  kReadOnlySection,
  kPermissionDenied,
  kNeedsApproval,
  kSchemaMismatch,
  kMissingSection,
  kOutOfRange,
  kCharLimitExceeded,
  kNotFound,
  kOther,
};

DocErrorKind doc_error_kind(const Status& status);
std::string_view doc_error_kind_name(DocErrorKind kind);

// Builders used by the document (messages name the block and the field).
Status read_only_field_error(std::string_view label, std::string_view field);
Status read_only_section_error(std::string_view label, std::string_view section);
Status schema_mismatch_error(std::string_view detail);
Status missing_section_error(std::string_view detail);
Status char_limit_error(std::string_view label, size_t would_be, size_t limit);

}  // namespace weft::doc

#endif  // WEFT_DOC_DOC_ERRORS_H_
