// fs_patch: apply a unified diff (one or several files) atomically; hunks are
// located by context; dry_run reports where each hunk applies.
#include <map>

#include "server/tools/tool_util.h"
#include "weft/text/patch.h"
#include "weft/text/unified_diff.h"

namespace weft::server::tools {
namespace {

struct FilePlan {
  const text::FilePatch* patch = nullptr;
  std::string path;
  bool existed = false;
  bool remove = false;
  std::string old_text;
  text::PatchPlan plan;
};

Json hunk_json(const text::HunkReport& h) {
  Json out = {{"hunk", h.index + 1}, {"header", h.header}, {"applies", h.applies}};
  if (h.applies) {
    out["line"] = h.line;
    out["offset"] = h.offset;
    out["fuzz"] = h.fuzz;
    if (h.whitespace) out["whitespace_only_match"] = true;
  } else {
    out["message"] = h.message;
  }
  return out;
}

Result<FilePlan> plan_file(Workspace& ws, const ToolContext& ctx, const text::FilePatch& patch) {
  FilePlan fp;
  fp.patch = &patch;
  std::string target = patch.target_path();
  if (target.empty()) {
    return invalid_argument(
        "the patch has no file headers; start each file with '--- a/<path>' and '+++ b/<path>'");
  }
  WEFT_ASSIGN_OR_RETURN(fp.path, ws.resolve(target, ctx.roots()));
  fp.existed = ws.fs().exists(fp.path);
  if (fp.existed && !patch.is_creation()) {
    auto bytes = fs::read_for_rewrite(ws.fs(), fp.path, "fs_patch");
    if (!bytes.ok()) return explain(bytes.status(), fp.path);
    fp.old_text = std::move(*bytes);
  } else if (!fp.existed && !patch.is_creation()) {
    return not_found("'" + fp.path + "' does not exist (the patch modifies it)");
  } else if (fp.existed && patch.is_creation()) {
    return already_exists("'" + fp.path + "' already exists (the patch creates it)");
  }
  fp.remove = patch.is_deletion();
  fp.plan = text::plan_patch(fp.old_text, patch);
  return fp;
}

// Writes every planned file; on a failure restores those already written.
Status commit(Workspace& ws, const std::vector<FilePlan>& plans) {
  size_t done = 0;
  Status failure;
  for (; done < plans.size(); ++done) {
    const FilePlan& p = plans[done];
    failure =
        p.remove ? ws.fs().remove(p.path) : ws.fs().write_bytes(p.path, p.plan.new_text).status();
    if (!failure.ok()) break;
  }
  if (failure.ok()) return failure;
  for (size_t i = 0; i < done; ++i) {  // roll back
    const FilePlan& p = plans[i];
    if (p.existed) {
      ws.fs().write_bytes(p.path, p.old_text).status().ignore_error();
    } else {
      ws.fs().remove(p.path).ignore_error();
    }
  }
  return explain(failure, plans[done].path).with_context("patch not applied (rolled back)");
}

// Through the kernel: each file's block takes its new text as one change (re-planned
// on the block's text if the file moved since it was read); a file whose change a
// person must approve joins `pending`. On a failure the files already changed are
// changed back.
Status commit_in_kernel(kernel::Kernel& k, const std::vector<FilePlan>& plans, ToolContext& ctx,
                        Json* versions, Json* pending) {
  source::Attribution who = agent_of(ctx, "fs_patch");
  size_t done = 0;
  Status failure;
  std::vector<bool> applied(plans.size(), false);
  for (; done < plans.size(); ++done) {
    const FilePlan& p = plans[done];
    Result<kernel::ChangeOutcome> outcome = kernel::ChangeOutcome{};
    if (p.remove) {
      outcome = k.remove(p.path, who, false);
    } else {
      outcome = k.change_text(
          p.path, who, p.existed ? source::FileOp::kOverwrite : source::FileOp::kCreate,
          [&](const std::optional<std::string>& old) -> Result<std::string> {
            if (old.value_or("") == p.old_text) return p.plan.new_text;
            text::PatchPlan again = text::plan_patch(old.value_or(""), *p.patch);
            if (!again.ok) {
              return failed_precondition("'" + p.path + "' changed while the patch was planned "
                                         "and the patch no longer applies: " + again.summary());
            }
            return again.new_text;
          });
    }
    if (!outcome.ok()) {
      failure = outcome.status();
      break;
    }
    if (!outcome->pending_approval.empty()) {
      pending->push_back(
          {{"path", p.path}, {"pending_approval", outcome->pending_approval}, {"rule", outcome->rule}});
    } else {
      applied[done] = true;
      if (!outcome->version.empty()) {
        versions->push_back({{"path", p.path}, {"version", outcome->version}});
      }
    }
  }
  if (failure.ok()) return failure;
  source::Attribution undo_who = who;
  undo_who.what = "fs_patch (rolled back)";
  for (size_t i = 0; i < done; ++i) {
    const FilePlan& p = plans[i];
    if (!applied[i]) continue;
    if (p.existed) {
      k.change_text(p.path, undo_who, source::FileOp::kOverwrite,
                    [&](const std::optional<std::string>&) -> Result<std::string> {
                      return p.old_text;
                    })
          .status()
          .ignore_error();
    } else {
      k.remove(p.path, undo_who, false).status().ignore_error();
    }
  }
  return explain(failure, plans[done].path).with_context("patch not applied (rolled back)");
}

Result<ToolOutput> run_fs_patch(const Json& args, ToolContext& ctx) {
  WEFT_ASSIGN_OR_RETURN(Workspace * ws, workspace_of(ctx));
  bool dry_run = arg_bool(args, "dry_run");
  auto parsed = text::parse_unified_diff(arg_string(args, "patch"));
  if (!parsed.ok()) return parsed.status().with_context("cannot parse the patch");
  // Every file the patch names stays locked from its read to the last write; a
  // path that does not resolve fails in plan_file.
  std::vector<std::string> targets;
  for (const auto& file : *parsed) {
    auto path = ws->resolve(file.target_path(), ctx.roots());
    if (path.ok()) targets.push_back(std::move(*path));
  }
  WEFT_ASSIGN_OR_RETURN(ChangeGuard change, ws->lock_for_change(targets));
  std::vector<FilePlan> plans;
  Json files = Json::array();
  bool all_ok = true;
  std::string report;
  for (const auto& file : *parsed) {
    WEFT_ASSIGN_OR_RETURN(FilePlan fp, plan_file(*ws, ctx, file));
    Json hunks = Json::array();
    for (const auto& h : fp.plan.hunks) hunks.push_back(hunk_json(h));
    files.push_back({{"path", fp.path}, {"applies", fp.plan.ok}, {"hunks", hunks}});
    report += fp.path + ": " + fp.plan.summary() + "\n";
    for (const auto& h : fp.plan.hunks) {
      report += "  hunk " + std::to_string(h.index + 1) + " " + h.header + ": " +
                (h.applies ? "applies at line " + std::to_string(h.line) +
                                 (h.offset ? " (offset " + std::to_string(h.offset) + ")" : "") +
                                 (h.fuzz ? " (fuzz " + std::to_string(h.fuzz) + ")" : "")
                           : "FAILS: " + h.message) +
                "\n";
    }
    all_ok = all_ok && fp.plan.ok;
    plans.push_back(std::move(fp));
  }
  if (!all_ok && !dry_run) {
    return failed_precondition("patch does not apply; nothing was changed.\n" + report +
                               "Re-read the files with fs_read and regenerate the hunks (or use "
                               "fs_edit).");
  }
  Json versions = Json::array(), pending = Json::array();
  if (!dry_run) {
    if (kernel::Kernel* k = ws->kernel()) {
      WEFT_RETURN_IF_ERROR(commit_in_kernel(*k, plans, ctx, &versions, &pending));
    } else {
      WEFT_RETURN_IF_ERROR(commit(*ws, plans));
    }
  }
  std::string head =
      dry_run ? (all_ok ? "Dry run: the patch applies.\n" : "Dry run: the patch does NOT apply.\n")
              : "Applied the patch to " + std::to_string(plans.size() - pending.size()) +
                    " file(s).\n";
  for (const auto& p : pending) {
    head += p["path"].get<std::string>() + ": pending approval " +
            p["pending_approval"].get<std::string>() + " (" + p["rule"].get<std::string>() +
            "); unchanged until a person approves it\n";
  }
  Json structured{{"applied", !dry_run && all_ok && pending.empty()},
                  {"applies", all_ok},
                  {"files", files}};
  if (!versions.empty()) structured["versions"] = versions;
  if (!pending.empty()) structured["pending_approvals"] = pending;
  return ToolOutput{head + report, std::move(structured), nullptr};
}

}  // namespace

ToolSpec fs_patch_tool() {
  ToolSpec t;
  t.name = "fs_patch";
  t.title = "Apply unified diff";
  t.description =
      "Apply a unified diff (`--- a/path` / `+++ b/path` / `@@ -l,s +l,s @@` hunks; one or several "
      "files; /dev/null creates or deletes) atomically: every hunk of every file applies or "
      "nothing changes. Hunks are located by their context lines when line numbers have drifted. "
      "dry_run reports, per hunk, whether and where it applies.";
  t.input_schema =
      object_schema({{"patch", string_prop("The unified diff text", 1)},
                     {"dry_run", bool_prop("Only report where each hunk applies (default false)")}},
                    {"patch"});
  t.output_schema = object_schema({{"applied", {{"type", "boolean"}}},
                                   {"applies", {{"type", "boolean"}}},
                                   {"files", {{"type", "array"}}},
                                   {"versions",
                                    {{"type", "array"},
                                     {"items", object_schema({{"path", {{"type", "string"}}},
                                                              {"version", {{"type", "string"}}}})},
                                     {"description", "Each changed file's new version"}}},
                                   {"pending_approvals",
                                    {{"type", "array"},
                                     {"items",
                                      object_schema({{"path", {{"type", "string"}}},
                                                     {"pending_approval", {{"type", "string"}}},
                                                     {"rule", {{"type", "string"}}}})},
                                     {"description",
                                      "Files whose change waits for a person's approval"}}}});
  t.annotations = write_hints(/*destructive=*/true, /*idempotent=*/false);
  t.handler = run_fs_patch;
  t.via_kernel = true;
  return t;
}

}  // namespace weft::server::tools
