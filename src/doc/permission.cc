#include "weft/doc/permission.h"

#include <algorithm>
#include <cctype>
#include <string>

namespace weft::doc {
namespace {

constexpr auto A = PermissionDecision::kAllowed;
constexpr auto N = PermissionDecision::kNeedsApproval;
constexpr auto D = PermissionDecision::kDenied;

// Rows: MemoryPermission in declaration order; columns: Read, Append,
// Overwrite, Delete. Partner and Human escalate every write (the seed's
// "requires permission from partner / any human"); Append may only add;
// ReadWrite may rewrite but deleting a whole block takes Admin.
constexpr PermissionDecision kTable[6][4] = {
    /* read_only  */ {A, D, D, D},
    /* partner    */ {A, N, N, N},
    /* human      */ {A, N, N, N},
    /* append     */ {A, A, D, D},
    /* read_write */ {A, A, A, D},
    /* admin      */ {A, A, A, A},
};

constexpr std::string_view kNeedsApprovalPrefix = "needs approval: ";

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

}  // namespace

PermissionDecision permission_decision(MemoryPermission permission, MemoryOp op) {
  auto row = static_cast<size_t>(permission);
  auto col = static_cast<size_t>(op);
  if (row >= 6 || col >= 4) return D;  // values from outside the enum: deny
  return kTable[row][col];
}

Status check_permission(MemoryPermission permission, MemoryOp op, std::string_view label) {
  std::string what = std::string(memory_op_name(op)) + " on block '" + std::string(label) +
                     "' (permission " + std::string(memory_permission_name(permission)) + ")";
  switch (permission_decision(permission, op)) {
    case PermissionDecision::kAllowed:
      return Status();
    case PermissionDecision::kNeedsApproval: {
      std::string who =
          permission == MemoryPermission::kPartner ? "the block's partner (owner)" : "a human";
      return failed_precondition(std::string(kNeedsApprovalPrefix) + what +
                                 " must be approved by " + who);
    }
    case PermissionDecision::kDenied:
      break;
  }
  return permission_denied("permission denied: " + what + " does not allow it");
}

bool is_needs_approval(const Status& status) {
  return status.code() == StatusCode::kFailedPrecondition &&
         status.message().substr(0, kNeedsApprovalPrefix.size()) == kNeedsApprovalPrefix;
}

std::string_view memory_permission_name(MemoryPermission permission) {
  switch (permission) {
    case MemoryPermission::kReadOnly:
      return "read_only";
    case MemoryPermission::kPartner:
      return "partner";
    case MemoryPermission::kHuman:
      return "human";
    case MemoryPermission::kAppend:
      return "append";
    case MemoryPermission::kReadWrite:
      return "read_write";
    case MemoryPermission::kAdmin:
      return "admin";
  }
  return "unknown";
}

std::string_view memory_op_name(MemoryOp op) {
  switch (op) {
    case MemoryOp::kRead:
      return "read";
    case MemoryOp::kAppend:
      return "append";
    case MemoryOp::kOverwrite:
      return "overwrite";
    case MemoryOp::kDelete:
      return "delete";
  }
  return "unknown";
}

std::string_view permission_decision_name(PermissionDecision decision) {
  switch (decision) {
    case PermissionDecision::kAllowed:
      return "allowed";
    case PermissionDecision::kNeedsApproval:
      return "needs_approval";
    case PermissionDecision::kDenied:
      return "denied";
  }
  return "unknown";
}

Result<MemoryPermission> parse_memory_permission(std::string_view name) {
  std::string n = lower(name);
  std::replace(n.begin(), n.end(), '-', '_');
  if (n == "readonly") n = "read_only";
  if (n == "readwrite") n = "read_write";
  for (MemoryPermission p : kAllPermissions) {
    if (n == memory_permission_name(p)) return p;
  }
  return invalid_argument("unknown permission '" + std::string(name) +
                          "'; expected one of read_only, partner, human, append, read_write, "
                          "admin");
}

}  // namespace weft::doc
