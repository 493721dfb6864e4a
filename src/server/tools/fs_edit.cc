// fs_edit: exact old_string -> new_string replacements, all or nothing, with
// the uniqueness rule agents expect; the result is a unified diff.
#include "server/tools/region_diff.h"
#include "server/tools/tool_util.h"
#include "weft/text/search.h"
#include "weft/text/unified_diff.h"

namespace weft::server::tools {
namespace {

constexpr const char* kNoMatchHint =
    "\nNo edit was applied (all or nothing). Re-read the file with fs_read and make old_string "
    "match exactly (whitespace included); add surrounding lines to make it unique, or set "
    "replace_all.";

std::string report(const std::string& path, bool dry_run, const std::vector<size_t>& replacements,
                   const std::string& diff) {
  size_t total = 0;
  for (size_t n : replacements) total += n;
  return (dry_run ? "Dry run: would change " : "Edited ") + path + " (" + std::to_string(total) +
         " replacement" + (total == 1 ? "" : "s") + ")\n" + (diff.empty() ? "(no change)\n" : diff);
}

// Through the kernel: the edits apply to the file's block as one change.
Result<ToolOutput> run_fs_edit_in_kernel(kernel::Kernel& k, const std::string& path,
                                 const std::vector<text::StringEdit>& edits, ToolContext& ctx) {
  std::vector<size_t> replacements;
  auto outcome = k.change_text(
      path, agent_of(ctx, "fs_edit"), source::FileOp::kOverwrite,
      [&](const std::optional<std::string>& old) -> Result<std::string> {
        if (!old) return not_found("'" + path + "' does not exist; create it with fs_write");
        auto applied = text::apply_string_edits(*old, edits);
        if (!applied.ok()) {
          return Status(applied.status().code(),
                        std::string(applied.status().message()) + kNoMatchHint);
        }
        replacements = applied->replacements;
        return std::move(applied->new_text);
      });
  if (!outcome.ok()) return explain(outcome.status(), path);
  text::MakeDiffOptions diff_options;
  diff_options.old_label = "a/" + path;
  diff_options.new_label = "b/" + path;
  std::string diff = region_diff(outcome->old_text, outcome->new_text, diff_options);
  Json structured = {{"path", path}, {"applied", true}, {"replacements", replacements},
                     {"diff", diff}};
  if (!outcome->pending_approval.empty()) {
    return pending_output(path, *outcome, std::move(structured));
  }
  if (!outcome->version.empty()) structured["version"] = outcome->version;
  return ToolOutput{report(path, false, replacements, diff), std::move(structured), nullptr};
}

Result<ToolOutput> run_fs_edit(const Json& args, ToolContext& ctx) {
  WEFT_ASSIGN_OR_RETURN(Workspace * ws, workspace_of(ctx));
  WEFT_ASSIGN_OR_RETURN(std::string path, resolve_arg(ctx, args, "path"));
  bool dry_run = arg_bool(args, "dry_run");
  std::vector<text::StringEdit> edits;
  for (const Json& e : args["edits"]) {
    edits.push_back(
        {arg_string(e, "old_string"), arg_string(e, "new_string"), arg_bool(e, "replace_all")});
  }
  // The kernel serialises changes to one block itself and reconciles the disk.
  if (kernel::Kernel* k = ws->kernel(); k && !dry_run) return run_fs_edit_in_kernel(*k, path, edits, ctx);
  WEFT_ASSIGN_OR_RETURN(ChangeGuard change, ws->lock_for_change({path}));  // read to write
  auto before = fs::read_for_rewrite(ws->fs(), path, "fs_edit");
  if (!before.ok()) {
    if (before.status().code() == StatusCode::kNotFound) {
      return not_found("'" + path + "' does not exist; create it with fs_write");
    }
    return explain(before.status(), path);
  }
  auto outcome = text::apply_string_edits(*before, edits);
  if (!outcome.ok()) {
    return Status(outcome.status().code(),
                  std::string(outcome.status().message()) + kNoMatchHint);
  }
  text::MakeDiffOptions diff_options;
  diff_options.old_label = "a/" + path;
  diff_options.new_label = "b/" + path;
  std::string diff = region_diff(*before, outcome->new_text, diff_options);
  if (!dry_run) {
    auto written = ws->fs().write_bytes(path, outcome->new_text, fs::WriteMode::kOverwrite, false);
    if (!written.ok()) return explain(written.status(), path);
  }
  std::string text = report(path, dry_run, outcome->replacements, diff);
  Json structured = {{"path", path},
                     {"applied", !dry_run},
                     {"replacements", outcome->replacements},
                     {"diff", std::move(diff)}};
  return ToolOutput{std::move(text), std::move(structured), nullptr};
}

}  // namespace

ToolSpec fs_edit_tool() {
  ToolSpec t;
  t.name = "fs_edit";
  t.title = "Edit file";
  t.description =
      "Replace exact text in a file. Each edit replaces old_string (exact match, whitespace "
      "included; never include the line-number prefix from fs_read) with new_string. Edits apply "
      "in order, each to the result of the previous one, and all or none are written. An "
      "old_string that occurs more than once fails with the count and the line numbers of each "
      "match unless replace_all is true. Line endings (CRLF) and all other bytes are kept. "
      "dry_run returns the diff without writing. The result is a unified diff.";
  Json edit = object_schema(
      {{"old_string", string_prop("Exact text to replace (must be unique unless replace_all)", 1)},
       {"new_string", string_prop("Replacement text (must differ from old_string)")},
       {"replace_all", bool_prop("Replace every occurrence (default false)")}},
      {"old_string", "new_string"});
  t.input_schema =
      object_schema({{"path", string_prop("File path in the workspace", 1)},
                     {"edits",
                      {{"type", "array"},
                       {"minItems", 1},
                       {"items", edit},
                       {"description", "Replacements, applied in order"}}},
                     {"dry_run", bool_prop("Only report the diff; write nothing (default false)")}},
                    {"path", "edits"});
  t.output_schema =
      object_schema({{"path", {{"type", "string"}}},
                     {"applied", {{"type", "boolean"}}},
                     {"replacements", {{"type", "array"}, {"items", {{"type", "integer"}}}}},
                     {"diff", {{"type", "string"}}}});
  add_change_properties(t.output_schema);
  t.annotations = write_hints(/*destructive=*/true, /*idempotent=*/false);
  t.handler = run_fs_edit;
  t.via_kernel = true;
  return t;
}

}  // namespace weft::server::tools
