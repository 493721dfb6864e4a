// The shell pre-hook's command table: how each command's arguments map to
// file operations. Most entries are data (which options take values, which
// write a file, what is done to the operands); the commands with a grammar of
// their own (git, find, tar, sed, cp/mv, interpreters, wrappers, ...) have a
// handler. weft.toml's [shell.commands.NAME] tables take precedence.
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "source/shell_predict_internal.h"

namespace weft::source::shell {
namespace {

// "|a|b|c|" lists: is `key` one of them?
bool in_list(std::string_view list, std::string_view key) {
  if (key.empty() || list.size() < 2) return false;
  size_t i = 0;
  while (i < list.size()) {
    size_t end = list.find('|', i + 1);
    if (end == std::string_view::npos) break;
    if (list.substr(i + 1, end - i - 1) == key) return true;
    i = end;
  }
  return false;
}

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}
bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

std::string basename_of(std::string_view path) {
  while (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
  size_t slash = path.rfind('/');
  return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

// The options a command takes.
struct OptSpec {
  std::string_view value_short;  // letters of short options taking a value ("tS")
  std::string_view value_long;   // "|--mode|-name|": options (any dash form) taking a value
  std::string_view writes;       // "|-o|--output|": options whose value is a file written
};

struct Parsed {
  std::vector<size_t> operands;  // indices into argv
  size_t before_dashdash = static_cast<size_t>(-1);  // operands before "--"
  std::vector<Field> writes;     // values of `writes` options
  std::vector<std::string> write_opts;  // the option of each
  std::string seen = "|";        // "|-r|--recursive|"
  size_t first_operand = 0;      // with stop_at_operand: where the operands start
  bool has(std::string_view list) const {
    size_t i = 0;
    while (i + 1 < list.size()) {
      size_t end = list.find('|', i + 1);
      if (end == std::string_view::npos) break;
      std::string_view key = list.substr(i + 1, end - i - 1);
      // seen holds "|key|" entries.
      size_t at = key.empty() ? std::string::npos : seen.find(key);
      while (at != std::string::npos) {
        if (seen[at - 1] == '|' && at + key.size() < seen.size() && seen[at + key.size()] == '|') {
          return true;
        }
        at = seen.find(key, at + 1);
      }
      i = end;
    }
    return false;
  }
  void see(std::string_view opt) {
    seen += opt;
    seen += '|';
  }
};

Parsed parse_options(const std::vector<Field>& argv, size_t from, const OptSpec& spec,
                     bool stop_at_operand = false) {
  Parsed p;
  bool after_dashdash = false;
  for (size_t i = from; i < argv.size(); ++i) {
    const Field& a = argv[i];
    const std::string& v = a.value;
    if (!a.resolved || after_dashdash || v.size() < 2 || v[0] != '-') {
      if (stop_at_operand) {
        p.first_operand = i;
        return p;
      }
      p.operands.push_back(i);
      continue;
    }
    if (v == "--") {
      after_dashdash = true;
      p.before_dashdash = p.operands.size();
      if (stop_at_operand) {
        p.first_operand = i + 1;
        return p;
      }
      continue;
    }
    size_t eq = v.find('=');
    std::string_view key = std::string_view(v).substr(0, eq);
    bool has_eq = eq != std::string::npos;
    if (in_list(spec.writes, key)) {
      p.see(key);
      if (has_eq) {
        Field w = a;
        w.value = v.substr(eq + 1);
        w.glob = false;
        p.writes.push_back(std::move(w));
        p.write_opts.emplace_back(key);
      } else if (i + 1 < argv.size()) {
        p.writes.push_back(argv[++i]);
        p.write_opts.emplace_back(key);
      }
      continue;
    }
    if (in_list(spec.value_long, key)) {
      p.see(key);
      if (!has_eq) ++i;
      continue;
    }
    if (v[1] == '-') {
      p.see(key);
      continue;
    }
    // A cluster of short options: -rf, -ofile, -n5.
    for (size_t j = 1; j < v.size(); ++j) {
      char opt[3] = {'-', v[j], '\0'};
      std::string_view short_opt(opt, 2);
      p.see(short_opt);
      if (in_list(spec.writes, short_opt)) {
        if (j + 1 < v.size()) {
          Field w = a;
          w.value = v.substr(j + 1);
          w.glob = false;
          p.writes.push_back(std::move(w));
        } else if (i + 1 < argv.size()) {
          p.writes.push_back(argv[++i]);
        }
        p.write_opts.emplace_back(short_opt);
        break;
      }
      if (spec.value_short.find(v[j]) != std::string_view::npos) {
        if (j + 1 == v.size()) ++i;
        break;
      }
    }
  }
  p.first_operand = argv.size();
  return p;
}

enum class Kind : uint8_t {
  kReadOnly,   // changes no file through its arguments
  kArgs,       // operands and options as the entry says
  kBuild,      // a build tool or package manager (flagged) or a runner (uv run X)
  kWrapper,    // runs the command after its options (sudo, env, timeout, ...)
  kCd, kPushd, kPopd, kExport, kRead, kUnset, kEval, kSource, kTrap, kExec,
  kCopy, kMove, kInstall, kLn, kChmod, kChown, kSed, kPerl, kAwk, kInterpreter, kShell,
  kFind, kXargs, kGit, kTar, kCompress, kDownload, kDd, kRsync, kPatch, kUnzip, kCompiler,
  kEnv,
};

constexpr int8_t kNoOp = -1;
constexpr int8_t op_code(FileOp op) { return static_cast<int8_t>(op); }

struct Entry {
  std::string_view name;
  Kind kind = Kind::kReadOnly;
  int8_t op = kNoOp;             // kArgs: done to each operand
  OptSpec opts;
  std::string_view when;         // operands changed only when one of these is seen
  std::string_view unless;       // ... and none of these
  std::string_view tree_when;    // the operands are trees when one of these is seen ("|*|": always)
  std::string_view alt_when;     // these options turn `op` into `alt_op`
  int8_t alt_op = kNoOp;
  uint8_t skip = 0;              // leading operands that are not paths
  std::string_view subs;         // kBuild: read-only subcommands; kArgs: subcommand enabling `op`
};

constexpr int8_t kCreate = op_code(FileOp::kCreate);
constexpr int8_t kAppend = op_code(FileOp::kAppend);
constexpr int8_t kOverwrite = op_code(FileOp::kOverwrite);
constexpr int8_t kDelete = op_code(FileOp::kDelete);

constexpr std::string_view kHelpOnly = "|--version|-v|-V|--help|-h|help|version|";

// Entries name only the fields they use; the rest keep their defaults.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
const Entry kEntries[] = {
    // Files by operand.
    {.name = "rm", .kind = Kind::kArgs, .op = kDelete, .tree_when = "|-r|-R|--recursive|"},
    {.name = "rmdir", .kind = Kind::kArgs, .op = kDelete},
    {.name = "unlink", .kind = Kind::kArgs, .op = kDelete},
    {.name = "shred", .kind = Kind::kArgs, .op = kOverwrite,
     .opts = {.value_short = "ns", .value_long = "|--iterations|--size|--random-source|"},
     .alt_when = "|-u|--remove|", .alt_op = kDelete},
    {.name = "touch", .kind = Kind::kArgs, .op = kCreate,
     .opts = {.value_short = "dtr", .value_long = "|--date|--reference|--time|"}},
    {.name = "mkdir", .kind = Kind::kArgs, .op = kCreate,
     .opts = {.value_short = "m", .value_long = "|--mode|--context|"}},
    {.name = "mkfifo", .kind = Kind::kArgs, .op = kCreate, .opts = {.value_short = "m"}},
    {.name = "mktemp", .kind = Kind::kArgs, .op = kCreate,
     .opts = {.value_short = "p", .value_long = "|--tmpdir|--suffix|"}},
    {.name = "tee", .kind = Kind::kArgs, .op = kOverwrite, .alt_when = "|-a|--append|",
     .alt_op = kAppend},
    {.name = "truncate", .kind = Kind::kArgs, .op = kOverwrite,
     .opts = {.value_short = "sr", .value_long = "|--size|--reference|"}},
    {.name = "uniq", .kind = Kind::kArgs, .op = kOverwrite,
     .opts = {.value_short = "fsw",
              .value_long = "|--skip-fields|--skip-chars|--check-chars|"},
     .skip = 1},
    {.name = "xxd", .kind = Kind::kArgs, .op = kOverwrite,
     .opts = {.value_short = "cglsoC"}, .skip = 1},
    {.name = "split", .kind = Kind::kArgs, .op = kCreate,
     .opts = {.value_short = "lbCna", .value_long = "|--lines|--bytes|--line-bytes|--number|"
                                                  "--suffix-length|--additional-suffix|"},
     .skip = 1},
    {.name = "sort", .kind = Kind::kArgs,
     .opts = {.value_short = "kStT",
              .value_long = "|--key|--field-separator|--buffer-size|--temporary-directory|"
                            "--parallel|--files0-from|--batch-size|--compress-program|",
              .writes = "|-o|--output|"}},
    {.name = "iconv", .kind = Kind::kArgs,
     .opts = {.value_short = "ft", .value_long = "|--from-code|--to-code|",
              .writes = "|-o|--output|"}},
    {.name = "openssl", .kind = Kind::kArgs,
     .opts = {.value_long = "|-in|-days|-newkey|-subj|-config|-key|-passin|-passout|-inkey|"
                            "-CA|-CAkey|-extfile|-extensions|",
              .writes = "|-out|-keyout|"}},
    {.name = "ssh-keygen", .kind = Kind::kArgs,
     .opts = {.value_short = "tbCNnOIZaE", .writes = "|-f|"}},
    // Formatters and fixers: change their operands (trees) only in write mode.
    {.name = "black", .kind = Kind::kArgs, .op = kOverwrite,
     .opts = {.value_short = "lltS", .value_long = "|--line-length|--target-version|--config|"
                                                  "--include|--exclude|--extend-exclude|"},
     .unless = "|--check|--diff|", .tree_when = "|*|"},
    {.name = "isort", .kind = Kind::kArgs, .op = kOverwrite,
     .opts = {.value_long = "|--profile|--settings-path|--line-length|-l|"},
     .unless = "|--check-only|--check|-c|--diff|", .tree_when = "|*|"},
    {.name = "autopep8", .kind = Kind::kArgs, .op = kOverwrite,
     .when = "|-i|--in-place|", .tree_when = "|-r|--recursive|"},
    {.name = "yapf", .kind = Kind::kArgs, .op = kOverwrite, .when = "|-i|--in-place|",
     .tree_when = "|-r|--recursive|"},
    {.name = "rustfmt", .kind = Kind::kArgs, .op = kOverwrite,
     .opts = {.value_long = "|--edition|--config-path|--config|"}, .unless = "|--check|"},
    {.name = "gofmt", .kind = Kind::kArgs, .op = kOverwrite, .when = "|-w|",
     .tree_when = "|*|"},
    {.name = "goimports", .kind = Kind::kArgs, .op = kOverwrite, .when = "|-w|",
     .tree_when = "|*|"},
    {.name = "clang-format", .kind = Kind::kArgs, .op = kOverwrite,
     .opts = {.value_long = "|--style|-style|--assume-filename|"}, .when = "|-i|"},
    {.name = "shfmt", .kind = Kind::kArgs, .op = kOverwrite,
     .opts = {.value_short = "i", .value_long = "|--indent|"}, .when = "|-w|--write|",
     .tree_when = "|*|"},
    {.name = "prettier", .kind = Kind::kArgs, .op = kOverwrite,
     .opts = {.value_long = "|--config|--ignore-path|--parser|--plugin|--print-width|"
                            "--tab-width|--trailing-comma|--end-of-line|"},
     .when = "|--write|-w|", .tree_when = "|*|"},
    {.name = "eslint", .kind = Kind::kArgs, .op = kOverwrite,
     .opts = {.value_short = "c", .value_long = "|--config|--ext|--rule|--format|"
                                                "--ignore-path|--resolve-plugins-relative-to|",
              .writes = "|-o|--output-file|"},
     .when = "|--fix|", .tree_when = "|*|"},
    {.name = "ruff", .kind = Kind::kArgs, .op = kOverwrite,
     .opts = {.value_long = "|--config|--select|--ignore|--extend-select|--line-length|"
                            "--target-version|--exclude|--output-format|"},
     .when = "|--fix|", .unless = "|--check|--diff|", .tree_when = "|*|", .skip = 1,
     .subs = "format"},
    {.name = "yq", .kind = Kind::kArgs, .op = kOverwrite, .when = "|-i|--inplace|", .skip = 1},
    // Handlers.
    {.name = "cp", .kind = Kind::kCopy},
    {.name = "mv", .kind = Kind::kMove},
    {.name = "install", .kind = Kind::kInstall},
    {.name = "ln", .kind = Kind::kLn},
    {.name = "chmod", .kind = Kind::kChmod},
    {.name = "chown", .kind = Kind::kChown},
    {.name = "chgrp", .kind = Kind::kChown},
    {.name = "sed", .kind = Kind::kSed},
    {.name = "gsed", .kind = Kind::kSed},
    {.name = "perl", .kind = Kind::kPerl},
    {.name = "awk", .kind = Kind::kAwk},
    {.name = "gawk", .kind = Kind::kAwk},
    {.name = "mawk", .kind = Kind::kAwk},
    {.name = "nawk", .kind = Kind::kAwk},
    {.name = "python", .kind = Kind::kInterpreter},
    {.name = "python3", .kind = Kind::kInterpreter},
    {.name = "python2", .kind = Kind::kInterpreter},
    {.name = "pypy3", .kind = Kind::kInterpreter},
    {.name = "node", .kind = Kind::kInterpreter},
    {.name = "nodejs", .kind = Kind::kInterpreter},
    {.name = "ruby", .kind = Kind::kInterpreter},
    {.name = "php", .kind = Kind::kInterpreter},
    {.name = "lua", .kind = Kind::kInterpreter},
    {.name = "Rscript", .kind = Kind::kInterpreter},
    {.name = "sh", .kind = Kind::kShell},
    {.name = "bash", .kind = Kind::kShell},
    {.name = "zsh", .kind = Kind::kShell},
    {.name = "dash", .kind = Kind::kShell},
    {.name = "ksh", .kind = Kind::kShell},
    {.name = "ash", .kind = Kind::kShell},
    {.name = "fish", .kind = Kind::kShell},
    {.name = "find", .kind = Kind::kFind},
    {.name = "xargs", .kind = Kind::kXargs},
    {.name = "parallel", .kind = Kind::kXargs},
    {.name = "git", .kind = Kind::kGit},
    {.name = "tar", .kind = Kind::kTar},
    {.name = "bsdtar", .kind = Kind::kTar},
    {.name = "gzip", .kind = Kind::kCompress},
    {.name = "gunzip", .kind = Kind::kCompress},
    {.name = "bzip2", .kind = Kind::kCompress},
    {.name = "bunzip2", .kind = Kind::kCompress},
    {.name = "xz", .kind = Kind::kCompress},
    {.name = "unxz", .kind = Kind::kCompress},
    {.name = "lzma", .kind = Kind::kCompress},
    {.name = "unlzma", .kind = Kind::kCompress},
    {.name = "zstd", .kind = Kind::kCompress},
    {.name = "unzstd", .kind = Kind::kCompress},
    {.name = "lz4", .kind = Kind::kCompress},
    {.name = "compress", .kind = Kind::kCompress},
    {.name = "curl", .kind = Kind::kDownload},
    {.name = "wget", .kind = Kind::kDownload},
    {.name = "dd", .kind = Kind::kDd},
    {.name = "rsync", .kind = Kind::kRsync},
    {.name = "scp", .kind = Kind::kRsync},
    {.name = "patch", .kind = Kind::kPatch},
    {.name = "unzip", .kind = Kind::kUnzip},
    {.name = "zip", .kind = Kind::kUnzip},
    {.name = "gcc", .kind = Kind::kCompiler},
    {.name = "g++", .kind = Kind::kCompiler},
    {.name = "cc", .kind = Kind::kCompiler},
    {.name = "c++", .kind = Kind::kCompiler},
    {.name = "clang", .kind = Kind::kCompiler},
    {.name = "clang++", .kind = Kind::kCompiler},
    {.name = "cd", .kind = Kind::kCd},
    {.name = "pushd", .kind = Kind::kPushd},
    {.name = "popd", .kind = Kind::kPopd},
    {.name = "export", .kind = Kind::kExport},
    {.name = "declare", .kind = Kind::kExport},
    {.name = "typeset", .kind = Kind::kExport},
    {.name = "local", .kind = Kind::kExport},
    {.name = "readonly", .kind = Kind::kExport},
    {.name = "read", .kind = Kind::kRead},
    {.name = "mapfile", .kind = Kind::kRead},
    {.name = "readarray", .kind = Kind::kRead},
    {.name = "unset", .kind = Kind::kUnset},
    {.name = "eval", .kind = Kind::kEval},
    {.name = "source", .kind = Kind::kSource},
    {.name = ".", .kind = Kind::kSource},
    {.name = "trap", .kind = Kind::kTrap},
    {.name = "exec", .kind = Kind::kExec},
    {.name = "env", .kind = Kind::kEnv},
    // Wrappers: the command after the options (and `skip` operands) runs.
    {.name = "sudo", .kind = Kind::kWrapper,
     .opts = {.value_short = "ugCDhprtUT",
              .value_long = "|--user|--group|--chdir|--host|--prompt|--role|--type|"
                            "--other-user|--close-from|--command-timeout|"}},
    {.name = "doas", .kind = Kind::kWrapper, .opts = {.value_short = "uC"}},
    {.name = "nice", .kind = Kind::kWrapper,
     .opts = {.value_short = "n", .value_long = "|--adjustment|"}},
    {.name = "nohup", .kind = Kind::kWrapper},
    {.name = "time", .kind = Kind::kWrapper,
     .opts = {.value_short = "f", .value_long = "|--format|", .writes = "|-o|--output|"}},
    {.name = "stdbuf", .kind = Kind::kWrapper,
     .opts = {.value_short = "ioe", .value_long = "|--input|--output|--error|"}},
    {.name = "ionice", .kind = Kind::kWrapper,
     .opts = {.value_short = "cnpPu", .value_long = "|--class|--classdata|--pid|--pgid|--uid|"}},
    {.name = "timeout", .kind = Kind::kWrapper,
     .opts = {.value_short = "sk", .value_long = "|--signal|--kill-after|"}, .skip = 1},
    {.name = "chronic", .kind = Kind::kWrapper},
    {.name = "unbuffer", .kind = Kind::kWrapper},
    {.name = "command", .kind = Kind::kWrapper, .unless = "|-v|-V|"},
    {.name = "builtin", .kind = Kind::kWrapper},
    {.name = "xvfb-run", .kind = Kind::kWrapper,
     .opts = {.value_short = "nsfpe", .value_long = "|--server-num|--server-args|"
                                                    "--auth-file|--error-file|"}},
    {.name = "strace", .kind = Kind::kWrapper,
     .opts = {.value_short = "epsEuIbPS", .writes = "|-o|"}},
    {.name = "flock", .kind = Kind::kWrapper, .opts = {.value_short = "wEn"}, .skip = 1},
    {.name = "watch", .kind = Kind::kWrapper, .opts = {.value_short = "nq"}},
    // Build tools and package managers: their effects are their configuration's.
    {.name = "make", .kind = Kind::kBuild,
     .subs = "|-n|--dry-run|--just-print|--recon|-q|--question|-p|--print-data-base|"},
    {.name = "gmake", .kind = Kind::kBuild, .subs = "|-n|--dry-run|"},
    {.name = "cmake", .kind = Kind::kBuild, .subs = "|--help|"},
    {.name = "ctest", .kind = Kind::kBuild, .subs = "|-N|--show-only|"},
    {.name = "ninja", .kind = Kind::kBuild, .subs = "|-n|-t|"},
    {.name = "meson", .kind = Kind::kBuild, .subs = "|introspect|"},
    {.name = "bazel", .kind = Kind::kBuild, .subs = "|query|info|version|help|"},
    {.name = "npm", .kind = Kind::kBuild,
     .subs = "|ls|list|la|ll|view|v|info|show|outdated|search|help|whoami|ping|explain|why|"
             "prefix|root|bin|fund|doctor|config|get|"},
    {.name = "yarn", .kind = Kind::kBuild, .subs = "|info|list|why|outdated|help|config|"},
    {.name = "pnpm", .kind = Kind::kBuild, .subs = "|ls|list|why|outdated|help|root|bin|"},
    {.name = "pip", .kind = Kind::kBuild,
     .subs = "|list|show|freeze|check|help|config|debug|search|index|inspect|"},
    {.name = "pip3", .kind = Kind::kBuild,
     .subs = "|list|show|freeze|check|help|config|debug|search|index|inspect|"},
    {.name = "pipx", .kind = Kind::kBuild, .subs = "|list|"},
    {.name = "uv", .kind = Kind::kBuild, .subs = "|tree|help|"},
    {.name = "poetry", .kind = Kind::kBuild, .subs = "|show|check|help|"},
    {.name = "pipenv", .kind = Kind::kBuild, .subs = "|graph|"},
    {.name = "conda", .kind = Kind::kBuild, .subs = "|list|info|search|"},
    {.name = "cargo", .kind = Kind::kBuild, .subs = "|metadata|tree|search|help|locate-project|"},
    {.name = "rustup", .kind = Kind::kBuild, .subs = "|show|which|"},
    {.name = "go", .kind = Kind::kBuild, .subs = "|version|env|list|doc|help|"},
    {.name = "dotnet", .kind = Kind::kBuild, .subs = "|--info|--list-sdks|"},
    {.name = "bundle", .kind = Kind::kBuild, .subs = "|list|show|"},
    {.name = "gem", .kind = Kind::kBuild, .subs = "|list|search|"},
    {.name = "composer", .kind = Kind::kBuild, .subs = "|show|"},
    {.name = "tsc", .kind = Kind::kBuild, .subs = "|--noEmit|"},
    {.name = "pytest", .kind = Kind::kBuild, .subs = "|--collect-only|--co|"},
    {.name = "docker", .kind = Kind::kBuild, .subs = "|ps|images|version|info|inspect|logs|"},
    {.name = "podman", .kind = Kind::kBuild, .subs = "|ps|images|version|info|inspect|logs|"},
    {.name = "docker-compose", .kind = Kind::kBuild, .subs = "|ps|logs|config|"},
    {.name = "kubectl", .kind = Kind::kBuild, .subs = "|get|describe|logs|version|"},
    {.name = "terraform", .kind = Kind::kBuild, .subs = "|validate|show|version|"},
    {.name = "apt", .kind = Kind::kBuild, .subs = "|list|search|show|policy|"},
    {.name = "brew", .kind = Kind::kBuild, .subs = "|list|info|search|"},
};
#pragma GCC diagnostic pop

// Build tools, test runners and package managers with no read-only
// subcommand worth naming (the entries above list those that have).
constexpr std::string_view kBuildToolNames =
    "|npx|pnpx|bunx|bun|deno|rustc|gradle|gradlew|mvn|ant|sbt|mix|rake|swift|webpack|vite|"
    "esbuild|rollup|jest|vitest|mocha|py.test|tox|nox|coverage|mypy|pre-commit|apt-get|"
    "javac|java|";

// Commands that change no file through their arguments (their output goes to
// stdout; redirections are handled apart).
constexpr std::string_view kReadOnlyNames =
    "|ls|ll|la|dir|vdir|cat|tac|head|tail|less|more|grep|egrep|fgrep|rg|ag|ack|wc|cut|tr|echo|"
    "printf|true|false|:|test|[|pwd|which|type|whereis|hash|file|stat|du|df|diff|diff3|cmp|comm|"
    "basename|dirname|realpath|readlink|date|cal|id|whoami|groups|hostname|uname|ps|pgrep|pkill|"
    "kill|killall|free|uptime|top|htop|jq|column|nl|od|hexdump|strings|md5sum|sha1sum|"
    "sha224sum|sha256sum|sha384sum|sha512sum|b2sum|cksum|sum|base64|base32|seq|sleep|tree|fd|"
    "fdfind|locate|printenv|set|shift|wait|jobs|fg|bg|disown|exit|return|break|continue|alias|"
    "unalias|history|help|man|info|tput|clear|reset|rev|fold|fmt|paste|join|expand|unexpand|look|"
    "nproc|getconf|lsof|ss|netstat|ping|dig|nslookup|host|yes|ldd|nm|objdump|readelf|size|exa|"
    "eza|bat|batcat|bc|dc|expr|factor|numfmt|envsubst|gettext|shopt|ulimit|umask|bind|enable|"
    "complete|compgen|caller|times|getopts|let|shellcheck|lsblk|w|who|last|tty|sync|logger|"
    "notify-send|git-lfs|zcat|bzcat|xzcat|zstdcat|zgrep|zless|xmllint|tidy|file|iostat|vmstat|"
    "mpstat|lscpu|lsusb|lspci|env_parallel|ssh|nc|telnet|ftp|open|xdg-open|code|vim|vi|nano|"
    "emacs|sqlite3|psql|mysql|redis-cli|mongo|tmux|screen|cowsay|figlet|printf|sed-n|column|"
    "timedatectl|systemctl|journalctl|service|";

const Entry kReadOnlyEntry{};
const Entry kBuildEntry = [] {
  Entry e;
  e.kind = Kind::kBuild;
  return e;
}();

// Every command by name: the entries, then the two name lists.
const std::unordered_map<std::string_view, const Entry*>& table() {
  static const auto* map = [] {
    auto* m = new std::unordered_map<std::string_view, const Entry*>();
    for (const Entry& e : kEntries) m->emplace(e.name, &e);
    for (auto [list, entry] : {std::pair{kReadOnlyNames, &kReadOnlyEntry},
                               std::pair{kBuildToolNames, &kBuildEntry}}) {
      size_t i = 1;
      while (i < list.size()) {
        size_t end = list.find('|', i);
        if (end == std::string_view::npos) break;
        m->emplace(list.substr(i, end - i), entry);
        i = end + 1;
      }
    }
    return m;
  }();
  return *map;
}

const Entry* lookup(std::string_view name) {
  const auto& t = table();
  auto it = t.find(name);
  return it == t.end() ? nullptr : it->second;
}

bool is_system_bin(std::string_view path) {
  return starts_with(path, "/usr/bin/") || starts_with(path, "/bin/") ||
         starts_with(path, "/usr/local/bin/") || starts_with(path, "/usr/sbin/") ||
         starts_with(path, "/sbin/");
}

bool is_stdio(const Field& f) { return f.resolved && f.value == "-"; }

// Whether argv[*i] is an option rather than an operand; steps over "--",
// which ends the options.
bool at_option(const std::vector<Field>& argv, size_t* i) {
  const Field& a = argv[*i];
  if (!a.resolved || a.value.size() < 2 || a.value[0] != '-') return false;
  if (a.value == "--") {
    ++*i;
    return false;
  }
  return true;
}

// The source text of a span joined from several fields.
ShellSpan join_spans(ShellSpan a, ShellSpan b) {
  return ShellSpan{std::min(a.begin, b.begin), std::max(a.end, b.end)};
}

}  // namespace

// Whether `name` (a command) changes no file through its arguments.
bool read_only_command(std::string_view name, const std::vector<ShellCommandRule>* rules) {
  if (rules != nullptr) {
    for (const ShellCommandRule& r : *rules) {
      if (r.name == name) return !r.operands && r.writes.empty() && !r.unpredictable;
    }
  }
  const Entry* e = lookup(name);
  return e != nullptr && e->kind == Kind::kReadOnly;
}

void Predictor::emit_tree_at(const std::optional<std::string>& dir, FileOp op, const Call& call,
                             const State& st) {
  (void)st;
  if (!dir) {
    flag(ShellConstruct::kCdUnknown, source(call.span), call.name, call.span);
    return;
  }
  emit_abs(*dir, op, call, call.span, true, false);
}

void Predictor::run_configured(const ShellCommandRule& rule, std::vector<Field>& argv, size_t at,
                               State* st, const Call& call) {
  if (rule.unpredictable) {
    flag(ShellConstruct::kConfigured, source(call.span), call.name, call.span);
    return;
  }
  std::string value_short;
  std::string value_long = "|";
  std::string writes = "|";
  for (const std::string& o : rule.value_options) {
    if (o.size() == 2) value_short += o[1];
    value_long += o + "|";
  }
  for (const std::string& o : rule.writes) writes += o + "|";
  OptSpec spec{value_short, value_long, writes};
  Parsed p = parse_options(argv, at + 1, spec);
  for (const Field& w : p.writes) {
    if (!is_stdio(w)) emit(w, FileOp::kOverwrite, call, *st);
  }
  if (!rule.operands) return;
  for (size_t k = static_cast<size_t>(rule.skip_operands); k < p.operands.size(); ++k) {
    emit(argv[p.operands[k]], *rule.operands, call, *st, rule.tree);
  }
}

void Predictor::dispatch(std::vector<Field>& argv, size_t at, State* st, Call call) {
  if (at >= argv.size()) return;
  // Wrappers run wrappers (sudo nohup nice ...; find -exec find -exec ...).
  if (dispatch_depth_ >= kMaxShellDepth) {
    flag(ShellConstruct::kUnknownCommand, source(call.span), call.name, call.span);
    return;
  }
  ++dispatch_depth_;
  dispatch_one(argv, at, st, std::move(call));
  --dispatch_depth_;
}

void Predictor::dispatch_one(std::vector<Field>& argv, size_t at, State* st, Call call) {
  const Field& head = argv[at];
  if (!head.resolved) {
    flag(head.why, head.source, "", head.span);
    return;
  }
  std::string name = head.value;
  if (name.find('/') != std::string::npos) {
    if (!is_system_bin(name)) {
      flag(ShellConstruct::kScript, head.source, name, call.span);
      return;
    }
    name = basename_of(name);
  }
  call.name = name;
  for (const std::string& f : st->functions) {
    if (f == name) return;  // predicted where it was defined
  }
  if (options_.commands != nullptr) {
    for (const ShellCommandRule& rule : *options_.commands) {
      if (rule.name == name) {
        run_configured(rule, argv, at, st, call);
        return;
      }
    }
  }
  const Entry* e = lookup(name);
  if (e == nullptr) {
    flag(ShellConstruct::kUnknownCommand, head.source, name, call.span);
    return;
  }
  switch (e->kind) {
    case Kind::kReadOnly:
      return;
    case Kind::kArgs: {
      Parsed p = parse_options(argv, at + 1, e->opts);
      for (const Field& w : p.writes) {
        if (!is_stdio(w)) emit(w, FileOp::kOverwrite, call, *st);
      }
      if (e->op == kNoOp) return;
      bool enabled = e->when.empty() || p.has(e->when);
      if (!e->subs.empty() && !p.operands.empty() &&
          argv[p.operands[0]].value == e->subs) {
        enabled = true;
      }
      if (!enabled || (!e->unless.empty() && p.has(e->unless))) return;
      bool tree = e->tree_when == "|*|" || (!e->tree_when.empty() && p.has(e->tree_when));
      auto op = static_cast<FileOp>(e->op);
      if (!e->alt_when.empty() && p.has(e->alt_when)) op = static_cast<FileOp>(e->alt_op);
      for (size_t k = e->skip; k < p.operands.size(); ++k) {
        const Field& f = argv[p.operands[k]];
        if (is_stdio(f)) continue;
        emit(f, op, call, *st, tree);
      }
      return;
    }
    case Kind::kWrapper: {
      Parsed p = parse_options(argv, at + 1, e->opts, /*stop_at_operand=*/true);
      for (const Field& w : p.writes) emit(w, FileOp::kOverwrite, call, *st);
      if (!e->unless.empty() && p.has(e->unless)) return;
      dispatch(argv, p.first_operand + e->skip, st, call);
      return;
    }
    case Kind::kEnv: {
      size_t i = at + 1;
      while (i < argv.size()) {
        const Field& a = argv[i];
        if (!a.resolved) break;
        if (a.value == "-u" || a.value == "--unset" || a.value == "-C" || a.value == "--chdir") {
          i += 2;
        } else if (a.value == "-S" || a.value == "--split-string") {
          flag(ShellConstruct::kShellC, source(call.span), name, call.span);
          return;
        } else if ((a.value.size() > 1 && a.value[0] == '-') ||
                   (a.value.find('=') != std::string::npos && a.value[0] != '=')) {
          ++i;
        } else {
          break;
        }
      }
      dispatch(argv, i, st, call);
      return;
    }
    case Kind::kBuild:
      cmd_build(argv, at, st, call);
      return;
    case Kind::kCd:
      cmd_cd(argv, at, st, call, false);
      return;
    case Kind::kPushd:
      cmd_cd(argv, at, st, call, true);
      return;
    case Kind::kPopd:
      if (!st->dir_stack.empty()) {
        st->oldpwd = st->cwd;
        st->cwd = st->dir_stack.back();
        st->dir_stack.pop_back();
      } else {
        st->cwd.reset();
      }
      return;
    case Kind::kExport:
      for (size_t i = at + 1; i < argv.size(); ++i) {
        const Field& a = argv[i];
        std::string_view text = a.resolved ? std::string_view(a.value) : a.source;
        if (!text.empty() && text[0] == '-') continue;
        size_t eq = text.find('=');
        if (eq == std::string_view::npos) continue;
        std::string var(text.substr(0, eq));
        if (a.resolved) {
          st->set(var, true, a.value.substr(eq + 1));
        } else {
          st->set(var, false, "");
        }
      }
      return;
    case Kind::kRead: {
      Parsed p = parse_options(argv, at + 1, OptSpec{"dinNptuCc", "", ""});
      for (size_t k : p.operands) {
        if (argv[k].resolved) st->set(argv[k].value, false, "");
      }
      return;
    }
    case Kind::kUnset:
      for (size_t i = at + 1; i < argv.size(); ++i) {
        if (argv[i].resolved && argv[i].value[0] != '-') st->set(argv[i].value, true, "");
      }
      return;
    case Kind::kEval:
    case Kind::kTrap: {
      size_t first = at + 1;
      size_t last = e->kind == Kind::kTrap ? std::min(at + 2, argv.size()) : argv.size();
      if (first >= last) return;
      std::string code;
      ShellSpan span = argv[first].span;
      for (size_t i = first; i < last; ++i) {
        if (!argv[i].resolved) {
          flag(ShellConstruct::kEval, source(call.span), name, call.span);
          return;
        }
        if (i > first) code += ' ';
        code += argv[i].value;
        span = join_spans(span, argv[i].span);
      }
      if (e->kind == Kind::kTrap) {
        State later = *st;
        eval_string(code, span, &later, call);
      } else {
        eval_string(code, span, st, call);
      }
      return;
    }
    case Kind::kSource:
      flag(ShellConstruct::kScript, source(call.span), name, call.span);
      return;
    case Kind::kExec: {
      Parsed p = parse_options(argv, at + 1, OptSpec{"a", "", ""}, true);
      dispatch(argv, p.first_operand, st, call);
      return;
    }
    case Kind::kCopy:
    case Kind::kInstall:
      cmd_copy_like(argv, at, st, call, false);
      return;
    case Kind::kMove:
      cmd_copy_like(argv, at, st, call, true);
      return;
    case Kind::kLn:
      cmd_ln(argv, at, st, call);
      return;
    case Kind::kChmod:
    case Kind::kChown:
      cmd_chmod(argv, at, st, call);
      return;
    case Kind::kSed:
      cmd_sed(argv, at, st, call);
      return;
    case Kind::kPerl:
      cmd_perl(argv, at, st, call);
      return;
    case Kind::kAwk:
      cmd_awk(argv, at, st, call);
      return;
    case Kind::kInterpreter:
      cmd_interpreter(argv, at, st, call);
      return;
    case Kind::kShell:
      cmd_shell(argv, at, st, call);
      return;
    case Kind::kFind:
      cmd_find(argv, at, st, call);
      return;
    case Kind::kXargs:
      cmd_xargs(argv, at, st, call);
      return;
    case Kind::kGit:
      cmd_git(argv, at, st, call);
      return;
    case Kind::kTar:
      cmd_tar(argv, at, st, call);
      return;
    case Kind::kCompress:
      cmd_compress(argv, at, st, call);
      return;
    case Kind::kDownload:
      cmd_download(argv, at, st, call);
      return;
    case Kind::kDd:
      cmd_dd(argv, at, st, call);
      return;
    case Kind::kRsync:
      cmd_rsync(argv, at, st, call);
      return;
    case Kind::kPatch:
      cmd_patch(argv, at, st, call);
      return;
    case Kind::kUnzip:
      cmd_unzip(argv, at, st, call);
      return;
    case Kind::kCompiler:
      cmd_compiler(argv, at, st, call);
      return;
  }
}

void Predictor::cmd_build(std::vector<Field>& argv, size_t at, State* st, const Call& call) {
  const Entry* e = lookup(call.name);
  const std::string& name = call.name;
  // Runners: the command after `run` / `exec` is what runs.
  size_t sub = at + 1;
  while (sub < argv.size() && argv[sub].resolved && argv[sub].value.size() > 1 &&
         argv[sub].value[0] == '-') {
    if (in_list(kHelpOnly, argv[sub].value) && sub + 1 == argv.size()) return;
    ++sub;
  }
  if (sub >= argv.size()) {
    if (at + 1 < argv.size() && in_list(kHelpOnly, argv[at + 1].value)) return;
    if (e != nullptr && !e->subs.empty()) {
      for (size_t i = at + 1; i < argv.size(); ++i) {
        if (in_list(e->subs, argv[i].value)) return;
      }
    }
    if (name == "npx" || name == "pnpx" || name == "bunx") return;
    flag(ShellConstruct::kBuildTool, source(call.span), name, call.span);
    return;
  }
  const std::string& s = argv[sub].value;
  bool runner = ((name == "uv" || name == "poetry" || name == "pipenv" || name == "conda") &&
                 s == "run") ||
                ((name == "bundle" || name == "pnpm" || name == "yarn" || name == "npm") &&
                 (s == "exec" || s == "dlx")) ||
                name == "npx" || name == "pnpx" || name == "bunx";
  if (runner) {
    size_t cmd = (name == "npx" || name == "pnpx" || name == "bunx") ? sub : sub + 1;
    while (cmd < argv.size() && argv[cmd].resolved && !argv[cmd].value.empty() &&
           argv[cmd].value[0] == '-') {
      // Runner options with a value.
      const std::string& v = argv[cmd].value;
      cmd += (v == "-p" || v == "--package" || v == "--with" || v == "--python" ||
              v == "-n" || v == "--name")
                 ? 2
                 : 1;
    }
    if (cmd < argv.size()) {
      const Field& head = argv[cmd];
      if (head.resolved && lookup(head.value) == nullptr && options_.commands == nullptr) {
        flag(ShellConstruct::kBuildTool, source(call.span), name + " " + head.value, call.span);
        return;
      }
      dispatch(argv, cmd, st, call);
    }
    return;
  }
  if (in_list(kHelpOnly, s) && sub + 1 == argv.size()) return;
  if (e != nullptr && !e->subs.empty()) {
    if (in_list(e->subs, s)) return;
    for (size_t i = at + 1; i < argv.size(); ++i) {
      if (argv[i].value.size() > 1 && argv[i].value[0] == '-' && in_list(e->subs, argv[i].value)) {
        return;
      }
    }
  }
  flag(ShellConstruct::kBuildTool, source(call.span), name, call.span);
}

void Predictor::cmd_cd(std::vector<Field>& argv, size_t at, State* st, const Call& call,
                       bool push) {
  Parsed p = parse_options(argv, at + 1, OptSpec{});
  std::optional<std::string> next;
  if (p.operands.empty()) {
    if (!options_.home.empty() && !push) next = normalize_absolute(options_.home);
  } else {
    const Field& f = argv[p.operands[0]];
    if (f.resolved && f.value == "-" && !push) {
      next = st->oldpwd;
    } else if (f.resolved && !f.value.empty() && f.value[0] == '/') {
      next = normalize_absolute(f.value);
    } else if (f.resolved && st->cwd) {
      next = normalize_absolute(*st->cwd + "/" + f.value);
    }
    (void)call;
  }
  if (push && st->dir_stack.size() < 64) st->dir_stack.push_back(st->cwd);
  st->oldpwd = st->cwd;
  st->cwd = std::move(next);
}

void Predictor::cmd_copy_like(std::vector<Field>& argv, size_t at, State* st, const Call& call,
                              bool move) {
  const bool install = call.name == "install";
  OptSpec spec{"S", "|--suffix|--backup|", "|-t|--target-directory|"};
  if (install) {
    spec = OptSpec{"Smog", "|--suffix|--mode|--owner|--group|--strip-program|",
                   "|-t|--target-directory|"};
  }
  Parsed p = parse_options(argv, at + 1, spec);
  if (install && p.has("|-d|--directory|")) {
    for (size_t k : p.operands) emit(argv[k], FileOp::kCreate, call, *st);
    return;
  }
  const bool recursive = !move && p.has("|-r|-R|-a|--recursive|--archive|");
  std::vector<size_t> sources = p.operands;
  std::optional<Field> target;
  bool target_dir = false;
  if (!p.writes.empty()) {
    target = p.writes.back();
    target_dir = true;
  } else if (sources.size() >= 2) {
    target = argv[sources.back()];
    sources.pop_back();
    target_dir = sources.size() > 1 || (target->resolved && !target->value.empty() &&
                                        target->value.back() == '/');
  } else {
    return;  // a usage error: nothing happens
  }
  if (p.has("|-T|--no-target-directory|")) target_dir = false;
  std::string target_abs;
  bool target_known = absolute_of(*target, *st, call, &target_abs);
  if (target_known && !target_dir && kind_of(target_abs) == ShellPathKind::kDirectory) {
    target_dir = true;
  }
  for (size_t k : sources) {
    const Field& src = argv[k];
    for (const std::string& from : paths_of(src, *st, call)) {
      bool src_dir = kind_of(from) == ShellPathKind::kDirectory ||
                     (src.resolved && !src.value.empty() && src.value.back() == '/');
      if (!target_known) {
        if (move) emit_abs(from, FileOp::kDelete, call, src.span, src_dir, false);
        continue;
      }
      std::string to = target_dir ? normalize_absolute(target_abs + "/" + basename_of(from))
                                  : target_abs;
      if (move) {
        emit_move(from, to, call, src.span, src_dir);
      } else {
        emit_abs(from, FileOp::kRead, call, src.span, recursive, false);
        emit_abs(to, FileOp::kOverwrite, call, target->span, recursive, false);
      }
    }
  }
}

void Predictor::cmd_ln(std::vector<Field>& argv, size_t at, State* st, const Call& call) {
  Parsed p = parse_options(argv, at + 1, OptSpec{"S", "|--suffix|", "|-t|--target-directory|"});
  FileOp op = p.has("|-f|--force|") ? FileOp::kOverwrite : FileOp::kCreate;
  std::vector<size_t> links = p.operands;
  std::string dir;
  bool to_dir = false;
  if (!p.writes.empty()) {
    if (!absolute_of(p.writes.back(), *st, call, &dir)) return;
    to_dir = true;
  } else if (links.size() == 1) {
    if (!st->cwd) {
      flag(ShellConstruct::kCdUnknown, source(call.span), call.name, call.span);
      return;
    }
    dir = *st->cwd;
    to_dir = true;
  } else if (links.size() >= 2) {
    const Field& t = argv[links.back()];
    links.pop_back();
    std::string abs;
    if (!absolute_of(t, *st, call, &abs)) return;
    if (links.size() > 1 || kind_of(abs) == ShellPathKind::kDirectory ||
        (!t.value.empty() && t.value.back() == '/')) {
      dir = abs;
      to_dir = true;
    } else {
      emit_abs(abs, op, call, t.span, false, false);
      return;
    }
  }
  if (!to_dir) return;
  for (size_t k : links) {
    const Field& f = argv[k];
    std::string name = basename_of(f.resolved ? f.value : f.source);
    emit_abs(normalize_absolute(dir + "/" + name), op, call, f.span, false, false);
  }
}

void Predictor::cmd_chmod(std::vector<Field>& argv, size_t at, State* st, const Call& call) {
  const bool is_chmod = call.name == "chmod";
  bool recursive = false;
  bool have_first = false;  // the mode / owner operand
  bool after_dashdash = false;
  for (size_t i = at + 1; i < argv.size(); ++i) {
    const Field& a = argv[i];
    const std::string& v = a.value;
    if (a.resolved && !after_dashdash && v.size() > 1 && v[0] == '-') {
      if (v == "--") {
        after_dashdash = true;
        continue;
      }
      if (starts_with(v, "--reference")) {
        have_first = true;
        if (v.find('=') == std::string::npos) ++i;
        continue;
      }
      if (v == "--recursive") {
        recursive = true;
        continue;
      }
      if (v[1] == '-') continue;
      if (is_chmod && !have_first &&
          v.find_first_not_of("rwxXstugoa+-=,0123456789", 1) == std::string::npos) {
        have_first = true;  // chmod -x file: a mode
        continue;
      }
      if (v.find('R') != std::string::npos) recursive = true;
      continue;
    }
    if (!have_first) {
      have_first = true;
      continue;
    }
    emit(a, FileOp::kOverwrite, call, *st, recursive);
  }
}

void Predictor::cmd_sed(std::vector<Field>& argv, size_t at, State* st, const Call& call) {
  bool in_place = false;
  bool script = false;
  bool bsd_suffix_next = false;
  bool after_dashdash = false;
  std::vector<size_t> files;
  for (size_t i = at + 1; i < argv.size(); ++i) {
    const Field& a = argv[i];
    const std::string& v = a.value;
    if (bsd_suffix_next) {
      bsd_suffix_next = false;
      if (a.resolved && v.empty()) continue;  // sed -i '' (BSD)
    }
    if (a.resolved && !after_dashdash && v.size() > 1 && v[0] == '-') {
      if (v == "--") {
        after_dashdash = true;
      } else if (starts_with(v, "--in-place")) {
        in_place = true;
      } else if (starts_with(v, "--expression") || starts_with(v, "--file")) {
        script = true;
        if (v.find('=') == std::string::npos) ++i;
      } else if (starts_with(v, "--line-length")) {
        if (v.find('=') == std::string::npos) ++i;
      } else if (v[1] != '-') {
        for (size_t j = 1; j < v.size(); ++j) {
          char c = v[j];
          if (c == 'i') {
            in_place = true;
            bsd_suffix_next = j + 1 == v.size();
            break;
          }
          if (c == 'e' || c == 'f') {
            script = true;
            if (j + 1 == v.size()) ++i;
            break;
          }
          if (c == 'l') {
            if (j + 1 == v.size()) ++i;
            break;
          }
        }
      }
      continue;
    }
    if (!script) {
      script = true;
      continue;
    }
    files.push_back(i);
  }
  if (!in_place) return;
  for (size_t k : files) emit(argv[k], FileOp::kOverwrite, call, *st);
}

void Predictor::cmd_perl(std::vector<Field>& argv, size_t at, State* st, const Call& call) {
  bool in_place = false;
  bool code = false;
  bool filter = false;
  size_t i = at + 1;
  for (; i < argv.size() && at_option(argv, &i); ++i) {
    const std::string& v = argv[i].value;
    for (size_t j = 1; j < v.size(); ++j) {
      char c = v[j];
      if (c == 'i') {
        in_place = true;
        break;  // the rest is the backup suffix
      }
      if (c == 'e' || c == 'E') {
        code = true;
        if (j + 1 == v.size()) ++i;
        break;
      }
      if (c == 'p' || c == 'n') filter = true;
      if (c == 'M' || c == 'm' || c == 'I' || c == 'x' || c == 'C' || c == 'd' || c == 'D' ||
          c == 'l' || c == '0') {
        break;
      }
    }
  }
  size_t files = code ? i : i + 1;  // without -e the first operand is the script
  if (in_place) {
    for (size_t k = files; k < argv.size(); ++k) emit(argv[k], FileOp::kOverwrite, call, *st);
    return;
  }
  if (code && filter) return;
  if (code) {
    flag(ShellConstruct::kInlineInterpreter, source(call.span), call.name, call.span);
  } else if (i < argv.size()) {
    flag(ShellConstruct::kScript, argv[i].source, call.name, call.span);
  } else {
    flag(ShellConstruct::kInlineInterpreter, source(call.span), call.name, call.span);
  }
}

namespace {

// Whether an awk program writes files or runs commands.
bool awk_program_writes(std::string_view program) {
  if (program.find("system(") != std::string_view::npos) return true;
  if (program.find("getline") != std::string_view::npos &&
      program.find('|') != std::string_view::npos) {
    return true;
  }
  // print / printf statements with > or |.
  size_t i = 0;
  while (i < program.size()) {
    size_t end = program.find_first_of(";{}\n", i);
    if (end == std::string_view::npos) end = program.size();
    std::string_view stmt = program.substr(i, end - i);
    size_t start = stmt.find_first_not_of(" \t");
    if (start != std::string_view::npos && stmt.substr(start, 5) == "print" &&
        stmt.find_first_of(">|") != std::string_view::npos) {
      return true;
    }
    i = end + 1;
  }
  return false;
}

}  // namespace

void Predictor::cmd_awk(std::vector<Field>& argv, size_t at, State* st, const Call& call) {
  bool in_place = false;
  bool program_file = false;
  size_t i = at + 1;
  for (; i < argv.size() && at_option(argv, &i); ++i) {
    const std::string& v = argv[i].value;
    char c = v[1];
    if (c == 'f' || c == 'v' || c == 'F' || c == 'i' || c == 'l') {
      std::string value = v.size() > 2 ? v.substr(2) : (i + 1 < argv.size() ? argv[i + 1].value : "");
      if (v.size() == 2) ++i;
      if (c == 'f') program_file = true;
      if (c == 'i' && value == "inplace") in_place = true;
    } else if (starts_with(v, "--file")) {
      program_file = true;
      if (v.find('=') == std::string::npos) ++i;
    }
  }
  if (program_file) {
    flag(ShellConstruct::kScript, source(call.span), call.name, call.span);
    return;
  }
  if (i >= argv.size()) return;
  const Field& program = argv[i];
  if (!program.resolved || awk_program_writes(program.value)) {
    flag(ShellConstruct::kInlineInterpreter, program.source, call.name, program.span);
  }
  if (in_place) {
    for (size_t k = i + 1; k < argv.size(); ++k) emit(argv[k], FileOp::kOverwrite, call, *st);
  }
}

void Predictor::cmd_interpreter(std::vector<Field>& argv, size_t at, State* st,
                                const Call& call) {
  const std::string& name = call.name;
  const bool python = starts_with(name, "python") || starts_with(name, "pypy");
  std::string_view inline_opts = python                ? "|-c|"
                                 : name == "node" || name == "nodejs" ? "|-e|--eval|-p|--print|"
                                 : name == "php"       ? "|-r|"
                                 : "|-e|";
  std::string_view value_opts = python ? "|-W|-X|-Q|"
                                       : "|-r|--require|--import|--loader|--input-type|-I|-C|-d|-c|";
  for (size_t i = at + 1; i < argv.size(); ++i) {
    const Field& a = argv[i];
    const std::string& v = a.value;
    if (a.resolved && v.size() > 1 && v[0] == '-') {
      std::string_view key = std::string_view(v).substr(0, v.find('='));
      if (in_list(inline_opts, key) || (python && v.size() > 2 && v[1] != '-' &&
                                        v.find('c') != std::string::npos &&
                                        v.find_first_not_of("uBOEsSIqvbc", 1) == std::string::npos)) {
        std::string_view code = i + 1 < argv.size() ? std::string_view(argv[i + 1].source) : "";
        flag(ShellConstruct::kInlineInterpreter, code.empty() ? source(call.span) : code, name,
             call.span);
        return;
      }
      if (python && v == "-m" && i + 1 < argv.size()) {
        Field& module = argv[i + 1];
        if (!module.resolved) {
          flag(module.why, module.source, name, call.span);
          return;
        }
        const std::string& m = module.value;
        if (m == "venv" || m == "virtualenv") {
          Parsed p = parse_options(argv, i + 2, OptSpec{"", "|--prompt|", ""});
          for (size_t k : p.operands) emit(argv[k], FileOp::kCreate, call, *st, true);
          return;
        }
        if (m == "json.tool" || m == "this" || m == "site" || m == "timeit" || m == "pydoc" ||
            m == "http.server" || m == "platform" || m == "sysconfig") {
          return;
        }
        if (lookup(m) != nullptr) {
          dispatch(argv, i + 1, st, call);
          return;
        }
        flag(ShellConstruct::kScript, name + " -m " + m, name, call.span);
        return;
      }
      if (in_list(kHelpOnly, v)) return;
      if (in_list(value_opts, key) && key == v) ++i;
      continue;
    }
    if (a.resolved && v == "-") break;
    flag(ShellConstruct::kScript, a.source, name, call.span);
    return;
  }
  // No program file: the program comes from stdin (a here-document, a pipe).
  flag(ShellConstruct::kInlineInterpreter, source(call.span), name, call.span);
}

void Predictor::cmd_shell(std::vector<Field>& argv, size_t at, State* st, const Call& call) {
  bool has_c = false;
  for (size_t i = at + 1; i < argv.size(); ++i) {
    const Field& a = argv[i];
    const std::string& v = a.value;
    if (a.resolved && v.size() > 1 && (v[0] == '-' || v[0] == '+') && v != "--") {
      if (v == "-o" || v == "+o" || v == "--rcfile" || v == "--init-file") {
        ++i;
      } else if (v[1] != '-' && v.find('c') != std::string::npos) {
        has_c = true;
      } else if (v == "--version" || v == "--help") {
        return;
      }
      continue;
    }
    if (a.resolved && v == "--") continue;
    if (has_c) {
      if (!a.resolved) {
        flag(ShellConstruct::kShellC, a.source, call.name, a.span);
        return;
      }
      // A new shell: the directory carries over, the variables do not.
      State child;
      child.cwd = st->cwd;
      eval_string(a.value, a.span, &child, call);
      return;
    }
    flag(ShellConstruct::kScript, a.source, call.name, call.span);
    return;
  }
  if (has_c) return;
  flag(ShellConstruct::kShellC, source(call.span), call.name, call.span);
}

void Predictor::cmd_find(std::vector<Field>& argv, size_t at, State* st, const Call& call) {
  size_t i = at + 1;
  while (i < argv.size() && argv[i].resolved &&
         (argv[i].value == "-H" || argv[i].value == "-L" || argv[i].value == "-P" ||
          starts_with(argv[i].value, "-O") || argv[i].value == "-D")) {
    i += argv[i].value == "-D" ? 2 : 1;
  }
  std::vector<std::string> starts;
  bool any_start = false;
  while (i < argv.size()) {
    const Field& a = argv[i];
    if (a.resolved && (a.value.empty() || a.value[0] == '-' || a.value == "(" ||
                       a.value == "!" || a.value == ",")) {
      break;
    }
    any_start = true;
    for (std::string& p : paths_of(a, *st, call)) starts.push_back(std::move(p));
    ++i;
  }
  if (!any_start) {
    if (!st->cwd) {
      flag(ShellConstruct::kCdUnknown, source(call.span), call.name, call.span);
      return;
    }
    starts.push_back(*st->cwd);
  }
  constexpr std::string_view kNoArg =
      "|-print|-print0|-ls|-prune|-quit|-true|-false|-empty|-readable|-writable|-executable|"
      "-depth|-follow|-mount|-xdev|-noleaf|-daystart|-nouser|-nogroup|-d|-ignore_readdir_race|"
      "-noignore_readdir_race|-not|-and|-or|-a|-o|-help|-version|-warn|-nowarn|";
  for (; i < argv.size(); ++i) {
    const Field& a = argv[i];
    if (!a.resolved) continue;
    const std::string& v = a.value;
    if (v == "-delete") {
      for (const std::string& s : starts) emit_abs(s, FileOp::kDelete, call, a.span, true, false);
    } else if (v == "-exec" || v == "-execdir" || v == "-ok" || v == "-okdir") {
      size_t j = i + 1;
      while (j < argv.size() && !(argv[j].resolved && (argv[j].value == ";" || argv[j].value == "+"))) {
        ++j;
      }
      std::vector<Field> inner(argv.begin() + static_cast<std::ptrdiff_t>(i + 1),
                               argv.begin() + static_cast<std::ptrdiff_t>(j));
      if (!inner.empty()) {
        State sub = *st;
        sub.find_starts = starts;
        dispatch(inner, 0, &sub, call);
      }
      i = j;
    } else if (v == "-fprint" || v == "-fprint0" || v == "-fls" || v == "-fprintf") {
      if (i + 1 < argv.size()) emit(argv[i + 1], FileOp::kOverwrite, call, *st);
      i += v == "-fprintf" ? 2 : 1;
    } else if (v.size() > 1 && v[0] == '-' && !in_list(kNoArg, v)) {
      ++i;  // a test or action with one argument
    }
  }
}

void Predictor::cmd_xargs(std::vector<Field>& argv, size_t at, State* st, const Call& call) {
  size_t i = at + 1;
  for (; i < argv.size() && at_option(argv, &i); ++i) {
    const std::string& v = argv[i].value;
    if (v[1] == '-') continue;  // long options take their value with '='
    if (std::string_view("IEdLnPsaj").find(v[1]) != std::string_view::npos && v.size() == 2) ++i;
  }
  if (call.name == "parallel") {
    // parallel CMD ::: args, or commands from stdin.
    if (i >= argv.size()) {
      flag(ShellConstruct::kXargs, source(call.span), call.name, call.span);
      return;
    }
  }
  if (i >= argv.size()) return;  // echo
  const Field& cmd = argv[i];
  if (cmd.resolved && read_only_command(cmd.value, options_.commands)) return;
  flag(ShellConstruct::kXargs, source(call.span), cmd.resolved ? cmd.value : call.name,
       call.span);
  (void)st;
}

void Predictor::cmd_git(std::vector<Field>& argv, size_t at, State* st, Call call) {
  std::optional<std::string> cwd = st->cwd;
  size_t i = at + 1;
  while (i < argv.size() && argv[i].resolved && argv[i].value.size() > 1 &&
         argv[i].value[0] == '-') {
    const std::string& v = argv[i].value;
    if ((v == "-C" || v == "--work-tree" || starts_with(v, "--work-tree=")) ) {
      Field dir = v == "-C" || v == "--work-tree" ? (i + 1 < argv.size() ? argv[i + 1] : Field())
                                                  : argv[i];
      if (starts_with(v, "--work-tree=")) dir.value = v.substr(12);
      if (!dir.resolved) {
        flag(dir.why, dir.source, "git", call.span);
        return;
      }
      if (!dir.value.empty() && dir.value[0] == '/') {
        cwd = normalize_absolute(dir.value);
      } else if (cwd) {
        cwd = normalize_absolute(*cwd + "/" + dir.value);
      }
      i += v.find('=') == std::string::npos ? 2 : 1;
    } else if (v == "-c" || v == "--git-dir" || v == "--namespace" || v == "--exec-path") {
      i += 2;
    } else {
      ++i;
    }
  }
  if (i >= argv.size()) return;
  const Field& subf = argv[i];
  if (!subf.resolved) {
    flag(subf.why, subf.source, "git", call.span);
    return;
  }
  const std::string sub = subf.value;
  call.name = "git " + sub;
  State gs = *st;
  gs.cwd = cwd;
  // The work tree: the workspace root when git runs inside it.
  std::optional<std::string> top = cwd;
  if (cwd && ref_of(*cwd).inside) top = root_;
  auto operands_after = [&](const OptSpec& spec) { return parse_options(argv, i + 1, spec); };

  if (sub == "checkout") {
    Parsed p = operands_after(OptSpec{"bB", "|--orphan|--conflict|--pathspec-from-file|", ""});
    const bool creates = p.has("|-b|-B|--orphan|");
    size_t first_path = 0;
    if (p.before_dashdash != static_cast<size_t>(-1)) {
      first_path = p.before_dashdash;
    } else if (p.operands.empty()) {
      return;
    } else if (creates) {
      emit_tree_at(top, FileOp::kOverwrite, call, gs);
      return;
    } else {
      const Field& f = argv[p.operands[0]];
      std::string abs;
      bool is_path = f.resolved && (f.value == "." || starts_with(f.value, "./") || f.glob);
      if (!is_path && f.resolved && gs.cwd) {
        ShellPathKind k = kind_of(normalize_absolute(*gs.cwd + "/" + f.value));
        is_path = k == ShellPathKind::kFile || k == ShellPathKind::kDirectory;
      }
      if (!is_path) {
        emit_tree_at(top, FileOp::kOverwrite, call, gs);  // a branch switch
        first_path = 1;
      }
    }
    for (size_t k = first_path; k < p.operands.size(); ++k) {
      emit(argv[p.operands[k]], FileOp::kOverwrite, call, gs, true);
    }
    return;
  }
  if (sub == "switch") {
    Parsed p = operands_after(OptSpec{"cC", "|--create|--force-create|--orphan|", ""});
    if (p.has("|-c|-C|--create|--force-create|--orphan|") && p.operands.empty()) return;
    emit_tree_at(top, FileOp::kOverwrite, call, gs);
    return;
  }
  if (sub == "restore") {
    Parsed p = operands_after(OptSpec{"s", "|--source|--pathspec-from-file|", ""});
    if (p.has("|-S|--staged|") && !p.has("|-W|--worktree|")) return;
    for (size_t k : p.operands) emit(argv[k], FileOp::kOverwrite, call, gs, true);
    return;
  }
  if (sub == "reset") {
    Parsed p = operands_after(OptSpec{});
    if (p.has("|--hard|--merge|--keep|")) emit_tree_at(top, FileOp::kOverwrite, call, gs);
    return;
  }
  if (sub == "stash") {
    Parsed p = operands_after(OptSpec{"m", "|--message|", ""});
    std::string action = p.operands.empty() ? "push" : argv[p.operands[0]].value;
    if (action == "push" || action == "save" || action == "pop" || action == "apply" ||
        action == "branch") {
      emit_tree_at(top, FileOp::kOverwrite, call, gs);
    }
    return;
  }
  if (sub == "clean") {
    Parsed p = operands_after(OptSpec{"e", "|--exclude|", ""});
    if (p.has("|-n|--dry-run|") || !p.has("|-f|--force|-i|--interactive|")) return;
    if (p.operands.empty()) {
      emit_tree_at(gs.cwd, FileOp::kDelete, call, gs);
      return;
    }
    for (size_t k : p.operands) emit(argv[k], FileOp::kDelete, call, gs, true);
    return;
  }
  if (sub == "rm") {
    Parsed p = operands_after(OptSpec{"", "|--pathspec-from-file|", ""});
    if (p.has("|--cached|-n|--dry-run|")) return;
    bool tree = p.has("|-r|");
    for (size_t k : p.operands) emit(argv[k], FileOp::kDelete, call, gs, tree);
    return;
  }
  if (sub == "mv") {
    cmd_copy_like(argv, i, &gs, call, true);
    return;
  }
  if (sub == "apply" || sub == "am") {
    Parsed p = operands_after(OptSpec{"pC", "|--directory|--exclude|--include|", ""});
    if (p.has("|--check|--stat|--numstat|--summary|--cached|")) return;
    emit_tree_at(top, FileOp::kOverwrite, call, gs);
    return;
  }
  if (sub == "pull" || sub == "merge" || sub == "rebase" || sub == "cherry-pick" ||
      sub == "revert") {
    emit_tree_at(top, FileOp::kOverwrite, call, gs);
    return;
  }
  if (sub == "bisect" || sub == "submodule") {
    std::string action = i + 1 < argv.size() ? argv[i + 1].value : "";
    if (action == "log" || action == "visualize" || action == "view" || action == "status" ||
        action == "summary" || action.empty()) {
      return;
    }
    emit_tree_at(top, FileOp::kOverwrite, call, gs);
    return;
  }
  if (sub == "clone") {
    Parsed p = operands_after(
        OptSpec{"bocj", "|--branch|--origin|--config|--depth|--reference|--separate-git-dir|"
                        "--template|--jobs|--filter|--upload-pack|--shallow-since|"
                        "--shallow-exclude|",
                ""});
    if (p.operands.empty()) return;
    if (p.operands.size() >= 2) {
      emit(argv[p.operands[1]], FileOp::kCreate, call, gs, true);
      return;
    }
    const Field& url = argv[p.operands[0]];
    if (!url.resolved) {
      flag(url.why, url.source, call.name, call.span);
      return;
    }
    std::string name = basename_of(url.value);
    if (ends_with(name, ".git")) name.resize(name.size() - 4);
    size_t colon = name.rfind(':');
    if (colon != std::string::npos) name = name.substr(colon + 1);
    Field dir = url;
    dir.value = name;
    dir.glob = false;
    emit(dir, FileOp::kCreate, call, gs, true);
    return;
  }
  if (sub == "worktree") {
    std::string action = i + 1 < argv.size() ? argv[i + 1].value : "";
    Parsed p = parse_options(argv, i + 2, OptSpec{"bB", "|--reason|", ""});
    if (p.operands.empty()) return;
    if (action == "add") emit(argv[p.operands[0]], FileOp::kCreate, call, gs, true);
    if (action == "remove") emit(argv[p.operands[0]], FileOp::kDelete, call, gs, true);
    return;
  }
  if (sub == "archive" || sub == "format-patch" || sub == "bundle") {
    Parsed p = operands_after(OptSpec{"", "|--format|--prefix|--remote|-v|", "|-o|--output|--output-directory|"});
    for (size_t k = 0; k < p.writes.size(); ++k) {
      emit(p.writes[k], sub == "format-patch" ? FileOp::kCreate : FileOp::kOverwrite, call, gs,
           sub == "format-patch");
    }
    if (sub == "format-patch" && p.writes.empty()) emit_tree_at(gs.cwd, FileOp::kCreate, call, gs);
    return;
  }
  constexpr std::string_view kReadOnlyGit =
      "|status|log|diff|show|branch|fetch|push|tag|remote|config|rev-parse|ls-files|ls-tree|"
      "ls-remote|blame|grep|describe|shortlog|reflog|cat-file|help|version|whatchanged|show-ref|"
      "for-each-ref|merge-base|name-rev|count-objects|fsck|gc|add|commit|notes|init|rev-list|"
      "show-branch|var|check-ignore|check-attr|diff-tree|diff-index|diff-files|range-diff|"
      "update-index|update-ref|symbolic-ref|hash-object|write-tree|commit-tree|verify-commit|"
      "prune|repack|maintenance|credential|annotate|--version|--help|";
  if (in_list(kReadOnlyGit, sub)) return;
  flag(ShellConstruct::kUnknownCommand, source(call.span), call.name, call.span);
}

void Predictor::cmd_tar(std::vector<Field>& argv, size_t at, State* st, const Call& call) {
  char mode = 0;
  std::optional<Field> file;
  std::optional<Field> dir;
  bool to_stdout = false;
  std::vector<size_t> members;
  size_t i = at + 1;
  auto take_value = [&](size_t* next) -> std::optional<Field> {
    if (*next < argv.size()) return argv[(*next)++];
    return std::nullopt;
  };
  // Old style: tar xzf archive.tgz.
  if (i < argv.size() && argv[i].resolved && !argv[i].value.empty() && argv[i].value[0] != '-') {
    size_t next = i + 1;
    for (char c : argv[i].value) {
      if (c == 'c' || c == 'x' || c == 't' || c == 'r' || c == 'u') mode = c;
      if (c == 'O') to_stdout = true;
      if (c == 'f') file = take_value(&next);
      if (c == 'C') dir = take_value(&next);
      if (c == 'T' || c == 'X' || c == 'b' || c == 'H') take_value(&next);
    }
    i = next;
  }
  for (; i < argv.size(); ++i) {
    const Field& a = argv[i];
    const std::string& v = a.value;
    if (!a.resolved || v.size() < 2 || v[0] != '-') {
      members.push_back(i);
      continue;
    }
    if (v[1] == '-') {
      std::string_view key = std::string_view(v).substr(0, v.find('='));
      bool has_eq = v.find('=') != std::string::npos;
      auto value = [&]() -> std::optional<Field> {
        if (has_eq) {
          Field f = a;
          f.value = v.substr(v.find('=') + 1);
          f.glob = false;
          return f;
        }
        return i + 1 < argv.size() ? std::optional<Field>(argv[++i]) : std::nullopt;
      };
      if (key == "--extract" || key == "--get") mode = 'x';
      else if (key == "--create") mode = 'c';
      else if (key == "--list") mode = 't';
      else if (key == "--append" || key == "--update") mode = 'r';
      else if (key == "--to-stdout") to_stdout = true;
      else if (key == "--file") file = value();
      else if (key == "--directory") dir = value();
      else if (key == "--files-from" || key == "--exclude-from" || key == "--format" ||
               key == "--owner" || key == "--group" || key == "--mode" || key == "--transform" ||
               key == "--strip-components" || key == "--exclude" || key == "--use-compress-program") {
        if (!has_eq) ++i;
      }
      continue;
    }
    for (size_t j = 1; j < v.size(); ++j) {
      char c = v[j];
      if (c == 'c' || c == 'x' || c == 't' || c == 'r' || c == 'u') mode = c;
      if (c == 'O') to_stdout = true;
      if (c == 'f' || c == 'C' || c == 'T' || c == 'X' || c == 'b' || c == 'H' || c == 'I') {
        std::optional<Field> value;
        if (j + 1 < v.size()) {
          Field f = a;
          f.value = v.substr(j + 1);
          f.glob = false;
          value = f;
        } else if (i + 1 < argv.size()) {
          value = argv[++i];
        }
        if (c == 'f') file = value;
        if (c == 'C') dir = value;
        break;
      }
    }
  }
  if (file && is_stdio(*file)) file.reset();
  switch (mode) {
    case 'x': {
      if (file) emit(*file, FileOp::kRead, call, *st);
      if (to_stdout) return;
      State in_dir = *st;
      if (dir) {
        std::string abs;
        if (!absolute_of(*dir, *st, call, &abs)) return;
        in_dir.cwd = abs;
      }
      if (members.empty()) {
        emit_tree_at(in_dir.cwd, FileOp::kOverwrite, call, in_dir);
      } else {
        for (size_t k : members) emit(argv[k], FileOp::kOverwrite, call, in_dir, true);
      }
      return;
    }
    case 'c':
      if (file) emit(*file, FileOp::kOverwrite, call, *st);
      return;
    case 'r':
    case 'u':
      if (file) emit(*file, FileOp::kAppend, call, *st);
      return;
    default:
      return;
  }
}

void Predictor::cmd_compress(std::vector<Field>& argv, size_t at, State* st, const Call& call) {
  const std::string& name = call.name;
  Parsed p = parse_options(argv, at + 1, OptSpec{"ST", "|--suffix|--threads|", "|-o|"});
  if (p.has("|-l|--list|-t|--test|")) return;
  bool decompress = starts_with(name, "gun") || starts_with(name, "un") ||
                    p.has("|-d|--decompress|--uncompress|");
  bool keep = p.has("|-k|--keep|") || ((name == "zstd" || name == "unzstd" || name == "lz4") &&
                                       !p.has("|--rm|"));
  bool to_stdout = p.has("|-c|--stdout|--to-stdout|");
  for (const Field& w : p.writes) emit(w, FileOp::kOverwrite, call, *st);
  if (to_stdout || !p.writes.empty()) return;
  std::string suffix = name == "gzip" || name == "gunzip"        ? ".gz"
                       : name.find("bz") != std::string::npos    ? ".bz2"
                       : name.find("xz") != std::string::npos    ? ".xz"
                       : name.find("lzma") != std::string::npos  ? ".lzma"
                       : name.find("zst") != std::string::npos   ? ".zst"
                       : name == "lz4"                            ? ".lz4"
                                                                  : ".Z";
  const bool recursive = p.has("|-r|--recursive|");
  for (size_t k : p.operands) {
    const Field& f = argv[k];
    if (recursive) {
      emit(f, FileOp::kOverwrite, call, *st, true);
      continue;
    }
    for (const std::string& path : paths_of(f, *st, call)) {
      if (decompress) {
        std::string out = path;
        if (ends_with(out, suffix)) {
          out.resize(out.size() - suffix.size());
        } else if (ends_with(out, ".tgz")) {
          out.replace(out.size() - 4, 4, ".tar");
        } else {
          continue;
        }
        emit_abs(out, FileOp::kCreate, call, f.span, false, false);
      } else {
        emit_abs(path + suffix, FileOp::kCreate, call, f.span, false, false);
      }
      if (!keep) emit_abs(path, FileOp::kDelete, call, f.span, false, false);
    }
  }
}

void Predictor::cmd_download(std::vector<Field>& argv, size_t at, State* st, const Call& call) {
  const bool curl = call.name == "curl";
  OptSpec spec;
  if (curl) {
    spec = OptSpec{
        "dHXuAeFwmbTrKEyYzxCUQt",
        "|--data|--data-raw|--data-binary|--data-urlencode|--header|--request|--user|"
        "--user-agent|--referer|--form|--write-out|--max-time|--connect-timeout|--cookie|"
        "--upload-file|--range|--config|--cert|--key|--cacert|--proxy|--proxy-user|"
        "--speed-time|--speed-limit|--time-cond|--continue-at|--retry|--retry-delay|"
        "--retry-max-time|--max-redirs|--resolve|--interface|--limit-rate|--json|--url|"
        "--oauth2-bearer|--form-string|--aws-sigv4|--connect-to|",
        "|-o|--output|-c|--cookie-jar|-D|--dump-header|--stderr|--trace|--trace-ascii|"
        "--output-dir|"};
  } else {
    spec = OptSpec{
        "tTUewQlARDIXBi",
        "|--tries|--timeout|--user-agent|--header|--execute|--wait|--quota|--level|--accept|"
        "--reject|--domains|--include-directories|--exclude-directories|--base|--user|"
        "--password|--post-data|--post-file|--input-file|--limit-rate|--referer|"
        "--load-cookies|--save-cookies|--bind-address|--ca-certificate|--certificate|"
        "--private-key|",
        "|-O|--output-document|-o|--output-file|-a|--append-output|-P|--directory-prefix|"};
  }
  Parsed p = parse_options(argv, at + 1, spec);
  std::optional<Field> out_dir;
  bool named_output = false;
  for (size_t k = 0; k < p.writes.size(); ++k) {
    const std::string& opt = p.write_opts[k];
    const Field& w = p.writes[k];
    if (opt == "--output-dir" || opt == "-P" || opt == "--directory-prefix") {
      out_dir = w;
      continue;
    }
    if (opt == "-O" || opt == "--output-document" || opt == "-o" || opt == "--output") {
      if (curl || opt != "-o") named_output = true;
    }
    if (is_stdio(w)) continue;
    emit(w, opt == "-a" || opt == "--append-output" ? FileOp::kAppend : FileOp::kOverwrite, call,
         *st);
  }
  State in_dir = *st;
  if (out_dir) {
    std::string abs;
    if (!absolute_of(*out_dir, *st, call, &abs)) return;
    in_dir.cwd = abs;
  }
  if (!curl && p.has("|-r|--recursive|-m|--mirror|")) {
    emit_tree_at(in_dir.cwd, FileOp::kOverwrite, call, in_dir);
    return;
  }
  bool remote_name = curl ? p.has("|-O|--remote-name|--remote-name-all|-J|") : !named_output;
  if (!remote_name) return;
  for (size_t k : p.operands) {
    const Field& url = argv[k];
    if (!url.resolved) {
      flag(url.why, url.source, call.name, url.span);
      continue;
    }
    std::string_view u = url.value;
    size_t scheme = u.find("://");
    if (scheme != std::string_view::npos) u.remove_prefix(scheme + 3);
    u = u.substr(0, u.find_first_of("?#"));
    size_t slash = u.find('/');
    std::string name = slash == std::string_view::npos ? "" : basename_of(u.substr(slash));
    if (name.empty() || name == "/") name = "index.html";
    Field f = url;
    f.value = name;
    f.glob = false;
    emit(f, FileOp::kOverwrite, call, in_dir);
  }
}

void Predictor::cmd_dd(std::vector<Field>& argv, size_t at, State* st, const Call& call) {
  for (size_t i = at + 1; i < argv.size(); ++i) {
    const Field& a = argv[i];
    if (!a.resolved) {
      if (starts_with(a.source, "of=")) flag(a.why, a.source, call.name, a.span);
      continue;
    }
    if (starts_with(a.value, "of=") || starts_with(a.value, "if=")) {
      Field f = a;
      f.value = a.value.substr(3);
      f.glob = false;
      emit(f, a.value[0] == 'o' ? FileOp::kOverwrite : FileOp::kRead, call, *st);
    }
  }
}

void Predictor::cmd_rsync(std::vector<Field>& argv, size_t at, State* st, const Call& call) {
  const bool scp = call.name == "scp";
  OptSpec spec = scp ? OptSpec{"cFiloPSJ", "", ""}
                     : OptSpec{"efTB",
                               "|--exclude|--include|--filter|--exclude-from|--include-from|"
                               "--files-from|--rsh|--rsync-path|--chmod|--chown|--partial-dir|"
                               "--temp-dir|--backup-dir|--suffix|--max-size|--min-size|"
                               "--timeout|--port|--password-file|--out-format|--info|--debug|"
                               "--compare-dest|--link-dest|--copy-dest|--bwlimit|--block-size|",
                               "|--log-file|"};
  Parsed p = parse_options(argv, at + 1, spec);
  if (p.has("|-n|--dry-run|")) return;
  for (const Field& w : p.writes) emit(w, FileOp::kOverwrite, call, *st);
  if (p.operands.size() < 2) return;
  const Field& dest = argv[p.operands.back()];
  auto remote = [](const Field& f) {
    size_t colon = f.value.find(':');
    return f.resolved && colon != std::string::npos && f.value.find('/') > colon;
  };
  if (remote(dest)) return;
  const bool tree = !scp || p.has("|-r|");
  emit(dest, FileOp::kOverwrite, call, *st, tree);
  if (p.has("|--delete|--delete-after|--delete-before|--delete-during|--delete-excluded|")) {
    emit(dest, FileOp::kDelete, call, *st, true);
  }
  if (p.has("|--remove-source-files|")) {
    for (size_t k = 0; k + 1 < p.operands.size(); ++k) {
      if (!remote(argv[p.operands[k]])) emit(argv[p.operands[k]], FileOp::kDelete, call, *st, true);
    }
  }
}

void Predictor::cmd_patch(std::vector<Field>& argv, size_t at, State* st, const Call& call) {
  Parsed p = parse_options(
      argv, at + 1,
      OptSpec{"pBDFVYzgi",
              "|--strip|--prefix|--ifdef|--fuzz|--version-control|--basename-prefix|--suffix|"
              "--get|--quoting-style|--input|",
              "|-o|--output|-r|--reject-file|-d|--directory|"});
  if (p.has("|--dry-run|-C|--check|")) return;
  State in_dir = *st;
  bool has_output = false;
  for (size_t k = 0; k < p.writes.size(); ++k) {
    const std::string& opt = p.write_opts[k];
    if (opt == "-d" || opt == "--directory") {
      std::string abs;
      if (!absolute_of(p.writes[k], *st, call, &abs)) return;
      in_dir.cwd = abs;
    }
  }
  for (size_t k = 0; k < p.writes.size(); ++k) {
    const std::string& opt = p.write_opts[k];
    if (opt == "-d" || opt == "--directory" || is_stdio(p.writes[k])) continue;
    if (opt == "-o" || opt == "--output") has_output = true;
    emit(p.writes[k], FileOp::kOverwrite, call, *st);
  }
  if (!p.operands.empty()) {
    if (!has_output) emit(argv[p.operands[0]], FileOp::kOverwrite, call, in_dir);
    return;
  }
  if (!has_output) emit_tree_at(in_dir.cwd, FileOp::kOverwrite, call, in_dir);
}

void Predictor::cmd_unzip(std::vector<Field>& argv, size_t at, State* st, const Call& call) {
  if (call.name == "zip") {
    Parsed p = parse_options(argv, at + 1, OptSpec{"bntP", "", ""});
    if (!p.operands.empty()) emit(argv[p.operands[0]], FileOp::kOverwrite, call, *st);
    if (p.has("|-m|--move|")) {
      for (size_t k = 1; k < p.operands.size(); ++k) {
        emit(argv[p.operands[k]], FileOp::kDelete, call, *st, true);
      }
    }
    return;
  }
  Parsed p = parse_options(argv, at + 1, OptSpec{"P", "", "|-d|"});
  if (p.has("|-l|-t|-v|-Z|-p|-c|-z|")) return;
  State in_dir = *st;
  if (!p.writes.empty()) {
    std::string abs;
    if (!absolute_of(p.writes.back(), *st, call, &abs)) return;
    in_dir.cwd = abs;
  }
  if (!p.operands.empty()) emit(argv[p.operands[0]], FileOp::kRead, call, *st);
  emit_tree_at(in_dir.cwd, FileOp::kOverwrite, call, in_dir);
}

void Predictor::cmd_compiler(std::vector<Field>& argv, size_t at, State* st, const Call& call) {
  Parsed p = parse_options(
      argv, at + 1,
      OptSpec{"IDLlUxe",
              "|-MT|-MQ|-include|-isystem|-iquote|-idirafter|-Xlinker|-Xassembler|"
              "-Xpreprocessor|-arch|-target|--target|-T|-u|-z|",
              "|-o|-MF|"});
  for (const Field& w : p.writes) emit(w, FileOp::kOverwrite, call, *st);
  bool has_o = false;
  for (const std::string& o : p.write_opts) has_o = has_o || o == "-o";
  if (has_o || p.has("|-E|-M|-MM|--version|-v|--help|")) return;
  if (p.has("|-c|-S|")) {
    const char* ext = p.has("|-S|") ? ".s" : ".o";
    for (size_t k : p.operands) {
      const Field& f = argv[k];
      if (!f.resolved) continue;
      std::string base = basename_of(f.value);
      size_t dot = base.rfind('.');
      if (dot == std::string::npos) continue;
      Field out = f;
      out.value = base.substr(0, dot) + ext;
      out.glob = false;
      emit(out, FileOp::kOverwrite, call, *st);
    }
    return;
  }
  if (p.operands.empty()) return;
  Field out = argv[p.operands[0]];
  out.value = "a.out";
  out.glob = false;
  out.resolved = true;
  emit(out, FileOp::kOverwrite, call, *st);
}

}  // namespace weft::source::shell
