// The shell pre-hook: predicts which workspace files a shell command will
// change before it runs (seed 000, "Shell Tool Integration"), and checks each
// predicted operation against the workspace's rules (rules.h).
//
// predict_shell() parses the command with a POSIX sh grammar (the subset bash
// users write: quoting, $var, ${...}, $(...), backticks, $((...)), pipelines,
// lists, ( ), { }, if/for/while/until/case, functions, [[ ]], redirections
// with fd numbers, here-documents, comments) and walks it:
//   - redirections `>`, `>|`, `>>`, `2>`, `&>`, `<>` write their target;
//   - a table of commands maps arguments to operations (rm, mv, cp, touch,
//     mkdir, rmdir, tee, sed -i, truncate, ln, chmod, install, patch, dd,
//     tar, unzip, curl -o, wget, gzip, rsync, formatters, git checkout /
//     restore / reset --hard / clean / rm / mv / stash / pull ..., find
//     -delete / -exec, ...), extended by weft.toml's [shell.commands.NAME]
//     tables (ShellCommandRule in rules.h; docs/rules.md);
//   - `cd DIR` (pushd, popd) changes the directory of the commands after it in
//     the same list; NAME=value and `for x in LITERALS` are tracked; brace
//     expansion and `~` are done; globs are resolved through a callback;
//   - `sh -c 'LITERAL'`, `eval 'LITERAL'` and `find -exec` are predicted
//     from their inner command.
// What it cannot predict is reported as an Unpredictable construct (eval of a
// non-literal, $(...) or a variable in a path, inline interpreters, xargs,
// build tools, scripts, unknown commands, unresolved globs, cd to an unknown
// directory), never silently dropped. The predictor touches no disk: the
// caller passes callbacks for globs and file kinds.
//
// Paths are lexical: `..` is folded without following symlinks.
//
// Thread safety: free functions on values; a ShellOptions' callbacks are
// called on the calling thread only.
#ifndef WEFT_SOURCE_SHELL_PREDICT_H_
#define WEFT_SOURCE_SHELL_PREDICT_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "weft/base/status.h"
#include "weft/doc/permission.h"
#include "weft/source/rules.h"

