// Shell hooks (seed 000, "Shell Tool Integration"): what shell_exec checks
// before a command runs and compares after it ran, independent of how it
// runs. Enforcement levels, the `[shell]` table of weft.toml, the plug for the
// command predictor (shell_predict.h checks its predictions), the check of a
// command line, the rule check of observed changes, the paths a sandbox binds
// read-only, and the metadata snapshots (a FileMetaIndex kept current by the paths a
// watcher reports, or a full walk without one).
//
//   [shell]
//   enforcement = "strict"   # strict | warned | audit | none
//   network = false          # the command may use the network
//
// Levels (pre-hook / post-hook):
//   strict  predicted violations refused (those reached only through a tree
//           or glob operation, and those a rule escalates, wait for a
//           person's approval); read_only paths bound read-only in the
//           sandbox; a violation that got through anyway is reverted
//   warned  warns (violations and unpredictable constructs) and runs /
//           reports violations
//   audit   logs only / logs only
//   none    skipped / skipped (blocks are still reconciled by the watcher)
//
// Thread safety: the free functions are pure or do their own I/O and are
// safe from any thread; a FileMetaIndex is not thread-safe (its owner locks).
#ifndef WEFT_SOURCE_SHELL_HOOKS_H_
#define WEFT_SOURCE_SHELL_HOOKS_H_

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "weft/base/status.h"
#include "weft/source/rules.h"
#include "weft/source/shell_predict.h"
#include "weft/source/watcher.h"

namespace weft::source {

enum class Enforcement : uint8_t { kStrict, kWarned, kAudit, kNone };
std::string_view enforcement_name(Enforcement level);
// Errors: kInvalidArgument listing the names.
Result<Enforcement> parse_enforcement(std::string_view name);

// weft.toml's [shell] table (other keys in it, e.g. `commands`, are left to
// their readers).
struct ShellSettings {
  std::optional<Enforcement> enforcement;  // unset: the server's default
  bool network = false;
};
// Errors: kInvalidArgument "weft.toml:LINE: ..." for a wrong type or level.
Result<ShellSettings> parse_shell_settings(std::string_view toml_text,
                                           std::string_view source_name = kConfigFileName);
// Reads <root>/weft.toml (defaults when absent); kUnavailable when unreadable.
Result<ShellSettings> load_shell_settings(const std::string& root);

// ---- the predictor's plug
// What shell_exec asks before a command runs: predict_shell (shell_predict.h)
// unless a test injects another. Must not throw; called on the tool's thread.
using ShellPredictor =
    std::function<Result<ShellPrediction>(std::string_view command, const ShellOptions& options)>;

// ---- a command line, before anything runs
inline constexpr size_t kMaxCommandBytes = 256 * 1024;
// kInvalidArgument, saying what to fix, for an empty line, one over
// kMaxCommandBytes, a NUL byte, invalid UTF-8, or an unbalanced quote
// (', ", `) or an unterminated escape, as sh would read it.
Status check_command_line(std::string_view command);

// ---- rules applied to changes
struct ShellViolation {
  std::string path;
  FileOp op = FileOp::kOverwrite;
  std::string rule;  // what decided it, as RuleDecision::reason words it
  bool needs_approval = false;  // the rule asks for a person rather than denies
};
std::string describe_violation(const ShellViolation& v);

// What a command changed, sorted by path.
struct ShellChanges {
  std::vector<std::string> created;
  std::vector<std::string> modified;
  std::vector<std::string> deleted;
  bool empty() const { return created.empty() && modified.empty() && deleted.empty(); }
};
// The changes the rules do not allow: created as kCreate, modified as
// kOverwrite, deleted as kDelete.
std::vector<ShellViolation> check_changes(const ShellChanges& changes,
                                          const WorkspaceRules& rules);

// ---- what a sandbox can protect
struct Protection {
  // Root-relative paths to bind read-only: whole directories when a rule
  // protects everything under them, else each existing protected file.
  std::vector<std::string> read_only;
  // Protected paths a bind cannot cover: a rule's files that do not exist
  // yet (a glob), each "glob (rule N)"; changes there are only caught after.
  std::vector<std::string> not_protected;
};
// Whether the rules keep an agent from changing `path` in place (overwrite,
// append or delete not simply allowed): such a path is bound read-only.
bool is_protected(const WorkspaceRules& rules, std::string_view path);

// ---- metadata snapshots
struct FileMeta {
  int64_t size = 0;
  int64_t mtime_ns = 0;
  uint64_t inode = 0;
  std::string hash;  // content_hash, "" until computed
  uint64_t links = 1;  // st_nlink: another name of the same file may change it
  bool operator==(const FileMeta& o) const {
    return size == o.size && mtime_ns == o.mtime_ns && inode == o.inode;
  }
};
// lstat of root/path: nullopt when absent or not a regular file.
std::optional<FileMeta> stat_meta(const std::string& root, const std::string& path);

// The regular files under a root with their metadata. Filled by one walk,
// then kept current by refresh() with the paths a watcher reports, so a
// command's before and after cost only what it touched.
class FileMetaIndex {
 public:
  using Ignored = std::function<bool(const std::string& path, bool is_dir)>;
  FileMetaIndex(std::string root, Ignored ignored);

  // Walks the whole tree (again). kUnavailable when the root cannot be read.
  // Without a watcher, build() before a command and update({"."}) after it
  // compare two walks.
  Status build();
  bool built() const { return built_; }
  // Applies changes as a Watcher reports them: each path restatted (a
  // directory walked, or everything under it dropped), kRescan rebuilds.
  void refresh(const std::vector<FileChange>& changes);
  // Compares what the index holds for `paths` (and everything under those
  // that are directories) with the disk now, updates the index and returns
  // the differences. Hashes are computed where size, mtime or inode moved;
  // a file whose bytes turn out equal to the known hash is unchanged. A
  // file with several hard links brings the other indexed names of its
  // inode into the comparison (a write through one name changes them all,
  // and a watcher only reports the name written through).
  ShellChanges update(const std::vector<std::string>& paths);
  const std::map<std::string, FileMeta>& files() const { return files_; }

  // The read-only binds for `rules` over the files indexed (cached until the
  // rules or the files change).
  Protection protection(const WorkspaceRules& rules);

 private:
  void walk(const std::string& dir, std::map<std::string, FileMeta>* out) const;
  void drop_under(const std::string& dir);
  std::string root_;
  Ignored ignored_;
  bool built_ = false;
  std::map<std::string, FileMeta> files_;
  std::string protection_key_;          // the rules protection_ was made for
  uint64_t generation_ = 0;             // bumped when the set of files changes
  uint64_t protection_generation_ = ~0ull;
  Protection protection_;
};

}  // namespace weft::source

#endif  // WEFT_SOURCE_SHELL_HOOKS_H_
