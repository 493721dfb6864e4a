// shell_exec: a command run by `sh -c` inside the workspace's bubblewrap
// sandbox (no network unless [shell] network = true, the rest of the system
// read-only), with bounded output and time, between the shell hooks of
// source/shell_hooks.h:
//   pre   the command line is checked; source::predict_shell's operations
//         are held against the rules (strict refuses a denied one and turns
//         an escalated one, or a denial reached only through a tree or glob
//         operation, into a pending approval; warned warns; audit logs);
//         what it cannot predict is listed; under strict the protected
//         paths are bound read-only
//   run   the kernel commits what changes on disk as shell:<agent>, with the
//         command as the message (undoable by the agent's fs_undo)
//   post  the watcher is flushed; the paths it saw are compared with the
//         metadata index (no tree walk), reconciled, checked against the
//         rules; under strict a violation is reverted
// Without a kernel watcher the snapshots are two walks of the tree.
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <mutex>
#include <optional>
#include <set>

#include "server/tools/tool_util.h"
#include "weft/fs/types.h"
#include "weft/source/ignore.h"

namespace weft::server::tools {
namespace {

using source::Enforcement;
using Clock = std::chrono::steady_clock;

// The longest commit message a command makes (the rest is cut).
constexpr size_t kMaxCommandMessageBytes = 2000;
// Where the sandbox shows the workspace, and the command's HOME (fs/sandbox.h).
constexpr std::string_view kSandboxRoot = "/workspace";
// The most paths a glob of the pre-hook is matched against; a larger
// workspace leaves its globs unresolved (checked as patterns).
constexpr size_t kMaxGlobListing = 200'000;

// Per workspace (per registry): the metadata index and the kernel's log
// that keeps it current.
struct ShellState {
  std::mutex mu;  // guards everything below
  kernel::Kernel* kernel = nullptr;
  std::shared_ptr<kernel::Kernel::DiskChangeLog> log;
  std::unique_ptr<source::FileMetaIndex> index;
};

std::unique_ptr<source::FileMetaIndex> new_index(const std::string& root) {
  auto ignore = std::make_shared<const source::IgnoreRules>(source::IgnoreRules::load(root));
  return std::make_unique<source::FileMetaIndex>(
      root, [ignore](const std::string& path, bool is_dir) {
        size_t slash = path.rfind('/');
        std::string_view name =
            slash == std::string::npos ? std::string_view(path) : std::string_view(path).substr(slash + 1);
        if (name.substr(0, fs::kTempFilePrefix.size()) == fs::kTempFilePrefix) return true;
        return ignore->ignored(path, is_dir);
      });
}

Json paths_json(const std::vector<std::string>& paths) {
  Json out = Json::array();
  for (const auto& p : paths) out.push_back(p);
  return out;
}

Json violation_json(const source::ShellViolation& v) {
  return Json{{"path", v.path},
              {"operation", std::string(source::file_op_name(v.op))},
              {"rule", v.rule == "default" ? std::string("the default level") : v.rule}};
}

// "agent:claude" -> "shell:claude"; another origin o -> "shell:o".
std::string shell_origin(const std::string& origin) {
  if (origin.rfind("agent:", 0) == 0) return "shell:" + origin.substr(6);
  return "shell:" + origin;
}

std::string command_message(const std::string& command) {
  if (command.size() <= kMaxCommandMessageBytes) return command;
  size_t cut = kMaxCommandMessageBytes;
  while (cut > 0 && (static_cast<unsigned char>(command[cut]) & 0xC0) == 0x80) --cut;
  return command.substr(0, cut) + "…";
}

kernel::Kernel::ShellChangeKind kind_of(const source::ShellChanges& changes,
                                        const std::string& path) {
  using K = kernel::Kernel::ShellChangeKind;
  if (std::binary_search(changes.created.begin(), changes.created.end(), path)) return K::kCreated;
  if (std::binary_search(changes.deleted.begin(), changes.deleted.end(), path)) return K::kDeleted;
  return K::kModified;
}

// One command to run with the hooks, its pre-hook passed.
struct Run {
  std::string command;
  fs::ExecOptions options;
  Enforcement level = Enforcement::kStrict;
  std::string author;  // the agent's origin ("agent:claude")
  std::shared_ptr<const source::WorkspaceRules> rules;
  // A person approved this path's change (an approved command): it, and
  // every path under it when it is a directory, is not bound read-only
  // unless a rule denies it, and a change there that only needed approval
  // is no violation.
  std::string approved_path;
};

// What the pre-hook found: the predicted operations the rules do not simply
// allow, and what it could not predict ([{construct, text}]).
struct PreHook {
  std::vector<source::ShellViolation> violations;
  Json unpredictable = Json::array();
};

// What a root-relative path is on the host, by lstat (a symlink: unknown).
source::ShellPathKind host_kind(const std::string& root, std::string_view path) {
  struct stat st;
  const std::string host = path.empty() || path == "." ? root : root + "/" + std::string(path);
  if (::lstat(host.c_str(), &st) != 0) {
    return errno == ENOENT || errno == ENOTDIR ? source::ShellPathKind::kMissing
                                               : source::ShellPathKind::kUnknown;
  }
  if (S_ISDIR(st.st_mode)) return source::ShellPathKind::kDirectory;
  if (S_ISREG(st.st_mode)) return source::ShellPathKind::kFile;
  return source::ShellPathKind::kUnknown;
}

bool covers(const std::string& dir, const std::string& path) {
  return path == dir ||
         (path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 && path[dir.size()] == '/');
}

// Whether a person's approval of `approved` (a file, or a directory a tree
// operation such as `rm -r dir` reaches; "." is the whole workspace) extends
// to `path`.
bool approval_covers(const std::string& approved, const std::string& path) {
  return !approved.empty() && (approved == "." || covers(approved, path));
}

// Whether an approval may release `path`: a rule that asks a person for it,
// never one that denies it (that file stays protected, approved or not).
bool releasable(const source::WorkspaceRules& rules, const std::string& path) {
  for (source::FileOp op : {source::FileOp::kOverwrite, source::FileOp::kDelete}) {
    if (rules.decide(path, op).decision == doc::PermissionDecision::kDenied) return false;
  }
  return true;
}

class ShellExec : public std::enable_shared_from_this<ShellExec> {
 public:
  explicit ShellExec(const WorkspaceToolsOptions& options)
      : enforcement_(options.shell_enforcement),
        predictor_(options.shell_predictor ? options.shell_predictor
                                           : source::ShellPredictor(source::predict_shell)),
        state_(std::make_shared<ShellState>()) {}

