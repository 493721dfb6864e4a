// Block permissions: what an agent may do to a block (MemoryPermission) and
// which operation it attempts (MemoryOp). ONE table (permission_decision)
// answers every pair with Allowed, NeedsApproval (escalate to a human or the
// block's partner; never a silent denial) or Denied.
//
// Thread safety: stateless values and free functions; safe from any thread.
#ifndef WEFT_DOC_PERMISSION_H_
#define WEFT_DOC_PERMISSION_H_

#include <cstdint>
#include <string_view>

#include "weft/base/status.h"

namespace weft::doc {

// Ordered from least to most access. Persisted by name (see
// memory_permission_name), so the names never change.
enum class MemoryPermission : uint8_t {
  kReadOnly,   // read only
  kPartner,    // writes need the partner's (the owner's) approval
  kHuman,      // writes need any human's approval
  kAppend,     // may add to the block, never rewrite or delete it
  kReadWrite,  // may rewrite freely; deleting the block needs Admin
  kAdmin,      // total control, including delete
};

enum class MemoryOp : uint8_t {
  kRead,       // read or render
  kAppend,     // add content without changing what is there (append text, push, log)
  kOverwrite,  // change or remove existing content (set, replace, delete an item)
  kDelete,     // delete the whole block
};

enum class PermissionDecision : uint8_t {
  kAllowed,
  kNeedsApproval,  // the operation may go ahead once a person approves it
  kDenied,
};

inline constexpr MemoryPermission kAllPermissions[] = {
    MemoryPermission::kReadOnly, MemoryPermission::kPartner,   MemoryPermission::kHuman,
    MemoryPermission::kAppend,   MemoryPermission::kReadWrite, MemoryPermission::kAdmin};
inline constexpr MemoryOp kAllOps[] = {MemoryOp::kRead, MemoryOp::kAppend, MemoryOp::kOverwrite,
                                       MemoryOp::kDelete};

// The decision for `op` under `permission` (the one table).
PermissionDecision permission_decision(MemoryPermission permission, MemoryOp op);

// OK when allowed. Errors: kFailedPrecondition "needs approval: ..." when a
// person must approve first (Partner, Human); kPermissionDenied otherwise.
// Messages name the block `label`, the op and the permission.
Status check_permission(MemoryPermission permission, MemoryOp op, std::string_view label);

// True when `status` is the "needs approval" result of check_permission.
bool is_needs_approval(const Status& status);

// Stable lower-case names: "read_only", "partner", "human", "append",
// "read_write", "admin"; ops "read", "append", "overwrite", "delete";
// decisions "allowed", "needs_approval", "denied".
std::string_view memory_permission_name(MemoryPermission permission);
std::string_view memory_op_name(MemoryOp op);
std::string_view permission_decision_name(PermissionDecision decision);

// Parses a permission name (also accepts "readonly", "read-only", "readwrite",
// "read-write", and any case). Errors: kInvalidArgument listing the valid names.
Result<MemoryPermission> parse_memory_permission(std::string_view name);

}  // namespace weft::doc

#endif  // WEFT_DOC_PERMISSION_H_
