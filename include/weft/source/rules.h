// WorkspaceRules: what `weft.toml` at a workspace root says about its files,
// the permission level of each path (seed 000's PermissionRule list) and the
// operations that need a person's approval.
//
//   [permissions]
//   default = "read_write"   # read_only | human | partner | append | read_write | admin
//   rules = [
//     { glob = "vendor/**", level = "read_only" },
//     { glob = "docs/**",   level = "human", escalate = ["delete", "overwrite"] },
//   ]
//
//   [shell.commands.protoc]          # the shell pre-hook's command table
//   operands = "read"                # what it does to its operands
//   writes = ["-o", "--descriptor_set_out"]
//
// The first rule whose glob matches the root-relative path wins; no match
// gives `default` (read_write when absent). Levels and operations are those
// of doc::Permission's table (permission_decision), with two rules of files:
//   - deleting a file is an overwrite of its whole content (its block keeps
//     the history), unless the rule escalates "delete";
//   - an operation the rule lists in `escalate` needs approval where the
//     table would allow it (a denial stays a denial).
// The configuration itself (weft.toml, .weftignore) is never changed by an
// agent, whatever the rules say: decide() denies it.
//
// Thread safety: immutable after parse(); share freely.
#ifndef WEFT_SOURCE_RULES_H_
#define WEFT_SOURCE_RULES_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "weft/base/glob.h"
#include "weft/base/status.h"
#include "weft/doc/permission.h"

namespace weft::source {

// The configuration's file name at the root, and the ignore file's.
inline constexpr std::string_view kConfigFileName = "weft.toml";
inline constexpr std::string_view kIgnoreFileName = ".weftignore";

// What an agent does to a file (the escalate list's words).
enum class FileOp : uint8_t {
  kRead,
  kCreate,     // a new file ("create"; decided as an append)
  kAppend,     // adds to the end ("append")
  kOverwrite,  // changes existing content ("overwrite")
  kDelete,     // removes the file ("delete")
  kMove,       // renames it ("move"; decided as delete at the source + create at the target)
};
std::string_view file_op_name(FileOp op);
// Errors: kInvalidArgument listing the names.
Result<FileOp> parse_file_op(std::string_view name);

struct PermissionRule {
  std::string glob;
  GlobPattern pattern;
  doc::MemoryPermission level = doc::MemoryPermission::kReadWrite;
  std::vector<FileOp> escalate;
  int line = 0;  // in weft.toml (0: built in)
};

// The answer for one (path, op).
struct RuleDecision {
  doc::PermissionDecision decision = doc::PermissionDecision::kAllowed;
  doc::MemoryPermission level = doc::MemoryPermission::kReadWrite;
  // What decided it, for messages: `rule 2 (glob "docs/**", line 7)`, `default`,
  // or `weft's own configuration`.
  std::string reason;
};

// weft.toml's [shell.commands.NAME]: how a command's arguments map to file
// operations, for the shell pre-hook (shell_predict.h; docs/rules.md).
struct ShellCommandRule {
  std::string name;                        // argv[0] as typed ("protoc")
  std::optional<FileOp> operands;          // done to each operand; nullopt: nothing
  std::vector<std::string> writes;         // options whose value is a file it overwrites
  std::vector<std::string> value_options;  // other options that take a value
  int skip_operands = 0;                   // leading operands that are not paths
  bool tree = false;                       // operands are directory trees (as rm -r)
  bool unpredictable = false;              // every use is flagged
  int line = 0;                            // in weft.toml
};

class WorkspaceRules {
 public:
  // No weft.toml: everything read_write, no escalation.
  WorkspaceRules();

  // Parses weft.toml's text. Unknown tables and keys outside [permissions] and
  // [shell] are ignored (other tools may share the file); inside them, an unknown key, a
  // level or op name that does not exist, a bad glob or a wrong type is
  // kInvalidArgument "weft.toml:LINE: ..." naming the line and what to write.
  // `source_name` replaces "weft.toml" in messages.
  static Result<WorkspaceRules> parse(std::string_view toml_text,
                                      std::string_view source_name = kConfigFileName);
  // Reads <root>/weft.toml: the defaults when it does not exist; parse errors
  // as above; kUnavailable when it exists but cannot be read.
  static Result<WorkspaceRules> load(const std::string& root);

  // The level of a root-relative path ("a/b.txt").
  doc::MemoryPermission permission_for(std::string_view path) const;
  // Whether an agent may do `op` on `path`. kCreate is decided as an append;
  // kDelete as an overwrite, needing approval when the rule escalates
  // "overwrite" or "delete"; kMove as kDelete, also escalated by "move".
  // weft.toml and .weftignore are denied for every op but kRead.
  RuleDecision decide(std::string_view path, FileOp op) const;
  // A move of `from` to `to`: the stricter of decide(from, kMove) and
  // decide(to, kCreate), the latter also escalated by the target rule's "move".
  RuleDecision decide_move(std::string_view from, std::string_view to) const;

  doc::MemoryPermission default_level() const { return default_level_; }
  const std::vector<PermissionRule>& rules() const { return rules_; }
  // [shell.commands.NAME] tables, in name order.
  const std::vector<ShellCommandRule>& shell_commands() const { return shell_commands_; }

 private:
  doc::MemoryPermission default_level_ = doc::MemoryPermission::kReadWrite;
  std::vector<PermissionRule> rules_;
  std::vector<ShellCommandRule> shell_commands_;
};

// True for the paths no agent may change: weft.toml and .weftignore at the root.
bool is_configuration_path(std::string_view path);

}  // namespace weft::source

#endif  // WEFT_SOURCE_RULES_H_