  // The tool call: checks, the pre-hook, then execute().
  Result<ToolOutput> run(const Json& args, ToolContext& ctx);

 private:
  // Takes up the workspace's kernel when it is new (or changed): a fresh
  // index, the kernel's change log, and the runner of approved commands.
  // Callers hold state_->mu.
  void attach(Workspace& ws, kernel::Kernel* k);
  // attach(), then brings the index up to date before a command; true when
  // it is fed by the kernel's watcher (else it was rebuilt by a walk).
  bool prepare(Workspace& ws, kernel::Kernel* k);
  // Runs `run` in the sandbox between the snapshots, reconciles and checks
  // what it changed. `out` and `notes` carry what the pre-hook said; `ctx`
  // is null for an approved command run by the kernel.
  Result<ToolOutput> execute(Workspace& ws, kernel::Kernel* k, const Run& run, Json out,
                             std::string notes, const ToolContext* ctx);
  // Takes `approved` and what is under it out of the read-only binds: a
  // bind that holds it or lies under it is replaced by binds of the
  // protected files it covers that the approval does not release.
  // Callers hold state_->mu.
  void unbind(const std::string& approved, const source::WorkspaceRules& rules,
              std::vector<std::string>* read_only) const;
  // Predicts `run` and checks the prediction against its rules. A parse
  // error is unpredictable, not a refusal (sh may accept what the parser
  // does not).
  PreHook pre_hook(Workspace& ws, kernel::Kernel* k, const Run& run, const std::string& cwd);
  // The workspace's files and their directories from the metadata index
  // (brought up to date first); nullopt when over kMaxGlobListing.
  std::optional<std::vector<std::string>> listing(Workspace& ws, kernel::Kernel* k);
  // The runner of a command a person approved.
  Status run_approved(Workspace& ws, const kernel::Approval& approval);
  Enforcement level_for(const source::ShellSettings& settings) const {
    return enforcement_.value_or(settings.enforcement.value_or(Enforcement::kStrict));
  }