namespace weft::source {

// The largest command predict_shell() accepts.
inline constexpr size_t kMaxShellCommandBytes = 64 * 1024;

// Byte offsets [begin, end) into the command text.
struct ShellSpan {
  uint32_t begin = 0;
  uint32_t end = 0;
};

// One predicted operation on one path.
struct PredictedOp {
  // Inside the root: root-relative and normalised ("src/a.cc"; "." is the
  // root itself). Outside: the absolute normalised path ("/tmp/x").
  std::string path;
  bool inside_root = true;
  // kRead, kCreate (mkdir, touch, a write to a path the kind callback says is
  // missing), kAppend (>>, tee -a), kOverwrite (>, sed -i, cp's target, ...),
  // kDelete (rm, find -delete), kMove (mv; `target` is the destination).
  FileOp op = FileOp::kOverwrite;
  std::string target;          // kMove only: the destination, as `path`
  bool target_inside_root = true;
  // The operation reaches everything below `path` too (rm -r, cp -r, chmod -R,
  // git checkout BRANCH, tar -x into a directory, find -delete, ...). Dropped
  // when the kind callback says the path is a file.
  bool tree = false;
  // `path` is still a glob pattern (no glob callback, or it failed): the
  // operation reaches the files it matches.
  bool pattern = false;
  bool redirect = false;       // from a redirection rather than an argument
  std::string command;         // argv[0] ("rm", "git checkout", "" for a bare redirection)
  ShellSpan span;              // the word or redirection it comes from
};

// What kind of construct the predictor could not see through.
enum class ShellConstruct : uint8_t {
  kEval,                  // eval / trap / source with a non-literal argument
  kShellC,                // sh -c / bash -c with a non-literal command, or a shell reading stdin
  kCommandSubstitution,   // $(...) or `...` in a path or a command name
  kInlineInterpreter,     // python -c, node -e, perl -e, ruby -e, awk writing files, ...
  kXargs,                 // xargs running a command that changes files
  kVariable,              // $var, ${...}, ~user, $((...)) of unknown value in a path or command name
  kGlobUnresolved,        // a glob the callback did not resolve
  kCdUnknown,             // a relative path used after cd to an unknown directory
  kBuildTool,             // make, npm, cargo, pytest, pip, ...: writes where its config says
  kScript,                // runs a program file (./run.sh, python x.py, bash x.sh, source f)
  kUnknownCommand,        // a command neither the table nor weft.toml describes
  kConfigured,            // a command weft.toml marks `unpredictable = true`
};
std::string_view shell_construct_name(ShellConstruct kind);

struct Unpredictable {
  ShellConstruct kind = ShellConstruct::kUnknownCommand;
  std::string text;     // the source text of the construct (the word, the command)
  std::string command;  // the command it belongs to
  ShellSpan span;
};

struct ShellPrediction {
  std::vector<PredictedOp> ops;     // in command order, exact duplicates dropped
  std::vector<Unpredictable> flags;
  // More than kMaxShellOps ops or kMaxShellFlags flags: the rest were dropped.
  bool truncated = false;
  bool predictable() const { return flags.empty() && !truncated; }
};
inline constexpr size_t kMaxShellOps = 4096;
inline constexpr size_t kMaxShellFlags = 256;

// What a path is on disk, as the caller sees it.
enum class ShellPathKind : uint8_t { kUnknown, kMissing, kFile, kDirectory };

struct ShellOptions {
  // The workspace root as the command sees it: an absolute path ("/ws").
  std::string root;
  // The command's working directory: root-relative ("" = the root, "src"),
  // or absolute (inside the root or not).
  std::string cwd;
  // $HOME and `~`; empty: unknown (a path using them is flagged kVariable).
  std::string home;
  // Resolves a glob. `pattern` is root-relative ("src/*.cc", the shell's
  // syntax: * ? [...] and \x for a literal x; braces already expanded);
  // returns the matching root-relative paths, or nullopt when it cannot say
  // (then the op keeps the pattern, `pattern` = true, flagged kGlobUnresolved).
  // An empty list keeps the word as written, as the shell does. Unset: every
  // glob is unresolved. Globs outside the root are never passed.
  std::function<std::optional<std::vector<std::string>>(std::string_view pattern)> glob;
  // What a root-relative path is. Lets `>` to a missing file be a create,
  // `cp a dir` land in dir/a, and a tree op on a file drop `tree`. Unset: unknown.
  std::function<ShellPathKind(std::string_view path)> kind;
  // weft.toml's [shell.commands.NAME] tables (WorkspaceRules::shell_commands());
  // they replace the built-in entries of the same name. May be null.
  const std::vector<ShellCommandRule>* commands = nullptr;
};

// Predicts the file operations of `command`.
// Errors (nothing is predicted; the caller must not run the command):
// kInvalidArgument for a command over kMaxShellCommandBytes, one containing a
// NUL byte, a relative options.root; unbalanced quotes, an unterminated
// $( ` ${ or here-document, a missing fi/done/esac/}/), an unexpected token,
// or nesting deeper than 64 levels, each naming the line, column and byte.
// Bytes that are not UTF-8 are taken as they are. An empty (or all-comment)
// command predicts nothing.
Result<ShellPrediction> predict_shell(std::string_view command, const ShellOptions& options);

// One predicted op checked against the rules.
struct ShellOpCheck {
  size_t op_index = 0;  // into ShellPrediction::ops
  std::string path;
  FileOp op = FileOp::kOverwrite;
  doc::PermissionDecision decision = doc::PermissionDecision::kAllowed;
  doc::MemoryPermission level = doc::MemoryPermission::kReadWrite;
  // What decided it: RuleDecision::reason, "... for a file under DIR" when a
  // rule reached through a tree op decided, or "outside the workspace".
  std::string reason;
};

struct ShellCheckOptions {
  // The decision for writes outside the root (weft.toml does not govern them;
  // the sandbox confines them).
  doc::PermissionDecision outside_root = doc::PermissionDecision::kAllowed;
};

// A ShellOptions::glob answer from a list of root-relative paths (files and
// directories): those `pattern` matches (GlobPattern syntax, which covers the
// shell's), in list order; nullopt for a pattern GlobPattern refuses. For
// callers that already hold a listing of the workspace.
std::optional<std::vector<std::string>> shell_glob_in(std::string_view pattern,
                                                      const std::vector<std::string>& paths);

// Checks each op with WorkspaceRules::decide (decide_move for kMove). A tree
// op (or a pattern) is decided for its path and for every rule that could
// match a file below it (GlobPattern::could_match_below), the strictest
// answer winning: `rm -r docs` is checked against "docs/**" and "docs/*.md".
// Reads are always allowed. One entry per op, in order.
std::vector<ShellOpCheck> check_prediction(const ShellPrediction& prediction,
                                           const WorkspaceRules& rules,
                                           const ShellCheckOptions& options = {});

// The strictest decision of `checks` (kAllowed when empty).
doc::PermissionDecision strictest_decision(const std::vector<ShellOpCheck>& checks);

}  // namespace weft::source

#endif  // WEFT_SOURCE_SHELL_PREDICT_H_
