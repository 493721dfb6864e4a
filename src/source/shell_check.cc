// The shell pre-hook's checker: each predicted operation decided by the
// workspace's rules (WorkspaceRules::decide / decide_move); tree operations
// also by every rule that could match a file below their directory.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "weft/base/glob.h"
#include "weft/source/shell_predict.h"

namespace weft::source {
namespace {

using doc::MemoryOp;
using doc::PermissionDecision;

// PermissionDecision is declared from the least to the most strict.
static_assert(PermissionDecision::kAllowed < PermissionDecision::kNeedsApproval &&
              PermissionDecision::kNeedsApproval < PermissionDecision::kDenied);
int strictness(PermissionDecision d) { return static_cast<int>(d); }

bool listed(const std::vector<FileOp>& ops, FileOp op) {
  for (FileOp o : ops) {
    if (o == op) return true;
  }
  return false;
}

// One rule's answer for `op`, as WorkspaceRules::decide gives it for a path
// that rule matches first.
PermissionDecision rule_decision(const PermissionRule& rule, FileOp op) {
  MemoryOp memory_op = op == FileOp::kRead                               ? MemoryOp::kRead
                       : op == FileOp::kCreate || op == FileOp::kAppend ? MemoryOp::kAppend
                                                                         : MemoryOp::kOverwrite;
  PermissionDecision d = doc::permission_decision(rule.level, memory_op);
  bool escalated = listed(rule.escalate, op);
  if (op == FileOp::kDelete || op == FileOp::kMove) {
    escalated = escalated || listed(rule.escalate, FileOp::kOverwrite) ||
                listed(rule.escalate, FileOp::kDelete);
  }
  if (d == PermissionDecision::kAllowed && escalated) d = PermissionDecision::kNeedsApproval;
  return d;
}

// The directory a tree op or a pattern reaches into ("" for the root).
std::string reach_of(const PredictedOp& op, const std::string& path) {
  std::string dir = path == "." ? std::string() : path;
  if (!op.pattern) return dir;
  // Up to the first segment with a glob character.
  size_t glob = dir.find_first_of("*?[");
  if (glob == std::string::npos) return dir;
  size_t slash = dir.rfind('/', glob);
  return slash == std::string::npos ? std::string() : dir.substr(0, slash);
}

void take_stricter(ShellOpCheck* check, PermissionDecision d, doc::MemoryPermission level,
                   const std::string& reason) {
  if (strictness(d) > strictness(check->decision)) {
    check->decision = d;
    check->level = level;
    check->reason = reason;
  }
}

// Widens `check` with every rule that could decide a file below `path`.
void check_below(const PredictedOp& op, const std::string& path, FileOp file_op,
                 const WorkspaceRules& rules, ShellOpCheck* check) {
  const std::string dir = reach_of(op, path);
  // A file below that no specific rule names.
  const std::string probe = (dir.empty() ? std::string() : dir + "/") + "\x01/\x01";
  RuleDecision generic = rules.decide(probe, file_op);
  take_stricter(check, generic.decision, generic.level,
                generic.reason + " for files under " + (dir.empty() ? "the root" : dir));
  const std::vector<PermissionRule>& list = rules.rules();
  for (size_t i = 0; i < list.size(); ++i) {
    const PermissionRule& rule = list[i];
    if (!rule.pattern.could_match_below(dir)) continue;
    std::string reason = "rule " + std::to_string(i + 1) + " (glob \"" + rule.glob + "\"";
    if (rule.line > 0) reason += ", line " + std::to_string(rule.line);
    reason += ") for files under " + (dir.empty() ? std::string("the root") : dir);
    take_stricter(check, rule_decision(rule, file_op), rule.level, reason);
  }
}

}  // namespace

std::vector<ShellOpCheck> check_prediction(const ShellPrediction& prediction,
                                           const WorkspaceRules& rules,
                                           const ShellCheckOptions& options) {
  std::vector<ShellOpCheck> out;
  out.reserve(prediction.ops.size());
  for (size_t i = 0; i < prediction.ops.size(); ++i) {
    const PredictedOp& op = prediction.ops[i];
    ShellOpCheck check;
    check.op_index = i;
    check.path = op.path;
    check.op = op.op;
    const bool reaches = op.tree || op.pattern;
    if (op.op == FileOp::kRead) {
      check.reason = "reads are allowed";
      if (op.inside_root) check.level = rules.permission_for(op.path);
      out.push_back(std::move(check));
      continue;
    }
    bool any_inside = op.inside_root || (op.op == FileOp::kMove && op.target_inside_root);
    if (!any_inside) {
      check.decision = options.outside_root;
      check.reason = "outside the workspace (weft.toml does not govern it)";
      out.push_back(std::move(check));
      continue;
    }
    if (op.op == FileOp::kMove) {
      RuleDecision d;
      if (op.inside_root && op.target_inside_root) {
        d = rules.decide_move(op.path, op.target);
      } else if (op.inside_root) {
        d = rules.decide(op.path, FileOp::kMove);
        take_stricter(&check, options.outside_root, check.level, "target outside the workspace");
      } else {
        d = rules.decide(op.target, FileOp::kCreate);
        take_stricter(&check, options.outside_root, check.level, "source outside the workspace");
      }
      take_stricter(&check, d.decision, d.level, d.reason);
      if (check.reason.empty()) {
        check.level = d.level;
        check.reason = d.reason;
      }
      if (reaches) {
        if (op.inside_root) check_below(op, op.path, FileOp::kMove, rules, &check);
        if (op.target_inside_root) check_below(op, op.target, FileOp::kCreate, rules, &check);
      }
      out.push_back(std::move(check));
      continue;
    }
    if (!op.pattern) {
      RuleDecision d = rules.decide(op.path, op.op);
      check.decision = d.decision;
      check.level = d.level;
      check.reason = d.reason;
    } else {
      RuleDecision d = rules.decide(reach_of(op, op.path), op.op);
      check.decision = d.decision;
      check.level = d.level;
      check.reason = d.reason;
    }
    if (reaches) check_below(op, op.path, op.op, rules, &check);
    out.push_back(std::move(check));
  }
  return out;
}

std::optional<std::vector<std::string>> shell_glob_in(std::string_view pattern,
                                                      const std::vector<std::string>& paths) {
  Result<GlobPattern> glob = GlobPattern::compile(pattern);
  if (!glob.ok()) return std::nullopt;
  std::vector<std::string> out;
  for (const std::string& p : paths) {
    if (glob->matches(p)) out.push_back(p);
  }
  return out;
}

doc::PermissionDecision strictest_decision(const std::vector<ShellOpCheck>& checks) {
  PermissionDecision out = PermissionDecision::kAllowed;
  for (const ShellOpCheck& c : checks) {
    if (strictness(c.decision) > strictness(out)) out = c.decision;
  }
  return out;
}

}  // namespace weft::source