  std::optional<Enforcement> enforcement_;
  source::ShellPredictor predictor_;
  std::shared_ptr<ShellState> state_;
};

void ShellExec::attach(Workspace& ws, kernel::Kernel* k) {
  ShellState& s = *state_;
  if (!s.index || s.kernel != k) {
    s.kernel = k;
    s.log = k ? k->subscribe_disk_changes() : nullptr;
    s.index = new_index(ws.root());
    if (k) {
      std::weak_ptr<ShellExec> weak = weak_from_this();
      Workspace* where = &ws;
      k->set_shell_runner([weak, where](const kernel::Approval& approval) -> Status {
        auto self = weak.lock();
        if (!self) return failed_precondition("shell_exec is no longer served");
        return self->run_approved(*where, approval);
      });
    }
  }
}

bool ShellExec::prepare(Workspace& ws, kernel::Kernel* k) {
  ShellState& s = *state_;
  attach(ws, k);
  bool fed = k && k->flush_disk_changes();
  if (!fed || !s.index->built()) {
    (void)s.index->build();
    if (s.log) (void)s.log->take();
    return fed;
  }
  s.index->refresh(s.log->take());
  return true;
}

void ShellExec::unbind(const std::string& approved, const source::WorkspaceRules& rules,
                       std::vector<std::string>* read_only) const {
  std::vector<std::string> kept;
  for (const std::string& p : *read_only) {
    if (!covers(p, approved) && !approval_covers(approved, p)) {
      kept.push_back(p);
      continue;
    }
    for (const auto& [file, meta] : state_->index->files()) {
      if (!covers(p, file) || !source::is_protected(rules, file)) continue;
      if (approval_covers(approved, file) && releasable(rules, file)) continue;
      kept.push_back(file);
    }
  }
  std::sort(kept.begin(), kept.end());
  kept.erase(std::unique(kept.begin(), kept.end()), kept.end());
  *read_only = std::move(kept);
}

std::optional<std::vector<std::string>> ShellExec::listing(Workspace& ws, kernel::Kernel* k) {
  std::lock_guard lock(state_->mu);
  ShellState& s = *state_;
  attach(ws, k);
  if (!s.index->built()) {
    (void)s.index->build();
    if (s.log) (void)s.log->take();
  } else if (s.log) {
    s.index->refresh(s.log->take());
  }
  const auto& files = s.index->files();
  if (files.size() > kMaxGlobListing) return std::nullopt;
  std::vector<std::string> out;
  out.reserve(files.size());
  std::set<std::string_view> dirs;
  for (const auto& [path, meta] : files) {
    out.push_back(path);
    std::string_view dir(path);
    for (size_t slash = dir.rfind('/'); slash != std::string_view::npos; slash = dir.rfind('/')) {
      dir = dir.substr(0, slash);
      if (!dirs.insert(dir).second) break;
    }
  }
  for (std::string_view d : dirs) out.emplace_back(d);
  return out;
}

PreHook ShellExec::pre_hook(Workspace& ws, kernel::Kernel* k, const Run& run,
                            const std::string& cwd) {
  const std::string root = ws.root();
  std::optional<std::optional<std::vector<std::string>>> paths;  // listed at the first glob
  source::ShellOptions options;
  options.root = std::string(kSandboxRoot);
  options.cwd = cwd == "." ? "" : cwd;
  options.home = std::string(kSandboxRoot);
  options.commands = &run.rules->shell_commands();
  options.kind = [&root](std::string_view path) { return host_kind(root, path); };
  options.glob = [&](std::string_view pattern) -> std::optional<std::vector<std::string>> {
    if (!paths) paths = listing(ws, k);
    if (!*paths) return std::nullopt;
    auto matched = source::shell_glob_in(pattern, **paths);
    // No match among the indexed files: it may match ignored ones (.git,
    // build output), so the op stays a pattern checked against the rules.
    if (!matched || matched->empty()) return std::nullopt;
    return matched;
  };
  PreHook out;
  Result<source::ShellPrediction> predicted = predictor_(run.command, options);
  if (!predicted.ok()) {
    out.unpredictable.push_back(
        Json{{"construct", "parse_error"},
             {"text", "could not parse: " + std::string(predicted.status().message())}});
    return out;
  }
  const source::ShellPrediction& prediction = *predicted;
  for (const auto& f : prediction.flags) {
    out.unpredictable.push_back(
        Json{{"construct", std::string(source::shell_construct_name(f.kind))}, {"text", f.text}});
  }
  if (prediction.truncated) {
    out.unpredictable.push_back(
        Json{{"construct", "truncated"},
             {"text", "more than " + std::to_string(source::kMaxShellOps) + " operations or " +
                          std::to_string(source::kMaxShellFlags) +
                          " constructs: the rest were not checked"}});
  }
  // Denials made approvals come last: the first violation names the
  // approval's path, which the approved run may write.
  std::vector<source::ShellViolation> broad_denials;
  for (const auto& c : source::check_prediction(prediction, *run.rules)) {
    if (c.decision == doc::PermissionDecision::kAllowed) continue;
    const source::PredictedOp& op = prediction.ops[c.op_index];
    // A denial reached only through a tree or glob operation (`git checkout
    // main` with vendor/** read-only) may not touch a protected file at all:
    // under strict a person decides, and the sandbox still protects the files.
    if ((op.tree || op.pattern) && c.decision == doc::PermissionDecision::kDenied &&
        run.level == Enforcement::kStrict) {
      broad_denials.push_back(source::ShellViolation{c.path, c.op, c.reason, true});
      continue;
    }
    out.violations.push_back(source::ShellViolation{
        c.path, c.op, c.reason, c.decision == doc::PermissionDecision::kNeedsApproval});
  }
  for (auto& v : broad_denials) out.violations.push_back(std::move(v));
  return out;
}

Status ShellExec::run_approved(Workspace& ws, const kernel::Approval& approval) {
  Run run;
  run.command = approval.proposed_text.value_or("");
  run.options.cwd = approval.target_path.empty() ? "." : approval.target_path;
  run.options.max_output_bytes = 64 * 1024;
  run.author = approval.author;
  run.approved_path = approval.path;
  WEFT_ASSIGN_OR_RETURN(source::ShellSettings settings, source::load_shell_settings(ws.root()));
  run.options.network = settings.network;
  run.level = level_for(settings);
  kernel::Kernel* k = ws.kernel();
  if (!k) return failed_precondition("the workspace has no kernel");
  run.rules = k->rules();
  auto done = execute(ws, k, run, Json::object(), "", nullptr);
  return done.ok() ? Status() : done.status();
}

Result<ToolOutput> ShellExec::run(const Json& args, ToolContext& ctx) {
  WEFT_ASSIGN_OR_RETURN(Workspace * ws, workspace_of(ctx));
  if (!ws->sandbox()) {
    return failed_precondition("shell_exec needs the server to run with --sandbox");
  }
  Run run;
  run.command = arg_string(args, "command");
  WEFT_RETURN_IF_ERROR(source::check_command_line(run.command));
  WEFT_ASSIGN_OR_RETURN(run.options.cwd, resolve_arg(ctx, args, "cwd"));
  run.options.timeout = std::chrono::milliseconds(arg_int(args, "timeout_ms", 30'000));
  run.options.max_output_bytes = arg_int(args, "max_output_bytes", 64 * 1024);
  run.author = ctx.origin();
  const std::string root = ws->root();
  WEFT_ASSIGN_OR_RETURN(source::ShellSettings settings, source::load_shell_settings(root));
  run.options.network = settings.network;
  run.level = level_for(settings);
  kernel::Kernel* k = ws->kernel();
  if (k) {
    run.rules = k->rules();
  } else {
    WEFT_ASSIGN_OR_RETURN(source::WorkspaceRules loaded, source::WorkspaceRules::load(root));
    run.rules = std::make_shared<const source::WorkspaceRules>(std::move(loaded));
  }
  {
    std::lock_guard lock(state_->mu);
    attach(*ws, k);
  }
  const Enforcement level = run.level;
  Json out{{"enforcement", std::string(source::enforcement_name(level))}};
  std::string notes;
  // ---- pre-hook: the prediction against the rules
  if (level != Enforcement::kNone) {
    const std::string cwd = run.options.cwd.empty() ? "." : run.options.cwd;
    PreHook pre = pre_hook(*ws, k, run, cwd);
    if (!pre.unpredictable.empty() && level != Enforcement::kAudit) {
      out["unpredictable"] = pre.unpredictable;
    }
    bool refuse = std::any_of(pre.violations.begin(), pre.violations.end(),
                              [](const source::ShellViolation& v) { return !v.needs_approval; });
    if (!pre.violations.empty() && !refuse && level == Enforcement::kStrict && k) {
      const source::ShellViolation& first = pre.violations.front();
      WEFT_ASSIGN_OR_RETURN(
          kernel::Approval approval,
          k->request_shell_approval(first.path, run.command, cwd,
                                    {run.author, "shell_exec", std::nullopt},
                                    source::describe_violation(first)));
      Json list = Json::array();
      for (const auto& v : pre.violations) list.push_back(violation_json(v));
      out["violations"] = std::move(list);
      out["pending_approval"] = approval.id;
      out["applied"] = false;
      out["exit_code"] = nullptr;
      return ToolOutput{"Pending approval " + approval.id + ": " + approval.rule +
                            ".\nNothing was run: the command runs when a person approves it "
                            "(its changes are then in fs_history). Do not retry it.",
                        std::move(out), nullptr};
    }
    if (!pre.violations.empty() && level == Enforcement::kStrict) {
      std::string reason;
      Json list = Json::array();
      for (const auto& v : pre.violations) {
        if (refuse && v.needs_approval) continue;
        reason += (reason.empty() ? "" : "; ") + source::describe_violation(v);
        list.push_back(violation_json(v));
      }
      out["refused"] = "the command would break the rules: " + reason;
      out["violations"] = std::move(list);
      out["exit_code"] = nullptr;
      return ToolOutput{"Refused, nothing was run: " + reason +
                            ".\nChange the command, or ask a person to change the rule or "
                            "make the change.",
                        std::move(out), nullptr, true};
    }
    Json warnings = Json::array();
    for (const auto& v : pre.violations) warnings.push_back(source::describe_violation(v));
    for (const auto& u : pre.unpredictable) {
      warnings.push_back("unpredictable (" + u["construct"].get<std::string>() +
                         "): " + u["text"].get<std::string>());
    }
    if (!warnings.empty()) {
      if (level == Enforcement::kWarned) {
        for (const auto& w : warnings) notes += "warning: " + w.get<std::string>() + "\n";
        out["warnings"] = warnings;
      } else if (level == Enforcement::kStrict) {
        // Strict runs an unpredictable command: the sandbox and the post-hook hold it.
        for (const auto& u : pre.unpredictable) {
          notes += "unpredictable (" + u["construct"].get<std::string>() +
                   "): " + u["text"].get<std::string>() + "\n";
        }
      }
      for (const auto& w : warnings) {
        ctx.log(LogLevel::kWarning, "shell_exec: " + w.get<std::string>());
      }
    }
  }

  return execute(*ws, k, run, std::move(out), std::move(notes), &ctx);
}

Result<ToolOutput> ShellExec::execute(Workspace& ws, kernel::Kernel* k, const Run& run, Json out,
                                      std::string notes, const ToolContext* ctx) {
  const Enforcement level = run.level;
  const source::WorkspaceRules& rules = *run.rules;
  fs::ExecOptions options = run.options;
  // ---- snapshot before, and what the sandbox protects
  source::Protection protection;
  bool incremental = false;
  {
    std::lock_guard lock(state_->mu);
    incremental = prepare(ws, k);
    if (level == Enforcement::kStrict) protection = state_->index->protection(rules);
    if (!run.approved_path.empty()) unbind(run.approved_path, rules, &protection.read_only);
  }
  options.read_only_workspace_paths = protection.read_only;
  if (options.read_only_workspace_paths.size() > fs::kMaxReadOnlyWorkspacePaths) {
    for (size_t i = fs::kMaxReadOnlyWorkspacePaths; i < options.read_only_workspace_paths.size();
         ++i) {
      protection.not_protected.push_back(options.read_only_workspace_paths[i] +
                                         " (over the sandbox's bind limit)");
    }
    options.read_only_workspace_paths.resize(fs::kMaxReadOnlyWorkspacePaths);
  }
  const source::Attribution who{shell_origin(run.author), command_message(run.command),
                                std::nullopt};
  const uint64_t run_id = k ? k->begin_shell_command(who, run.author) : 0;

  // ---- run
  if (ctx) ctx->progress(0, 1, "running");
  auto result = ws.sandbox()->exec({"sh", "-c", run.command}, options);

  // ---- post-hook
  Json problems = Json::array();
  source::ShellChanges changes;
  if (k) {
    bool flushed = incremental && k->flush_disk_changes();
    k->end_shell_command(run_id);
    if (incremental && !flushed) {
      problems.push_back("the watcher did not deliver the command's changes in time; they are "
                         "reconciled as it reports them");
    }
  }
  {
    std::lock_guard lock(state_->mu);
    if (incremental) {
      std::vector<std::string> touched;
      for (const auto& c : state_->log->take()) {
        if (c.kind == source::FileChange::Kind::kRescan) {
          touched.assign(1, ".");
          break;
        }
        touched.push_back(c.path);
        if (!c.from.empty()) touched.push_back(c.from);
      }
      changes = state_->index->update(touched);
    } else {
      changes = state_->index->update({"."});
    }
  }
  if (!result.ok()) return result.status();
  if (k && !changes.empty()) {
    std::vector<std::string> all = changes.created;
    all.insert(all.end(), changes.modified.begin(), changes.modified.end());
    all.insert(all.end(), changes.deleted.begin(), changes.deleted.end());
    for (auto& p : k->reconcile_paths(all, who, run.author)) problems.push_back(std::move(p));
  }
  std::vector<source::ShellViolation> violations;
  if (level != Enforcement::kNone) violations = source::check_changes(changes, rules);
  violations.erase(std::remove_if(violations.begin(), violations.end(),
                                  [&](const source::ShellViolation& v) {
                                    return v.needs_approval &&
                                           approval_covers(run.approved_path, v.path);
                                  }),
                   violations.end());
  Json violations_json = Json::array();
  std::vector<std::string> reverted;
  for (const auto& v : violations) {
    Json j = violation_json(v);
    if (level == Enforcement::kStrict) {
      Status undone = k ? k->revert_shell_change(v.path, kind_of(changes, v.path), who.origin,
                                                 {"system:shell-enforcement",
                                                  "revert of a forbidden change by: " + who.what,
                                                  std::nullopt})
                              .status()
                        : failed_precondition("no kernel holds the file's history");
      j["reverted"] = undone.ok();
      if (undone.ok()) {
        reverted.push_back(v.path);
      } else {
        j["revert_error"] = std::string(undone.message());
      }
    }
    if (level == Enforcement::kAudit && ctx) {
      ctx->log(LogLevel::kWarning, "shell_exec: " + source::describe_violation(v));
    }
    violations_json.push_back(std::move(j));
  }
  if (!reverted.empty()) {
    std::lock_guard lock(state_->mu);
    state_->index->update(reverted);
  }
  if (ctx) ctx->progress(1, 1, "done");

  const fs::ExecResult& r = *result;
  out["exit_code"] = r.exit_code;
  out["stdout"] = r.stdout_text;
  out["stderr"] = r.stderr_text;
  out["stdout_bytes"] = r.stdout_bytes;
  out["stderr_bytes"] = r.stderr_bytes;
  out["timed_out"] = r.timed_out;
  out["truncated"] = r.truncated;
  out["elapsed_ms"] = r.elapsed_ms;
  out["created"] = paths_json(changes.created);
  out["modified"] = paths_json(changes.modified);
  out["deleted"] = paths_json(changes.deleted);
  // Audit logs violations only; none does not look.
  out["violations"] = level == Enforcement::kAudit ? Json::array() : violations_json;
  if (level == Enforcement::kStrict) {
    Json unprotected = paths_json(protection.not_protected);
    for (const auto& p : r.unprotected) unprotected.push_back(p + " (did not exist: not bound)");
    out["not_protected"] = std::move(unprotected);
  }
  if (!problems.empty()) out["post_hook_problems"] = problems;

  std::string text = notes + "exit code: " + std::to_string(r.exit_code) +
                     (r.timed_out ? " (killed: timed out)" : "") + " in " +
                     std::to_string(r.elapsed_ms) + " ms\n";
  if (!r.stdout_text.empty() || r.stdout_bytes > 0) {
    text += "--- stdout (" + std::to_string(r.stdout_bytes) + " bytes" +
            (static_cast<int64_t>(r.stdout_text.size()) < r.stdout_bytes ? ", cut" : "") +
            ") ---\n" + r.stdout_text + "\n";
  }
  if (!r.stderr_text.empty() || r.stderr_bytes > 0) {
    text += "--- stderr (" + std::to_string(r.stderr_bytes) + " bytes" +
            (static_cast<int64_t>(r.stderr_text.size()) < r.stderr_bytes ? ", cut" : "") +
            ") ---\n" + r.stderr_text + "\n";
  }
  auto list = [&](const char* what, const std::vector<std::string>& paths) {
    if (paths.empty()) return;
    text += std::string(what) + ":";
    for (const auto& p : paths) text += " " + p;
    text += "\n";
  };
  list("created", changes.created);
  list("modified", changes.modified);
  list("deleted", changes.deleted);
  if (level != Enforcement::kAudit) {
    for (const auto& j : violations_json) {
      text += "violation: " + j["operation"].get<std::string>() + " of '" +
              j["path"].get<std::string>() + "' (" + j["rule"].get<std::string>() + ")" +
              (j.contains("reverted") ? (j["reverted"].get<bool>() ? ", reverted" : ", NOT reverted")
                                      : "") +
              "\n";
    }
  }
  for (const auto& p : problems) text += "post-hook: " + p.get<std::string>() + "\n";
  return ToolOutput{std::move(text), std::move(out), nullptr};
}

}  // namespace

ToolSpec shell_exec_tool(const WorkspaceToolsOptions& tool_options) {
  ToolSpec t;
  t.name = "shell_exec";
  t.title = "Run shell command (sandboxed)";
  t.description =
      "Run a shell command (`sh -c`) inside the workspace's bubblewrap sandbox: the workspace is "
      "mounted read-write at /workspace (paths weft.toml protects read-only), the rest of the "
      "system read-only, no network unless weft.toml's [shell] network = true, a private /tmp; "
      "nothing the command starts outlives it. Output (stdout, stderr) is cut at "
      "max_output_bytes per stream and the command is killed after timeout_ms. The result lists "
      "the files created, modified and deleted (each change is in fs_history as shell:<agent> "
      "and fs_undo reverts it) and the changes the rules forbid. Before it runs, the files it "
      "will change are predicted and checked against the rules: a predicted forbidden change "
      "refuses the command (strict) or is warned about (warned); one that needs a person makes "
      "it a pending approval; what cannot be predicted (inline interpreters, scripts, build "
      "tools, $(...)) is listed in `unpredictable`. A non-zero exit code is reported, not "
      "treated as a tool error; a command the rules refuse is.";
  t.input_schema = object_schema(
      {{"command", string_prop("Shell command line", 1)},
       {"cwd", string_prop("Working directory in the workspace (default: the root)")},
       {"timeout_ms", integer_prop("Time limit (default 30000)", 1, 600'000)},
       {"max_output_bytes", integer_prop("Per-stream output cap (default 65536)", 1, 8 << 20)}},
      {"command"});
  Json paths{{"type", "array"}, {"items", {{"type", "string"}}}};
  Json violation{{"type", "object"},
                 {"properties",
                  {{"path", {{"type", "string"}}},
                   {"operation", {{"type", "string"}}},
                   {"rule", {{"type", "string"}}},
                   {"reverted", {{"type", "boolean"}}},
                   {"revert_error", {{"type", "string"}}}}}};
  Json construct{{"type", "object"},
                 {"properties",
                  {{"construct", {{"type", "string"}}}, {"text", {{"type", "string"}}}}}};
  t.output_schema = object_schema({{"exit_code", {{"type", {"integer", "null"}}}},
                                   {"stdout", {{"type", "string"}}},
                                   {"stderr", {{"type", "string"}}},
                                   {"stdout_bytes", {{"type", "integer"}}},
                                   {"stderr_bytes", {{"type", "integer"}}},
                                   {"timed_out", {{"type", "boolean"}}},
                                   {"truncated", {{"type", "boolean"}}},
                                   {"elapsed_ms", {{"type", "integer"}}},
                                   {"enforcement", {{"type", "string"}}},
                                   {"created", paths},
                                   {"modified", paths},
                                   {"deleted", paths},
                                   {"violations", {{"type", "array"}, {"items", violation}}},
                                   {"not_protected", paths},
                                   {"warnings", paths},
                                   {"post_hook_problems", paths},
                                   {"unpredictable", {{"type", "array"}, {"items", construct}}},
                                   {"refused", {{"type", "string"}}},
                                   {"pending_approval", {{"type", "string"}}},
                                   {"applied", {{"type", "boolean"}}}});
  t.annotations = write_hints(/*destructive=*/true, /*idempotent=*/false);
  auto shell = std::make_shared<ShellExec>(tool_options);
  t.handler = [shell](const Json& args, ToolContext& ctx) { return shell->run(args, ctx); };
  return t;
}

}  // namespace weft::server::tools
